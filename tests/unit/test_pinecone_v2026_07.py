"""Table tests of the API 2026-07 translation (v2026_07.py, v2026_07_documents.py), no server."""

from __future__ import annotations

import numpy as np
import pytest

from pinery.local.pinecone import inference, v2026_07
from pinery.local.pinecone import v2026_07_documents as documents
from pinery.local.pinecone.errors import ApiError
from pinery.local.pinecone.state import BackupRecord, IndexRecord
from pinery.local.pinecone.vectors import IndexData

DENSE = {"type": "dense_vector", "dimension": 4, "metric": "cosine"}
POD = {"deployment_type": "pod", "environment": "us-east-1-aws", "pod_type": "p1.x1", "replicas": 1, "shards": 1}


def record(**fields) -> IndexRecord:
    base = dict(id="i1", project="p", name="ix", metric="cosine", vector_type="dense", dimension=4, state="Ready",
                spec={"serverless": {"cloud": "aws", "region": "us-east-1", "read_capacity": {"mode": "OnDemand"}}})
    base.update(fields)
    return IndexRecord(**base)


@pytest.mark.parametrize("body, expected", [
    ({"name": "a", "schema": {"fields": {"_values": DENSE}}},
     {"dimension": 4, "metric": "cosine", "vector_type": "dense",
      "spec": {"serverless": {"cloud": "aws", "region": "us-east-1", "read_capacity": {"mode": "OnDemand"}}}}),
    ({"name": "a", "schema": {"fields": {"_sparse_values": {"type": "sparse_vector", "metric": "dotproduct"}}},
      "deployment": {"deployment_type": "managed", "cloud": "gcp", "region": "us-central1"}},
     {"dimension": None, "metric": "dotproduct", "vector_type": "sparse",
      "typed_schema": {"fields": {"_sparse_values": {"type": "sparse_vector"}}}}),
    ({"name": "a", "schema": {"fields": {"emb": {**DENSE, "metric": "dotproduct"}, "kw": {"type": "sparse_vector"},
                                         "year": {"type": "float", "filterable": True}}},
      "deployment": {"deployment_type": "byoc", "environment": "aws-us-east-1-b921"},
      "read_capacity": {"mode": "Dedicated", "dedicated": {"node_type": "t1", "manual": {"replicas": 2, "shards": 1}}},
      "tags": {"env": "dev"}, "deletion_protection": "enabled", "cmek_id": "key-1"},
     {"metric": "dotproduct", "tags": {"env": "dev"}, "deletion_protection": "enabled", "cmek_id": "key-1",
      "spec": {"byoc": {"environment": "aws-us-east-1-b921", "read_capacity": {
          "mode": "Dedicated", "dedicated": {"node_type": "t1", "scaling": "Manual",
                                             "manual": {"replicas": 2, "shards": 1}}}}}}),
])
def test_create_translates_to_the_record(body, expected):
    fields = v2026_07.check_create(body)
    for key, value in expected.items():
        assert fields[key] == value, key


def test_create_without_a_name_gets_one():
    assert v2026_07.check_create({"schema": {"fields": {"_values": DENSE}}})["name"].startswith("index-")


