"""VectorIndex handlers: the kind's pass queue (pinery.handlers.pass_queue) runs each object's
reconcile loop; the finalizer releases the index.

A pass reads the object fresh from the API, compares the spec with the immutable fields its
index was accepted with, reads the API key, looks at the index (a describe, or during a resync
sweep the listing shared by every object of the key), asks `pinery.vectorindex.decisions.decide`
what to do, does it, and writes status and Events. The next pass is then due after a short readiness
poll while Pinecone works, a backoff after a failure, else until the next fleet-wide sweep. A
new generation of the spec wakes it at once.

Waiting is a due time in the queue, not a handler failure: Kopf's TemporaryError retries would log
every readiness poll as an error, post it as an Event and rewrite progress annotations each time.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

import kopf
from pydantic import ValidationError

from pinery.api.base import GROUP, VERSION, controller_reference, has_finalizer
from pinery.api.conditions import get_condition, now_rfc3339
from pinery.api.vectorindex import VectorIndexSpec
from pinery.gateways.kube import KubeError
from pinery.gateways.pinecone import PineconeCallError
from pinery.handlers import pinecone_keys
from pinery.handlers.object_loop import ObjectLoop, jitter
from pinery.handlers.pass_queue import PassQueue
from pinery.services import Services
from pinery.vectorindex import accepted, deletion
from pinery.vectorindex.decisions import (
    CREATE_SENT_AT,
    Cond,
    Event,
    Identity,
    Step,
    decide,
    decide_deletion,
    landing_deadline,
    pass_events,
    refuse_immutable_change,
)
from pinery.vectorindex.desired import connection_fields
from pinery.vectorindex.errors import classify, outcome_unknown
from pinery.vectorindex.restore import RestoreView
from pinery.vectorindex.restore import report as restore_report
from pinery.vectorindex.schedule import current_sweep, next_sweep
from pinery.vectorindex.status import READY, next_status, status_changes

KIND = "VectorIndex"
PLURAL = "vectorindexes"
# When the finalizer gives up on Pinecone: `pinery.vectorindex.deletion`.
# A pass in the middle of a Pinecone call gets this long to finish it when the operator stops
# or the object is deleted.
STOP_GRACE_SECONDS = 30.0
# The Pinecone calls that make an index (status.createSentAt guards them).
CREATING = ("create_index", "create_index_from_backup")

log = logging.getLogger("pinery.vectorindex")


class Memory(ObjectLoop):
    """What one object keeps between passes: the shared loop's state (wake-up,
    generations, failures in a row, Retry-After hold) and VectorIndex's own."""

    def __init__(self, **clock: Any) -> None:
        super().__init__(**clock)
        self.polls = 0  # consecutive readiness polls
        self.sweep: int | None = None  # the resync sweep the next pass belongs to
        self.upcoming_sweep: int | None = None  # the sweep the last pass said to wait for
        self.first = True
        self.unguarded = False  # the last pass found no finalizer on the object
        self.finalizer_seen = False  # a watch event showed the finalizer since the last unguarded pass

    def event_wakes(self, meta: dict) -> bool:
        """Whether a watch event showing `meta` wakes the object: a newer generation, or the
        finalizer a pass is waiting for (once: a second wake would bring a pass too many)."""
        wake = self.generations.event_showed(meta.get("generation"))
        if has_finalizer(meta):
            self.finalizer_seen = True
            if self.unguarded:
                self.unguarded = False
                wake = True
        return wake


@dataclass(frozen=True)
class Next:
    delay: float
    sweep: int | None = None


