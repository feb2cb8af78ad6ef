"""Data-plane routes of one index (API 2025-10), served under the index's host path."""

from __future__ import annotations

import base64
from typing import Any

import numpy as np
import orjson
from aiohttp import web

from pinery.local.pinecone import context, filters, transitions, v2026_07, versions
from pinery.local.pinecone.errors import ApiError, already_exists, bad_request, not_found
from pinery.local.pinecone.state import IndexRecord
from pinery.local.pinecone.vectors import IndexData, Namespace, Record, Sparse


def _dumps(body: Any) -> bytes:
    return orjson.dumps(body)


_loads = orjson.loads

MAX_UPSERT = 1000
MAX_UPSERT_BYTES = 2 * 1024 * 1024  # Pinecone refuses larger upsert requests, whatever their count
MAX_IDS = 1000
MAX_TOP_K = 10000
MAX_TOP_K_WITH_DATA = 1000
MAX_METADATA_BYTES = 40 * 1024
MAX_SPARSE = 2048
DEFAULT_NAMESPACE = "__default__"


def _json(body: Any, status: int = 200) -> web.Response:
    return web.Response(body=_dumps(body), status=status, content_type="application/json")


async def _body(request: web.Request, max_bytes: int | None = None) -> dict[str, Any]:
    raw = await request.read()
    if max_bytes is not None and len(raw) > max_bytes:
        raise bad_request(f"Request size {len(raw) / 1024 / 1024:.1f}MB exceeds the maximum supported size of "
                          f"{max_bytes // (1024 * 1024)}MB. Send fewer vectors per request.")
    try:
        body = _loads(raw) if raw else {}
    except ValueError as exc:
        raise bad_request(f"Request body is not valid JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise bad_request("Request body must be a JSON object.")
    return body


def _target(request: web.Request) -> tuple[IndexRecord, IndexData]:
    store = context.store(request)
    project, name = request.match_info["project"], request.match_info["index_name"]
    if project != context.project(request):
        raise ApiError(401, f"The API key is not valid for index {name}.", "UNAUTHENTICATED")
    rec = store.indexes.get((project, name))
    if rec is None:
        raise not_found(f"Index {name} not found.")
    state = rec.status_state  # `Disabled` (0 dedicated read replicas) is not ready either
    if not transitions.ready(state):
        raise ApiError(503, f"Index {name} is not ready (state {state}).", "UNAVAILABLE")
    return rec, store.data.setdefault(rec.id, IndexData(rec.dimension))


def _serverless_only(rec: IndexRecord, operation: str) -> None:
    """Pinecone serves listing and namespace management on serverless indexes only; saying so here
    keeps an application from relying on them locally and failing against a pod index."""
    if rec.kind == "pod":
        raise bad_request(f"{operation} is not supported for pod-based indexes; index {rec.name} is pod-based.")


def _ns_name(raw: Any) -> str:
    if raw is None:
        return ""
    if not isinstance(raw, str):
        raise bad_request("namespace must be a string.")
    return "" if raw == DEFAULT_NAMESPACE else raw


def _filter(raw: Any):
    if raw is None:
        return None
    try:
        return filters.compile_filter(raw)
    except filters.FilterError as exc:
        raise bad_request(f"Invalid filter: {exc}") from exc


def _dense(raw: Any, rec: IndexRecord, where: str) -> list[float] | None:
    if raw is None:
        return None
    if not isinstance(raw, list) or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in raw):
        raise bad_request(f"{where}: values must be an array of numbers.")
    if rec.vector_type == "sparse":
        if raw:
            raise bad_request(f"{where}: sparse index {rec.name} does not accept dense values.")
        return None
    if len(raw) != rec.dimension:
        raise bad_request(f"Vector dimension {len(raw)} does not match the dimension of the index {rec.dimension}")
    return raw


def _stored_dense(raw: Any, rec: IndexRecord, where: str, record_id: str) -> list[float] | None:
    """Dense values to store: like a query vector, but Pinecone refuses one of only zeros."""
    values = _dense(raw, rec, where)
    if values is not None and not any(values):
        raise bad_request(f"Dense vectors must contain at least one non-zero value. "
                          f"Vector ID '{record_id}' contains only zeros")
    return values


