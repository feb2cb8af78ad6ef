"""Integrated records on an index's data plane: upsert text, search by text, vector or id.

    POST /records/namespaces/{namespace}/upsert   NDJSON of records -> 201, no body
    POST /records/namespaces/{namespace}/search   SearchRecordsRequest -> SearchRecordsResponse

Shapes: ../shared/pinecone-api/2025-10/db_data_2025-10.oas.yaml (upsertRecordsNamespace,
searchRecordsNamespace, UpsertRecord, SearchRecordsRequest, Hit, SearchUsage, SearchMatchTerms)
and what SDK 9.1 sends and decodes (pinecone/index/__init__.py upsert_records/search,
pinecone/models/vectors/search.py); docs/pinecone-api-versions.md, "Integrated records".

A record is `_id` (or `id`), the text field the index's `embed.field_map` names, and any other
fields; the text is embedded with the index's model (inference.py) and every field but the id is
kept as the vector's metadata, so `query`, `fetch` and filters see records like any vector.
Searching by vector or id works on every index; by text only on one with integrated embedding.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import orjson
from aiohttp import web

from pinery.local.pinecone import context, inference
from pinery.local.pinecone import data as vectors_api
from pinery.local.pinecone.embedder import words
from pinery.local.pinecone.errors import bad_request
from pinery.local.pinecone.state import IndexRecord
from pinery.local.pinecone.vectors import Namespace, Record

MAX_TOP_K = 10000


def _integrated(rec: IndexRecord, operation: str) -> tuple[inference.Model, str]:
    """The index's embedding model and the record field it embeds; 400 without integrated embedding."""
    embed = rec.embed or {}
    model = inference.MODELS.get(embed.get("model") or "")
    if model is None:
        raise bad_request(f"Index {rec.name} is not configured for integrated inference, so it cannot {operation}. "
                          "Create the index with an embedding model (create_index_for_model), or upsert and query "
                          "vectors instead.")
    field_map = embed.get("field_map") or {}
    field = field_map.get("text") or next(iter(field_map.values()), None)
    if not isinstance(field, str) or not field:
        raise bad_request(f"Index {rec.name} has no text field in its embed.field_map.")
    return model, field


def _parameters(rec: IndexRecord, model: inference.Model, which: str, input_type: str) -> dict[str, Any]:
    """The index's read or write parameters for its model (input_type defaulted), checked."""
    configured = (rec.embed or {}).get(which) or {}
    params = inference.check_parameters(model, {"input_type": input_type, **configured})
    if model.vector_type == "dense":
        params["dimension"] = rec.dimension  # the index's width, whatever its parameters say
    return params


def _parse_records(raw: bytes) -> list[Any]:
    """NDJSON (one record a line), as the spec and the SDKs send; a JSON array is taken too."""
    text = raw.strip()
    if not text:
        return []
    if text.startswith(b"["):
        try:
            items = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise bad_request(f"Request body is not valid JSON: {exc}") from exc
        return items if isinstance(items, list) else [items]
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(orjson.loads(line))
        except orjson.JSONDecodeError as exc:
            raise bad_request(f"Line {number} of the request body is not valid JSON: {exc}") from exc
    return records


