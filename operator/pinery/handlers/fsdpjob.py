"""FSDPJob handlers: the kind's pass queue (pinery.handlers.pass_queue) runs each job's
reconcile loop; watch events of the job, its pods and its Workload wake it.

A pass reads the job, its pods, Service and ConfigMap from the API (not Kopf's cached body: the
restart protocol needs to see its own status writes), except the first pass of a new job, which
plans on Kopf's body with its first status write conditional on that body's resourceVersion
(`JobLoop.new_job_as_watched`). It asks `pinery.fsdpjob.plan` what to do, and applies the
Plan's steps in order. The planner takes some transitions in steps
(children created, then Created; Succeeded, then its TTL), so a pass plans again on what its
own writes returned, until the plan is idle, instead of waiting for the watch events of those
writes and reading everything again. The loop then sleeps until the plan's requeue time or
until something it did not write itself changes: a pod, or the job's spec.

A settled pass leaves a `Snapshot` of what it planned on, updated with its writes' answers; the
next pass plans on it instead of reading, unless a wake-up came (so the snapshot may be stale),
the pass failed or did not settle, or `JobTiming.resync` has passed on a job not finished. So a
running job costs a read of rank 0's new log lines and, when they moved, a status write per
progress interval, and a finished job nothing.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import time
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Mapping

import kopf

from pinery.api.base import GROUP, VERSION
from pinery.fsdpjob import kueue, log_tail, progress_from_logs, settling, stall_policy
from pinery.fsdpjob import plan as plan_job
from pinery.fsdpjob.gang import KIND_KEYS
from pinery.fsdpjob.gauges import job_gauges
from pinery.fsdpjob.log_cursor import TAIL_LINES, LogCursor
from pinery.fsdpjob.naming import LABEL_JOB, TRAINER_CONTAINER, config_map_name, pod_name, service_name
from pinery.fsdpjob.observe import view_pod
from pinery.fsdpjob.plan import Plan
from pinery.fsdpjob.settling import FINISHED
from pinery.gateways.kube import KubeError
from pinery.handlers.object_loop import ObjectLoop
from pinery.handlers.pass_queue import PassQueue
from pinery.services import Services

PLURAL = "fsdpjobs"
# Kopf's per-object loggers are adapters of its own logger
Logger = logging.Logger | logging.LoggerAdapter[Any]
# Plans one pass may apply on the answers to its own writes before it reads everything again.
MAX_ROUNDS = 4


class Wakeups:
    """The loop (`ObjectLoop`) of each job with passes, and what brings its next pass forward: a
    change the passes did not make themselves, that is a pod event (unless it is of a pod as a
    pass created it), or a new generation of the job's spec."""

    def __init__(self, make_loop: Callable[[tuple[str, str]], ObjectLoop] = lambda key: ObjectLoop()) -> None:
        self._make_loop = make_loop
        self._loops: dict[tuple[str, str], ObjectLoop] = {}
        self._own: dict[tuple[str, str], dict[str, str | None]] = {}  # pod name -> resourceVersion it was created with
        # pod name -> the resourceVersions its events showed while its creation was in flight
        self._creating: dict[tuple[str, str], dict[str, set[str | None]]] = {}
        self._queues: dict[tuple[str, str], str | None] = {}  # the queue-name label the last pass read
        # the names of the job's pods the watch shows (a job's, with passes or not: until the pods go)
        self._pods: dict[tuple[str, str], set[str]] = {}

    def loop(self, namespace: str, name: str) -> ObjectLoop:
        key = (namespace, name)
        if key not in self._loops:
            self._loops[key] = self._make_loop(key)
        return self._loops[key]

    def event(self, namespace: str, name: str) -> asyncio.Event:
        return self.loop(namespace, name).wake

    def wake(self, namespace: str, name: str) -> None:
        loop = self._loops.get((namespace, name))
        if loop is not None:
            loop.wake.set()

    def seen(self, namespace: str, name: str, generation: int | None) -> None:
        """A pass read the job at `generation`."""
        loop = self._loops.get((namespace, name))
        if loop is not None:
            loop.pass_read(generation)

    def job_changed(self, namespace: str, name: str, generation: int | None) -> None:
        loop = self._loops.get((namespace, name))  # none: no passes (yet, or any more)
        if loop is not None:
            loop.event_showed(generation)

    def queue_label(self, namespace: str, name: str, value: str | None, read: bool = False) -> None:
        """The job's queue-name label, as a pass read it (`read`) or an event shows it: a label
        changed since the last pass wakes the job (labels keep the generation), so that the
        Workload follows at once (kueue.queue_change)."""
        key, value = (namespace, name), value or None
        if read:
            self._queues[key] = value
        elif key in self._queues and self._queues[key] != value:
            self._queues[key] = value
            self.wake(namespace, name)

    def pod_seen(self, namespace: str, job: str, pod: str, gone: bool = False) -> None:
        """The watch showed `pod` (labelled as `job`'s), or its deletion."""
        key = (namespace, job)
        if not gone:
            self._pods.setdefault(key, set()).add(pod)
        elif key in self._pods:
            self._pods[key].discard(pod)
            if not self._pods[key]:
                del self._pods[key]

    def has_pods(self, namespace: str, job: str) -> bool:
        return (namespace, job) in self._pods

    def creating(self, namespace: str, job: str, pod: str) -> None:
        """A pass sends the creation of `pod`. The watch can bring the pod's event before the
        pass has the answer (which says what resourceVersion it made): such events are held
        until `created` or `not_created` tells whether they were only the creation's."""
        self._creating.setdefault((namespace, job), {})[pod] = set()

    def created(self, namespace: str, job: str, pod: dict[str, Any]) -> None:
        """`pod` as the API server answered its creation: it has a name."""
        meta = pod["metadata"]
        rv = meta.get("resourceVersion")
        self._own.setdefault((namespace, job), {})[meta["name"]] = rv
        if self._held(namespace, job, meta["name"]) - {rv}:
            self.wake(namespace, job)  # changed already since its creation (bound, say)

    def not_created(self, namespace: str, job: str, pod: str) -> None:
        if self._held(namespace, job, pod):
            self.wake(namespace, job)  # whatever it was, the pass did not make it

    def _held(self, namespace: str, job: str, pod: str) -> set[str | None]:
        creating = self._creating.get((namespace, job), {})
        held = creating.pop(pod, set())
        if not creating:
            self._creating.pop((namespace, job), None)
        return held

    def pod_changed(self, namespace: str, job: str, pod: str, resource_version: str | None) -> None:
        held = self._creating.get((namespace, job), {}).get(pod)
        if held is not None:
            held.add(resource_version)
        elif self._own.get((namespace, job), {}).get(pod) != resource_version:
            self.wake(namespace, job)

    def deleted(self, namespace: str, name: str) -> None:
        """The job is gone: a pass in flight writes nothing more (`ObjectLoop.gone`), and a new
        job of the same name gets a loop of its own."""
        loop = self._loops.pop((namespace, name), None)
        if loop is not None:
            loop.gone = True
            loop.wake.set()

    def forget(self, namespace: str, name: str, loop: ObjectLoop) -> None:
        """The passes that ran `loop` have ended; what they kept goes, unless a new job of the
        same name (created after the old one's deletion) has its own loop by now."""
        key = (namespace, name)
        if self._loops.get(key, loop) is not loop:
            return
        self._loops.pop(key, None)
        self._own.pop(key, None)
        self._creating.pop(key, None)
        self._queues.pop(key, None)