def _sparse(raw: Any, rec: IndexRecord, where: str) -> Sparse | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("indices"), list) or not isinstance(raw.get("values"), list):
        raise bad_request(f"{where}: sparse values need 'indices' and 'values' arrays.")
    indices, values = raw["indices"], raw["values"]
    if len(indices) != len(values):
        raise bad_request(f"{where}: sparse indices and values must have the same length "
                          f"({len(indices)} != {len(values)}).")
    if len(indices) > MAX_SPARSE:
        raise bad_request(f"{where}: at most {MAX_SPARSE} sparse values are allowed.")
    if not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < 2**32 for i in indices):
        raise bad_request(f"{where}: sparse indices must be integers between 0 and 2^32-1.")
    if len(set(indices)) != len(indices):
        raise bad_request(f"{where}: sparse indices must be unique.")
    if rec.typed_schema is not None:  # made under 2026-07: the schema decides, not the metric (v2026_07.py)
        if not v2026_07.declares_sparse(rec.typed_schema):
            raise bad_request(v2026_07.SPARSE_NOT_SUPPORTED)
    elif rec.metric != "dotproduct":
        raise bad_request(f"Sparse values are only supported for indexes with the dotproduct metric; "
                          f"index {rec.name} uses {rec.metric}.")
    return np.asarray(indices, dtype=np.int64), np.asarray(values, dtype=np.float32)


def _metadata(raw: Any, where: str) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        meta = filters.validate_metadata(raw, where)
    except filters.FilterError as exc:
        raise bad_request(str(exc)) from exc
    # Pinecone keeps metadata numbers as 64-bit floats and answers them so (`2024.0`), which
    # client code comes to rely on (../shared/notes/pinecone.md).
    meta = {k: float(v) if isinstance(v, int) and not isinstance(v, bool) else v for k, v in meta.items()}
    size = len(_dumps(meta))
    if size > MAX_METADATA_BYTES:
        raise bad_request(f"Metadata size is {size} bytes, which exceeds the limit of {MAX_METADATA_BYTES} "
                          f"bytes per vector ({where}).")
    return meta


def _check_id(raw: Any, where: str) -> str:
    if not isinstance(raw, str) or not 1 <= len(raw) <= 512:
        raise bad_request(f"{where}: id must be a string of 1 to 512 characters.")
    return raw


def _out(record: Record, values: bool, metadata: bool) -> dict[str, Any]:
    item: dict[str, Any] = {"id": record.id}
    if values:
        item["values"] = record.values or []
        if record.sparse is not None:
            item["sparseValues"] = {"indices": record.sparse[0].tolist(), "values": record.sparse[1].tolist()}
    if metadata and record.metadata:
        item["metadata"] = record.metadata
    return item


# -- handlers ----------------------------------------------------------------------------------
async def upsert(request: web.Request) -> web.Response:
    rec, data = _target(request)
    v2026_07.check_vector_write(rec)
    body = await _body(request, MAX_UPSERT_BYTES)
    vectors = body.get("vectors")
    if not isinstance(vectors, list) or not vectors:
        raise bad_request("vectors must be a non-empty array.")
    if len(vectors) > MAX_UPSERT:
        raise bad_request(f"At most {MAX_UPSERT} vectors can be upserted per request (got {len(vectors)}).")
    records = []
    for i, raw in enumerate(vectors):
        where = f"vectors[{i}]"
        if not isinstance(raw, dict):
            raise bad_request(f"{where} must be an object.")
        record_id = _check_id(raw.get("id"), where)
        values = _stored_dense(raw.get("values"), rec, where, record_id)
        sparse = _sparse(raw.get("sparseValues"), rec, where)
        if rec.vector_type == "dense" and values is None:
            raise bad_request(f"{where} ({record_id}): dense index {rec.name} needs values.")
        if rec.vector_type == "sparse" and sparse is None:
            raise bad_request(f"{where} ({record_id}): sparse index {rec.name} needs sparseValues.")
        meta = raw.get("metadata")
        if versions.of(request) == v2026_07.VERSION:
            meta = v2026_07.clean_metadata(meta)
        records.append(Record(record_id, values, sparse, _metadata(meta, f"vector {record_id}")))
    count = data.namespace(_ns_name(body.get("namespace")), create=True).upsert(records)
    context.store(request).mark(rec.id)
    return _json({"upsertedCount": count})


