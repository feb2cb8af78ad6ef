"""Control-plane routes: indexes and collections (API 2025-10; 2026-07 through v2026_07.py).

Backups and restore jobs are in backups.py, which uses the helpers here to make a restored index.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from aiohttp import web

from pinery.local.pinecone import context, render, request_validation, transitions, v2026_07, versions
from pinery.local.pinecone.context import Settings
from pinery.local.pinecone.errors import ApiError, already_exists, bad_request, failed_precondition, not_found
from pinery.local.pinecone.state import CollectionRecord, IndexRecord, Store
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


ROUTES = [
    ("GET", "/indexes", list_indexes, "list_indexes"),
    ("POST", "/indexes", create_index, "create_index"),
    ("POST", "/indexes/create-for-model", create_index_for_model, "create_index_for_model"),
    ("GET", "/indexes/{index_name}", describe_index, "describe_index"),
    ("DELETE", "/indexes/{index_name}", delete_index, "delete_index"),
    ("PATCH", "/indexes/{index_name}", configure_index, "configure_index"),
    ("GET", "/collections", list_collections, "list_collections"),
    ("POST", "/collections", create_collection, "create_collection"),
    ("GET", "/collections/{collection_name}", describe_collection, "describe_collection"),
    ("DELETE", "/collections/{collection_name}", delete_collection, "delete_collection"),
]