@pytest.mark.parametrize("body, status, text", [
    ({"name": "a", "schema": {"fields": {"_values": DENSE}}, "deployment": POD}, 400,
     "deployment_type 'pod' is not supported on this API version"),
    ({"name": "a", "schema": {"fields": {"_values": DENSE}}, "deployment": {"deployment_type": "pod"}}, 422,
     "missing field `environment`"),
    ({"name": "a", "dimension": 4, "schema": {"fields": {"_values": DENSE}}}, 400, "unknown field `dimension`"),
    ({"name": "a", "spec": {}}, 400, "unknown field `spec`"),
    ({"name": "a"}, 422, "missing field `schema`"),
    ({"name": "a", "schema": {"fields": {}}}, 400, "cannot be empty"),
    ({"name": "a", "schema": {"fields": {"genre": {"filterable": True}}}}, 400, "indexed automatically at upsert"),
    ({"name": "a", "schema": {"fields": {"v": {"type": "dense_vector", "dimension": 4}}}}, 422, "missing field `metric`"),
    ({"name": "a", "schema": {"fields": {"v": {**DENSE, "dimension": 0}}}}, 400, "between 1 and 20000"),
    ({"name": "a", "schema": {"fields": {"_mine": DENSE}}}, 400, "reserved"),
    ({"name": "a", "schema": {"fields": {"_values": {"type": "sparse_vector"}}}}, 400, "reserved"),
    ({"name": "a", "schema": {"fields": {"t": {"type": "semantic_text", "model": "m"}}}}, 400, "create-for-model"),
    ({"name": "a", "schema": {"fields": {"b": {"type": "boolean"}}}}, 422, "missing field `filterable`"),
    ({"name": "a", "schema": {"fields": {"x": {"type": "vector"}}}}, 422, "unknown variant `vector`"),
    ({"name": "a", "schema": {"fields": {"s": {"type": "sparse_vector", "dimension": 3}}}}, 400, "no dimension"),
    ({"name": "a", "schema": {"fields": {"v": {**DENSE, "extra": 1}}}}, 400, "unknown field `extra`"),
    ({"name": "a", "schema": {"fields": {"a": DENSE, "b": DENSE}}}, 400, "at most one dense_vector"),
    ({"name": "a", "schema": {"fields": {"_values": DENSE}}, "source_collection": "c"}, 400,
     "Creating an index from collection or backup is not yet supported"),
    ({"name": "a", "schema": {"fields": {"_values": DENSE}},
      "deployment": {"deployment_type": "managed", "cloud": "aws", "region": "mars-1"}}, 404, "region: mars-1"),
    ({"name": "A!", "schema": {"fields": {"_values": DENSE}}}, 400, "is invalid"),
])
def test_create_refusals(body, status, text):
    with pytest.raises(ApiError) as err:
        v2026_07.check_create(body)
    assert err.value.status == status and text in err.value.message, err.value.message


def test_index_model_of_a_2026_07_record():
    fields = v2026_07.check_create({"name": "ix", "schema": {"fields": {"emb": DENSE, "year": {
        "type": "integer", "filterable": True}}}, "tags": {"a": "b"}})
    rec = record(**{k: v for k, v in fields.items()}, state="Ready")
    body = v2026_07.index(rec, "http://h")
    assert body == {
        "name": "ix", "host": "http://h/index/p/ix", "status": {"ready": True, "state": "Ready"},
        "schema": {"fields": {"emb": {"type": "dense_vector", "dimension": 4, "metric": "cosine", "description": None},
                              "year": {"type": "integer", "description": None, "filterable": True}}},
        "deployment": {"deployment_type": "managed", "cloud": "aws", "region": "us-east-1"},
        "deletion_protection": "disabled",
        "read_capacity": {"mode": "OnDemand", "status": {"state": "Ready", "current_shards": None,
                                                         "current_replicas": None}},
        "tags": {"a": "b"}, "source_collection": None, "source_backup_id": None, "cmek_id": None}


@pytest.mark.parametrize("rec, schema, deployment", [
    (record(), {"_values": {"type": "dense_vector", "dimension": 4, "metric": "cosine", "description": None}},
     {"deployment_type": "managed", "cloud": "aws", "region": "us-east-1"}),
    (record(vector_type="sparse", dimension=None, metric="dotproduct",
            spec={"serverless": {"cloud": "aws", "region": "us-east-1", "read_capacity": {"mode": "OnDemand"},
                                 "schema": {"fields": {"genre": {"filterable": True}}}}}),
     {"_sparse_values": {"type": "sparse_vector", "description": None}, "genre": {"filterable": True}},
     {"deployment_type": "managed", "cloud": "aws", "region": "us-east-1"}),
    (record(spec={"pod": {"environment": "us-east-1-aws", "replicas": 2, "shards": 1, "pod_type": "p1.x2", "pods": 2,
                          "metadata_config": {"indexed": ["genre"]}}}),
     {"_values": {"type": "dense_vector", "dimension": 4, "metric": "cosine", "description": None},
      "genre": {"filterable": True}},
     {"deployment_type": "pod", "environment": "us-east-1-aws", "pod_type": "p1.x2", "replicas": 2, "shards": 1}),
    (record(dimension=1024, embed={"model": "multilingual-e5-large", "metric": "cosine", "vector_type": "dense",
                                   "field_map": {"text": "chunk"}}),
     {"chunk": {"type": "semantic_text", "model": "multilingual-e5-large", "metric": "cosine", "description": None,
                "read_parameters": None, "write_parameters": None}},
     {"deployment_type": "managed", "cloud": "aws", "region": "us-east-1"}),
])
def test_the_2026_07_view_of_older_records(rec, schema, deployment):
    body = v2026_07.index(rec, "http://h")
    assert body["schema"] == {"fields": schema}
    assert body["deployment"] == deployment
    assert "dimension" not in body and "spec" not in body and "metric" not in body
    assert (body["read_capacity"] is None) == (rec.kind == "pod")


