"""Control-plane routes for backups and restore jobs (API 2025-10 and 2026-07).

A backup is a snapshot of every namespace of a serverless or BYOC index, taken when the backup is
created (later writes to the index do not reach it) and kept as its own vector data
(`data/backup-<id>.npz`), so it survives restarts and outlives its index. It is `Initializing`
for the `backup_delay` setting, then `Ready` (or `InitializationFailed` for source indexes named
in `fail_backups`).

Restoring makes a new index at once, `Initializing` and not serving (its data plane answers 503
as for any index that is not ready), and a restore job that is `Pending` for the first half of
the `restore_delay` setting, `InProgress` for the second half with `percent_complete` growing,
then `Completed`: only then does the index get exactly the backup's records and turn `Ready`
(state.py Store.refresh). Under 2026-07 the job shows as `v2026_07.restore_job` describes.

Sources, named at each rule: the 2025-10 control-plane spec (db_control_2025-10.oas.yaml, the
operations create_backup, list_index_backups, list_project_backups, describe_backup,
delete_backup, create_index_from_backup_operation, list_restore_jobs, describe_restore_job, and
the schemas BackupModel, RestoreJobModel, CreateIndexFromBackupRequest/Response); the `pinecone`
10.2.0 SDK (client/backups.py Backups, client/restore_jobs.py RestoreJobs, _client.py
Pinecone.create_index_from_backup, models/backups/model.py); Pinecone's reference page for
2026-07 `create_index_from_backup` and its backups overview (docs.pinecone.io).
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from aiohttp import web

from pinery.local.pinecone import context, render, request_validation, transitions, v2026_07, versions
from pinery.local.pinecone.control import _body, _json, _new_index
from pinery.local.pinecone.errors import ApiError, already_exists, bad_request, failed_precondition, not_found
from pinery.local.pinecone.state import BackupRecord, IndexRecord, RestoreJobRecord, Store
from pinery.local.pinecone.vectors import IndexData

# 10.x SDK client/backups.py Backups.create: "Only serverless and BYOC indexes can be backed up";
# a pod-based index raises `ApiError` (not one of the typed 4xx errors), so a 400.
BACKUP_KINDS = ("serverless", "byoc")
# Backups overview (docs.pinecone.io/guides/indexes/backups-overview): "Backups are not available
# on the Starter or Builder plans. To create backups, upgrade to the Standard or Enterprise plan."
# The 10.x SDK's Backups.create raises `ForbiddenError` (403) "If the organization's plan does not
# include backups". Pinecone's wording of that 403 is not published: this message is ours.
PLAN_WITHOUT_BACKUPS = ("Backups are not available on your plan. To create backups, upgrade to the Standard or "
                        "Enterprise plan.")
# 2025-10 spec, create_backup 403 "You've exceed your backup quota.": its example body.
BACKUP_QUOTA = "Increase your quota or upgrade to create more backups."
# 2025-10 spec, create_index_from_backup_operation 403 "You've exceed your pod quota.": its example.
RESTORE_QUOTA = "Increase your quota or upgrade to create more indexes."


def _is_2026_07(request: web.Request) -> bool:
    return versions.of(request) == v2026_07.VERSION


def backup_body(request: web.Request, bkp: BackupRecord) -> dict[str, Any]:
    """The BackupModel in the request's API version."""
    return v2026_07.backup(bkp) if _is_2026_07(request) else render.backup(bkp)


def restore_job_body(request: web.Request, job: RestoreJobRecord) -> dict[str, Any]:
    """The RestoreJobModel in the request's API version."""
    return v2026_07.restore_job(job) if _is_2026_07(request) else render.restore_job(job)


# -- snapshots ---------------------------------------------------------------------------------
def snapshot_size(data: IndexData) -> int:
    """`size_bytes` of a backup, estimated from what its records hold: the id, 4 bytes per dense
    value, 8 per sparse value (a 32-bit index and a 32-bit float) and the metadata as JSON."""
    total = 0
    for ns in data.namespaces.values():
        dense = 4 * (ns.dimension or 0)
        for row, record_id in enumerate(ns.ids):
            total += len(record_id.encode())
            if ns.has_dense[row]:
                total += dense
            sparse = ns.sparse[row]
            if sparse is not None:
                total += 8 * len(sparse[0])
            metadata = ns.metadata[row]
            if metadata:
                total += len(json.dumps(metadata, separators=(",", ":")).encode())
    return total