def _top_k(body: dict[str, Any]) -> int:
    top_k = body.get("topK")
    if not isinstance(top_k, int) or isinstance(top_k, bool) or not 1 <= top_k <= MAX_TOP_K:
        raise bad_request(f"topK must be an integer between 1 and {MAX_TOP_K} (got {top_k!r}).")
    if top_k > MAX_TOP_K_WITH_DATA and (body.get("includeValues") or body.get("includeMetadata")):
        raise bad_request(f"topK must be at most {MAX_TOP_K_WITH_DATA} when including values or metadata.")
    return top_k


async def query(request: web.Request) -> web.Response:
    rec, data = _target(request)
    body = await _body(request)
    if versions.of(request) == v2026_07.VERSION:
        v2026_07.closed_query(body)
    if body.get("queries"):
        raise bad_request("The deprecated 'queries' parameter is not supported; send 'vector' or 'id'.")
    top_k = _top_k(body)
    namespace = _ns_name(body.get("namespace"))
    predicate = _filter(body.get("filter"))
    has_vector, has_id = body.get("vector") is not None, body.get("id") is not None
    if has_vector and has_id:
        raise bad_request("Only one of 'vector' and 'id' can be given.")
    ns = data.namespace(namespace) or Namespace(rec.dimension)
    dense = _dense(body.get("vector"), rec, "query") if has_vector else None
    sparse = _sparse(body.get("sparseVector"), rec, "query")
    if has_id:
        found = ns.get(_check_id(body["id"], "query"))
        if found is None:
            return _json({"matches": [], "namespace": namespace, "usage": {"readUnits": 1}})
        dense, sparse = found.values, found.sparse
    if rec.vector_type == "dense" and dense is None:
        raise bad_request(f"Dense index {rec.name} needs a query vector ('vector' or 'id').")
    if rec.vector_type == "sparse" and sparse is None:
        raise bad_request(f"Sparse index {rec.name} needs a sparse query vector ('sparseVector' or 'id').")
    query_vec = None if dense is None else np.asarray(dense, dtype=np.float32)
    best = ns.top(rec.metric, query_vec, sparse, top_k, predicate)
    include_values, include_metadata = bool(body.get("includeValues")), bool(body.get("includeMetadata"))
    matches = []
    for row, score in best:
        item = _out(ns.record(row), include_values, include_metadata)
        item["score"] = score
        matches.append(item)
    return _json({"matches": matches, "namespace": namespace, "usage": {"readUnits": max(1, len(ns) // 10000 + 5)}})


async def fetch(request: web.Request) -> web.Response:
    rec, data = _target(request)
    ids = request.query.getall("ids", [])
    if not ids:
        raise bad_request("ids must name at least one vector.")
    if len(ids) > MAX_IDS:
        raise bad_request(f"At most {MAX_IDS} ids can be fetched per request.")
    namespace = _ns_name(request.query.get("namespace"))
    ns = data.namespace(namespace)
    vectors = {}
    for record_id in ids:
        found = ns.get(record_id) if ns else None
        if found is not None:
            vectors[record_id] = _out(found, True, True)
    return _json({"vectors": vectors, "namespace": namespace, "usage": {"readUnits": 1}})


def _token(raw: str | None) -> str | None:
    if not raw:
        return None
    try:
        return base64.urlsafe_b64decode(raw.encode()).decode()
    except ValueError as exc:
        raise bad_request("paginationToken is not valid.") from exc


def _next_token(last: str) -> str:
    return base64.urlsafe_b64encode(last.encode()).decode()


def _limit(request: web.Request, maximum: int | None = 100) -> int:
    raw = request.query.get("limit", "100")
    try:
        limit = int(raw)
    except ValueError as exc:
        raise bad_request(f"limit must be an integer (got '{raw}').") from exc
    if limit < 1 or (maximum is not None and limit > maximum):
        raise bad_request(f"limit must be between 1 and {maximum} (got {limit}).")
    return limit


def _page(keys: list[str], limit: int, after: str | None) -> tuple[list[str], dict[str, Any]]:
    """The sorted keys after the token, cut to the limit, and the pagination entry if more remain."""
    rest = [k for k in sorted(keys) if after is None or k > after]
    extra = {"pagination": {"next": _next_token(rest[limit - 1])}} if len(rest) > limit else {}
    return rest[:limit], extra


async def fetch_by_metadata(request: web.Request) -> web.Response:
    rec, data = _target(request)
    body = await _body(request)
    namespace = _ns_name(body.get("namespace"))
    predicate = _filter(body.get("filter"))
    limit = body.get("limit", 100)
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise bad_request(f"limit must be a positive integer (got {limit!r}).")
    ns = data.namespace(namespace)
    matching = [ns.ids[r] for r in ns.matching_rows(predicate).tolist()] if ns else []
    page, extra = _page(matching, limit, _token(body.get("paginationToken")))
    found = [ns.get(rid) for rid in page] if ns else []
    vectors = {r.id: _out(r, True, True) for r in found if r is not None}
    return _json({"vectors": vectors, "namespace": namespace, "usage": {"readUnits": 1}, **extra})


async def update(request: web.Request) -> web.Response:
    rec, data = _target(request)
    v2026_07.check_vector_write(rec)
    body = await _body(request)
    if versions.of(request) == v2026_07.VERSION and "setMetadata" in body:
        body["setMetadata"] = v2026_07.clean_metadata(body["setMetadata"])
    namespace = _ns_name(body.get("namespace"))
    has_id, has_filter = body.get("id") is not None, body.get("filter") is not None
    if has_id == has_filter:
        raise bad_request("Exactly one of 'id' and 'filter' must be given.")
    set_metadata = _metadata(body.get("setMetadata"), "setMetadata")
    ns = data.namespace(namespace)
    if has_filter:
        if body.get("values") is not None or body.get("sparseValues") is not None:
            raise bad_request("Updating by filter can only set metadata.")
        predicate = _filter(body["filter"])
        matched = ns.update_metadata_where(predicate, set_metadata or {}, bool(body.get("dryRun"))) if ns else 0
        if matched and not body.get("dryRun"):
            context.store(request).mark(rec.id)
        return _json({"matchedRecords": matched})
    record_id = _check_id(body["id"], "update")
    values = _stored_dense(body.get("values"), rec, f"update of {record_id}", record_id)
    sparse = _sparse(body.get("sparseValues"), rec, f"update of {record_id}")
    if ns is not None and ns.update(record_id, values, sparse, set_metadata):
        context.store(request).mark(rec.id)
    return _json({})


async def delete(request: web.Request) -> web.Response:
    rec, data = _target(request)
    v2026_07.check_vector_write(rec)
    body = await _body(request)
    namespace = _ns_name(body.get("namespace"))
    ids, delete_all, flt = body.get("ids"), bool(body.get("deleteAll")), body.get("filter")
    if sum([ids is not None, delete_all, flt is not None]) != 1:
        raise bad_request("Exactly one of 'ids', 'deleteAll' and 'filter' must be given.")
    ns = data.namespace(namespace)
    if ids is not None:
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids) or len(ids) > MAX_IDS:
            raise bad_request(f"ids must be an array of at most {MAX_IDS} strings.")
        if ns:
            ns.delete(ids)
    elif delete_all:
        data.namespaces.pop(namespace, None)
    else:
        predicate = _filter(flt)
        if ns:
            ns.delete([ns.ids[r] for r in ns.matching_rows(predicate).tolist()])
    context.store(request).mark(rec.id)
    return _json({})


async def list_vectors(request: web.Request) -> web.Response:
    rec, data = _target(request)
    _serverless_only(rec, "list")
    namespace = _ns_name(request.query.get("namespace"))
    prefix = request.query.get("prefix", "")
    limit = _limit(request)
    ns = data.namespace(namespace)
    ids, extra = _page([i for i in (ns.ids if ns else []) if i.startswith(prefix)], limit,
                       _token(request.query.get("paginationToken")))
    return _json({"vectors": [{"id": i} for i in ids], "namespace": namespace, "usage": {"readUnits": 1}, **extra})


async def describe_index_stats(request: web.Request) -> web.Response:
    rec, data = _target(request)
    body = await _body(request)
    predicate = None
    if versions.of(request) == v2026_07.VERSION and body.get("filter"):
        raise bad_request(v2026_07.STATS_FILTER_REFUSED)
    if body.get("filter") is not None:
        if rec.kind != "pod":
            raise bad_request("Serverless and BYOC indexes do not support describing index stats with metadata filtering.")
        predicate = _filter(body["filter"])
    namespaces = {}
    for name, ns in sorted(data.namespaces.items()):
        count = len(ns) if predicate is None else len(ns.matching_rows(predicate))
        if len(ns):
            namespaces[name] = {"vectorCount": count}
    total = data.count()
    fullness = 0.0
    if rec.kind == "pod":
        capacity = 1_000_000 * rec.spec["pod"]["shards"] * int(rec.spec["pod"]["pod_type"].split(".x")[1])
        fullness = round(min(1.0, total / capacity), 1)
    out: dict[str, Any] = {"namespaces": namespaces, "indexFullness": fullness, "totalVectorCount": total,
                           "metric": rec.metric, "vectorType": rec.vector_type}
    if rec.dimension is not None:
        out["dimension"] = rec.dimension
    return _json(out)


def _namespace_out(name: str, ns: Namespace | None) -> dict[str, Any]:
    return {"name": name or DEFAULT_NAMESPACE, "record_count": len(ns) if ns else 0}


async def list_namespaces(request: web.Request) -> web.Response:
    rec, data = _target(request)
    _serverless_only(rec, "list_namespaces")
    prefix = request.query.get("prefix", "")
    names = [n for n in (n or DEFAULT_NAMESPACE for n in data.namespaces) if n.startswith(prefix)]
    page, extra = _page(names, _limit(request), _token(request.query.get("paginationToken")))
    return _json({"namespaces": [_namespace_out(n, data.namespace(_ns_name(n))) for n in page],
                  "total_count": len(names), **extra})


async def create_namespace(request: web.Request) -> web.Response:
    rec, data = _target(request)
    _serverless_only(rec, "create_namespace")
    body = await _body(request)
    raw = body.get("name")
    if not isinstance(raw, str) or not raw:
        raise bad_request("name must be a non-empty string.")
    name = _ns_name(raw)
    if name in data.namespaces:
        raise already_exists(f"Namespace {raw} already exists.")
    ns = data.namespace(name, create=True)
    context.store(request).mark(rec.id)
    return _json(_namespace_out(name, ns))


async def describe_namespace(request: web.Request) -> web.Response:
    rec, data = _target(request)
    _serverless_only(rec, "describe_namespace")
    name = _ns_name(request.match_info["namespace"])
    if name not in data.namespaces:
        raise not_found(f"Namespace {request.match_info['namespace']} not found.")
    return _json(_namespace_out(name, data.namespaces[name]))


async def delete_namespace(request: web.Request) -> web.Response:
    rec, data = _target(request)
    _serverless_only(rec, "delete_namespace")
    name = _ns_name(request.match_info["namespace"])
    if data.namespaces.pop(name, None) is None:
        raise not_found(f"Namespace {request.match_info['namespace']} not found.")
    context.store(request).mark(rec.id)
    return _json({})


ROUTES = [
    ("POST", "/vectors/upsert", upsert, "upsertVectors"),
    ("POST", "/query", query, "queryVectors"),
    ("GET", "/vectors/fetch", fetch, "fetchVectors"),
    ("POST", "/vectors/fetch_by_metadata", fetch_by_metadata, "fetch_vectors_by_metadata"),
    ("POST", "/vectors/update", update, "updateVector"),
    ("POST", "/vectors/delete", delete, "deleteVectors"),
    ("GET", "/vectors/list", list_vectors, "listVectors"),
    ("POST", "/describe_index_stats", describe_index_stats, "describeIndexStats"),
    ("GET", "/namespaces", list_namespaces, "listNamespacesOperation"),
    ("POST", "/namespaces", create_namespace, "createNamespace"),
    ("GET", "/namespaces/{namespace}", describe_namespace, "describeNamespace"),
    ("DELETE", "/namespaces/{namespace}", delete_namespace, "deleteNamespace"),
]
PREFIX = "/index/{project}/{index_name}"