@pytest.mark.parametrize("body, kind, expected", [
    ({"deployment": {"replicas": 3}}, "pod", {"spec": {"pod": {"replicas": 3}}}),
    ({"deployment": {"pod_type": "p1.x2"}, "tags": {"a": ""}}, "pod",
     {"spec": {"pod": {"pod_type": "p1.x2"}}, "tags": {"a": ""}}),
    ({"read_capacity": {"mode": "OnDemand"}, "deletion_protection": "enabled"}, "serverless",
     {"spec": {"serverless": {"read_capacity": {"mode": "OnDemand"}}}, "deletion_protection": "enabled"}),
])
def test_configure_translates_to_the_change(body, kind, expected):
    spec = {"pod": {"environment": "e", "replicas": 1, "shards": 1, "pod_type": "p1.x1", "pods": 1}} if kind == "pod" \
        else record().spec
    assert v2026_07.check_configure(body, record(spec=spec)) == expected


@pytest.mark.parametrize("body, text", [
    ({"embed": {"model": "m"}}, "unknown field `embed`"),
    ({"spec": {"pod": {"replicas": 2}}}, "unknown field `spec`"),
    ({"deployment": {"deployment_type": "pod", "replicas": 2}}, "deployment_type cannot be changed"),
    ({"deployment": {"replicas": 2}}, "not a pod index"),
    ({"schema": {"fields": {"_values": DENSE}}}, "Only semantic_text"),
])
def test_configure_refusals(body, text):
    with pytest.raises(ApiError) as err:
        v2026_07.check_configure(body, record())
    assert err.value.status == 400 and text in err.value.message


def test_backup_model_has_no_dimension_and_a_typed_schema():
    bkp = BackupRecord(backup_id="b", project="p", source_index_name="ix", source_index_id="i1", cloud="aws",
                       region="us-east-1", dimension=4, metric="cosine", vector_type="dense", record_count=1,
                       namespace_count=1, size_bytes=10, created_at="t", data_key="k", state="Ready")
    body = v2026_07.backup(bkp)
    assert "dimension" not in body and "metric" not in body and body["source_index_deleted_at"] is None
    assert body["schema"]["fields"]["_values"]["dimension"] == 4


@pytest.mark.parametrize("raw, expected", [
    ({"a": 1, "b": None}, {"a": 1}),
    ({}, {}),
    (None, None),
])
def test_metadata_nulls_are_dropped(raw, expected):
    assert v2026_07.clean_metadata(raw) == expected


def test_dollar_metadata_keys_are_refused():
    with pytest.raises(ApiError, match=r"Metadata field '\$x' cannot start with '\$'"):
        v2026_07.clean_metadata({"$x": 1})


@pytest.mark.parametrize("schema, document_index, sparse", [
    (None, False, False),
    ({"fields": {"_values": DENSE}}, False, False),
    ({"fields": {"_values": DENSE, "_sparse_values": {"type": "sparse_vector"}}}, False, True),
    ({"fields": {"emb": DENSE}}, True, False),
])
def test_which_api_writes_an_index(schema, document_index, sparse):
    assert v2026_07.is_document_index(schema) is document_index
    if schema is not None:
        assert v2026_07.declares_sparse(schema) is sparse


