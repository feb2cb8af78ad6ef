"""The API 2026-07 documents API, on the same stored records as the vector operations.

Routes and bodies are what the `pinecone` 10.x SDK sends (pinecone/client/documents.py Documents,
pinecone/_internal/documents_helpers.py, pinecone/models/documents/{requests,responses}.py,
pinecone/_internal/adapters/documents_adapter.py). A document is a record: its dense_vector field
is the record's values, its sparse_vector field the sparse values, every other field metadata.
An index made before 2026-07 is addressed by the reserved names `_values` / `_sparse_values`
(v2026_07.schema_fields).

A `string` field with `embed` (`sparse_embed`) has its text embedded on upsert and update with the
field's model (inference.py) and kept as the record's dense (sparse) values; its text, unless
`store_text` is false, is metadata like any other field. Scoring clauses (score_by.py): vectors,
`embed`/`sparse_embed` (the query text embedded with the field's read parameters, scored with the
field's metric / dot product), and `text`, a BM25 score over the stored field text (`bm25` below;
Pinecone's own ranking differs). `query_string` (Lucene syntax) answers 501. Filters take the
text-match operators `$match_phrase`, `$match_all`, `$match_any` on stored text fields.
"""

from __future__ import annotations

import base64
import math
import re
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any, Callable

import numpy as np
from aiohttp import web

from pinery.local.pinecone import context, filters, inference, v2026_07, versions
from pinery.local.pinecone import data as plane  # the data plane's helpers: _target, _body, _json
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
# score_by.py DocumentScoringMethod: the six clause types and the keys each takes (the SDK moves
# a one-element `fields` into `field` for all but `text`, whose `field` is deprecated).
CLAUSE_KEYS = {
    "text": ("type", "query", "fields", "field"),
    "query_string": ("type", "query", "field", "fields"),
    "dense_vector": ("type", "values", "field", "fields"),
    "sparse_vector": ("type", "sparse_values", "field", "fields"),
    "embed": ("type", "query", "field", "fields"),
    "sparse_embed": ("type", "query", "field", "fields"),
}
# requests.py _STANDALONE_CLAUSES: these have to stand alone in score_by.
STANDALONE_CLAUSES = ("dense_vector", "sparse_vector", "embed", "sparse_embed")
NOT_EMULATED_CLAUSES = ("query_string",)
MAX_CLAUSES = 100  # requests.py _MAX_SCORING_METHODS
# documents/requests.py SearchDocumentsRequest.filter: the text-match operators of stored text fields.
TEXT_OPERATORS = ("$match_phrase", "$match_all", "$match_any")
# BM25's usual constants (Lucene's BM25Similarity defaults).
BM25_K1, BM25_B = 1.2, 0.75
_TERM_RE = re.compile(r"\w+", re.UNICODE)


def terms(text: str) -> list[str]:
    """The full-text analyser: lower-cased (casefolded) runs of Unicode word characters, in order.
    No stemming, stop words or n-grams, whatever the field's full_text_search says."""
    return [t.casefold() for t in _TERM_RE.findall(text)]


def bm25(query: list[str], docs: list[list[str] | None]) -> np.ndarray:
    """The BM25 score of each document (its field's terms; None when it has no such field) for the
    query terms, each distinct query term counted once: idf = ln(1 + (N - df + 0.5) / (df + 0.5))
    over the N documents that have the field, times tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl)),
    k1 = 1.2, b = 0.75. 0 for a document sharing no term."""
    scores = np.zeros(len(docs), dtype=np.float64)
    present = [d for d in docs if d is not None]
    if not present or not query:
        return scores
    n, avgdl = len(present), (sum(len(d) for d in present) / len(present)) or 1.0
    counts = [None if d is None else _counts(d) for d in docs]
    for term in dict.fromkeys(query):
        df = sum(1 for c in counts if c is not None and term in c)
        if not df:
            continue
        idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
        for row, c in enumerate(counts):
            if c is None:
                continue
            tf = c.get(term, 0)
            if tf:
                dl = sum(c.values())
                scores[row] += idf * tf * (BM25_K1 + 1) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * dl / avgdl))
    return scores


