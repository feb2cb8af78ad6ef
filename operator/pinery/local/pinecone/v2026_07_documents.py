"""The API 2026-07 documents API, on the same stored records as the vector operations.

Routes and bodies are what the `pinecone` 10.x SDK sends (pinecone/client/documents.py Documents,
pinecone/_internal/documents_helpers.py, pinecone/models/documents/{requests,responses}.py,
pinecone/_internal/adapters/documents_adapter.py). A document is a record: its dense_vector field
is the record's values, its sparse_vector field the sparse values, every other field metadata.
An index made before 2026-07 is addressed by the reserved names `_values` / `_sparse_values`
(v2026_07.schema_fields). Scoring by text, query string or integrated embedding is not emulated.
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np
from aiohttp import web

from pinery.local.pinecone import filters, v2026_07, versions
from pinery.local.pinecone.errors import ApiError, bad_request
from pinery.local.pinecone.vectors import IndexData, Namespace, Record

MAX_DOCUMENTS = 1000  # documents_helpers.py _MAX_DOCUMENTS_PER_REQUEST
MAX_IDS = 1000
MAX_TOP_K = 10000  # requests.py SearchDocumentsRequest: top_k 1-10000
MAX_FETCH_LIMIT = 10000  # v10-2026-07-db-data-breaking-changes.md row 12
MAX_LIST_LIMIT = 100  # documents_helpers.py _build_list_documents_body: 1-100
DEFAULT_LIMIT = 100
DEFAULT_NAMESPACE = "__default__"
VECTOR_CLAUSES = ("dense_vector", "sparse_vector")
# score_by.py: the clause types; the other four need text search or inference.
NOT_EMULATED_CLAUSES = ("text", "query_string", "embed", "sparse_embed")
# score_by.py TextQuery: the text-match filter operators need full-text search.
TEXT_OPERATORS = ("$match_phrase", "$match_all", "$match_any")


class Layout:
    """Where a document's fields go in a record, from the index's (typed or derived) schema."""

    def __init__(self, rec: Any) -> None:
        self.schema = v2026_07.record_schema(rec)
        self.dense, self.sparse = v2026_07.vector_fields(self.schema)
        self.dimension = rec.dimension
        self.metric = rec.metric
        self.name = rec.name

    def to_record(self, doc: dict[str, Any], where: str) -> Record:
        doc_id = _check_id(doc.get("_id"), where)
        values = _dense(doc.get(self.dense), self.dimension, f"{where} ({doc_id}) field '{self.dense}'") \
            if self.dense and doc.get(self.dense) is not None else None
        sparse = _sparse(doc.get(self.sparse), f"{where} ({doc_id}) field '{self.sparse}'") \
            if self.sparse and doc.get(self.sparse) is not None else None
        if self.dense and values is None:
            raise bad_request(f"{where} ({doc_id}): the dense_vector field '{self.dense}' is required.")
        for key in doc:
            if key not in ("_id", self.dense, self.sparse) and self.schema["fields"].get(key, {}).get("type") in VECTOR_CLAUSES:
                raise bad_request(f"{where} ({doc_id}): unknown vector field '{key}'.")
        meta = {k: v for k, v in doc.items() if k not in ("_id", self.dense, self.sparse)}
        return Record(doc_id, values, sparse, self.metadata(meta, f"document {doc_id}"))

    def metadata(self, raw: dict[str, Any], where: str) -> dict[str, Any] | None:
        meta = v2026_07.clean_metadata(raw)
        for key, value in meta.items():
            self._check_type(key, value, where)
        try:
            meta = filters.validate_metadata(meta, where)
        except filters.FilterError as exc:
            raise bad_request(str(exc)) from exc
        # As the vector operations keep them: numbers are 64-bit floats (data._metadata).
        meta = {k: float(v) if isinstance(v, int) and not isinstance(v, bool) else v for k, v in meta.items()}
        return meta or None

    def _check_type(self, key: str, value: Any, where: str) -> None:
        """A value of a declared field has the field's type (schema.py field structs)."""
        kind = self.schema["fields"].get(key, {}).get("type")
        ok = {
            "string": lambda v: isinstance(v, str),
            "string_list": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
            "boolean": lambda v: isinstance(v, bool),
            "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        }.get(kind)
        if ok is not None and not ok(value):
            raise bad_request(f"Field '{key}' of {where} must be of type {kind}.")

    def to_document(self, record: Record, include: list[str] | None) -> dict[str, Any]:
        """A stored record as a document; `include` None means every field."""
        full: dict[str, Any] = dict(record.metadata or {})
        if self.dense and record.values is not None:
            full[self.dense] = list(record.values)
        if self.sparse and record.sparse is not None:
            full[self.sparse] = {"indices": record.sparse[0].tolist(), "values": record.sparse[1].tolist()}
        if include is not None:
            full = {k: v for k, v in full.items() if k in include}
        return {"_id": record.id, **full}


def _check_id(raw: Any, where: str) -> str:
    # pinecone/models/documents/document.py _validate_document_id: 1-512 ASCII characters.
    if not isinstance(raw, str) or not 1 <= len(raw) <= 512 or not raw.isascii():
        raise bad_request(f"{where}: '_id' is required and must be a string of 1-512 ASCII characters.")
    return raw


def _dense(raw: Any, dimension: int | None, where: str) -> list[float]:
    if not isinstance(raw, list) or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in raw):
        raise bad_request(f"{where}: values must be an array of numbers.")
    if len(raw) != dimension:
        raise bad_request(f"Vector dimension {len(raw)} does not match the dimension of the index {dimension}")
    if not any(raw):
        raise bad_request(f"Dense vectors must contain at least one non-zero value ({where}).")
    return raw