def test_documents_round_trip_on_the_stored_records():
    fields = v2026_07.check_create({"name": "ix", "schema": {"fields": {
        "emb": {**DENSE, "dimension": 2}, "kw": {"type": "sparse_vector"}}}})
    rec, data = record(**fields), IndexData(2)
    docs = [{"_id": "a", "emb": [1.0, 0.0], "kw": {"indices": [3], "values": [1.0]}, "year": 2020, "drop": None},
            {"_id": "b", "emb": [0.0, 1.0], "year": 2021}]
    assert documents.upsert(rec, data, "ns", {"documents": docs}) == {"upserted_count": 2}
    stored = data.namespace("ns").get("a")
    assert stored.values == [1.0, 0.0] and stored.metadata == {"year": 2020.0}
    hits = documents.search(rec, data, "ns", {"top_k": 1, "include_fields": ["*"], "score_by": [
        {"type": "dense_vector", "field": "emb", "values": [1.0, 0.0]}]})
    assert hits["matches"][0]["_id"] == "a" and hits["matches"][0]["kw"] == {"indices": [3], "values": [1.0]}
    assert documents.fetch(rec, data, "ns", {"filter": {"year": {"$gt": 2020}}})["documents"].keys() == {"b"}
    assert documents.update(rec, data, "ns", {"filter": {"year": {"$gte": 2020}}, "set_fields": {"ok": True}}) \
        == {"matched_records": 2}
    assert documents.delete(rec, data, "ns", {"filter": {"ok": {"$eq": True}}}) == {"matched_records": 2}
    assert documents.list_ids(rec, data, "ns", {}) == {"documents": [], "namespace": "ns", "usage": {"read_units": 1}}


@pytest.mark.parametrize("body, status, text", [
    ({"top_k": 1, "score_by": [{"type": "text", "query": "x", "field": "t"}]}, 400,
     "Scoring field 't' not found in index schema"),
    ({"top_k": 1, "score_by": [{"type": "query_string", "query": "x"}]}, 501, "query_string"),
    ({"top_k": 1, "score_by": [{"type": "embed", "field": "emb", "query": "x"}]}, 400, "cannot be scored by 'embed'"),
    ({"top_k": 1, "score_by": [{"type": "dense_vector", "values": [1.0, 0.0], "boost": 2}]}, 400, "unknown field `boost`"),
    ({"top_k": 1, "score_by": [{"type": "bm25"}]}, 400, "Unknown score_by type"),
    ({"top_k": 1, "score_by": [{"type": "dense_vector", "field": "other", "values": [1.0, 0.0]}]}, 400,
     "Scoring field 'other' not found in index schema"),
    ({"top_k": 0, "score_by": [{"type": "dense_vector", "values": [1.0, 0.0]}]}, 400, "top_k"),
    ({"top_k": 1, "score_by": [{"type": "dense_vector", "values": [1.0]}]}, 400, "dimension"),
    ({"top_k": 1, "score_by": [], "extra": 1}, 400, "unknown field `extra`"),
])
def test_document_search_refusals(body, status, text):
    fields = v2026_07.check_create({"name": "ix", "schema": {"fields": {"emb": {**DENSE, "dimension": 2}}}})
    with pytest.raises(ApiError) as err:
        documents.search(record(**fields), IndexData(2), "ns", body)
    assert err.value.status == status and text in err.value.message, err.value.message


# -- string fields: integrated embedding and full-text search -----------------------------------
TEXT = {"type": "string", "full_text_search": {}}