def register(registry: kopf.OperatorRegistry, services: Services) -> PassQueue:
    """The handlers of FSDPJobs, and the queue that runs their passes (started and stopped by
    pinery.handlers.queues)."""
    resource = (GROUP, VERSION, PLURAL)
    queue = PassQueue("FSDPJob", services.settings.workers, paused=bool(services.settings.peering))
    wakeups = Wakeups(lambda key: queue.wired(key, ObjectLoop()))

    def start(namespace: str, name: str, body: kopf.Body, logger: Any) -> None:
        """Run passes for the job from now on. Its logger posts warnings as Events on the job,
        as Kopf's daemon loggers did."""
        key = (namespace, name)
        job = JobLoop(namespace, name, services, kopf.ObjectLogger(body=body, settings=logger.extra["settings"]), wakeups,
                      has_pods=lambda: wakeups.has_pods(namespace, name), watched=body, uid=body.get("metadata", {}).get("uid"))

        def ended(why: str) -> None:
            wakeups.forget(namespace, name, job.loop)
            if why != "settled":
                services.metrics.forget_job(namespace, name)  # settled: its last gauges stay
            logger.info("FSDPJob %s/%s: passes ended (%s)", namespace, name, why)

        queue.add(key, job.loop, job.step, on_error=job.failed, on_end=ended)

    # Handler ids are explicit, and equal to the ids Kopf derived from the functions'
    # __qualname__ before (kopf.get_callable_id): never change them.
    # Every event of a job, the first listing's too, comes here: a job with work left and no
    # passes gets them; one settled (pinery.fsdpjob.settling) or being deleted has none. Jobs
    # carry no finalizer: deleting one never waits for the operator (nor for one that is down or
    # uninstalled), and the children go with it by their ownerReferences.
    @kopf.on.event(*resource, id="register.<locals>.fsdpjob_event", registry=registry)
    async def fsdpjob_event(type, namespace, name, meta, status, body, logger, **_):
        queue.start()  # once: in a handler's context (PassQueue.start)
        key = (namespace, name)
        if type == "DELETED":
            services.metrics.forget_job(namespace, name)
            wakeups.deleted(namespace, name)  # a pass in flight writes nothing more
            queue.end(key, "gone")
            return
        # every job's phase, a settled one's too, which has no passes to count it
        services.metrics.job_phase(namespace, name, (status or {}).get("phase"))
        if meta.get("deletionTimestamp"):
            queue.end(key, "deleted")  # the children go with it (ownerReferences)
        elif not settling.daemon_wanted(status, meta):
            queue.end(key, "settled")
        elif key not in queue:
            start(namespace, name, body, logger)
        else:
            wakeups.job_changed(namespace, name, meta.get("generation"))
        wakeups.queue_label(namespace, name, (meta.get("labels") or {}).get(kueue.QUEUE_LABEL))

    # A job's Workload changed (Kueue admitted or evicted it, ...): wake the job. Kopf
    # watches the resource once its CRD exists (none without Kueue).
    @kopf.on.event("kueue.x-k8s.io", "v1beta2", "workloads", id="fsdpjob_workload_event",
                   labels={kueue.JOB_UID_LABEL: kopf.PRESENT}, registry=registry)
    async def fsdpjob_workload_event(namespace, name, meta, **_):
        owners = [o for o in meta.get("ownerReferences") or []
                  if o.get("kind") == "FSDPJob" and str(o.get("apiVersion", "")).startswith(f"{GROUP}/")]
        for owner in owners:
            wakeups.wake(namespace, owner["name"])
        if owners and meta.get("deletionTimestamp") and kueue.FINALIZER in (meta.get("finalizers") or []):
            await release_orphan(services.kube, namespace, name, meta, owners[0])

    # Which jobs have pods, by the pod watch: a new job with none skips its first pod list. Not a
    # Kopf index: until an operator's first listings are indexed, Kopf makes each listed object's
    # worker wait on one condition that every other listed object notifies
    # (kopf/_core/reactor/queueing.py `watcher`, `operator_indexed.make_toggle`), which grew with
    # the square of the objects: a restart over 10,000 objects spent more than 10 minutes there
    # and made no request (benchmarks/operator_memory.py). What this costs instead: pods whose
    # listing has not reached this handler yet are not known, which matters only to a job without
    # a status (no pods of pinery's making, the restart protocol); one that has pods anyway (a
    # status lost in a restore) plans once without them, and its next full read sees them.
    @kopf.on.event("", "v1", "pods", id="register.<locals>.fsdpjob_pod_event", labels={LABEL_JOB: kopf.PRESENT},
                   registry=registry)
    async def fsdpjob_pod_event(type, namespace, name, labels, meta, **_):
        wakeups.pod_seen(namespace, labels[LABEL_JOB], name, gone=type == "DELETED")
        wakeups.pod_changed(namespace, labels[LABEL_JOB], name, meta.get("resourceVersion"))

    return queue