def _sparse(raw: Any, where: str):
    if not isinstance(raw, dict) or not isinstance(raw.get("indices"), list) or not isinstance(raw.get("values"), list):
        raise bad_request(f"{where}: sparse values need 'indices' and 'values' arrays.")
    indices, values = raw["indices"], raw["values"]
    if len(indices) != len(values) or len(set(indices)) != len(indices):
        raise bad_request(f"{where}: sparse indices must be unique and as many as the values.")
    if not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < 2**32 for i in indices):
        raise bad_request(f"{where}: sparse indices must be integers between 0 and 2^32-1.")
    return np.asarray(indices, dtype=np.int64), np.asarray(values, dtype=np.float32)


def _predicate(raw: Any) -> Any:
    if raw is None:
        return None
    if not isinstance(raw, dict) or not raw:
        # v10-2026-07-db-data-breaking-changes.md row 11: an empty filter is refused.
        raise bad_request("filter must contain at least one condition.")
    text = _text_operator(raw)
    if text:
        raise ApiError(501, f"The filter operator {text} needs full-text search, which the local Pinecone "
                            "emulator does not emulate.", "UNIMPLEMENTED")
    try:
        return filters.compile_filter(raw)
    except filters.FilterError as exc:
        raise bad_request(f"Invalid filter: {exc}") from exc


def _text_operator(raw: Any) -> str | None:
    if isinstance(raw, dict):
        for key, value in raw.items():
            if key in TEXT_OPERATORS:
                return key
            found = _text_operator(value)
            if found:
                return found
    if isinstance(raw, list):
        for item in raw:
            found = _text_operator(item)
            if found:
                return found
    return None


def _names(body: dict[str, Any], key: str) -> list[str] | None:
    raw = body.get(key)
    if raw is None:
        return None
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise bad_request(f"{key} must be an array of strings.")
    return raw


def _limit(raw: Any, maximum: int) -> int:
    if raw is None:
        return DEFAULT_LIMIT
    if not isinstance(raw, int) or isinstance(raw, bool) or not 1 <= raw <= maximum:
        raise bad_request(f"limit must be between 1 and {maximum}, got {raw!r}")
    return raw