@pytest.mark.parametrize("field, expected", [
    ({"type": "string", "embed": {}},
     {"type": "string", "full_text_search": {"language": "en", "stemming": False, "stop_words": False},
      "embed": {"model": "llama-text-embed-v2", "dimension": 1024, "metric": "cosine",
                "write_parameters": {"input_type": "passage", "truncate": "END", "dimension": 1024},
                "read_parameters": {"input_type": "query", "truncate": "END", "dimension": 1024}},
      "store_text": True}),
    ({"type": "string", "embed": {"model": "multilingual-e5-large", "metric": "EUCLIDEAN"}, "store_text": False,
      "description": "d"},
     {"type": "string", "description": "d",
      "embed": {"model": "multilingual-e5-large", "dimension": 1024, "metric": "euclidean",
                "write_parameters": {"input_type": "passage", "truncate": "END"},
                "read_parameters": {"input_type": "query", "truncate": "END"}},
      "store_text": False}),
    ({"type": "string", "embed": {"write_parameters": {"dimension": 512}}},
     {"embed": {"model": "llama-text-embed-v2", "dimension": 512, "metric": "cosine",
                "write_parameters": {"input_type": "passage", "truncate": "END", "dimension": 512},
                "read_parameters": {"input_type": "query", "truncate": "END", "dimension": 512}}}),
    ({"type": "string", "sparse_embed": {"read_parameters": {"max_tokens_per_sequence": 2048}}},
     {"sparse_embed": {"model": "pinecone-sparse-english-v0",
                       "write_parameters": {"input_type": "passage", "truncate": "END", "return_tokens": False,
                                            "max_tokens_per_sequence": 512},
                       "read_parameters": {"input_type": "query", "truncate": "END", "return_tokens": False,
                                           "max_tokens_per_sequence": 2048}}, "store_text": True}),
    ({"type": "string", "full_text_search": {"language": "English", "stemming": True, "stop_words": True}},
     {"full_text_search": {"language": "english", "stemming": True, "stop_words": True}, "store_text": True}),
    ({"type": "string", "full_text_search": {"ngram": {"min_gram": 2, "max_gram": 3}}},
     {"full_text_search": {"language": "en", "stemming": False, "stop_words": False,
                           "ngram": {"min_gram": 2, "max_gram": 3, "prefix_only": False}}}),
])
def test_string_fields_resolve_as_describe_reports_them(field, expected):
    resolved = v2026_07.check_schema({"fields": {"body": field}})["fields"]["body"]
    for key, value in expected.items():
        assert resolved[key] == value, key
    if field.get("store_text") is False:
        assert "full_text_search" not in resolved


@pytest.mark.parametrize("fields, status, text", [
    ({"t": {"type": "string"}}, 400, "needs full_text_search, embed or sparse_embed"),
    ({"t": {**TEXT, "filterable": False}}, 400, "filtered or searched, not both"),
    ({"t": {**TEXT, "store_text": False}}, 400, "store_text false needs embed or sparse_embed"),
    ({"t": {"type": "string", "store_text": False, "embed": {}, "full_text_search": {}}}, 400,
     "cannot be combined with full_text_search"),
    ({"t": {"type": "string", "embed": {"model": "nope"}}}, 400, "model 'nope' not found"),
    ({"t": {"type": "string", "embed": {"model": "pinecone-sparse-english-v0"}}}, 400,
     "is not a dense embedding model. Supported dense embedding models: llama-text-embed-v2, multilingual-e5-large"),
    ({"t": {"type": "string", "sparse_embed": {"model": "llama-text-embed-v2"}}}, 400, "is not a sparse embedding model"),
    ({"t": {"type": "string", "embed": {"model": "bge-reranker-v2-m3"}}}, 400, "is not a dense embedding model"),
    ({"t": {"type": "string", "embed": {"dimension": 100}}}, 400, "dimension 100 is not supported"),
    ({"t": {"type": "string", "embed": {"model": "multilingual-e5-large", "dimension": 512}}}, 400,
     "dimension 512 is not supported by model 'multilingual-e5-large' (supported: 1024)"),
    ({"t": {"type": "string", "embed": {"metric": "euclidean"}}}, 400, "metric 'euclidean' is not supported"),
    ({"t": {"type": "string", "embed": {"write_parameters": {"truncate": "MIDDLE"}}}}, 400, "Invalid value \"MIDDLE\""),
    ({"t": {"type": "string", "embed": {"model": "multilingual-e5-large", "read_parameters": {"dimension": 1024}}}},
     400, "Unsupported parameter 'dimension'"),
    ({"t": {"type": "string", "embed": {"dimension": 512, "write_parameters": {"dimension": 768}}}}, 400,
     "differs from the field's dimension"),
    ({"t": {"type": "string", "sparse_embed": {"dimension": 3}}}, 400, "unknown field `dimension`"),
    ({"t": {"type": "string", "embed": "llama"}}, 422, "expected an object"),
    ({"t": {"type": "string", "embed": {}}, "v": DENSE}, 400, "one dense vector slot"),
    ({"t": {"type": "string", "embed": {}}, "u": {"type": "string", "embed": {}}}, 400, "one dense vector slot"),
    ({"t": {"type": "string", "sparse_embed": {}}, "s": {"type": "sparse_vector"}}, 400, "one sparse vector slot"),
    ({"t": {"type": "string", "full_text_search": {"stop_words": True}}}, 400, "stop_words requires stemming"),
    ({"t": {"type": "string", "full_text_search": {"stemming": True, "ngram": {"min_gram": 1, "max_gram": 2}}}},
     400, "ngram cannot be combined"),
    ({"t": {"type": "string", "full_text_search": {"ngram": {"min_gram": 3, "max_gram": 2}}}}, 400, "min_gram"),
    ({"t": {"type": "string", "full_text_search": {"boost": 1}}}, 400, "unknown field `boost`"),
])
def test_string_field_refusals(fields, status, text):
    with pytest.raises(ApiError) as err:
        v2026_07.check_schema({"fields": fields})
    assert err.value.status == status and text in err.value.message, err.value.message