def register(registry: kopf.OperatorRegistry, services: Services) -> PassQueue:
    """The handlers of VectorIndexes, and the queue that runs their passes (started and stopped
    by pinery.handlers.queues)."""
    resource = (GROUP, VERSION, PLURAL)
    queue = PassQueue(KIND, services.settings.workers, grace=STOP_GRACE_SECONDS, paused=bool(services.settings.peering))
    memories: dict[tuple[str, str], Memory] = {}
    one_pass = services.metrics.timed(KIND, "reconcile")(reconcile)

    def start(namespace: str, name: str) -> None:
        key = (namespace, name)
        memory = memories[key] = queue.wired(key, Memory())

        async def step() -> float | None:
            # A pass woken early is no sweep: it describes its own index.
            memory.sweep = None if memory.woken else memory.upcoming_sweep
            upcoming = await one_pass(namespace, name, services, memory)
            if upcoming is None:
                return None
            memory.upcoming_sweep = upcoming.sweep
            return upcoming.delay

        def failed(exc: Exception) -> float:
            delay = memory.failed(lambda n: services.vectorindex_timing.retry(n - 1))
            memory.upcoming_sweep = None
            log.warning("VectorIndex %s/%s: reconcile failed (%s); retrying in %.1fs", namespace, name, exc, delay)
            services.metrics.reconciled(KIND, "error")
            return delay

        def ended(why: str) -> None:
            if memories.get(key) is memory:
                del memories[key]
                services.metrics.forget_index(namespace, name)  # gone, or another replica's now

        queue.add(key, memory, step, on_error=failed, on_end=ended)

    # Handler ids are explicit, and equal to the ids Kopf derived from the function names before
    # (its progress and diff-base annotations are stored under them): existing objects keep
    # working. Never rename them.
    # Every event of an index, the first listing's too, comes here: one without passes gets
    # them once its finalizer is on it (Kopf puts it there on the object's first event; until
    # then a deletion would not wait for the finalizer below, so nothing may touch Pinecone);
    # one being deleted has none (the finalizer takes over).
    @kopf.on.event(*resource, id="vectorindex_event", registry=registry)
    async def vectorindex_event(type, namespace, name, meta, **_):
        queue.start()  # once: in a handler's context (PassQueue.start)
        key = (namespace, name)
        if type == "DELETED" or meta.get("deletionTimestamp"):
            queue.end(key, "deleted")  # after the pass in flight, which the finalizer waits for
            return
        memory = memories.get(key)
        if memory is None:
            if has_finalizer(meta):
                start(namespace, name)
        elif memory.event_wakes(meta):
            log.debug("VectorIndex %s/%s: woken by a watch event (generation %s)", namespace, name, meta.get("generation"))
            memory.wake.set()

    @kopf.on.delete(*resource, id="vectorindex_delete", registry=registry)
    @services.metrics.timed(KIND, "delete")
    async def vectorindex_delete(body, namespace, name, **_):
        queue.end((namespace, name), "deleted")
        # let a pass in flight finish before looking at Pinecone
        await queue.until_idle((namespace, name), STOP_GRACE_SECONDS)
        await release(dict(body), services)

    return queue


# --- reconcile --------------------------------------------------------------------------