def _page(ids: list[str], limit: int, token: Any) -> tuple[list[str], dict[str, Any]]:
    after = None
    if token is not None:
        try:
            after = base64.urlsafe_b64decode(str(token).encode()).decode()
        except ValueError as exc:
            raise bad_request("pagination_token is not valid.") from exc
    rest = [i for i in sorted(ids) if after is None or i > after]
    extra = {"pagination": {"next": base64.urlsafe_b64encode(rest[limit - 1].encode()).decode()}} \
        if len(rest) > limit else {}
    return rest[:limit], extra


def _ns_key(name: str) -> str:
    return "" if name == DEFAULT_NAMESPACE else name


# -- operations (pure over the index's data) ---------------------------------------------------
def upsert(rec: Any, data: IndexData, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
    """UpsertDocumentsRequest {documents} -> UpsertDocumentsResponse {upserted_count}."""
    v2026_07.closed(body, ("documents",), "UpsertDocumentsRequest")
    docs = body.get("documents")
    if not isinstance(docs, list) or not docs:
        raise bad_request("documents must be a non-empty list")
    if len(docs) > MAX_DOCUMENTS:
        raise bad_request(f"Number of documents ({len(docs)}) exceeds the maximum limit of {MAX_DOCUMENTS} "
                          "documents per request.")
    layout = Layout(rec)
    records = []
    for i, doc in enumerate(docs):
        if not isinstance(doc, dict):
            raise bad_request(f"Document at position {i} must be an object.")
        records.append(layout.to_record(doc, f"Document at position {i}"))
    count = data.namespace(_ns_key(namespace), create=True).upsert(records)
    return {"upserted_count": count}


def search(rec: Any, data: IndexData, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
    """SearchDocumentsRequest {score_by, top_k, include_fields, filter} ->
    {matches: [{_id, _score, ...fields}], namespace, usage: {read_units}} (documents_adapter.py)."""
    v2026_07.closed(body, ("score_by", "top_k", "include_fields", "filter"), "SearchDocumentsRequest")
    top_k = body.get("top_k")
    if not isinstance(top_k, int) or isinstance(top_k, bool) or not 1 <= top_k <= MAX_TOP_K:
        raise bad_request(f"top_k must be between 1 and {MAX_TOP_K}, got {top_k!r}")
    clauses = body.get("score_by")
    if not isinstance(clauses, list) or not clauses or not all(isinstance(c, dict) for c in clauses):
        raise bad_request("score_by must be a non-empty list of scoring clauses.")
    kinds = [c.get("type") for c in clauses]
    for kind in kinds:
        if kind in NOT_EMULATED_CLAUSES:
            raise ApiError(501, f"Scoring by '{kind}' is not emulated by the local Pinecone emulator; "
                                "score by dense_vector or sparse_vector.", "UNIMPLEMENTED")
        if kind not in VECTOR_CLAUSES:
            raise bad_request(f"Unknown score_by type {kind!r}.")
    if len(clauses) > 1:
        # requests.py SearchDocumentsRequest: a vector clause has to stand alone.
        raise bad_request("A dense_vector or sparse_vector clause cannot be combined with other clauses.")
    clause, layout = clauses[0], Layout(rec)
    kind = clause["type"]
    fields = clause.get("fields") or ([clause["field"]] if clause.get("field") else None)
    declared = layout.dense if kind == "dense_vector" else layout.sparse
    target = fields[0] if fields else declared
    if target is None or target != declared or (fields and len(fields) != 1):
        # v10-2026-07-vector-models.md quotes the documents API's refusal.
        raise bad_request(f"Scoring field '{target if target else kind}' not found in index schema")
    dense = sparse = None
    if kind == "dense_vector":
        dense = np.asarray(_dense(clause.get("values"), layout.dimension, "score_by"), dtype=np.float32)
        metric = layout.metric
    else:
        sparse = _sparse(clause.get("sparse_values"), "score_by")
        metric = "dotproduct"
    include = _names(body, "include_fields")
    include = None if include == ["*"] else (include or [])  # requests.py: omitted or [] -> none, ["*"] -> all
    ns = data.namespace(_ns_key(namespace)) or Namespace(rec.dimension)
    best = ns.top(metric, dense, sparse, top_k, _predicate(body.get("filter")))
    matches = [{**layout.to_document(ns.record(row), include), "_score": score} for row, score in best]
    return {"matches": matches, "namespace": namespace, "usage": {"read_units": max(1, len(ns) // 10000 + 5)}}


def fetch(rec: Any, data: IndexData, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
    """FetchDocumentsRequest {ids | filter, include_fields, pagination_token, limit} ->
    {documents: {id: doc}, namespace, usage, pagination}; only a filter fetch pages."""
    v2026_07.closed(body, ("ids", "filter", "include_fields", "pagination_token", "limit"), "FetchDocumentsRequest")
    ids = _names(body, "ids")
    if (ids is None) == (body.get("filter") is None):
        raise bad_request("Exactly one of 'ids' and 'filter' must be given.")
    include = _names(body, "include_fields")
    include = None if not include or include == ["*"] else include  # requests.py: all three mean every field
    layout, ns = Layout(rec), data.namespace(_ns_key(namespace))
    extra: dict[str, Any] = {}
    if ids is not None:
        if len(ids) > MAX_IDS:
            raise bad_request(f"At most {MAX_IDS} ids can be fetched per request.")
        if body.get("pagination_token") is not None:
            raise bad_request("pagination_token is only accepted with a filter.")
        found = [ns.get(i) for i in ids] if ns else []
    else:
        predicate = _predicate(body["filter"])
        matching = [ns.ids[r] for r in ns.matching_rows(predicate).tolist()] if ns else []
        page, extra = _page(matching, _limit(body.get("limit"), MAX_FETCH_LIMIT), body.get("pagination_token"))
        found = [ns.get(i) for i in page]
    documents = {r.id: layout.to_document(r, include) for r in found if r is not None}
    return {"documents": documents, "namespace": namespace, "usage": {"read_units": 1}, **extra}


def delete(rec: Any, data: IndexData, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
    """DeleteDocumentsRequest {ids | filter | delete_all} -> {matched_records}, null unless by filter
    (v10-migration.md "documents.delete returns a response object")."""
    v2026_07.closed(body, ("ids", "filter", "delete_all"), "DeleteDocumentsRequest")
    ids, flt, delete_all = _names(body, "ids"), body.get("filter"), bool(body.get("delete_all"))
    if sum([ids is not None, flt is not None, delete_all]) != 1:
        raise bad_request("Exactly one of 'ids', 'filter' and 'delete_all' must be given.")
    ns = data.namespace(_ns_key(namespace))
    matched = None
    if ids is not None:
        if len(ids) > MAX_IDS:
            raise bad_request(f"At most {MAX_IDS} ids can be deleted per request.")
        if ns:
            ns.delete(ids)
    elif delete_all:
        data.namespaces.pop(_ns_key(namespace), None)
    else:
        predicate = _predicate(flt)
        doomed = [ns.ids[r] for r in ns.matching_rows(predicate).tolist()] if ns else []
        if ns:
            ns.delete(doomed)
        matched = len(doomed)
    return {"matched_records": matched}


def update(rec: Any, data: IndexData, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
    """UpdateDocumentsRequest: per-document patches ({_id, fields..., _remove_fields}) or
    {filter, set_fields, remove_fields}; fields not named survive -> {matched_records}."""
    v2026_07.closed(body, ("documents", "filter", "set_fields", "remove_fields"), "UpdateDocumentsRequest")
    layout, ns = Layout(rec), data.namespace(_ns_key(namespace))
    patches: list[tuple[str, dict[str, Any], list[str]]] = []
    if body.get("documents") is not None:
        if any(body.get(k) is not None for k in ("filter", "set_fields", "remove_fields")):
            raise bad_request("documents cannot be combined with filter, set_fields or remove_fields.")
        docs = body["documents"]
        if not isinstance(docs, list) or not docs or len(docs) > MAX_DOCUMENTS:
            raise bad_request(f"documents must be a list of 1 to {MAX_DOCUMENTS} patches.")
        for i, doc in enumerate(docs):
            if not isinstance(doc, dict):
                raise bad_request(f"Document at position {i} must be an object.")
            removed = doc.get("_remove_fields") or []
            patches.append((_check_id(doc.get("_id"), f"Document at position {i}"),
                            {k: v for k, v in doc.items() if k not in ("_id", "_remove_fields")}, list(removed)))
    else:
        predicate = _predicate(body.get("filter"))
        set_fields, removed = body.get("set_fields") or {}, _names(body, "remove_fields") or []
        if not isinstance(set_fields, dict) or not (set_fields or removed):
            raise bad_request("A filter update needs set_fields or remove_fields.")
        if any(k in (layout.dense, layout.sparse) for k in set_fields):
            raise bad_request("Update by metadata request does not support updating vector values.")
        matching = [ns.ids[r] for r in ns.matching_rows(predicate).tolist()] if ns else []
        patches = [(i, set_fields, removed) for i in matching]
    matched, changed = 0, []
    for doc_id, fields, removed in patches:
        old = ns.get(doc_id) if ns else None
        if old is None:
            continue
        matched += 1
        merged = layout.to_document(old, None)
        merged.update(fields)
        for key in removed:
            merged.pop(key, None)
        changed.append(layout.to_record(merged, f"document {doc_id}"))
    if changed:
        ns.upsert(changed)
    return {"matched_records": matched}


def list_ids(rec: Any, data: IndexData, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
    """ListDocumentsRequest {prefix, limit, pagination_token} -> {documents: [{_id}], namespace, usage,
    pagination}."""
    v2026_07.closed(body, ("prefix", "limit", "pagination_token"), "ListDocumentsRequest")
    prefix = body.get("prefix") or ""
    if not isinstance(prefix, str):
        raise bad_request("prefix must be a string.")
    ns = data.namespace(_ns_key(namespace))
    ids, extra = _page([i for i in (ns.ids if ns else []) if i.startswith(prefix)],
                       _limit(body.get("limit"), MAX_LIST_LIMIT), body.get("pagination_token"))
    return {"documents": [{"_id": i} for i in ids], "namespace": namespace, "usage": {"read_units": 1}, **extra}


# -- routes ------------------------------------------------------------------------------------
OPERATIONS = {"upsert": (upsert, True, 200), "search": (search, False, 200), "fetch": (fetch, False, 200),
              # v10-migration.md: a delete applies asynchronously behind a 202.
              "delete": (delete, True, 202), "update": (update, True, 200), "list": (list_ids, False, 200)}


def _handler(operation: str):
    fn, writes, status = OPERATIONS[operation]

    async def handle(request: web.Request) -> web.Response:
        from pinery.local.pinecone import data as plane  # the data plane's helpers (imports this module)
        rec, index_data = plane._target(request)
        if versions.of(request) != v2026_07.VERSION:
            raise ApiError(404, f"No route for {request.method} {request.path}: the documents API is served from "
                                f"API version {v2026_07.VERSION}.", "NOT_FOUND")
        body = await plane._body(request, plane.MAX_UPSERT_BYTES if writes else None)
        out = fn(rec, index_data, request.match_info["namespace"], body)
        if writes:
            request.app[plane.EMULATOR].store.mark(rec.id)
        return plane._json(out, status)

    handle.__name__ = f"{operation}_documents"
    return handle


ROUTES = [("POST", f"/namespaces/{{namespace}}/documents/{op}", _handler(op), f"{op}_documents") for op in OPERATIONS]
