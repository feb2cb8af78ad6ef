"""Control-plane routes: indexes, collections, backups and restore jobs (API 2025-10)."""

from __future__ import annotations

import time
import uuid
from typing import Any

from aiohttp import web

from pinery.local.pinecone import context, render, request_validation, transitions, v2026_07, versions
from pinery.local.pinecone.context import Settings
from pinery.local.pinecone.errors import ApiError, already_exists, bad_request, failed_precondition, not_found
from pinery.local.pinecone.state import BackupRecord, CollectionRecord, IndexRecord, RestoreJobRecord, Store
from pinery.local.pinecone.vectors import IndexData


def _json(body: Any, status: int = 200) -> web.Response:
    return web.json_response(body, status=status)


async def _body(request: web.Request) -> Any:
    raw = await request.read()
    if not raw:
        return None
    try:
        import json
        return json.loads(raw)
    except ValueError as exc:
        raise request_validation.unprocessable(f"expected a JSON body ({exc})") from exc


def _index(request: web.Request, name: str | None = None) -> IndexRecord:
    store = context.store(request)
    name = name or request.match_info["index_name"]
    rec = store.indexes.get((context.project(request), name))
    if rec is None:
        raise not_found(f"Index {name} not found.")
    return rec


def _index_body(request: web.Request, rec: IndexRecord) -> dict[str, Any]:
    """The IndexModel of a record in the request's API version (2026-07: v2026_07.py)."""
    if versions.of(request) == v2026_07.VERSION:
        return v2026_07.index(rec, context.context(request).url)
    return render.index(rec, context.context(request).url)


def _backup_body(request: web.Request, bkp: BackupRecord) -> dict[str, Any]:
    if versions.of(request) == v2026_07.VERSION:
        return v2026_07.backup(bkp)
    return render.backup(bkp)


def _check_quota(store: Store, settings: Settings, project: str) -> None:
    quota = settings.index_quota
    if quota is not None and len(store.project_indexes(project)) >= quota:
        raise ApiError(403, f"Request failed. You've reached the max indexes allowed in project {project} "
                            f"({quota}). To add more indexes, upgrade your plan.", "QUOTA_EXCEEDED")


def _new_index(store: Store, settings: Settings, project: str, fields: dict[str, Any], data: IndexData | None,
               ready_delay: float | None = None) -> IndexRecord:
    now = time.time()
    fail = fields["name"] in settings.fail_initialization
    state, schedule = transitions.creation(now, settings.ready_delay if ready_delay is None else ready_delay, fail)
    rec = IndexRecord(id=str(uuid.uuid4()), project=project, state=state, schedule=schedule, created_at=now,
                      **{k: v for k, v in fields.items() if k in IndexRecord.__dataclass_fields__})
    store.indexes[(project, rec.name)] = rec
    store.data[rec.id] = data if data is not None else IndexData(rec.dimension)
    store.mark(rec.id)
    store.save()
    return rec


def _source_collection_data(store: Store, project: str, fields: dict[str, Any]) -> IndexData | None:
    inner = next(iter(fields["spec"].values()))
    source = inner.get("source_collection")
    if not source:
        return None
    col = store.collections.get((project, source))
    if col is None or col.state != "Ready":
        raise bad_request(f"Source collection {source} not found or not ready.")
    if col.dimension != fields["dimension"]:
        raise bad_request(f"Index dimension {fields['dimension']} does not match the dimension of "
                          f"collection {source} ({col.dimension}).")
    data = store.data.get(col.data_key)
    return data.clone() if data else None


def _create(request: web.Request, fields: dict[str, Any]) -> web.Response:
    store, settings, project = context.store(request), context.settings(request), context.project(request)
    if (project, fields["name"]) in store.indexes:
        raise already_exists()
    _check_quota(store, settings, project)
    data = _source_collection_data(store, project, fields)
    rec = _new_index(store, settings, project, fields, data)
    return _json(_index_body(request, rec), 201)


async def create_index(request: web.Request) -> web.Response:
    body = await _body(request)
    if versions.of(request) == v2026_07.VERSION:
        return _create(request, v2026_07.check_create(body))
    return _create(request, request_validation.check_create_index(body))


async def create_index_for_model(request: web.Request) -> web.Response:
    return _create(request, request_validation.check_create_for_model(await _body(request)))


async def list_indexes(request: web.Request) -> web.Response:
    store = context.store(request)
    return _json({"indexes": [_index_body(request, r) for r in store.project_indexes(context.project(request))]})