async def release_orphan(kube: Any, namespace: str, name: str, meta: dict, owner: dict) -> None:
    """A Workload being deleted whose FSDPJob is gone (the garbage collector deletes it after
    the job): no daemon is left to remove Kueue's finalizer, and Kueue's workload controller
    removes it only from Workloads without owners (`isOrphanedWorkload`). A live job's daemon
    handles its own Workload's deletion."""
    job = await kube.get("FSDPJob", namespace, owner["name"])
    if job is not None and job["metadata"].get("uid") == owner.get("uid") and not job["metadata"].get("deletionTimestamp"):
        return
    finalizers = [f for f in meta.get("finalizers") or [] if f != kueue.FINALIZER]
    try:
        await kube.merge_patch("Workload", namespace, name,
                               {"metadata": {"resourceVersion": meta.get("resourceVersion"), "finalizers": finalizers or None}})
    except KubeError as exc:
        if exc.status not in (404, 409):  # gone, or changed: its next event comes here again
            raise


def refused(exc: KubeError) -> bool:
    """The API server will not create this as it is (quota, admission, validation): retrying
    at once changes nothing, and the user must hear of it. 409 and 429 are not refusals."""
    return 400 <= exc.status < 500 and exc.status not in (409, 429)


@dataclass(frozen=True)
class Snapshot:
    """The job and its children as the last settled pass left them: what it read, updated with
    the answers to its own writes. The next pass plans on it instead of reading them again
    unless something woke the daemon (a pod, the spec), the last pass failed or did not
    settle, or, while the job is not finished, it is older than `resync` (what no watch
    covers: the Service, the ConfigMap).

    Kept as compressed JSON: as decoded objects a 2-node job's came to about 48 KiB of live
    memory (benchmarks/operator_memory.py --trace), held for as long as the job stays settled;
    compressed, a few KiB, and each pass that uses it decodes its own copy."""

    blob: bytes
    phase: str | None
    taken_at: float

    @classmethod
    def take(cls, job: dict[str, Any], pods: list[dict[str, Any]], service: dict[str, Any] | None,
             config_map: dict[str, Any] | None) -> "Snapshot":
        objects = [_lean(job), [_lean(p) for p in pods], _lean(service), _lean(config_map)]
        # One call: zlib lets go of the GIL in each, and in a burst the Kubernetes client's
        # threads take it meanwhile (docs/performance.md, "FSDPJob: create to children").
        blob = zlib.compress(json.dumps(objects, separators=(",", ":")).encode(), 1)
        return cls(blob, (job.get("status") or {}).get("phase"), time.monotonic())

    def open(self) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any] | None, dict[str, Any] | None]:
        job, pods, service, config_map = json.loads(zlib.decompress(self.blob))
        return job, pods, service, config_map