async def reconcile(namespace: str, name: str, services: Services, memory: Memory) -> Next | None:
    """One pass; returns when to look again, or None when the object is gone or going."""
    obj = await services.kube.get(KIND, namespace, name)
    if obj is None or obj["metadata"].get("deletionTimestamp"):
        return None
    meta = obj["metadata"]
    old = obj["status"] = obj.get("status") or {}  # one dict, which before_create extends
    memory.unguarded = not has_finalizer(meta)
    if memory.unguarded:
        # An object deleted before Kopf put its finalizer on it vanishes without the finalizer
        # ever looking at Pinecone: an index created now could be left behind. Passes start
        # only once an event shows the finalizer (register), and still do nothing until the
        # object they read has it; its event wakes the object, or came while this pass read a
        # stale copy.
        log.debug("VectorIndex %s/%s: waiting for the finalizer before acting", namespace, name)
        seen, memory.finalizer_seen = memory.finalizer_seen, False
        return Next(0.0 if seen else services.vectorindex_timing.poll(0))
    generation = meta.get("generation")
    memory.pass_read(generation)  # a newer spec that arrived while this pass read the object wakes it
    sweep, memory.sweep = memory.sweep, None
    settings, timing = services.settings, services.vectorindex_timing
    if memory.first and old.get("observedGeneration") == generation and old.get("phase") == "Ready":
        sweep = current_sweep(time.time(), settings.resync_seconds)  # a restart: settled objects share a listing
    memory.first = False
    log.debug("VectorIndex %s/%s: pass at generation %s%s", namespace, name, generation, f" (sweep {sweep})" if sweep is not None else "")

    def until_sweep() -> Next:
        number, at = next_sweep(time.time(), settings.resync_seconds, f"{namespace}/{name}", timing.sweep_spread)
        return Next(max(0.0, at - time.time()), sweep=number)

    try:
        spec = VectorIndexSpec.model_validate(obj.get("spec") or {})
    except ValidationError as exc:
        invalid: Cond = ("False", "InvalidSpec", _first_error(exc))
        await _report(obj, services, invalid, invalid)
        services.metrics.reconciled(KIND, "invalid")
        return until_sweep()
    index_name = spec.index_name_for(name)

    changed = accepted.changed_fields(meta.get("annotations"), spec, index_name)
    if changed:  # caught before any Pinecone call
        step = refuse_immutable_change(old.get("indexName") or index_name, changed)
        await _report(obj, services, step.ready, step.synced)
        services.metrics.reconciled(KIND, "refuse")
        return until_sweep()

    api_key = await pinecone_keys.api_key(spec.api_key_secret_ref, namespace, services, sweep)
    if api_key is None:
        ns, secret, key = pinecone_keys.secret_ref(spec.api_key_secret_ref, namespace, settings)
        missing: Cond = ("False", "SecretNotFound", f"Secret {ns}/{secret} with key {key!r} holding the Pinecone API key was not found")
        await _report(obj, services, missing, missing)
        services.metrics.reconciled(KIND, "error")
        return Next(memory.failed(lambda n: timing.secret_retry(n - 1)))

    who = Identity(settings.cluster_name, namespace, name)

    async def before_create() -> None:
        # Written before the call, so that even an operator killed while it waits for the
        # answer leaves the mark: the finalizer then waits for an index that may still land.
        sent = now_rfc3339()
        await services.kube.merge_patch(KIND, namespace, name, {"status": {CREATE_SENT_AT: sent}}, subresource="status")
        old[CREATE_SENT_AT] = sent

    try:
        step = await _look_and_act(services, api_key, spec, who, old, memory.polls, sweep, before_create)
    except PineconeCallError as exc:
        verdict = classify(exc.failure, memory.failures, timing)
        memory.failures += 1
        if exc.failure.retry_after:
            memory.hold_for(exc.failure.retry_after)
        cond: Cond = ("False", verdict.reason, verdict.message)
        answered = exc.failure.operation in CREATING and not outcome_unknown(exc.failure)
        await _report(obj, services, cond if verdict.terminal else _ready_as_before(old, cond), cond,
                      cleared=(CREATE_SENT_AT,) if answered else ())
        log.warning("VectorIndex %s/%s: %s", namespace, name, verdict.message)
        services.metrics.reconciled(KIND, "error")
        return until_sweep() if verdict.delay is None else Next(memory.jitter(verdict.delay))

    memory.failures = 0
    memory.polls = memory.polls + 1 if step.action == "wait" else 0
    managed = step.action != "refuse"
    seen = step.state is not None or step.host is not None  # the index, so no create is in doubt
    await _report(
        obj, services, step.ready, step.synced, step.events, cleared=(CREATE_SENT_AT,) if seen else (),
        indexName=index_name if managed else None, type=spec.deployment_type, host=step.host, state=step.state,
        readCapacity=step.read_capacity, restore=step.restore,
    )
    if managed and accepted.ANNOTATION not in (meta.get("annotations") or {}):
        record = {"metadata": {"annotations": {accepted.ANNOTATION: accepted.record(spec, index_name)}}}
        await services.kube.merge_patch(KIND, namespace, name, record)
    if step.ready[0] == "True" and spec.connection_config_map and step.host:
        await services.kube.apply(connection_config_map(obj, spec, index_name, step.host, settings.pinecone_host))
    services.metrics.reconciled(KIND, step.action)
    services.metrics.index_state(namespace, name, step.state)
    return until_sweep() if step.requeue is None else Next(step.requeue)