async def describe_index(request: web.Request) -> web.Response:
    return _json(_index_body(request, _index(request)))


async def delete_index(request: web.Request) -> web.Response:
    store, rec = context.store(request), _index(request)
    if rec.deletion_protection == "enabled":
        raise ApiError(403, "Deletion protection is enabled for this index. Disable deletion protection "
                            "before retrying.", "FORBIDDEN")
    pending = sorted(c.name for c in store.collections.values()
                     if c.project == rec.project and c.source == rec.name and c.state == "Initializing")
    if pending:
        raise failed_precondition(f"Unable to delete an index. There are pending collections for this index: {pending}")
    if rec.state != "Terminating":
        rec.state, rec.schedule = transitions.termination(time.time(), context.settings(request).terminate_delay)
        store.refresh()
        store.save()
    return web.Response(status=202)


def _configure_pod(rec: IndexRecord, change: dict[str, Any]) -> str | None:
    pod = rec.spec["pod"]
    replicas = change.get("replicas", pod["replicas"])
    pod_type = change.get("pod_type", pod["pod_type"])
    if pod_type != pod["pod_type"]:
        old, new = transitions.pod_size(pod["pod_type"]), transitions.pod_size(pod_type)
        assert old is not None and new is not None  # both pod types passed check_pod_type
        if old[0] != new[0]:
            raise bad_request(f"Cannot change the pod type family of index {rec.name} from {pod['pod_type']} "
                              f"to {pod_type}; only the size (x1, x2, x4, x8) can change.")
        if new[1] < old[1]:
            raise bad_request(f"Cannot scale down the pod size of index {rec.name} from {pod['pod_type']} "
                              f"to {pod_type}.")
    state = transitions.scaling_state(pod["replicas"], replicas, pod["pod_type"], pod_type)
    pod.update(replicas=replicas, pod_type=pod_type, pods=replicas * pod["shards"])
    return state


def _configure_read_capacity(rec: IndexRecord, desired: dict[str, Any], delay: float) -> None:
    """Ask for new read capacity (2025-10 `spec.serverless|byoc.read_capacity`, 2026-07 top-level
    `read_capacity`): the spec shows it at once, the status goes `Scaling` or `Migrating` with the
    counts still in effect until `delay` has passed (transitions.read_capacity_configure). Asking
    again for what is already asked leaves a change under way as it is; asking for something else
    starts over from what is in effect."""
    if desired == rec.read_capacity:
        return
    in_effect = rec.read_capacity_in_effect
    rec.read_capacity_state, rec.read_capacity_schedule = transitions.read_capacity_configure(
        in_effect, desired, time.time(), delay)
    rec.read_capacity_applied = in_effect if rec.read_capacity_schedule else None
    rec.spec[rec.kind]["read_capacity"] = desired


async def configure_index(request: web.Request) -> web.Response:
    store, rec = context.store(request), _index(request)
    body = await _body(request)
    if versions.of(request) == v2026_07.VERSION:
        change = v2026_07.check_configure(body, rec)
    else:
        change = request_validation.check_configure(body)
    if "spec" in change:
        kind, inner = next(iter(change["spec"].items()))
        if kind != rec.kind:
            raise bad_request(f"Index {rec.name} is a {rec.kind} index; its spec cannot be configured as {kind}.")
        if kind == "pod":
            scaling = _configure_pod(rec, inner)
            if scaling and rec.state in transitions.SERVING:
                rec.state = scaling
                rec.schedule = transitions.after(time.time(), ("Ready", context.settings(request).scale_delay))
        elif inner["read_capacity"] is not None:
            _configure_read_capacity(rec, inner["read_capacity"], context.settings(request).read_capacity_delay)
    if "embed" in change:
        if not rec.embed:
            raise bad_request(f"Index {rec.name} has no integrated embedding to configure.")
        rec.embed = {**rec.embed, **{k: v for k, v in change["embed"].items() if v is not None}}
    if "deletion_protection" in change:
        rec.deletion_protection = change["deletion_protection"]
    if "tags" in change:
        tags = dict(rec.tags or {})
        for key, value in change["tags"].items():
            if value:
                tags[key] = value
            else:
                tags.pop(key, None)
        if len(tags) > 20:
            raise bad_request("An index can have at most 20 tags.")
        rec.tags = tags or None
    store.refresh()
    store.save()
    return _json(_index_body(request, rec), 202)


