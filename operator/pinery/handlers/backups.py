"""VectorIndexBackup handlers: a daemon per object makes the backup once and follows it until
Pinecone says Ready or Failed, then ends; the finalizer deletes the Pinecone backup unless the
object says Retain.

A pass reads the object, finds the index to back up (a VectorIndex's, or one named directly)
and its API key, asks `pinery.backups.backup_policy.decide_backup`, makes the call it says, and
writes status and an Event. A finished backup costs nothing: its daemon has ended, and one
resumed after a restart sees the finished status and ends without a Pinecone call.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import kopf
from pydantic import ValidationError

from pinery.api.backups import VectorIndexBackupSpec
from pinery.api.base import GROUP, VERSION, SecretKeyRef, has_finalizer
from pinery.api.conditions import now_rfc3339
from pinery.api.vectorindex import VectorIndexSpec
from pinery.backups import backup_policy
from pinery.backups.status import next_backup_status, ready_event
from pinery.gateways.pinecone import PineconeCallError
from pinery.handlers import pinecone_keys
from pinery.handlers.object_loop import ObjectLoop, PassesInFlight
from pinery.services import Services
from pinery.vectorindex import observed
from pinery.vectorindex.errors import classify, outcome_unknown
from pinery.vectorindex.status import Cond, status_changes

KIND = "VectorIndexBackup"
PLURAL = "vectorindexbackups"
# Set on the backups a VectorIndexBackupSchedule makes: which schedule (metrics, retention).
SCHEDULE_LABEL = f"{GROUP}/backup-schedule"
CREATE_SENT_AT = "createSentAt"
# Attempts the finalizer makes to delete a Pinecone backup before it lets the object go.
RELEASE_ATTEMPTS = 10
STOP_GRACE_SECONDS = 30.0
# Failures after which a pass never runs again (a terminal Pinecone answer ends the daemon, but
# an operator restart looks once more: the Secret or the account may have been fixed).
FINAL_REASONS = ("BackupFailed", "BackupNotFound", "NotSupported", "InvalidSpec")

log = logging.getLogger("pinery.backups")


class Source:
    """The index to back up and the Secret key of its API key, or why they are not known."""

    def __init__(self, index_name: str | None, ref: SecretKeyRef | None, waiting: Cond | None = None):
        self.index_name, self.ref, self.waiting = index_name, ref, waiting


def register(registry: kopf.OperatorRegistry, services: Services) -> None:
    resource = (GROUP, VERSION, PLURAL)
    timed_pass = services.metrics.timed(KIND, "reconcile")(reconcile)
    # A pass may be creating the backup while the delete handler runs (see PassesInFlight).
    in_flight = PassesInFlight()

    @kopf.daemon(*resource, id="vectorindexbackup_daemon", registry=registry, cancellation_timeout=STOP_GRACE_SECONDS)
    async def vectorindexbackup_daemon(namespace, name, stopped, **_):
        loop = ObjectLoop()

        def failed(exc: Exception) -> float:
            log.warning("VectorIndexBackup %s/%s: pass failed (%s)", namespace, name, exc)
            services.metrics.reconciled(KIND, "error")
            return loop.failed(lambda n: services.vectorindex_timing.retry(n - 1))

        await loop.run(lambda: in_flight.run((namespace, name), lambda: timed_pass(namespace, name, services, loop)),
                       stopped, on_error=failed)

    @kopf.on.delete(*resource, id="vectorindexbackup_delete", registry=registry)
    @services.metrics.timed(KIND, "delete")
    async def vectorindexbackup_delete(body, namespace, name, retry, **_):
        # Let a pass in flight finish, then decide on the object as it is now: its status may
        # say a create was sent after the body this handler was given.
        await in_flight.until_idle((namespace, name), STOP_GRACE_SECONDS)
        fresh = await services.kube.get(KIND, namespace, name)
        await release(dict(fresh if fresh is not None else body), services, retry)


# --- reconcile --------------------------------------------------------------------------

async def reconcile(namespace: str, name: str, services: Services, loop: ObjectLoop) -> float | None:
    """One pass; returns when to look again, or None when there is nothing more to do."""
    obj = await services.kube.get(KIND, namespace, name)
    if obj is None or obj["metadata"].get("deletionTimestamp"):
        return None
    meta = obj["metadata"]
    old = obj["status"] = obj.get("status") or {}
    timing = services.vectorindex_timing
    if finished(old):
        return None  # a backup is made once
    if not has_finalizer(meta):
        # Nothing is made before the finalizer is there to delete it (as for a VectorIndex).
        return timing.poll(0)
    try:
        spec = VectorIndexBackupSpec.model_validate(obj.get("spec") or {})
    except ValidationError as exc:
        await _report(obj, services, ("False", "InvalidSpec", str(exc.errors()[0]["msg"])))
        return None

    source = await _source(spec, namespace, services)
    if source.waiting is not None:
        await _report(obj, services, source.waiting)
        return loop.failed(lambda n: timing.secret_retry(n - 1))
    assert source.index_name is not None
    key = await pinecone_keys.api_key(source.ref, namespace, services)
    if key is None:
        await _report(obj, services, ("False", "SecretNotFound", pinecone_keys.missing_key_message(source.ref, namespace, services.settings)))
        return loop.failed(lambda n: timing.secret_retry(n - 1))

    gateway, index_name = services.pinecone, source.index_name
    name_in_pinecone = backup_policy.backup_name(name, meta["uid"])
    known, sent = old.get("backupId"), old.get(CREATE_SENT_AT)
    try:
        backup = index = None
        if known:
            backup = await gateway.describe_backup(key, known)
        elif sent:
            backup = await gateway.find_backup(key, index_name, name_in_pinecone)
        if backup is None and not known:
            index = await gateway.describe(key, index_name)
        step = backup_policy.decide_backup(backup=backup, known_id=known, create_sent_at=sent, index=index,
                                           index_kind=observed.deployment_type(index) if index else None,
                                           index_name=index_name, now=time.time(), polls=loop.failures, timing=timing)
        if step.action == "create":
            mark = {CREATE_SENT_AT: now_rfc3339(), "indexName": index_name, "backupName": name_in_pinecone,
                    "apiKeySecretRef": source.ref.to_api() if source.ref else None}
            await services.kube.merge_patch(KIND, namespace, name, {"status": {k: v for k, v in mark.items() if v}}, subresource="status")
            old.update({k: v for k, v in mark.items() if v})
            created = await gateway.create_backup(key, index_name, name_in_pinecone, spec.description)
            step = backup_policy.decide_backup(backup=created, known_id=None, create_sent_at=None, index=None, index_kind=None,
                                               index_name=index_name, now=time.time(), timing=timing)
    except PineconeCallError as exc:
        verdict = classify(exc.failure, loop.failures, timing)
        answered = exc.failure.operation == "create_backup" and not outcome_unknown(exc.failure)
        await _report(obj, services, ("False", verdict.reason, verdict.message), cleared=(CREATE_SENT_AT,) if answered else ())
        if verdict.terminal:
            return None
        return loop.failed(lambda n: verdict.delay or timing.retry(n - 1))

    loop.failures = 0 if step.action != "wait" else loop.failures + 1
    known_now = step.facts.get("backupId") is not None
    await _report(obj, services, step.ready, cleared=(CREATE_SENT_AT,) if known_now else (), **step.facts)
    return step.requeue


def finished(status: dict[str, Any]) -> bool:
    """Whether the backup is done with: Ready, or failed for good (Pinecone's Failed, gone,
    not possible for this index, or an invalid spec, which cannot change)."""
    reason = next((c.get("reason") for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
    return status.get("phase") == "Ready" or (status.get("phase") == "Failed" and reason in FINAL_REASONS)


async def _source(spec: VectorIndexBackupSpec, namespace: str, services: Services) -> Source:
    """The index a backup is of, and whose key reads it."""
    if spec.index_name is not None:
        return Source(spec.index_name, spec.api_key_secret_ref)
    assert spec.vector_index_name is not None
    vi = await services.kube.get("VectorIndex", namespace, spec.vector_index_name)
    if vi is None:
        return Source(None, None, ("False", "VectorIndexNotFound", f"VectorIndex {namespace}/{spec.vector_index_name} does not exist"))
    index_name = (vi.get("status") or {}).get("indexName")
    if not index_name:
        msg = f"VectorIndex {namespace}/{spec.vector_index_name} has no Pinecone index yet"
        return Source(None, None, ("False", "IndexNotReady", msg))
    try:
        ref = VectorIndexSpec.model_validate(vi.get("spec") or {}).api_key_secret_ref
    except ValidationError:
        ref = None
    return Source(index_name, ref)


async def _report(obj: dict, services: Services, ready: Cond, cleared: tuple[str, ...] = (), **facts: Any) -> None:
    meta, old = obj["metadata"], obj.get("status") or {}
    new = next_backup_status(old, meta.get("generation"), ready, cleared, **facts)
    changes = status_changes(old, new)
    if changes:
        await services.kube.merge_patch(KIND, meta["namespace"], meta["name"], {"status": changes}, subresource="status")
    event = ready_event(old.get("conditions"), new["conditions"])
    if event is not None:
        kopf.event(obj, type=event.type, reason=event.reason, message=event.message)
    if new["phase"] != old.get("phase") and new["phase"] in ("Ready", "Failed") and new.get("backupId"):
        schedule = (meta.get("labels") or {}).get(SCHEDULE_LABEL, "")
        services.metrics.backup_finished(meta["namespace"], schedule, new["phase"] == "Ready")
    obj["status"] = {**old, **new}


# --- delete -----------------------------------------------------------------------------

async def release(obj: dict, services: Services, attempt: int) -> None:
    """The finalizer: delete the Pinecone backup unless the object says Retain. A backup whose
    create may still be answered is looked for by name first. Gives up, with a Warning, after
    RELEASE_ATTEMPTS failed attempts (a backup then stays in Pinecone, named in the Event)."""
    meta, old = obj["metadata"], obj.get("status") or {}
    namespace, name = meta["namespace"], meta["name"]

    def event(type_: str, reason: str, message: str) -> None:
        kopf.event(obj, type=type_, reason=reason, message=message)

    policy = (obj.get("spec") or {}).get("deletionPolicy", "Delete")
    backup_id, index_name = old.get("backupId"), old.get("indexName")
    if policy == "Retain":
        if backup_id:
            event("Normal", "Retained", f"backup {backup_id} of index {index_name} is kept in Pinecone (deletionPolicy Retain)")
        return
    if not backup_id and not old.get(CREATE_SENT_AT):
        return  # no backup was asked for
    raw_ref = old.get("apiKeySecretRef")
    ref = SecretKeyRef.model_validate(raw_ref) if raw_ref else None
    key = await pinecone_keys.api_key(ref, namespace, services)
    what = f"backup {backup_id or old.get('backupName')} of index {index_name}"
    try:
        if key is None:
            raise kopf.TemporaryError(pinecone_keys.missing_key_message(ref, namespace, services.settings), delay=10)
        if not backup_id and index_name:
            found = await services.pinecone.find_backup(key, index_name, old.get("backupName") or "")
            backup_id = (found or {}).get("backup_id")
        if backup_id:
            await services.pinecone.delete_backup(key, backup_id)
            event("Normal", "Deleted", f"deleted {what}")
    except (PineconeCallError, kopf.TemporaryError) as exc:
        if attempt + 1 >= RELEASE_ATTEMPTS:
            event("Warning", "BackupLeftBehind", f"could not delete {what} ({exc}); delete it in Pinecone")
            return
        # 412: a restore from the backup is in progress; it may be deleted once it is done.
        raise kopf.TemporaryError(str(exc), delay=services.vectorindex_timing.retry(attempt)) from None
    log.info("VectorIndexBackup %s/%s: released", namespace, name)