def test_an_embed_field_gives_the_index_its_dimension_and_metric():
    fields = v2026_07.check_create({"name": "ix", "schema": {"fields": {
        "body": {"type": "string", "embed": {"dimension": 384, "metric": "dotproduct"}}, "kw": {
            "type": "string", "sparse_embed": {}}}}})
    assert (fields["dimension"], fields["metric"], fields["vector_type"]) == (384, "dotproduct", "dense")
    assert v2026_07.is_document_index(fields["typed_schema"])
    shown = v2026_07.render_schema(fields["typed_schema"])["fields"]["body"]
    assert shown["description"] is None and shown["store_text"] is True and "filterable" not in shown
    text_only = v2026_07.check_create({"name": "ix", "schema": {"fields": {"t": TEXT}}})
    assert (text_only["dimension"], text_only["vector_type"]) == (None, "sparse")


@pytest.mark.parametrize("text, expected", [
    ("The Cat's mat, 2 cats!", ["the", "cat", "s", "mat", "2", "cats"]),
    ("Über straße", ["über", "strasse"]),
    ("", []),
])
def test_terms(text, expected):
    assert documents.terms(text) == expected


@pytest.mark.parametrize("operator, query, text, expected", [
    ("$match_phrase", "sourdough bread", "bake Sourdough bread at home", True),
    ("$match_phrase", "bread sourdough", "bake sourdough bread", False),
    ("$match_all", "home bread", "bake sourdough bread at home", True),
    ("$match_all", "home cat", "bake sourdough bread at home", False),
    ("$match_any", "cat home", "bake sourdough bread at home", True),
    ("$match_any", "cat dog", "bake sourdough bread at home", False),
    ("$match_any", "cat", None, False),
])
def test_text_match(operator, query, text, expected):
    assert documents.text_match(operator, query, text) is expected


def test_bm25():
    docs = [documents.terms(t) for t in ("cats at home", "baking bread at home", "stock markets")] + [None]
    scores = documents.bm25(["home"], docs)
    assert scores[0] > scores[1] > 0 and scores[2] == 0 and scores[3] == 0  # shorter text first
    idf = np.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    avgdl = (3 + 4 + 2) / 3
    assert scores[0] == pytest.approx(idf * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 3 / avgdl)))
    assert documents.bm25(["home", "home"], docs)[0] == pytest.approx(scores[0])  # a repeated term counts once
    rare = documents.bm25(["stock", "home"], docs)
    assert rare[2] > rare[0]  # the rarer term weighs more
    assert documents.bm25([], docs).tolist() == [0, 0, 0, 0]


def _text_index():
    fields = v2026_07.check_create({"name": "ix", "schema": {"fields": {
        "body": {"type": "string", "embed": {"dimension": 384}}, "kw": {"type": "string", "sparse_embed": {}},
        "title": TEXT}}})
    return record(**fields)