# -- collections -------------------------------------------------------------------------------
async def create_collection(request: web.Request) -> web.Response:
    store, project = context.store(request), context.project(request)
    name, source = request_validation.check_collection(await _body(request))
    rec = store.indexes.get((project, source))
    if rec is None:
        raise bad_request(f"Source index {source} not found.")
    if rec.kind != "pod":
        raise bad_request(f"Collections can only be created from pod-based indexes; {source} is {rec.kind}.")
    if (project, name) in store.collections:
        raise already_exists()
    data = store.data.get(rec.id, IndexData(rec.dimension)).clone()
    key = f"collection-{uuid.uuid4()}"
    store.data[key] = data
    store.mark(key)
    col = CollectionRecord(project=project, name=name, source=source, environment=rec.spec["pod"]["environment"],
                           dimension=rec.dimension, vector_count=data.count(), size=data.size_bytes(), data_key=key,
                           schedule=transitions.after(time.time(), ("Ready", context.settings(request).collection_delay)))
    store.collections[(project, name)] = col
    store.save()
    return _json(render.collection(col), 201)


def _collection(request: web.Request) -> CollectionRecord:
    name = request.match_info["collection_name"]
    col = context.store(request).collections.get((context.project(request), name))
    if col is None:
        raise not_found(f"Collection {name} not found.")
    return col


async def list_collections(request: web.Request) -> web.Response:
    cols = [c for (p, _), c in sorted(context.store(request).collections.items()) if p == context.project(request)]
    return _json({"collections": [render.collection(c) for c in cols]})


async def describe_collection(request: web.Request) -> web.Response:
    return _json(render.collection(_collection(request)))


async def delete_collection(request: web.Request) -> web.Response:
    store, col = context.store(request), _collection(request)
    col.state, col.schedule = transitions.termination(time.time(), context.settings(request).terminate_delay)
    store.refresh()
    store.save()
    return web.Response(status=202)


# -- backups and restore jobs ------------------------------------------------------------------
async def create_backup(request: web.Request) -> web.Response:
    store, project = context.store(request), context.project(request)
    name = request.match_info["index_name"]
    fields = request_validation.check_backup(await _body(request))
    rec = store.indexes.get((project, name))
    if rec is None:
        raise bad_request(f"Index {name} not found.")
    if rec.kind != "serverless":
        raise bad_request(f"Backups are only supported for serverless indexes; {name} is {rec.kind}.")
    data = store.data.get(rec.id, IndexData(rec.dimension)).clone()
    backup_id = str(uuid.uuid4())
    key = f"backup-{backup_id}"
    store.data[key] = data
    store.mark(key)
    spec = rec.spec["serverless"]
    bkp = BackupRecord(
        backup_id=backup_id, project=project, source_index_name=rec.name, source_index_id=rec.id,
        cloud=spec["cloud"], region=spec["region"], dimension=rec.dimension, metric=rec.metric,
        vector_type=rec.vector_type, record_count=data.count(),
        namespace_count=sum(1 for ns in data.namespaces.values() if len(ns)), size_bytes=data.size_bytes(),
        created_at=render.iso(time.time()), data_key=key, name=fields["name"], description=fields["description"],
        tags=dict(rec.tags) if rec.tags else None, schema=spec.get("schema"), typed_schema=rec.typed_schema,
        schedule=transitions.after(time.time(), ("Ready", context.settings(request).backup_delay)))
    store.backups[backup_id] = bkp
    store.save()
    return _json(_backup_body(request, bkp), 201)


def _backups(request: web.Request, index_name: str | None = None) -> list[BackupRecord]:
    found = [b for b in context.store(request).backups.values() if b.project == context.project(request)
             and (index_name is None or b.source_index_name == index_name)]
    return sorted(found, key=lambda b: b.created_at)


async def list_index_backups(request: web.Request) -> web.Response:
    rec = _index(request)
    limit = request_validation.check_limit(request.query.get("limit"))
    items = [_backup_body(request, b) for b in _backups(request, rec.name)]
    return _json(render.page(items, limit, request.query.get("paginationToken")))


async def list_project_backups(request: web.Request) -> web.Response:
    limit = request_validation.check_limit(request.query.get("limit"))
    items = [_backup_body(request, b) for b in _backups(request)]
    return _json(render.page(items, limit, request.query.get("paginationToken")))


def _backup(request: web.Request) -> BackupRecord:
    backup_id = request.match_info["backup_id"]
    bkp = context.store(request).backups.get(backup_id)
    if bkp is None or bkp.project != context.project(request):
        raise not_found(f"Backup {backup_id} not found.")
    return bkp


