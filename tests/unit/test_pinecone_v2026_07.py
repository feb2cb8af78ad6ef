"""Table tests of the API 2026-07 translation (v2026_07.py, v2026_07_documents.py), no server."""

from __future__ import annotations

import pytest

from pinery.local.pinecone import v2026_07, v2026_07_documents as documents
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
    ({"top_k": 1, "score_by": [{"type": "text", "query": "x", "field": "t"}]}, 501, "not emulated"),
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