def _embedded(*texts: str) -> documents.Embedded:
    out = documents.Embedded(tokens=7)
    for i, text in enumerate(texts):
        vector = [0.0] * 384
        vector[i] = 1.0
        out.dense[text] = vector
        out.sparse[text] = (np.asarray([i], dtype=np.int64), np.asarray([1.0], dtype=np.float32))
    return out


DOCS = [{"_id": "a", "body": "cat on a mat", "kw": "cat mat", "title": "cats at home", "year": 2020},
        {"_id": "b", "body": "bread in an oven", "kw": "bread oven", "title": "baking bread at home", "year": 2021},
        {"_id": "c", "body": "stocks fell", "title": "markets", "year": 2022}]


def test_documents_with_embedded_fields():
    rec, data = _text_index(), IndexData(384)
    embedded = _embedded("cat on a mat", "bread in an oven", "stocks fell", "cat mat", "bread oven")
    out = documents.upsert(rec, data, "ns", {"documents": DOCS}, embedded)
    assert out == {"upserted_count": 3, "usage": {"embed_total_tokens": 7}}
    stored = data.namespace("ns").get("a")
    assert stored.values[0] == 1.0 and stored.sparse[0].tolist() == [3]
    assert stored.metadata == {"body": "cat on a mat", "kw": "cat mat", "title": "cats at home", "year": 2020.0}
    assert data.namespace("ns").get("c").sparse is None  # sparse_embed text is optional

    query = documents.Embedded(dense={"oven bread": [0.0, 1.0] + [0.0] * 382}, tokens=7)  # near document b
    hits = documents.search(rec, data, "ns", {"top_k": 2, "score_by": [
        {"type": "embed", "field": "body", "query": "oven bread"}]}, query)
    assert [m["_id"] for m in hits["matches"]] == ["b", "a"] and hits["usage"]["embed_total_tokens"] == 7
    assert set(hits["matches"][0]) == {"_id", "_score"}  # include_fields omitted: no fields

    text = documents.search(rec, data, "ns", {"top_k": 5, "include_fields": ["title"], "score_by": [
        {"type": "text", "query": "home", "fields": ["title"]}, {"type": "text", "query": "home", "fields": ["title"]}]})
    assert [m["_id"] for m in text["matches"]] == ["a", "b"] and text["matches"][0]["title"] == "cats at home"
    single = documents.search(rec, data, "ns", {"top_k": 5, "score_by": [{"type": "text", "query": "home",
                                                                          "fields": ["title"]}]})
    assert [m["_score"] for m in single["matches"]] == [m["_score"] for m in text["matches"]]  # repeated: once
    wide = documents.search(rec, data, "ns", {"top_k": 5, "filter": {"year": {"$lt": 2021}}, "score_by": [
        {"type": "text", "query": "bread", "fields": ["title", "body"]}, {"type": "text", "query": "cat", "fields": ["body"]}]})
    assert [m["_id"] for m in wide["matches"]] == ["a"]

    update = documents.update(rec, data, "ns", {"documents": [{"_id": "c", "body": "new text"}]},
                              _embedded("x", "y", "new text"))
    assert update == {"matched_records": 1, "usage": {"embed_total_tokens": 7}}
    assert data.namespace("ns").get("c").values[2] == 1.0 and data.namespace("ns").get("c").metadata["title"] == "markets"
    assert documents.update(rec, data, "ns", {"filter": {"year": {"$gte": 2021}}, "set_fields": {"ok": True}}) \
        == {"matched_records": 2}
    assert data.namespace("ns").get("b").values[1] == 1.0  # a metadata patch keeps the embedding


@pytest.mark.parametrize("body, text", [
    ({"documents": [{"_id": "x", "title": "no body"}]}, "the string field 'body' is required"),
    ({"documents": [{"_id": "x", "body": 3}]}, "must be of type string"),
    ({"documents": [{"_id": str(i), "body": "t"} for i in range(97)]},
     "exceeds the maximum limit of 96 documents per request on an index with integrated embedding"),
])
def test_document_upsert_refusals_with_embedded_fields(body, text):
    with pytest.raises(ApiError) as err:
        documents.upsert(_text_index(), IndexData(384), "ns", body, _embedded("t"))
    assert err.value.status == 400 and text in err.value.message, err.value.message