async def describe_backup(request: web.Request) -> web.Response:
    return _json(_backup_body(request, _backup(request)))


async def delete_backup(request: web.Request) -> web.Response:
    store, bkp = context.store(request), _backup(request)
    running = [j for j in store.restore_jobs.values() if j.backup_id == bkp.backup_id and j.state != "Completed"]
    if running:
        raise failed_precondition(f"Unable to delete backup {bkp.backup_id}: a restore job from it is in progress.")
    del store.backups[bkp.backup_id]
    store.drop_data(bkp.data_key)
    store.save()
    return web.Response(status=202)


async def create_index_from_backup(request: web.Request) -> web.Response:
    store, settings, project, bkp = context.store(request), context.settings(request), context.project(request), _backup(request)
    body = await _body(request)
    if versions.of(request) == v2026_07.VERSION:
        v2026_07.check_from_backup(body)
    fields = request_validation.check_from_backup(body)
    if bkp.state != "Ready":
        raise bad_request(f"Backup {bkp.backup_id} is not ready (status {bkp.state}).")
    if (project, fields["name"]) in store.indexes:
        raise already_exists()
    _check_quota(store, settings, project)
    spec: dict[str, Any] = {"cloud": bkp.cloud, "region": bkp.region, "read_capacity": {"mode": "OnDemand"}}
    if bkp.schema:
        spec["schema"] = bkp.schema
    data = store.data.get(bkp.data_key, IndexData(bkp.dimension)).clone()
    fields.update(spec={"serverless": spec}, dimension=bkp.dimension, metric=bkp.metric, vector_type=bkp.vector_type,
                  typed_schema=bkp.typed_schema, source_backup_id=bkp.backup_id)
    delay = settings.restore_delay
    rec = _new_index(store, settings, project, fields, data, ready_delay=delay)
    now = time.time()
    job = RestoreJobRecord(
        restore_job_id=str(uuid.uuid4()), project=project, backup_id=bkp.backup_id, target_index_name=rec.name,
        target_index_id=rec.id, created_at=render.iso(now), started=now, finishes=now + delay,
        schedule=transitions.after(now, ("InProgress", delay / 2), ("Completed", delay / 2)))
    store.restore_jobs[job.restore_job_id] = job
    store.refresh()
    store.save()
    return _json({"restore_job_id": job.restore_job_id, "index_id": rec.id}, 202)


async def list_restore_jobs(request: web.Request) -> web.Response:
    limit = request_validation.check_limit(request.query.get("limit"))
    jobs = sorted((j for j in context.store(request).restore_jobs.values() if j.project == context.project(request)),
                  key=lambda j: j.created_at)
    return _json(render.page([render.restore_job(j) for j in jobs], limit, request.query.get("paginationToken")))


async def describe_restore_job(request: web.Request) -> web.Response:
    job_id = request.match_info["job_id"]
    job = context.store(request).restore_jobs.get(job_id)
    if job is None or job.project != context.project(request):
        raise not_found(f"Restore job {job_id} not found.")
    return _json(render.restore_job(job))


ROUTES = [
    ("GET", "/indexes", list_indexes, "list_indexes"),
    ("POST", "/indexes", create_index, "create_index"),
    ("POST", "/indexes/create-for-model", create_index_for_model, "create_index_for_model"),
    ("GET", "/indexes/{index_name}", describe_index, "describe_index"),
    ("DELETE", "/indexes/{index_name}", delete_index, "delete_index"),
    ("PATCH", "/indexes/{index_name}", configure_index, "configure_index"),
    ("GET", "/indexes/{index_name}/backups", list_index_backups, "list_index_backups"),
    ("POST", "/indexes/{index_name}/backups", create_backup, "create_backup"),
    ("GET", "/collections", list_collections, "list_collections"),
    ("POST", "/collections", create_collection, "create_collection"),
    ("GET", "/collections/{collection_name}", describe_collection, "describe_collection"),
    ("DELETE", "/collections/{collection_name}", delete_collection, "delete_collection"),
    ("GET", "/backups", list_project_backups, "list_project_backups"),
    ("GET", "/backups/{backup_id}", describe_backup, "describe_backup"),
    ("DELETE", "/backups/{backup_id}", delete_backup, "delete_backup"),
    ("POST", "/backups/{backup_id}/create-index", create_index_from_backup, "create_index_from_backup_operation"),
    ("GET", "/restore-jobs", list_restore_jobs, "list_restore_jobs"),
    ("GET", "/restore-jobs/{job_id}", describe_restore_job, "describe_restore_job"),
]
