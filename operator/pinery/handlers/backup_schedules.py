"""VectorIndexBackupSchedule handlers: a daemon per schedule sleeps until the next scheduled
time, makes that time's VectorIndexBackup (owned by the schedule), deletes the backups its
retention drops, and writes status. A change of the schedule's spec, or of one of its backups,
wakes it.

Each pass lists the schedule's backups (label `pinery.dev/backup-schedule`) and hands them to
the pure `pinery.backups.schedule_plan.plan`; what that says is done here. A backup is named
after its scheduled time, so a pass repeated after a crash makes nothing twice.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any, Literal

import kopf
from pydantic import ValidationError

from pinery.api.backups import VectorIndexBackupScheduleSpec
from pinery.api.base import API_VERSION, GROUP, VERSION, controller_reference
from pinery.api.conditions import parse_time, set_condition
from pinery.backups import retention
from pinery.backups.schedule_plan import MAX_SLEEP, plan
from pinery.backups.status import ready_event
from pinery.gateways.kube import KubeError
from pinery.handlers.backups import SCHEDULE_LABEL
from pinery.handlers.object_loop import ObjectLoop
from pinery.services import Services
from pinery.vectorindex.status import READY, Cond, status_changes

KIND = "VectorIndexBackupSchedule"
PLURAL = "vectorindexbackupschedules"
LAST_BACKUP = "LastBackupSucceeded"
# The time a backup was scheduled for, on each backup a schedule makes (RFC 3339).
SCHEDULED_AT = f"{GROUP}/scheduled-at"

log = logging.getLogger("pinery.backups")


def register(registry: kopf.OperatorRegistry, services: Services) -> None:
    resource = (GROUP, VERSION, PLURAL)
    loops: dict[tuple[str, str], ObjectLoop] = {}
    one_pass = services.metrics.timed(KIND, "reconcile")(reconcile)

    @kopf.daemon(*resource, id="vectorindexbackupschedule_daemon", registry=registry, cancellation_timeout=10.0)
    async def vectorindexbackupschedule_daemon(namespace, name, stopped, **_):
        loop = loops[(namespace, name)] = ObjectLoop()

        def failed(exc: Exception) -> float:
            log.warning("VectorIndexBackupSchedule %s/%s: pass failed (%s)", namespace, name, exc)
            services.metrics.reconciled(KIND, "error")
            return loop.failed(lambda n: services.vectorindex_timing.retry(n - 1))

        try:
            await loop.run(lambda: one_pass(namespace, name, services), stopped, on_error=failed)
        finally:
            if loops.get((namespace, name)) is loop:
                del loops[(namespace, name)]
                services.metrics.forget_schedule(namespace, name)

    @kopf.on.event(*resource, id="vectorindexbackupschedule_event", registry=registry)
    async def vectorindexbackupschedule_event(namespace, name, meta, **_):
        loop = loops.get((namespace, name))
        if loop is not None:
            loop.event_showed(meta.get("generation"))

    @kopf.on.event(GROUP, VERSION, "vectorindexbackups", id="vectorindexbackup_schedule_event", registry=registry)
    async def vectorindexbackup_schedule_event(namespace, labels, **_):
        # A backup of a schedule changed (made, ready, failed, gone): its counts and retention
        # are looked at again.
        loop = loops.get((namespace, (labels or {}).get(SCHEDULE_LABEL, "")))
        if loop is not None:
            loop.wake.set()


async def reconcile(namespace: str, name: str, services: Services) -> float | None:
    """One pass; returns when to look again, or None when the schedule is gone."""
    obj = await services.kube.get(KIND, namespace, name)
    if obj is None or obj["metadata"].get("deletionTimestamp"):
        return None
    meta, old = obj["metadata"], obj.get("status") or {}
    try:
        spec = VectorIndexBackupScheduleSpec.model_validate(obj.get("spec") or {})
    except ValidationError as exc:
        await _report(obj, services, ("False", "InvalidSpec", str(exc.errors()[0]["msg"])), None, {})
        return services.clock.real_seconds(MAX_SLEEP.total_seconds())
    children = await services.kube.list("VectorIndexBackup", namespace, label_selector=f"{SCHEDULE_LABEL}={name}")
    made = [m for m in (_made(c) for c in children if not c["metadata"].get("deletionTimestamp")) if m is not None]
    now = services.clock.now()
    created = parse_time(meta.get("creationTimestamp")) or now
    step = plan(name, spec, created=created, now=now, made=made, last_scheduled=parse_time(old.get("lastScheduleTime")))
    if step.make is not None:
        backup_name, at = step.make
        await _make_backup(obj, spec, backup_name, at, services)
    for doomed in step.delete:
        log.info("VectorIndexBackupSchedule %s/%s: retention deletes %s", namespace, name, doomed)
        await services.kube.delete("VectorIndexBackup", namespace, doomed)
    await _report(obj, services, step.ready, step.last_ok, step.status)
    success = parse_time(step.status.get("lastSuccessfulTime"))
    services.metrics.schedule_success(namespace, name, success.timestamp() if success else None)
    services.metrics.reconciled(KIND, "make" if step.make else "none")
    return None if step.sleep is None else services.clock.real_seconds(step.sleep)


def _made(obj: dict[str, Any]) -> retention.Made | None:
    """A backup the schedule made, as retention sees it (None without its scheduled time)."""
    meta = obj["metadata"]
    at = parse_time((meta.get("annotations") or {}).get(SCHEDULED_AT))
    if at is None:
        return None
    phase = (obj.get("status") or {}).get("phase")
    state: Literal["Ready", "Failed", "Pending"] = "Ready" if phase == "Ready" else "Failed" if phase == "Failed" else "Pending"
    return retention.Made(meta["name"], at, state)


async def _make_backup(schedule: dict, spec: VectorIndexBackupScheduleSpec, name: str, at: datetime,
                       services: Services) -> None:
    meta = schedule["metadata"]
    template = spec.backup_template
    body: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "VectorIndexBackup",
        "metadata": {
            "name": name,
            "namespace": meta["namespace"],
            "labels": {SCHEDULE_LABEL: meta["name"], "app.kubernetes.io/managed-by": "pinery"},
            "annotations": {SCHEDULED_AT: at.strftime("%Y-%m-%dT%H:%M:%SZ")},
            "ownerReferences": [controller_reference(KIND, meta["name"], meta["uid"])],
        },
        "spec": {"vectorIndexName": spec.vector_index_name,
                 "deletionPolicy": template.deletion_policy if template else "Delete"},
    }
    if template is not None and template.description:
        body["spec"]["description"] = template.description
    try:
        await services.kube.create(body)
    except KubeError as exc:
        if exc.status != 409:
            raise
        return  # made by an earlier pass for the same time
    kopf.event(schedule, type="Normal", reason="BackupMade", message=f"made VectorIndexBackup {name} for {body['metadata']['annotations'][SCHEDULED_AT]}")


async def _report(obj: dict, services: Services, ready: Cond, last_ok: Cond | None, facts: dict[str, Any]) -> None:
    meta, old = obj["metadata"], obj.get("status") or {}
    conditions = set_condition(list(old.get("conditions") or []), READY, *ready, generation=meta.get("generation"))
    if last_ok is not None:
        conditions = set_condition(conditions, LAST_BACKUP, *last_ok, generation=meta.get("generation"))
    new = {"conditions": conditions, "observedGeneration": meta.get("generation"), **facts}
    changes = status_changes(old, new)
    if changes:
        await services.kube.merge_patch(KIND, meta["namespace"], meta["name"], {"status": changes}, subresource="status")
    for type_ in (READY, LAST_BACKUP):
        event = ready_event(old.get("conditions"), conditions, type_)
        if event is not None:
            kopf.event(obj, type=event.type, reason=event.reason, message=event.message)