def _lean(obj: Any) -> Any:
    """The object without metadata.managedFields, which no plan reads and which is often half of
    it."""
    meta = (obj or {}).get("metadata") or {}
    if "managedFields" not in meta:
        return obj
    return {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}


def rank0_uid(name: str, pods: list[dict[str, Any]]) -> str | None:
    rank0 = pod_name(name, 0)
    return next((p["metadata"].get("uid") for p in pods if p["metadata"]["name"] == rank0), None)


class JobLoop:
    """One job's passes, run by its `ObjectLoop`; keeps the refused creations, the snapshot of
    the last settled pass and the place in rank 0's log between them."""

    def __init__(self, namespace: str, name: str, services: Services, logger: Logger, wakeups: Wakeups | None = None,
                 has_pods: Callable[[], bool] | None = None, watched: Mapping[str, Any] | None = None,
                 uid: str | None = None):
        self.namespace, self.name = namespace, name
        # The job this loop is for: a job of the same name with another uid is a new one, made
        # after this one's deletion, with a daemon of its own.
        self.uid = uid
        # Whether the pod watch shows pods of this job (Wakeups.has_pods); None: unknown, list them.
        self.has_pods = has_pods
        # The job as Kopf's watch last showed it (its live body), for the first pass of a new job;
        # None once a pass has run.
        self.watched = watched
        self.services, self.logger = services, logger
        self.wakeups = wakeups or Wakeups()
        self.loop = self.wakeups.loop(namespace, name)
        # Creations the API server refused in the last pass: `Kind/name` -> its message.
        self.refused: dict[str, str] = {}
        self.refusals = 0
        self.snapshot: Snapshot | None = None
        self.cursor = LogCursor()

    def failed(self, exc: Exception) -> float:
        """A pass failed (an API error, the API server unreachable, or a bug): try again later."""
        self.snapshot = None
        delay = self.loop.failed(self.services.fsdpjob_timing.retry)
        self.logger.warning(
            "reconcile of FSDPJob %s/%s failed: %s; retrying in %.0fs", self.namespace, self.name, exc, delay,
            exc_info=not isinstance(exc, KubeError),
        )
        self.services.metrics.reconciled("FSDPJob", "error")
        return delay

    async def step(self) -> float | None:
        """One pass; seconds until the next, or None when the job is gone. Raises when it
        failed (the loop backs off: `failed`)."""
        delay = await self.reconcile()
        self.loop.failures = 0
        if delay is None:
            return None
        if self.refused:
            self.refusals += 1
            return min(delay, self.services.fsdpjob_timing.refusal(self.refusals))
        self.refusals = 0
        return delay

    def reusable(self) -> Snapshot | None:
        """The last snapshot, when this pass may plan on it rather than read."""
        snapshot, self.snapshot = self.snapshot, None
        if snapshot is None or self.loop.woken:
            return None
        finished = snapshot.phase in FINISHED
        if not finished and time.monotonic() - snapshot.taken_at > self.services.fsdpjob_timing.resync:
            return None  # a finished job has no use for its Service or ConfigMap: no resync
        return snapshot

    def without_pods(self, job: Mapping[str, Any]) -> bool:
        """A job that has no pods to list: no status, so none of pinery's making (a pass writes
        the status before it creates anything: the restart protocol), and none of anyone's that
        the pod watch shows (one from a status lost in a restore is listed: its attempt label is
        the witness of the restarts that status held)."""
        return not job.get("status") and self.has_pods is not None and not self.has_pods()

    def same_job(self, job: Mapping[str, Any]) -> bool:
        return self.uid is None or (job.get("metadata") or {}).get("uid") == self.uid

    def new_job_as_watched(self) -> dict[str, Any] | None:
        """The job as the watch shows it, when the first pass may plan on that instead of reading
        it: a new job without pods (`without_pods`), not being deleted. Its first status write
        is conditional on this resourceVersion, so a body older than a write it does not show
        costs a 409 and a fresh read, never a status written over."""
        if self.watched is None or not self.without_pods(self.watched):
            return None
        meta = self.watched.get("metadata") or {}
        if meta.get("deletionTimestamp") or not meta.get("resourceVersion"):
            return None
        return copy.deepcopy(dict(self.watched))

    async def reconcile(self) -> float | None:
        kube, namespace, name = self.services.kube, self.namespace, self.name
        snapshot = self.reusable()
        watched = self.new_job_as_watched() if snapshot is None else None
        precondition = None
        if snapshot is not None:
            job, pods, service, config_map = snapshot.open()
        elif watched is not None:
            job, pods, service, config_map = watched, [], None, None
            precondition = job["metadata"]["resourceVersion"]
        else:
            found = await kube.get("FSDPJob", namespace, name)
            if found is None or found["metadata"].get("deletionTimestamp") or not self.same_job(found):
                return None  # the children go with it (ownerReferences)
            job = found
            pods = [] if self.without_pods(job) else await kube.list("Pod", namespace, label_selector=f"{LABEL_JOB}={name}")
            service, config_map = await read_service_and_config_map(kube, job, pods)
        self.watched = None  # planned on once: a later pass reads
        self.wakeups.seen(namespace, name, job["metadata"].get("generation"))
        self.wakeups.queue_label(namespace, name, kueue.queue_name(job), read=True)
        read = job
        queue = await read_queue(kube, job)
        pod_groups = await read_pod_groups(kube, job)
        # The watchdog decides on the step: read it now, not after the plan as otherwise.
        fresh = stall_policy.watching(job)
        if fresh:
            job = await self.refresh_progress(job, job.get("status") or {}, pods) or job
        failure_logs = await read_failure_logs(kube, job, pods)
        cluster_nodes = None
        for _ in range(MAX_ROUNDS):
            if cluster_nodes is None:  # again after a pass that began avoiding nodes
                cluster_nodes = await read_cluster_nodes(kube, job)
            result = plan_job(
                job, pods, datetime.now(timezone.utc),
                service=service, config_map=config_map, settings=self.services.settings, refused=self.refused,
                timing=self.services.fsdpjob_timing, pod_groups=pod_groups, failure_logs=failure_logs, cluster_nodes=cluster_nodes,
                **queue.args(),
            )
            applied = await apply(result, job, self.services, self.logger, self.wakeups, precondition,
                                  gone=lambda: self.loop.gone)
            precondition = None  # the next round plans on this one's answers
            if applied.stale:
                return 0.0  # a precondition failed: someone else wrote first; read everything again
            self.refused = applied.refused
            self.services.metrics.reconciled("FSDPJob", "idle" if result.idle else "changed")
            self.services.metrics.job_phase(namespace, name, result.status.get("phase"))
            if result.delete_job:
                return None
            # What the next pass would read, from the answers to this one's writes.
            job = applied.job or job
            pods = _replaced(pods, applied.created.get("Pod", []))
            service = _newest(applied.created.get("Service"), service)
            config_map = _newest(applied.created.get("ConfigMap"), config_map)
            if result.idle or result.delete_pods or applied.refused or not (applied.job or applied.created):
                # Settled; or pods are going (their events wake the daemon); or a creation was
                # refused (retried with backoff); or nothing was written that would change the plan.
                break
            queue.workload = applied.workload or _newest(applied.created.get("Workload"), queue.workload)
            if pod_groups is not None:
                pod_groups = _replaced(pod_groups, applied.created.get("PodGroup", []))
        else:
            return 0.0  # still changing: look again with fresh reads
        if fresh:
            progress = (result.status or {}).get("progress")  # read before the plan (the watchdog)
        else:
            patched = await self.update_progress(read, result, pods)
            job = patched or job
            progress = (job.get("status") or {}).get("progress") if patched else (result.status or {}).get("progress")
        if result.idle and not applied.refused:
            job = await self.settle(job, result, pods) or job
            # Planned on what is now true of the job and its children: the next pass, if
            # nothing wakes the daemon first, may plan on it again.
            self.snapshot = Snapshot.take(job, pods, service, config_map)
        published = {**result.status, "progress": progress} if progress is not None else result.status
        self.services.metrics.job_gauges(namespace, name, job_gauges(published, job.get("spec")))
        return result.requeue_after if result.requeue_after is not None else self.services.fsdpjob_timing.idle

    async def settle(self, job: dict, result: Plan, pods: list[dict[str, Any]]) -> dict | None:
        """Write status.settledGeneration when this pass left the job settled (settling.at_rest);
        the job as patched, or None. The event of the write stops the daemon."""
        generation = job["metadata"].get("generation") or 0
        if (job.get("status") or {}).get("settledGeneration") == generation:
            return None
        # the pods viewed lazily: a job not finished is decided on its phase alone
        if not settling.at_rest(result.status.get("phase"), result.idle, result.requeue_after, bool(self.refused),
                                (view_pod(p) for p in pods)):
            return None
        patched: dict = await self.services.kube.merge_patch(
            "FSDPJob", self.namespace, self.name, {"status": {"settledGeneration": generation}}, subresource="status")
        return patched

    async def update_progress(self, job: dict, result: Plan, pods: list[dict[str, Any]]) -> dict | None:
        """Read rank 0's new log lines and publish the trainer's progress (pods need no API
        access); the job as patched, or None when nothing changed."""
        phase = result.status.get("phase")
        if phase not in ("Running", "Succeeded", "Restarting"):
            return None
        if phase == "Succeeded" and (job.get("status") or {}).get("phase") == "Succeeded":
            return None  # the last lines were read when the job succeeded
        return await self.refresh_progress(job, result.status, pods)

    async def refresh_progress(self, job: dict, status: dict, pods: list[dict[str, Any]]) -> dict | None:
        """Read rank 0's log since the last read into status.progress; the job as patched, or
        None when nothing changed."""
        namespace, name = self.namespace, self.name
        uid = rank0_uid(name, pods)
        try:
            text = await self.services.kube.pod_log(
                namespace, pod_name(name, 0), container=TRAINER_CONTAINER, tail_lines=TAIL_LINES, timestamps=True,
                since_time=self.cursor.since_time(uid),
            )
        except KubeError:
            return None  # no pod or no log yet
        self.cursor.advance(uid, text)
        previous = status.get("progress")
        progress = progress_from_logs(text, datetime.now(timezone.utc), previous=previous)
        if progress is None or progress == previous:
            return None
        patched: dict = await self.services.kube.merge_patch(
            "FSDPJob", namespace, name, {"status": {"progress": progress}}, subresource="status")
        return patched