async def upsert_records(request: web.Request) -> web.Response:
    rec, _ = vectors_api._target(request)
    model, text_field = _integrated(rec, "upsert records")
    raw = await request.read()
    if len(raw) > vectors_api.MAX_UPSERT_BYTES:
        raise bad_request(f"Request size {len(raw) / 1024 / 1024:.1f}MB exceeds the maximum supported size of "
                          f"{vectors_api.MAX_UPSERT_BYTES // (1024 * 1024)}MB. Send fewer records per request.")
    items = _parse_records(raw)
    if not items:
        raise bad_request("The request body must contain at least one record.")
    if len(items) > model.max_batch_size:
        raise bad_request(f"At most {model.max_batch_size} records can be upserted per request with model "
                          f"'{model.name}' (got {len(items)}).")
    ids, texts, metadata = [], [], []
    for i, item in enumerate(items):
        where = f"record {i}"
        if not isinstance(item, dict):
            raise bad_request(f"{where.capitalize()} must be a JSON object.")
        fields = dict(item)
        record_id = fields.pop("_id", None)
        if record_id is None:
            record_id = fields.pop("id", None)
        else:
            fields.pop("id", None)
        if record_id is None:
            raise bad_request(f"{where.capitalize()} has no '_id' field.")
        record_id = vectors_api._check_id(record_id, where)
        text = fields.get(text_field)
        if text is None:
            raise bad_request(f"Record '{record_id}' has no '{text_field}' field, which index {rec.name} embeds "
                              f"(embed.field_map).")
        if not isinstance(text, str):
            raise bad_request(f"Field '{text_field}' of record '{record_id}' must be a string.")
        ids.append(record_id)
        texts.append(text)
        metadata.append(vectors_api._metadata(fields, f"record {record_id}"))
    params = _parameters(rec, model, "write_parameters", "passage")
    result = await inference.embed_texts(model, texts, params, "Record")
    rec, data = vectors_api._target(request)  # again: the index may have changed while embedding
    if result.sparse is not None:
        rows = [Record(i, None, (np.asarray(s[0], dtype=np.int64), np.asarray(s[1], dtype=np.float32)), m)
                for i, s, m in zip(ids, result.sparse, metadata, strict=True)]
    else:
        rows = [Record(i, v, None, m) for i, v, m in zip(ids, result.dense_vectors().tolist(), metadata, strict=True)]
    data.namespace(vectors_api._ns_name(request.match_info["namespace"]), create=True).upsert(rows)
    context.store(request).mark(rec.id)
    return web.Response(status=201)


def _top_k(query: dict[str, Any]) -> int:
    top_k = query.get("top_k")
    if not isinstance(top_k, int) or isinstance(top_k, bool) or not 1 <= top_k <= MAX_TOP_K:
        raise bad_request(f"query.top_k must be an integer between 1 and {MAX_TOP_K} (got {orjson.dumps(top_k).decode()}).")
    return top_k


def _fields(raw: Any) -> list[str] | None:
    if raw is None:
        return None
    if not isinstance(raw, list) or not all(isinstance(f, str) for f in raw):
        raise bad_request("fields must be an array of field names.")
    return raw


def _match_terms(raw: Any, rec: IndexRecord):
    """A predicate for query.match_terms {strategy: all, terms}: sparse integrated indexes only."""
    if raw is None:
        return None
    embed = rec.embed or {}
    if rec.vector_type != "sparse" or embed.get("model") != "pinecone-sparse-english-v0":
        raise bad_request("match_terms is supported only on sparse indexes with integrated embedding "
                          "(model pinecone-sparse-english-v0).")
    if not isinstance(raw, dict) or raw.get("strategy", "all") != "all":
        raise bad_request("match_terms.strategy must be 'all'.")
    terms = raw.get("terms")
    if not isinstance(terms, list) or not all(isinstance(t, str) for t in terms):
        raise bad_request("match_terms.terms must be an array of strings.")
    wanted = {w for t in terms for w in words(t)}
    _, field = _integrated(rec, "match terms")

    def matches(meta: dict[str, Any]) -> bool:
        text = meta.get(field)
        return isinstance(text, str) and wanted <= set(words(text))

    return matches


def _rerank_config(raw: Any, top_k: int):
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise bad_request("rerank must be an object with model and rank_fields.")
    model = inference.lookup(raw.get("model"), "rerank")
    if raw.get("rank_fields") is None:
        raise bad_request("rerank.rank_fields is required.")
    rank_fields = inference.check_rank_fields(model, raw.get("rank_fields"))
    top_n = raw.get("top_n", top_k)
    if not isinstance(top_n, int) or isinstance(top_n, bool) or top_n < 1:
        raise bad_request(f"rerank.top_n must be a positive integer (got {orjson.dumps(top_n).decode()}).")
    query = raw.get("query")
    if query is not None and not isinstance(query, str):
        raise bad_request("rerank.query must be a string.")
    return model, rank_fields, top_n, query, inference.check_parameters(model, raw.get("parameters"))