def byoc_location(environment: str) -> tuple[str, str]:
    """(cloud, region) of a BYOC environment such as `aws-us-east-1-b921`; the 2025-10 BackupModel
    requires both, and Pinecone does not publish what it reports for a BYOC backup, so this reading
    of the environment name is the emulator's. An environment it cannot read gives itself twice."""
    cloud, _, rest = environment.partition("-")
    region, _, suffix = rest.rpartition("-")
    if cloud in ("aws", "gcp", "azure") and region and suffix:
        return cloud, region
    return environment, environment


def _source(store: Store, project: str, name: str) -> IndexRecord:
    rec = store.indexes.get((project, name))
    if rec is None:
        # The 2025-10 spec lists no 404 for create_backup; the 10.x SDK's Backups.create raises
        # NotFoundError "If index_name does not resolve to an index in this project", worded as the
        # spec's 404 of list_index_backups ("Index example-index not found.").
        raise not_found(f"Index {name} not found.")
    if rec.kind not in BACKUP_KINDS:
        raise bad_request(f"Backups are only supported for serverless and BYOC indexes; {name} is pod-based. "
                          "Create a collection to snapshot a pod-based index.")
    return rec


def _check_backup_quota(store: Store, quota: int | None, project: str) -> None:
    if quota is not None and sum(1 for b in store.backups.values() if b.project == project) >= quota:
        raise ApiError(403, BACKUP_QUOTA, "FORBIDDEN")


async def create_backup(request: web.Request) -> web.Response:
    store, settings, project = context.store(request), context.settings(request), context.project(request)
    fields = request_validation.check_backup(await _body(request))
    if not settings.backups_allowed:
        raise ApiError(403, PLAN_WITHOUT_BACKUPS, "FORBIDDEN")
    rec = _source(store, project, request.match_info["index_name"])
    _check_backup_quota(store, settings.backup_quota, project)
    # The snapshot: every namespace as it is now (vectors.py clones; later writes go to the index).
    data = store.data.get(rec.id, IndexData(rec.dimension)).clone()
    backup_id = str(uuid.uuid4())
    key = f"backup-{backup_id}"
    store.data[key] = data
    store.mark(key)
    spec = rec.spec[rec.kind]
    if rec.kind == "byoc":
        cloud, region = byoc_location(spec["environment"])
    else:
        cloud, region = spec["cloud"], spec["region"]
    now = time.time()
    final = "InitializationFailed" if rec.name in settings.fail_backups else "Ready"
    bkp = BackupRecord(
        backup_id=backup_id, project=project, source_index_name=rec.name, source_index_id=rec.id,
        cloud=cloud, region=region, dimension=rec.dimension, metric=rec.metric, vector_type=rec.vector_type,
        record_count=data.count(), namespace_count=sum(1 for ns in data.namespaces.values() if len(ns)),
        size_bytes=snapshot_size(data), created_at=render.iso(now), data_key=key, name=fields["name"],
        description=fields["description"], tags=dict(rec.tags) if rec.tags else None, schema=spec.get("schema"),
        typed_schema=rec.typed_schema, source_kind=rec.kind, environment=spec.get("environment"),
        embed=dict(rec.embed) if rec.embed else None,
        # 10.x SDK Backups.create: the new backup has status "Initializing"; "A backup that fails
        # settles on "InitializationFailed"".
        schedule=transitions.after(now, (final, settings.backup_delay)))
    store.backups[backup_id] = bkp
    store.save()
    # The answer says `Initializing` even under a zero delay, as the 10.x SDK's Backups.create
    # describes it; the next request sees it settled.
    return _json(backup_body(request, bkp), 201)


# -- listing and describing --------------------------------------------------------------------
def _flag(raw: str | None, name: str) -> bool | None:
    if raw is None:
        return None
    if raw.lower() not in ("true", "false"):
        raise bad_request(f"{name} must be true or false (got '{raw}').")
    return raw.lower() == "true"


def _page(request: web.Request, items: list[Any]) -> web.Response:
    limit = request_validation.check_limit(request.query.get("limit"))
    return _json(render.page(items, limit, request.query.get("paginationToken")))


def _by_creation(backups: list[BackupRecord]) -> list[BackupRecord]:
    return sorted(backups, key=lambda b: b.created_at)