@dataclass
class Queue:
    """What a pass reads of a Kueue-queued job's world (pinery.fsdpjob.kueue): its Workload by
    its deterministic name, the ResourceFlavors its admission assigns, and, while there is no
    Workload, whether the API server serves Workloads at all and the job's priority class."""

    under_kueue: bool = False  # labelled, or was (kueue.under_kueue)
    workload: dict | None = None
    flavors: dict[str, dict] = field(default_factory=dict)
    served: bool = True
    priority: tuple[kueue.PriorityRef, int | None] | None = None

    def args(self) -> dict[str, Any]:
        if not self.under_kueue:
            return {}
        return {"workload": self.workload, "flavors": self.flavors, "kueue_served": self.served, "priority": self.priority}


async def read_service_and_config_map(kube: Any, job: dict, pods: list[dict[str, Any]]) -> tuple[dict | None, dict | None]:
    """The job's Service and ConfigMap; (None, None) unread for a job that has neither a status
    nor pods. A pass writes the status before it creates anything (docs/fsdpjob.md "The restart
    protocol"), so such a job has no children of pinery's making; one left by something else
    (a job of the same name before it, a status lost with `kubectl replace`) makes the create
    fail with 409, and the next pass reads everything."""
    meta = job["metadata"]
    if not job.get("status") and not pods:
        return None, None
    service = await kube.get("Service", meta["namespace"], service_name(meta["name"]))
    config_map = await kube.get("ConfigMap", meta["namespace"], config_map_name(meta["name"]))
    return service, config_map