async def _look_and_act(services: Services, api_key: str, spec: VectorIndexSpec, who: Identity,
                        status: dict[str, Any], polls: int, sweep: int | None,
                        before_create: Callable[[], Awaitable[None]]) -> Step:
    """Describe the index (or find it in the sweep's listing), decide, and make the call."""
    gateway, timing = services.pinecone, services.vectorindex_timing
    name, known = spec.index_name_for(who.name), status.get("indexName")
    if sweep is not None:
        index = await gateway.describe_in_sweep(api_key, name, sweep)
    else:
        index = await gateway.describe(api_key, name)
    restoring, job = await _restore_facts(services, api_key, spec, who.namespace, index, status.get("restore") or {})
    step = decide(spec, who, index, known_index_name=known, polls=polls, timing=timing, restoring=restoring, restore_job=job)
    if step.action in ("create", "restore"):
        await before_create()
        try:
            if step.action == "restore":
                request = dict(step.request)
                answer = await gateway.restore(api_key, request.pop("backup_id"), request.pop("name"), **request)
                job = {"backup_id": step.request["backup_id"], "restore_job_id": answer.get("restore_job_id"), "status": "Pending"}
                return dataclasses.replace(step, restore=restore_report(step.request["backup_id"], job))
            created = await gateway.create(api_key, step.request)
        except PineconeCallError as exc:
            if exc.failure.status != 409:
                raise
            # A retried request or a concurrent creator got there first: judge what is there.
            index = await gateway.describe(api_key, name)
            step = decide(spec, who, index, known_index_name=known, polls=polls, timing=timing, restoring=restoring, restore_job=job)
            if step.action in ("create", "restore"):
                raise
        else:
            return dataclasses.replace(step, host=created.get("host"), state=(created.get("status") or {}).get("state"))
    if step.action == "configure":
        await gateway.configure(api_key, name, step.request)
    return step


async def _restore_facts(services: Services, api_key: str, spec: VectorIndexSpec, namespace: str,
                         index: dict[str, Any] | None, restored: dict[str, Any]) -> tuple[RestoreView | None, dict[str, Any] | None]:
    """For spec.restoreFrom: the backup to restore while the index is absent, and the restore
    job while one the status knows of has not finished."""
    source = spec.restore_from
    if source is None:
        return None, None
    if index is not None:
        job_id = restored.get("restoreJobId")
        if job_id and restored.get("state") not in ("Completed", "Failed", "Cancelled"):
            return None, await services.pinecone.describe_restore_job(api_key, job_id)
        return None, None
    backup_id = source.backup_id
    if source.backup_name is not None:
        vib = await services.kube.get("VectorIndexBackup", namespace, source.backup_name)
        found = (vib or {}).get("status") or {}
        if vib is None or found.get("phase") != "Ready" or not found.get("backupId"):
            state = "does not exist" if vib is None else f"is {found.get('phase') or 'Pending'}"
            msg = f"VectorIndexBackup {namespace}/{source.backup_name} {state}; restoring once it is Ready"
            return RestoreView(waiting=("False", "Restoring", msg)), None
        backup_id = found["backupId"]
    assert backup_id is not None
    return RestoreView(backup_id, await services.pinecone.describe_backup(api_key, backup_id)), None


async def _report(obj: dict, services: Services, ready: Cond, synced: Cond, step_events: tuple[Event, ...] = (),
                  cleared: tuple[str, ...] = (), **facts: Any) -> None:
    """Write the status when it changed, and post the pass's Events."""
    meta, old = obj["metadata"], obj.get("status") or {}
    new = next_status(old, meta.get("generation"), ready, synced, cleared, **facts)
    changes = status_changes(old, new)
    if changes:
        await services.kube.merge_patch(KIND, meta["namespace"], meta["name"], {"status": changes}, subresource="status")
    ready_now = (get_condition(new["conditions"], READY) or {}).get("status") == "True"
    services.metrics.index_ready(meta["namespace"], meta["name"], ready_now)
    for event in pass_events(step_events, old.get("conditions"), new["conditions"]):
        kopf.event(obj, type=event.type, reason=event.reason, message=event.message)