async def list_index_backups(request: web.Request) -> web.Response:
    """The backups of one index. 10.x SDK Backups.list: without `include_deleted` the name "must
    resolve to an active index" (else 404, as the 2025-10 spec's list_index_backups) and only that
    index's backups are listed; with `include_deleted=true` (2026-07) those of "every index that
    has ever used index_name, including deleted ones"."""
    store, project, name = context.store(request), context.project(request), request.match_info["index_name"]
    include_deleted = _flag(request.query.get("include_deleted"), "include_deleted") if _is_2026_07(request) else None
    mine = [b for b in store.backups.values() if b.project == project and b.source_index_name == name]
    if not include_deleted:
        rec = store.indexes.get((project, name))
        if rec is None:
            raise not_found(f"Index {name} not found.")
        mine = [b for b in mine if b.source_index_id == rec.id]
    return _page(request, [backup_body(request, b) for b in _by_creation(mine)])


async def list_project_backups(request: web.Request) -> web.Response:
    project = context.project(request)
    found = [b for b in context.store(request).backups.values() if b.project == project]
    return _page(request, [backup_body(request, b) for b in _by_creation(found)])


def _backup(request: web.Request) -> BackupRecord:
    backup_id = request.match_info["backup_id"]
    bkp = context.store(request).backups.get(backup_id)
    if bkp is None or bkp.project != context.project(request):
        raise not_found(f"Backup {backup_id} not found.")  # 2025-10 spec, describe_backup 404 example
    return bkp


async def describe_backup(request: web.Request) -> web.Response:
    return _json(backup_body(request, _backup(request)))


def _running(store: Store, backup_id: str) -> list[str]:
    """Restore jobs from a backup that have not finished, oldest first."""
    jobs = sorted((j for j in store.restore_jobs.values() if j.backup_id == backup_id), key=lambda j: j.created_at)
    return [j.restore_job_id for j in jobs if j.state not in transitions.RESTORE_FINISHED]


async def delete_backup(request: web.Request) -> web.Response:
    store, bkp = context.store(request), _backup(request)
    running = _running(store, bkp.backup_id)
    if running:
        # 2025-10 spec, delete_backup 412 "There is a pending restore job created from this backup.":
        # its example message, the job ids as a list.
        raise failed_precondition(f"Unable to delete backup. There are pending restore jobs for this backup: {running}")
    del store.backups[bkp.backup_id]
    store.drop_data(bkp.data_key)
    store.save()
    return web.Response(status=202)


# -- restoring ---------------------------------------------------------------------------------
def _restored_spec(bkp: BackupRecord) -> dict[str, Any]:
    """The spec of an index restored from `bkp`: the source's kind, cloud and region (or BYOC
    environment), on-demand read capacity ("the server's on-demand default", 10.x SDK
    create_index_from_backup) and the source's metadata schema."""
    inner: dict[str, Any] = {"read_capacity": {"mode": "OnDemand"}}
    if bkp.source_kind == "byoc":
        inner["environment"] = bkp.environment
    else:
        inner.update(cloud=bkp.cloud, region=bkp.region)
    if bkp.schema:
        inner["schema"] = bkp.schema
    return {bkp.source_kind: inner}


async def create_index_from_backup(request: web.Request) -> web.Response:
    store, settings, project = context.store(request), context.settings(request), context.project(request)
    bkp = _backup(request)
    body = await _body(request)
    if _is_2026_07(request):
        v2026_07.check_from_backup(body)
    fields = request_validation.check_from_backup(body)
    if bkp.state != "Ready":
        # docs.pinecone.io, API reference 2026-07 create_index_from_backup: 412 FAILED_PRECONDITION
        # "Backup 670e8400-... is not completed" (the 2025-10 spec lists no 412 here).
        raise failed_precondition(f"Backup {bkp.backup_id} is not completed")
    if (project, fields["name"]) in store.indexes:
        raise already_exists()  # 2025-10 spec, 409 "Index of given name already exists."
    quota = settings.index_quota
    if quota is not None and len(store.project_indexes(project)) >= quota:
        raise ApiError(403, RESTORE_QUOTA, "FORBIDDEN")
    if body.get("tags") is None and bkp.tags:
        # CreateIndexFromBackupRequest (10.x SDK models/backups/model.py): "When omitted, the server
        # copies the backup's tags."
        fields["tags"] = dict(bkp.tags)
    fields.update(spec=_restored_spec(bkp), dimension=bkp.dimension, metric=bkp.metric, vector_type=bkp.vector_type,
                  typed_schema=bkp.typed_schema, embed=dict(bkp.embed) if bkp.embed else None,
                  source_backup_id=bkp.backup_id)
    rec = _new_index(store, settings, project, fields, IndexData(bkp.dimension))
    # Initializing, with no records, until the restore job finishes (Store.refresh).
    rec.state, rec.schedule = "Initializing", []
    now, delay = time.time(), settings.restore_delay
    job = RestoreJobRecord(
        restore_job_id=str(uuid.uuid4()), project=project, backup_id=bkp.backup_id, target_index_name=rec.name,
        target_index_id=rec.id, created_at=render.iso(now), started=now + delay / 2, finishes=now + delay,
        schedule=transitions.restore(now, delay, rec.name in settings.fail_initialization))
    store.restore_jobs[job.restore_job_id] = job
    store.refresh()
    store.save()
    return _json({"restore_job_id": job.restore_job_id, "index_id": rec.id}, 202)