async def read_queue(kube: Any, job: dict) -> Queue:
    if not kueue.under_kueue(job):
        return Queue()
    meta = job["metadata"]
    queue = Queue(under_kueue=True)
    queue.workload = await kube.get("Workload", meta["namespace"], kueue.workload_name(meta["name"], meta.get("uid") or ""))
    if queue.workload is None:
        queue.served = await kube.served("Workload")
        ref = kueue.priority_ref(job)
        if queue.served and ref is not None:
            found = await kube.get(ref.kind, None, ref.name)
            queue.priority = (ref, int(found["value"]) if found is not None else None)
        return queue
    for flavor in kueue.assigned_flavors(queue.workload):
        found = await kube.get("ResourceFlavor", None, flavor)
        if found is not None:
            queue.flavors[flavor] = found
    return queue


async def read_pod_groups(kube: Any, job: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The job's PodGroups in its scheduler's API group (spec.gang), by the job-name label; None
    when the API server does not serve that API (its CRD is not installed: the list is a 404)."""
    scheduler = ((job.get("spec") or {}).get("gang") or {}).get("scheduler")
    if scheduler not in KIND_KEYS:
        return []
    meta = job["metadata"]
    try:
        groups: list[dict[str, Any]] = await kube.list(KIND_KEYS[scheduler], meta["namespace"], label_selector=f"{LABEL_JOB}={meta['name']}")
    except KubeError as exc:
        if exc.status == 404:
            return None
        raise
    return groups


async def read_failure_logs(kube: Any, job: dict[str, Any], pods: list[dict[str, Any]]) -> dict[str, str]:
    """The log tails of the failed pods whose failure is not recorded yet (log_tail.logs_to_read),
    by pod name; a log that cannot be read is left out (the termination message stands in)."""
    names = log_tail.logs_to_read(job.get("status") or {}, [view_pod(p) for p in pods])
    out: dict[str, str] = {}
    for name in names:
        try:
            out[name] = await kube.pod_log(job["metadata"]["namespace"], name, container=TRAINER_CONTAINER, tail_lines=log_tail.READ_LINES)
        except KubeError:
            continue  # no log (never started, or its node is gone)
    return out


async def read_cluster_nodes(kube: Any, job: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The cluster's Nodes, for a job that avoids some and leaves the choice of required or
    preferred to the operator (node_avoidance.mode); None when not needed, or when the operator
    may not list Nodes (then the avoidance is preferred)."""
    if not (job.get("status") or {}).get("avoidedNodes"):
        return None
    if ((job.get("spec") or {}).get("nodeAvoidance") or {}).get("mode", "Auto") != "Auto":
        return None
    try:
        nodes: list[dict[str, Any]] = await kube.list("Node", None)
    except KubeError as exc:
        if exc.status in (401, 403, 404):
            return None
        raise
    return nodes


def _newest(created: list[dict[str, Any]] | None, read: dict[str, Any] | None) -> dict[str, Any] | None:
    """The last of the objects created, else the one read."""
    return created[-1] if created else read


def _replaced(objects: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`objects` with those of the same names as `new` replaced by them, and the rest added."""
    names = {o["metadata"]["name"] for o in new}
    return [o for o in objects if o["metadata"]["name"] not in names] + new


@dataclass
class Applied:
    refused: dict[str, str] = field(default_factory=dict)  # `Kind/name` -> the API server's message
    job: dict | None = None  # the job as its status patch left it
    created: dict[str, list[dict]] = field(default_factory=dict)  # kind -> the objects as the API server answered
    workload: dict | None = None  # the Workload as the last patch of it left it
    stale: bool = False  # a patch's resourceVersion precondition failed (409)


async def apply(result: Plan, job: dict, services: Services, logger: Logger, wakeups: Wakeups,
                precondition: str | None = None, gone: Callable[[], bool] = lambda: False) -> Applied:
    """Apply the plan's steps in order; with `precondition`, the status write only if the job's
    resourceVersion is still that (it was planned on the watch's body, not a read). Once `gone`
    (the job's DELETED event came) nothing more is written: the names are free for a new job."""
    kube = services.kube
    namespace, name = job["metadata"]["namespace"], job["metadata"]["name"]
    applied = Applied()
    for action, payload in result.steps():
        if gone():
            applied.stale = True  # the next pass reads the job: gone
            return applied
        if action == "patch_status":
            patch: dict[str, Any] = {"status": payload}
            if precondition is not None:
                patch["metadata"] = {"resourceVersion": precondition}
            try:
                applied.job = await kube.merge_patch("FSDPJob", namespace, name, patch, subresource="status")
            except KubeError as exc:
                if precondition is None or exc.status not in (404, 409):
                    raise
                applied.stale = True  # the job changed since the watch showed it: read it
                return applied
            added = (payload.get("restarts") or 0) - ((job.get("status") or {}).get("restarts") or 0)
            if added > 0:
                services.metrics.fsdpjob_restarts.labels(namespace).inc(added)
        elif action == "patch":
            try:
                patched = await kube.merge_patch(payload.kind, namespace, payload.name, payload.patch, subresource=payload.subresource)
            except KubeError as exc:
                if exc.status not in (404, 409):
                    raise
                applied.stale = True  # changed or gone since it was read: plan again on a fresh read
                return applied
            if payload.kind == "Workload":
                applied.workload = patched
        elif action == "delete_pod":
            await kube.delete("Pod", namespace, payload.name, uid=payload.uid, grace_seconds=0 if payload.force else None)
        elif action == "delete_object":
            await kube.delete(payload.kind, namespace, payload.name, uid=payload.uid)
        elif action == "create":
            pod = payload["metadata"]["name"] if payload["kind"] == "Pod" else None
            if pod is not None:
                wakeups.creating(namespace, name, pod)
            try:
                created = await kube.create(payload)
            except BaseException as exc:  # cancelled too: no event stays held
                if pod is not None:
                    wakeups.not_created(namespace, name, pod)
                if not isinstance(exc, KubeError) or not refused(exc):
                    raise
                key = f"{payload['kind']}/{payload['metadata']['name']}"
                applied.refused[key] = exc.message
                logger.warning("FSDPJob %s/%s: the API server refused to create %s: %s", namespace, name, key, exc)
                continue
            applied.created.setdefault(payload["kind"], []).append(created)
            if payload["kind"] == "Pod":
                wakeups.created(namespace, name, created)
        elif action == "event":
            kopf.event(job, type=payload.type, reason=payload.reason, message=payload.message)
            if payload.reason == stall_policy.REASON:  # one Stalled Event per stall, restarted or failed
                services.metrics.fsdpjob_stalls.labels(namespace).inc()
        elif action == "delete_job":
            logger.info("deleting FSDPJob %s/%s: ttlSecondsAfterFinished has passed", namespace, name)
            await kube.delete("FSDPJob", namespace, name, propagation="Background")
    return applied