async def search_records(request: web.Request) -> web.Response:
    rec, data = vectors_api._target(request)
    body = await vectors_api._body(request)
    query = body.get("query")
    if not isinstance(query, dict):
        raise bad_request("query is required: an object with top_k and one of inputs, vector or id.")
    top_k = _top_k(query)
    namespace = vectors_api._ns_name(request.match_info["namespace"])
    predicate = vectors_api._filter(query.get("filter"))
    terms = _match_terms(query.get("match_terms"), rec)
    if terms is not None:
        predicate = terms if predicate is None else (lambda meta, a=predicate, b=terms: a(meta) and b(meta))
    fields = _fields(body.get("fields"))
    rerank = _rerank_config(body.get("rerank"), top_k)
    sources = [key for key in ("inputs", "vector", "id") if query.get(key) is not None]
    if len(sources) != 1:
        raise bad_request("query needs exactly one of inputs, vector and id" +
                          (f" (got {', '.join(sources)})." if sources else "."))
    usage: dict[str, Any] = {}
    ns = data.namespace(namespace) or Namespace(rec.dimension)
    dense = sparse = None
    query_text = None
    if sources == ["inputs"]:
        inputs = query["inputs"]
        query_text = inputs.get("text") if isinstance(inputs, dict) else None
        if not isinstance(query_text, str):
            raise bad_request("query.inputs must be an object with a 'text' string.")
        model, _ = _integrated(rec, "search with query.inputs (text)")
        embedded = await inference.embed_texts(model, [query_text], _parameters(rec, model, "read_parameters", "query"),
                                               "Query")
        usage["embed_total_tokens"] = embedded.tokens
        rec, data = vectors_api._target(request)
        ns = data.namespace(namespace) or Namespace(rec.dimension)
        if embedded.sparse is not None:
            indices, values, _ = embedded.sparse[0]
            sparse = (np.asarray(indices, dtype=np.int64), np.asarray(values, dtype=np.float32))
        else:
            dense = embedded.dense_vectors()[0].tolist()
    elif sources == ["vector"]:
        vector = query["vector"]
        if isinstance(vector, list):
            vector = {"values": vector}
        if not isinstance(vector, dict):
            raise bad_request("query.vector must be an object with values and/or sparse_indices and sparse_values.")
        dense = vectors_api._dense(vector.get("values"), rec, "query.vector")
        if vector.get("sparse_indices") is not None or vector.get("sparse_values") is not None:
            sparse = vectors_api._sparse({"indices": vector.get("sparse_indices"), "values": vector.get("sparse_values")},
                                         rec, "query.vector")
    else:
        found = ns.get(vectors_api._check_id(query["id"], "query"))
        if found is None:
            return _answer([], ns, usage)
        dense, sparse = found.values, found.sparse
    if rec.vector_type == "dense" and dense is None:
        raise bad_request(f"Dense index {rec.name} needs dense query values (query.vector.values, inputs or id).")
    if rec.vector_type == "sparse" and sparse is None:
        raise bad_request(f"Sparse index {rec.name} needs a sparse query (query.vector sparse_indices and "
                          "sparse_values, inputs or id).")
    query_vec = None if dense is None else np.asarray(dense, dtype=np.float32)
    best = ns.top(rec.metric, query_vec, sparse, top_k, predicate)
    hits: list[dict[str, Any]] = [{"_id": ns.ids[row], "_score": score, "fields": dict(ns.metadata[row] or {})} for row, score in best]
    if rerank is not None and hits:
        model, rank_fields, top_n, rerank_query, params = rerank
        rerank_query = rerank_query or query_text
        if rerank_query is None:
            raise bad_request("rerank.query is required when searching by vector or id.")
        texts = [inference.rank_text(h["fields"], rank_fields, f"Record '{h['_id']}'") for h in hits]
        scores, usage["rerank_units"] = await inference.rank_texts(model, rerank_query, texts, params)
        order = sorted(range(len(hits)), key=lambda i: (-scores[i], i))[:top_n]
        hits = [{**hits[i], "_score": scores[i]} for i in order]
    elif rerank is not None:
        usage["rerank_units"] = 0
    # "*" names every field: SDK 7.x and 8.x send fields=["*"] by default (Index.search).
    if fields is not None and "*" not in fields:
        for hit in hits:
            hit["fields"] = {k: hit["fields"][k] for k in fields if k in hit["fields"]}
    return _answer(hits, ns, usage)


def _answer(hits: list[dict[str, Any]], ns: Namespace, usage: dict[str, Any]) -> web.Response:
    usage = {"read_units": max(1, len(ns) // 10000 + 5), **usage}
    return vectors_api._json({"result": {"hits": hits}, "usage": usage})


ROUTES = [
    ("POST", "/records/namespaces/{namespace}/upsert", upsert_records, "upsertRecordsNamespace"),
    ("POST", "/records/namespaces/{namespace}/search", search_records, "searchRecordsNamespace"),
]