@pytest.mark.parametrize("flt, operation, expected", [
    ({"title": {"$match_phrase": "at home"}}, "fetch", {"a", "b"}),
    ({"title": {"$match_all": "home cats"}}, "fetch", {"a"}),
    ({"$or": [{"title": {"$match_any": "markets"}}, {"year": {"$eq": 2020}}]}, "fetch", {"a", "c"}),
    ({"$and": [{"body": {"$match_any": "cat bread"}}, {"year": {"$gte": 2021}}]}, "fetch", {"b"}),
    ({"body": {"$eq": "x"}}, "fetch", "takes only the text-match operators"),
    ({"year": {"$match_any": "x"}}, "fetch", "'year' is metadata"),
    ({"title": {"$match_any": 3}}, "fetch", "needs a string with at least one word"),
    ({"title": {"$match_any": "home"}}, "delete", "not accepted in a delete filter"),
    ({"$and": [{"title": {"$match_any": "home"}}]}, "update", "not accepted in a update filter"),
])
def test_document_filters(flt, operation, expected):
    rec, data = _text_index(), IndexData(384)
    documents.upsert(rec, data, "ns", {"documents": DOCS},
                     _embedded("cat on a mat", "bread in an oven", "stocks fell", "cat mat", "bread oven"))
    layout = documents.Layout(rec)
    if isinstance(expected, str):
        with pytest.raises(ApiError) as err:
            documents._predicate(flt, layout, operation == "fetch", operation)
        assert err.value.status == 400 and expected in err.value.message, err.value.message
    else:
        assert set(documents.fetch(rec, data, "ns", {"filter": flt})["documents"]) == expected


def test_embedding_jobs_name_what_each_operation_reads():
    rec = _text_index()
    jobs = documents.embedding_jobs(rec, "upsert", {"documents": DOCS})
    assert [(m.name, p["input_type"], texts) for m, p, texts, _ in jobs] == [
        ("llama-text-embed-v2", "passage", ["cat on a mat", "bread in an oven", "stocks fell"]),
        ("pinecone-sparse-english-v0", "passage", ["cat mat", "bread oven"])]
    jobs = documents.embedding_jobs(rec, "search", {"score_by": [{"type": "sparse_embed", "field": "kw", "query": "q"}]})
    assert [(m.name, p["input_type"], texts) for m, p, texts, _ in jobs] == [("pinecone-sparse-english-v0", "query", ["q"])]
    assert documents.embedding_jobs(rec, "update", {"filter": {"a": 1}, "set_fields": {"body": "t"}})[0][2] == ["t"]
    assert documents.embedding_jobs(rec, "search", {"score_by": [{"type": "text", "query": "q", "fields": ["title"]}]}) == []
    assert documents.embedding_jobs(record(), "upsert", {"documents": DOCS}) == []
    assert documents.embedding_jobs(rec, "upsert", "not a body") == []


def test_store_text_false_is_embedded_but_never_stored_or_returned():
    fields = v2026_07.check_create({"name": "ix", "schema": {"fields": {
        "note": {"type": "string", "store_text": False, "embed": {"dimension": 384}}}}})
    rec, data = record(**fields), IndexData(384)
    documents.upsert(rec, data, "ns", {"documents": [{"_id": "a", "note": "secret", "tag": "x"}]}, _embedded("secret"))
    assert data.namespace("ns").get("a").metadata == {"tag": "x"}
    with pytest.raises(ApiError, match="store_text false"):
        documents.fetch(rec, data, "ns", {"ids": ["a"], "include_fields": ["note"]})
    with pytest.raises(ApiError, match="cannot be scored by 'text'"):
        documents.search(rec, data, "ns", {"top_k": 1, "score_by": [{"type": "text", "query": "s", "fields": ["note"]}]})


@pytest.mark.parametrize("version, status", [("2026-07", 404), ("2025-10", 400), (None, 400)])
def test_an_unknown_model_is_a_404_from_2026_07(version, status):
    with pytest.raises(ApiError) as err:
        inference.lookup("nope", "embed", version)
    assert err.value.status == status and err.value.message.startswith("Model 'nope' not found")
