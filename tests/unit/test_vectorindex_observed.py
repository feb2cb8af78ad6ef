"""Reading an index from API 2026-07's IndexModel, and 2025-10's translated into it (table tests).

The 2026-07 cases are the shapes the `pinecone` 10.x SDK decodes (pinecone/models/indexes/index.py,
schema.py, deployment.py); the 2025-10 cases follow the official spec's IndexModel examples
(../shared/pinecone-api/2025-10/db_control_2025-10.oas.yaml), which 2026-04 answers alike.
"""

import pytest

from pinery.vectorindex import observed

DENSE = {"type": "dense_vector", "dimension": 1536, "metric": "cosine", "description": None}
SPARSE = {"type": "sparse_vector", "description": None}
MANAGED = {"deployment_type": "managed", "cloud": "aws", "region": "us-east-1", "environment": None}


def model(fields, deployment=MANAGED, **kw):
    return {"name": "i", "status": {"ready": True, "state": "Ready"}, "schema": {"fields": fields},
            "deployment": deployment, "deletion_protection": "disabled", "host": "i-x.svc.pinecone.io", **kw}


@pytest.mark.parametrize(
    "fields, vector_type, dimension, metric",
    [
        ({"_values": DENSE}, "dense", 1536, "cosine"),
        ({"_sparse_values": SPARSE}, "sparse", None, "dotproduct"),
        ({"_values": DENSE | {"metric": "dotproduct"}, "_sparse_values": SPARSE}, "hybrid", 1536, "dotproduct"),
        # an integrated index: its vectors come from the model of a semantic_text field
        ({"chunk": {"type": "semantic_text", "model": "llama-text-embed-v2", "metric": "cosine"}}, None, None, None),
        # two dense fields: no one vector type (the SDK's deprecated accessors raise here too)
        ({"a": DENSE, "b": DENSE}, None, None, None),
        # a document index with a full-text field beside its vectors
        ({"_values": DENSE, "body": {"type": "string", "full_text_search": {"language": "en"}}}, "dense", 1536, "cosine"),
    ],
)
def test_vector_facts(fields, vector_type, dimension, metric):
    index = model(fields)
    assert (observed.vector_type(index), observed.dimension(index), observed.metric(index)) == (vector_type, dimension, metric)


@pytest.mark.parametrize(
    "deployment, kind",
    [
        (MANAGED, "serverless"),
        ({"deployment_type": "pod", "environment": "us-east1-gcp", "pod_type": "p1.x1", "replicas": 1, "shards": 1}, "pod"),
        ({"deployment_type": "byoc", "environment": "aws-us-east-1-b921"}, "byoc"),
        ({"deployment_type": "something-new"}, None),
        (None, None),
    ],
)
def test_deployment_type(deployment, kind):
    assert observed.deployment_type(model({"_values": DENSE}, deployment=deployment)) == kind


def test_metadata_fields_of_a_pod_index_come_untyped():
    index = model({"_values": DENSE, "genre": {"filterable": True}, "year": {"filterable": True}, "x": {"filterable": False}})
    assert observed.metadata_indexed(index) == ["genre", "year"]
    assert observed.metadata_indexed(model({"_values": DENSE})) is None


@pytest.mark.parametrize(
    "legacy, expected",
    [
        (  # the spec's serverless example, read capacity inside spec
            {"name": "example-index", "dimension": 1536, "metric": "cosine", "vector_type": "dense",
             "host": "example-index-govk0nt.svc.aped-4627-b74a.pinecone.io", "deletion_protection": "disabled",
             "tags": {"tag0": "val0"}, "status": {"ready": True, "state": "Ready"},
             "spec": {"serverless": {"cloud": "aws", "region": "us-east-1",
                                     "read_capacity": {"mode": "OnDemand", "status": {"state": "Ready"}}}}},
            {"schema": {"fields": {"_values": DENSE}}, "deployment": {"deployment_type": "managed", "cloud": "aws", "region": "us-east-1"},
             "read_capacity": {"mode": "OnDemand", "status": {"state": "Ready"}}, "tags": {"tag0": "val0"}},
        ),
        (  # a pod index with a metadata config
            {"name": "p", "dimension": 8, "metric": "euclidean", "host": "h", "deletion_protection": "enabled", "tags": {},
             "status": {"ready": False, "state": "Initializing"},
             "spec": {"pod": {"environment": "us-east1-gcp", "pod_type": "p1.x2", "pods": 2, "replicas": 2, "shards": 1,
                              "metadata_config": {"indexed": ["genre"]}}}},
            {"schema": {"fields": {"_values": DENSE | {"dimension": 8, "metric": "euclidean"}, "genre": {"filterable": True}}},
             "deployment": {"deployment_type": "pod", "environment": "us-east1-gcp", "pod_type": "p1.x2", "replicas": 2, "shards": 1},
             "read_capacity": None, "tags": None},
        ),
        (  # a sparse index
            {"name": "s", "metric": "dotproduct", "vector_type": "sparse", "host": "h", "deletion_protection": "disabled",
             "status": {"ready": True, "state": "Ready"}, "spec": {"byoc": {"environment": "aws-x"}}},
            {"schema": {"fields": {"_sparse_values": SPARSE}}, "deployment": {"deployment_type": "byoc", "environment": "aws-x"},
             "read_capacity": None, "tags": None},
        ),
    ],
)
def test_a_2025_10_index_model_reads_as_its_2026_07_view(legacy, expected):
    translated = observed.from_2025_10(legacy)
    assert {k: translated[k] for k in expected} == expected
    assert translated["name"] == legacy["name"] and translated["status"] == legacy["status"]
    assert observed.vector_type(translated) == legacy.get("vector_type", "dense")
    assert observed.metric(translated) == legacy["metric"]