def connection_config_map(body: Any, spec: VectorIndexSpec, index_name: str, host: str, controller_host: str) -> dict:
    """The ConfigMap applications read the index from (owned by the VectorIndex)."""
    data = {"PINECONE_INDEX_NAME": index_name, "PINECONE_INDEX_HOST": host, **connection_fields(spec)}
    if controller_host:  # local mode or a proxy: applications must use the same control plane
        data["PINECONE_CONTROLLER_HOST"] = controller_host
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": spec.connection_config_map,
            "namespace": body["metadata"]["namespace"],
            "labels": {"app.kubernetes.io/managed-by": "pinery", "pinery.dev/vectorindex": body["metadata"]["name"]},
            "ownerReferences": [controller_reference(KIND, body["metadata"]["name"], body["metadata"]["uid"])],
        },
        "data": data,
    }


# --- delete -----------------------------------------------------------------------------

async def release(obj: dict, services: Services) -> None:
    """The finalizer: delete the index when policy, ownership and protection allow, wait until
    it is gone, and let the object go. Never raises: every way out is an Event."""
    meta, old = obj["metadata"], obj.get("status") or {}
    namespace, name = meta["namespace"], meta["name"]
    timing = services.vectorindex_timing

    def event(type_: str, reason: str, message: str) -> None:
        kopf.event(obj, type=type_, reason=reason, message=message)

    try:
        await services.kube.merge_patch(KIND, namespace, name, {"status": {"phase": "Terminating"}}, subresource="status")
    except KubeError:
        pass  # status is for display; the deletion goes on
    try:
        spec = VectorIndexSpec.model_validate(obj.get("spec") or {})
    except ValidationError:
        event("Warning", "InvalidSpec", "the spec is invalid, so no Pinecone index was touched")
        return
    # The index this object manages, even if its spec was changed where the CRD did not stop it.
    index_name = old.get("indexName") or spec.index_name_for(name)
    who = Identity(services.settings.cluster_name, namespace, name)
    landing_until = landing_deadline(old, timing)
    attempts = polls = 0
    posted: set[str] = set()  # reasons of the Events already posted (each once)
    while True:
        api_key = await pinecone_keys.api_key(spec.api_key_secret_ref, namespace, services)
        if api_key is None:
            ns, secret, _ = pinecone_keys.secret_ref(spec.api_key_secret_ref, namespace, services.settings)
            retry = deletion.after_missing_secret(attempts, index_created=bool(old.get("indexName")),
                                                  index_name=index_name, secret=f"{ns}/{secret}", timing=timing)
            attempts = retry.attempts
            if retry.give_up:
                if retry.event is not None:
                    event(retry.event.type, retry.event.reason, retry.event.message)
                break
            await asyncio.sleep(jitter(retry.delay or 0.0))
            continue
        try:
            index = await services.pinecone.describe(api_key, index_name)
            step = decide_deletion(spec, who, index, polls=polls, timing=timing, index_name=index_name,
                                   landing_until=landing_until, now=time.time())
            if step.action == "delete":
                await services.pinecone.delete(api_key, index_name)
        except PineconeCallError as exc:
            retry = deletion.after_failed_call(exc.failure, attempts, index_name=index_name, timing=timing)
            attempts = retry.attempts
            if retry.give_up:
                if retry.event is not None:
                    event(retry.event.type, retry.event.reason, retry.event.message)
                break
            log.warning("VectorIndex %s/%s: %s", namespace, name, retry.message)
            await asyncio.sleep(jitter(retry.delay or 0.0))
            continue
        if step.event is not None and step.event.reason not in posted:
            event(step.event.type, step.event.reason, step.event.message)
            posted.add(step.event.reason)
        if step.action == "release":
            break
        polls += 1
        await asyncio.sleep(step.requeue or timing.poll(polls))
    services.metrics.forget_index(namespace, name)


# --- helpers ----------------------------------------------------------------------------

def _ready_as_before(status: dict, cond: Cond) -> Cond:
    """Ready after a failure the operator retries by itself: a Pinecone hiccup is no evidence
    that a serving index stopped serving, so a True Ready stays. (Failures that need a person
    turn Ready False: a deployment waiting on Ready must not pass with a change refused.)"""
    ready = get_condition(status.get("conditions"), READY) or {}
    if ready.get("status") == "True":
        return (ready["status"], ready["reason"], ready.get("message", ""))
    return cond


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    return f"spec{'.' + where if where else ''}: {err['msg']}"