def _visible(store: Store, job: RestoreJobRecord) -> bool:
    """10.x SDK RestoreJobs.list: "jobs whose target index has been deleted are left out", and
    describe answers 404 "for a job whose target index has been deleted"."""
    return store.index_by_id(job.target_index_id) is not None


async def list_restore_jobs(request: web.Request) -> web.Response:
    store, project = context.store(request), context.project(request)
    jobs = sorted((j for j in store.restore_jobs.values() if j.project == project and _visible(store, j)),
                  key=lambda j: j.created_at)
    return _page(request, [restore_job_body(request, j) for j in jobs])


async def describe_restore_job(request: web.Request) -> web.Response:
    store, job_id = context.store(request), request.match_info["job_id"]
    job = store.restore_jobs.get(job_id)
    if job is None or job.project != context.project(request) or not _visible(store, job):
        raise not_found(f"Restore job {job_id} not found.")  # 2025-10 spec, describe_restore_job 404 example
    return _json(restore_job_body(request, job))


# -- backup schedules ----------------------------------------------------------------------------
# API 2026-04 and later (10.x SDK client/backup_schedules.py: /indexes/{name}/backup-schedules,
# /backup-schedules/{id}, /backup-schedules/{id}/history). Not emulated: answered 501 saying so,
# rather than the 404 of an unknown route, which would read as "index not found".
SCHEDULES_NOT_SERVED = ("Backup schedules ({method} {path}) are not emulated by local mode's Pinecone emulator; "
                        "create backups with create_backup on a schedule of your own (docs/local-mode.md).")


async def backup_schedules_not_served(request: web.Request) -> web.Response:
    raise ApiError(501, SCHEDULES_NOT_SERVED.format(method=request.method, path=request.path), "UNIMPLEMENTED")


ROUTES = [
    ("GET", "/indexes/{index_name}/backups", list_index_backups, "list_index_backups"),
    ("POST", "/indexes/{index_name}/backups", create_backup, "create_backup"),
    ("GET", "/backups", list_project_backups, "list_project_backups"),
    ("GET", "/backups/{backup_id}", describe_backup, "describe_backup"),
    ("DELETE", "/backups/{backup_id}", delete_backup, "delete_backup"),
    ("POST", "/backups/{backup_id}/create-index", create_index_from_backup, "create_index_from_backup_operation"),
    ("GET", "/restore-jobs", list_restore_jobs, "list_restore_jobs"),
    ("GET", "/restore-jobs/{job_id}", describe_restore_job, "describe_restore_job"),
    ("POST", "/indexes/{index_name}/backup-schedules", backup_schedules_not_served, "create_backup_schedule"),
    ("GET", "/indexes/{index_name}/backup-schedules", backup_schedules_not_served, "list_backup_schedules"),
    ("GET", "/backup-schedules/{schedule_id}", backup_schedules_not_served, "describe_backup_schedule"),
    ("PATCH", "/backup-schedules/{schedule_id}", backup_schedules_not_served, "update_backup_schedule"),
    ("DELETE", "/backup-schedules/{schedule_id}", backup_schedules_not_served, "delete_backup_schedule"),
    ("GET", "/backup-schedules/{schedule_id}/history", backup_schedules_not_served, "list_backup_schedule_history"),
]