def _counts(words: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for w in words:
        out[w] = out.get(w, 0) + 1
    return out


def text_match(operator: str, query: str, text: Any) -> bool:
    """$match_phrase: the query's terms as a contiguous, ordered run; $match_all: every term;
    $match_any: at least one (client/documents.py Documents.search, `filter`)."""
    if not isinstance(text, str):
        return False
    wanted, have = terms(query), terms(text)
    if not wanted:
        return False
    if operator == "$match_any":
        return bool(set(wanted) & set(have))
    if operator == "$match_all":
        return set(wanted) <= set(have)
    width = len(wanted)
    return any(have[i:i + width] == wanted for i in range(len(have) - width + 1))


@dataclass
class Embedded:
    """Embeddings made before an operation runs (the handler awaits them off the loop): text to
    dense values, text to sparse values, and the tokens embedded."""
    dense: dict[str, list[float]] = dc_field(default_factory=dict)
    sparse: dict[str, Any] = dc_field(default_factory=dict)
    tokens: int = 0


class Layout:
    """Where a document's fields go in a record, from the index's (typed or derived) schema."""

    def __init__(self, rec: Any) -> None:
        self.schema = v2026_07.record_schema(rec)
        self.dense, self.sparse = v2026_07.vector_fields(self.schema)
        self.embed, self.sparse_embed = v2026_07.embed_fields(self.schema)
        fields = self.schema["fields"]
        self.text = [n for n, f in fields.items() if v2026_07.text_searchable(f)]
        self.unstored = [n for n, f in fields.items() if f.get("type") == "string" and f.get("store_text") is False]
        # client/documents.py Documents.search `filter`: data fields (vectors, string search fields)
        # take no comparison operators.
        self.data = [n for n, f in fields.items() if f.get("type") in VECTOR_CLAUSES
                     or (f.get("type") == "string" and any(f.get(k) is not None for k in v2026_07.SEARCH_KEYS))]
        self.dimension = rec.dimension
        self.metric = rec.metric
        self.name = rec.name

    def config(self, name: str, key: str) -> dict[str, Any]:
        return self.schema["fields"][name][key]

    def model(self, name: str, key: str) -> inference.Model:
        return inference.MODELS[self.config(name, key)["model"]]

    def to_record(self, doc: dict[str, Any], where: str, embedded: Embedded | None = None,
                  old: Record | None = None) -> Record:
        """A document as a record. Embedded fields take their vectors from `embedded` (made by
        the handler), or keep `old`'s when an update left their text alone."""
        doc_id = _check_id(doc.get("_id"), where)
        here = f"{where} ({doc_id})"
        values = _dense(doc.get(self.dense), self.dimension, f"{here} field '{self.dense}'") \
            if self.dense and doc.get(self.dense) is not None else None
        sparse = _sparse(doc.get(self.sparse), f"{here} field '{self.sparse}'") \
            if self.sparse and doc.get(self.sparse) is not None else None
        if self.dense and values is None:
            raise bad_request(f"{here}: the dense_vector field '{self.dense}' is required.")
        for key in doc:
            if key not in ("_id", self.dense, self.sparse) and self.schema["fields"].get(key, {}).get("type") in VECTOR_CLAUSES:
                raise bad_request(f"{here}: unknown vector field '{key}'.")
        for name in {*self.text, *self.unstored, self.embed, self.sparse_embed} - {None}:
            if doc.get(name) is not None and not isinstance(doc[name], str):
                raise bad_request(f"Field '{name}' of document {doc_id} must be of type string.")
        if self.embed:
            text = doc.get(self.embed)
            if old is not None and old.values is not None:
                values = old.values
            elif text is not None:
                values = _embedding(embedded, "dense", text)
            else:
                # client/documents.py Documents.upsert: every string field with embed is required.
                raise bad_request(f"{here}: the string field '{self.embed}' is required: the index embeds its text "
                                  f"(embed, model {self.config(self.embed, 'embed')['model']}).")
        if self.sparse_embed:
            text = doc.get(self.sparse_embed)
            if old is not None and old.sparse is not None:
                sparse = old.sparse
            elif text is not None:
                sparse = _embedding(embedded, "sparse", text)
        if values is None and sparse is None and not any(isinstance(doc.get(n), str) for n in self.text):
            if self.dense or self.sparse or self.embed or self.sparse_embed or self.text:
                # Documents.upsert: "Each document also needs at least one searchable schema field".
                searchable = [n for n in (self.dense, self.sparse, self.embed, self.sparse_embed, *self.text) if n]
                raise bad_request(f"{here}: a document needs at least one searchable field "
                                  f"({', '.join(dict.fromkeys(searchable))}).")
        skip = {"_id", self.dense, self.sparse, *self.unstored}
        meta = {k: v for k, v in doc.items() if k not in skip}
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


def _embedding(embedded: Embedded | None, kind: str, text: str) -> Any:
    found = (embedded.dense if kind == "dense" else embedded.sparse).get(text) if embedded else None
    if found is None:  # the handler embeds every text an operation reads (embedding_jobs)
        raise ApiError(500, "The text of an embedded field was not embedded before the write.", "INTERNAL")
    return found


def _predicate(raw: Any, layout: Layout | None = None, text_match_allowed: bool = True,
               operation: str = "search") -> Any:
    """A filter as a predicate over a record's metadata. Stored text fields take only the
    text-match operators, other data fields nothing, metadata fields everything but those
    (client/documents.py Documents.search `filter`); a delete or update filter refuses them
    (requests.py DeleteDocumentsRequest, UpdateDocumentsRequest)."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or not raw:
        # v10-2026-07-db-data-breaking-changes.md row 11: an empty filter is refused.
        raise bad_request("filter must contain at least one condition.")
    try:
        return _compile(raw, layout, text_match_allowed, operation)
    except filters.FilterError as exc:
        raise bad_request(f"Invalid filter: {exc}") from exc


def _compile(raw: dict[str, Any], layout: Layout | None, allowed: bool, operation: str) -> Callable[[dict], bool]:
    parts: list[Callable[[dict], bool]] = []
    for key, value in raw.items():
        if key in ("$and", "$or"):
            if not isinstance(value, list) or not value or not all(isinstance(v, dict) and v for v in value):
                raise bad_request(f"Invalid filter: {key} expects a non-empty array of filters.")
            subs = [_compile(v, layout, allowed, operation) for v in value]
            parts.append(_every(subs) if key == "$and" else _some(subs))
        elif not key.startswith("$") and layout is not None and key in layout.data:
            parts.append(_text_condition(key, value, layout, allowed, operation))
        else:
            if isinstance(value, dict):
                used = [op for op in value if op in TEXT_OPERATORS]
                if used:
                    raise bad_request(f"The text-match operator {used[0]} applies only to a string field whose text is "
                                      f"stored and searchable (full_text_search, or embed/sparse_embed); '{key}' is "
                                      "metadata.")
            parts.append(filters.compile_filter({key: value}))
    return parts[0] if len(parts) == 1 else _every(parts)


def _every(predicates: list[Callable[[dict], bool]]) -> Callable[[dict], bool]:
    return lambda m: all(p(m) for p in predicates)


def _some(predicates: list[Callable[[dict], bool]]) -> Callable[[dict], bool]:
    return lambda m: any(p(m) for p in predicates)


def _text_condition(key: str, value: Any, layout: Layout, allowed: bool, operation: str) -> Callable[[dict], bool]:
    if key not in layout.text:
        raise bad_request(f"Field '{key}' is a data field ({'a vector' if key in (layout.dense, layout.sparse) else 'text that is not stored'}) "
                          "and cannot be filtered.")
    if not isinstance(value, dict) or not value or any(op not in TEXT_OPERATORS for op in value):
        raise bad_request(f"Field '{key}' is full-text searchable, so it takes only the text-match operators "
                          f"{', '.join(TEXT_OPERATORS)}; comparison operators apply to metadata fields.")
    if not allowed:
        raise bad_request(f"Text-match operators are not accepted in a {operation} filter, where they would widen "
                          "what it changes; select the documents with metadata conditions or ids.")
    checks = []
    for op, query in value.items():
        if not isinstance(query, str) or not terms(query):
            raise bad_request(f"{op} on field '{key}' needs a string with at least one word.")
        checks.append((op, query))
    return lambda m: all(text_match(op, q, m.get(key)) for op, q in checks)


def _names(body: dict[str, Any], key: str) -> list[str] | None:
    raw = body.get(key)
    if raw is None:
        return None
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise bad_request(f"{key} must be an array of strings.")
    return raw


def _include(layout: Layout, names: list[str] | None) -> None:
    """Naming a store_text false field is a 400 (requests.py SearchDocumentsRequest.include_fields)."""
    for name in names or []:
        if name in layout.unstored:
            raise bad_request(f"Field '{name}' is declared with store_text false, so its text is not stored and "
                              "cannot be returned; leave it out of include_fields.")


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
def _check_documents(layout: Layout, docs: Any) -> list[Any]:
    if not isinstance(docs, list) or not docs:
        raise bad_request("documents must be a non-empty list")
    limit = MAX_DOCUMENTS
    embedded = [f for f in (layout.embed, layout.sparse_embed) if f]
    if embedded:
        # client/documents.py Documents.upsert: "a lower count on an index with an embed or
        # sparse_embed field"; the emulator takes the model's batch size (inference.py).
        limit = min(layout.model(layout.embed, "embed").max_batch_size if layout.embed else MAX_DOCUMENTS,
                    layout.model(layout.sparse_embed, "sparse_embed").max_batch_size if layout.sparse_embed
                    else MAX_DOCUMENTS)
    if len(docs) > limit:
        extra = " on an index with integrated embedding" if embedded else ""
        raise bad_request(f"Number of documents ({len(docs)}) exceeds the maximum limit of {limit} "
                          f"documents per request{extra}.")
    return docs


def _usage(embedded: Embedded | None) -> dict[str, Any]:
    # responses.py DocumentUpsertUsage / DocumentUpdateUsage: usage only when text was embedded.
    return {"usage": {"embed_total_tokens": embedded.tokens}} if embedded and (embedded.dense or embedded.sparse) else {}


def upsert(rec: Any, data: IndexData, namespace: str, body: dict[str, Any],
           embedded: Embedded | None = None) -> dict[str, Any]:
    """UpsertDocumentsRequest {documents} -> UpsertDocumentsResponse {upserted_count, usage}."""
    v2026_07.closed(body, ("documents",), "UpsertDocumentsRequest")
    layout = Layout(rec)
    docs = _check_documents(layout, body.get("documents"))
    records = []
    for i, doc in enumerate(docs):
        if not isinstance(doc, dict):
            raise bad_request(f"Document at position {i} must be an object.")
        records.append(layout.to_record(doc, f"Document at position {i}", embedded))
    count = data.namespace(_ns_key(namespace), create=True).upsert(records)
    return {"upserted_count": count, **_usage(embedded)}


def _clause(clause: Any, layout: Layout) -> tuple[str, list[str], Any]:
    """One score_by clause checked (score_by.py): its type, the fields it scores, its query."""
    if not isinstance(clause, dict):
        raise bad_request("score_by must be a non-empty list of scoring clauses.")
    kind = clause.get("type")
    if kind not in CLAUSE_KEYS:
        raise bad_request(f"Unknown score_by type {kind!r}; expected one of {', '.join(CLAUSE_KEYS)}.")
    v2026_07.closed(clause, CLAUSE_KEYS[kind], f"score_by clause of type '{kind}'")
    if kind in NOT_EMULATED_CLAUSES:
        raise ApiError(501, "Scoring by 'query_string' (a Lucene expression) is not emulated by the local Pinecone "
                            "emulator; score by 'text' clauses (BM25 over the named fields) instead.", "UNIMPLEMENTED")
    fields = clause.get("fields")
    if fields is not None and (not isinstance(fields, list) or not all(isinstance(f, str) for f in fields)):
        raise bad_request("fields must be an array of field names.")
    names = list(fields or []) + ([clause["field"]] if clause.get("field") else [])
    if kind == "text":
        query = clause.get("query")
        if not isinstance(query, str):
            raise bad_request("A text clause needs a 'query' string.")
        if not names:
            raise bad_request("Text scoring requires specifying at least one field")  # score_by.py TextQuery
        for name in names:
            _scored(layout, name, kind, name in layout.text)
        return kind, list(dict.fromkeys(names)), query
    if len(names) != 1:
        declared = {"dense_vector": layout.dense, "sparse_vector": layout.sparse, "embed": layout.embed,
                    "sparse_embed": layout.sparse_embed}[kind]
        if names or declared is None:
            raise bad_request(f"{kind} scoring requires specifying the name of exactly one field")
        names = [declared]
    name = names[0]
    if kind == "dense_vector":
        _scored(layout, name, kind, name == layout.dense)
        return kind, names, np.asarray(_dense(clause.get("values"), layout.dimension, "score_by"), dtype=np.float32)
    if kind == "sparse_vector":
        _scored(layout, name, kind, name == layout.sparse)
        return kind, names, _sparse(clause.get("sparse_values"), "score_by")
    _scored(layout, name, kind, name == (layout.embed if kind == "embed" else layout.sparse_embed))
    query = clause.get("query")
    if not isinstance(query, str) or not query:
        raise bad_request(f"{kind} scoring requires a non-empty 'query'")
    return kind, names, query


def _scored(layout: Layout, name: str, kind: str, ok: bool) -> None:
    if ok:
        return
    field = layout.schema["fields"].get(name)
    if field is None:
        # v10-2026-07-vector-models.md quotes the documents API's refusal.
        raise bad_request(f"Scoring field '{name}' not found in index schema")
    need = {"text": "a string field with full_text_search (or embed/sparse_embed and stored text)",
            "dense_vector": "a dense_vector field", "sparse_vector": "a sparse_vector field",
            "embed": "a string field declared with embed", "sparse_embed": "a string field declared with sparse_embed"}
    raise bad_request(f"Field '{name}' cannot be scored by '{kind}': that needs {need[kind]}.")


def search(rec: Any, data: IndexData, namespace: str, body: dict[str, Any],
           embedded: Embedded | None = None) -> dict[str, Any]:
    """SearchDocumentsRequest {score_by, top_k, include_fields, filter} ->
    {matches: [{_id, _score, ...fields}], namespace, usage: {read_units, embed_total_tokens}}
    (documents_adapter.py; responses.py DocumentSearchUsage)."""
    v2026_07.closed(body, ("score_by", "top_k", "include_fields", "filter"), "SearchDocumentsRequest")
    top_k = body.get("top_k")
    if not isinstance(top_k, int) or isinstance(top_k, bool) or not 1 <= top_k <= MAX_TOP_K:
        raise bad_request(f"top_k must be between 1 and {MAX_TOP_K}, got {top_k!r}")
    raw = body.get("score_by")
    if not isinstance(raw, list) or not raw:
        raise bad_request("score_by must be a non-empty list of scoring clauses.")
    if len(raw) > MAX_CLAUSES:
        raise bad_request(f"Number of scoring methods exceeds the maximum limit of {MAX_CLAUSES} methods")
    layout = Layout(rec)
    clauses = [_clause(c, layout) for c in raw]
    if len(clauses) > 1 and any(kind in STANDALONE_CLAUSES for kind, _, _ in clauses):
        # requests.py SearchDocumentsRequest.
        raise bad_request("'score_by' clauses of type 'text' and 'query_string' may be combined, but 'dense_vector', "
                          "'sparse_vector', 'embed', and 'sparse_embed' clauses must appear alone in 'score_by'")
    include = _names(body, "include_fields")
    _include(layout, include)
    include = None if include and "*" in include else (include or [])  # requests.py: omitted or [] -> none, "*" -> all
    predicate = _predicate(body.get("filter"), layout)
    ns = data.namespace(_ns_key(namespace)) or Namespace(rec.dimension)
    kind, names, query = clauses[0]
    usage: dict[str, Any] = {"read_units": max(1, len(ns) // 10000 + 5)}
    if kind == "text":
        best = _text_top(ns, clauses, top_k, predicate)
    else:
        dense = sparse = None
        metric = layout.metric
        if kind == "dense_vector":
            dense = query
        elif kind == "sparse_vector":
            sparse, metric = query, "dotproduct"
        elif kind == "embed":
            dense = np.asarray(_embedding(embedded, "dense", query), dtype=np.float32)
        else:
            sparse, metric = _embedding(embedded, "sparse", query), "dotproduct"
        if kind in ("embed", "sparse_embed"):
            usage["embed_total_tokens"] = embedded.tokens if embedded else 0
        best = ns.top(metric, dense, sparse, top_k, predicate)
    matches = [{**layout.to_document(ns.record(row), include), "_score": score} for row, score in best]
    return {"matches": matches, "namespace": namespace, "usage": usage}


def _text_top(ns: Namespace, clauses: list[tuple[str, list[str], Any]], top_k: int, predicate) -> list[tuple[int, float]]:
    """text clauses OR'd: the sum of each distinct (field, query) pair's BM25 score; a document
    matching none is not returned (score_by.py: "Repeating a clause ... scores it once")."""
    pairs = list(dict.fromkeys((name, tuple(dict.fromkeys(terms(query)))) for _, names, query in clauses
                               for name in names))
    total = np.zeros(len(ns), dtype=np.float64)
    analysed: dict[str, list[list[str] | None]] = {}
    for name, query in pairs:
        if name not in analysed:
            analysed[name] = [terms(m[name]) if m and isinstance(m.get(name), str) else None for m in ns.metadata]
        total += bm25(list(query), analysed[name])
    rows = [r for r in np.argsort(-total, kind="stable").tolist() if total[r] > 0]
    empty: dict[str, Any] = {}
    best = []
    for row in rows:
        if predicate is None or predicate(ns.metadata[row] or empty):
            best.append((row, float(total[row])))
            if len(best) == top_k:
                break
    return best


def fetch(rec: Any, data: IndexData, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
    """FetchDocumentsRequest {ids | filter, include_fields, pagination_token, limit} ->
    {documents: {id: doc}, namespace, usage, pagination}; only a filter fetch pages."""
    v2026_07.closed(body, ("ids", "filter", "include_fields", "pagination_token", "limit"), "FetchDocumentsRequest")
    ids = _names(body, "ids")
    if (ids is None) == (body.get("filter") is None):
        raise bad_request("Exactly one of 'ids' and 'filter' must be given.")
    include = _names(body, "include_fields")
    layout, ns = Layout(rec), data.namespace(_ns_key(namespace))
    _include(layout, include)
    include = None if not include or "*" in include else include  # requests.py: all three mean every field
    extra: dict[str, Any] = {}
    if ids is not None:
        if len(ids) > MAX_IDS:
            raise bad_request(f"At most {MAX_IDS} ids can be fetched per request.")
        if body.get("pagination_token") is not None:
            raise bad_request("pagination_token is only accepted with a filter.")
        found = [ns.get(i) for i in ids] if ns else []
    else:
        predicate = _predicate(body["filter"], layout)
        matching = [ns.ids[r] for r in ns.matching_rows(predicate).tolist()] if ns else []
        page, extra = _page(matching, _limit(body.get("limit"), MAX_FETCH_LIMIT), body.get("pagination_token"))
        found = [ns.get(i) for i in page] if ns else []
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
        predicate = _predicate(flt, Layout(rec), text_match_allowed=False, operation="delete")
        doomed = [ns.ids[r] for r in ns.matching_rows(predicate).tolist()] if ns else []
        if ns:
            ns.delete(doomed)
        matched = len(doomed)
    return {"matched_records": matched}


def _patches(layout: Layout, ns: Namespace | None, body: dict[str, Any]) -> list[tuple[str, dict[str, Any], list[str]]]:
    """An UpdateDocumentsRequest as (id, fields set, fields removed) per document it names or matches."""
    if body.get("documents") is not None:
        if any(body.get(k) is not None for k in ("filter", "set_fields", "remove_fields")):
            raise bad_request("documents cannot be combined with filter, set_fields or remove_fields.")
        docs = body["documents"]
        if not isinstance(docs, list) or not docs or len(docs) > MAX_DOCUMENTS:
            raise bad_request(f"documents must be a list of 1 to {MAX_DOCUMENTS} patches.")
        patches = []
        for i, doc in enumerate(docs):
            if not isinstance(doc, dict):
                raise bad_request(f"Document at position {i} must be an object.")
            removed = doc.get("_remove_fields") or []
            patches.append((_check_id(doc.get("_id"), f"Document at position {i}"),
                            {k: v for k, v in doc.items() if k not in ("_id", "_remove_fields")}, list(removed)))
        return patches
    predicate = _predicate(body.get("filter"), layout, text_match_allowed=False, operation="update")
    set_fields, removed = body.get("set_fields") or {}, _names(body, "remove_fields") or []
    if not isinstance(set_fields, dict) or not (set_fields or removed):
        raise bad_request("A filter update needs set_fields or remove_fields.")
    if any(k in (layout.dense, layout.sparse) for k in set_fields):
        raise bad_request("Update by metadata request does not support updating vector values.")
    matching = [ns.ids[r] for r in ns.matching_rows(predicate).tolist()] if ns else []
    return [(i, set_fields, removed) for i in matching]


def update(rec: Any, data: IndexData, namespace: str, body: dict[str, Any],
           embedded: Embedded | None = None) -> dict[str, Any]:
    """UpdateDocumentsRequest: per-document patches ({_id, fields..., _remove_fields}) or
    {filter, set_fields, remove_fields}; fields not named survive; a new text of an embedded
    field is embedded again -> {matched_records, usage}."""
    v2026_07.closed(body, ("documents", "filter", "set_fields", "remove_fields"), "UpdateDocumentsRequest")
    layout, ns = Layout(rec), data.namespace(_ns_key(namespace))
    matched, changed = 0, []
    for doc_id, fields, removed in _patches(layout, ns, body):
        old = ns.get(doc_id) if ns else None
        if old is None:
            continue
        matched += 1
        merged = layout.to_document(old, None)
        merged.update(fields)
        for key in removed:
            merged.pop(key, None)
        if layout.embed and layout.embed in removed:
            raise bad_request(f"Field '{layout.embed}' is embedded (embed) and cannot be removed; set a new text instead.")
        # Text left alone keeps its vectors; a new text was embedded by the handler (embed_for).
        changed.append(layout.to_record(merged, f"document {doc_id}", embedded, _partial(old, layout, fields)))
    if changed and ns is not None:  # documents were found, so the namespace exists
        ns.upsert(changed)
    return {"matched_records": matched, **_usage(embedded)}


def _partial(old: Record, layout: Layout, fields: dict[str, Any]) -> Record:
    """`old` without the vectors whose text a patch replaces, so that to_record takes the new ones;
    an ordinary dense_vector or sparse_vector field comes from the merged document instead."""
    values = None if layout.embed is None or layout.embed in fields else old.values
    sparse = None if layout.sparse_embed is None or layout.sparse_embed in fields else old.sparse
    return Record(old.id, values, sparse, old.metadata)


# -- embedding before an operation -------------------------------------------------------------
def embedding_jobs(rec: Any, operation: str, body: Any) -> list[tuple[inference.Model, dict[str, Any], list[str], str]]:
    """What an operation will read from `Embedded`: (model, parameters, texts, what) per embedded
    field, with the field's write parameters for documents and read parameters for a query.
    Malformed bodies give no jobs; the operation then refuses them."""
    if not isinstance(body, dict):
        return []
    layout = Layout(rec)
    fields = [(name, key) for name, key in ((layout.embed, "embed"), (layout.sparse_embed, "sparse_embed")) if name]
    if not fields:
        return []
    jobs = []
    if operation == "search":
        for clause in body.get("score_by") or []:
            if isinstance(clause, dict) and clause.get("type") in ("embed", "sparse_embed") \
                    and isinstance(clause.get("query"), str) and clause["query"]:
                key = clause["type"]
                name = dict((k, n) for n, k in fields).get(key)
                if name:
                    jobs.append((layout.model(name, key), layout.config(name, key)["read_parameters"],
                                 [clause["query"]], "Query"))
        return jobs
    if operation == "upsert":
        docs = body.get("documents")
        if isinstance(docs, list):
            _check_documents(layout, docs)  # before embedding a request that will be refused
        texts_of = [d for d in docs or [] if isinstance(d, dict)] if isinstance(docs, list) else []
    elif operation == "update":
        docs = body.get("documents")
        texts_of = [d for d in docs if isinstance(d, dict)] if isinstance(docs, list) else \
            [body["set_fields"]] if isinstance(body.get("set_fields"), dict) else []
    else:
        return []
    for name, key in fields:
        texts = list(dict.fromkeys(d[name] for d in texts_of if isinstance(d.get(name), str)))
        if texts:
            jobs.append((layout.model(name, key), layout.config(name, key)["write_parameters"], texts,
                         f"Text of field '{name}'"))
    return jobs


async def embed_for(rec: Any, operation: str, body: Any) -> Embedded | None:
    """The embeddings an operation needs, made off the event loop (inference.embed_texts), in
    batches of the model's size; None when it needs none."""
    jobs = embedding_jobs(rec, operation, body)
    if not jobs:
        return None
    out = Embedded()
    for model, params, texts, what in jobs:
        for start in range(0, len(texts), model.max_batch_size):
            chunk = texts[start:start + model.max_batch_size]
            result = await inference.embed_texts(model, chunk, params, what)
            out.tokens += result.tokens
            if result.sparse is not None:
                for text, (indices, values, _) in zip(chunk, result.sparse, strict=True):
                    out.sparse[text] = (np.asarray(indices, dtype=np.int64), np.asarray(values, dtype=np.float32))
            else:
                for text, row in zip(chunk, result.dense_vectors().tolist(), strict=True):
                    out.dense[text] = row
    return out


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
# operation -> (function, whether it writes, response status)
OPERATIONS: dict[str, tuple[Callable[..., dict[str, Any]], bool, int]] = {
    "upsert": (upsert, True, 200), "search": (search, False, 200), "fetch": (fetch, False, 200),
    # v10-migration.md: a delete applies asynchronously behind a 202.
    "delete": (delete, True, 202), "update": (update, True, 200), "list": (list_ids, False, 200),
}
EMBEDDING_OPERATIONS = ("upsert", "update", "search")  # the ones that take `embedded`


def _handler(operation: str):
    fn, writes, status = OPERATIONS[operation]

    async def handle(request: web.Request) -> web.Response:
        rec, index_data = plane._target(request)
        if versions.of(request) != v2026_07.VERSION:
            raise ApiError(404, f"No route for {request.method} {request.path}: the documents API is served from "
                                f"API version {v2026_07.VERSION}.", "NOT_FOUND")
        body = await plane._body(request, plane.MAX_UPSERT_BYTES if writes else None)
        if operation in EMBEDDING_OPERATIONS:
            embedded = await embed_for(rec, operation, body)
            if embedded is not None:
                rec, index_data = plane._target(request)  # again: the index may have changed while embedding
            out = fn(rec, index_data, request.match_info["namespace"], body, embedded)
        else:
            out = fn(rec, index_data, request.match_info["namespace"], body)
        if writes:
            context.store(request).mark(rec.id)
        return plane._json(out, status)

    handle.__name__ = f"{operation}_documents"
    return handle


ROUTES = [("POST", f"/namespaces/{{namespace}}/documents/{op}", _handler(op), f"{op}_documents") for op in OPERATIONS]
