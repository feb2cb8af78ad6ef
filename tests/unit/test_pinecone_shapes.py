"""Table tests of shapes.py: 2025-10 answers as each older API version gives them.

The expected fields come from each SDK line's generated models (docs/pinecone-api-versions.md):
5.4.2 `control/model/index_model.py` (2024-07), 6.0.2 and 7.3.0 `db_control/model/index_model.py`
(2025-01, 2025-04), the 2025-10 OAS `IndexModel`.
"""

from __future__ import annotations

import pytest

from pinery.local.pinecone import shapes, versions
from pinery.local.pinecone.errors import ApiError

INDEX_2025_10 = {
    "name": "docs", "metric": "cosine", "dimension": 8, "host": "http://h/index/default/docs",
    "private_host": "p", "deletion_protection": "disabled", "vector_type": "dense",
    "tags": {"team": "a"}, "embed": {"model": "m"},
    "spec": {"serverless": {"cloud": "aws", "region": "us-east-1",
                            "read_capacity": {"mode": "OnDemand", "status": {"state": "Ready"}}}},
    "status": {"ready": True, "state": "Ready"},
}
COMMON = {"name", "metric", "dimension", "host", "deletion_protection", "spec", "status"}


@pytest.mark.parametrize(("version", "fields", "serverless"), [
    ("2024-07", COMMON, {"cloud", "region"}),
    ("2024-10", COMMON, {"cloud", "region"}),
    ("2025-01", COMMON | {"vector_type", "tags", "embed"}, {"cloud", "region"}),
    ("2025-04", COMMON | {"vector_type", "tags", "embed"}, {"cloud", "region"}),
    ("2025-10", set(INDEX_2025_10), {"cloud", "region", "read_capacity"}),
])
def test_index_model_fields_per_version(version, fields, serverless):
    for operation in ("describe_index", "create_index", "configure_index", "create_index_for_model"):
        out = shapes.reshape(operation, INDEX_2025_10, version)
        assert set(out) == fields, (operation, version)
        assert set(out["spec"]["serverless"]) == serverless
    listed = shapes.reshape("list_indexes", {"indexes": [INDEX_2025_10]}, version)
    assert set(listed["indexes"][0]) == fields


def test_reshaping_leaves_the_native_body_alone():
    assert shapes.reshape("describe_index", INDEX_2025_10, "2025-10") is INDEX_2025_10
    assert INDEX_2025_10["spec"]["serverless"]["read_capacity"]  # not mutated by older views
    assert shapes.reshape("queryVectors", {"matches": []}, "2024-07") == {"matches": []}


@pytest.mark.parametrize(("version", "fields"), [
    ("2024-07", {"namespaces", "dimension", "indexFullness", "totalVectorCount"}),
    ("2025-01", {"namespaces", "dimension", "indexFullness", "totalVectorCount", "metric", "vectorType"}),
    ("2025-10", {"namespaces", "dimension", "indexFullness", "totalVectorCount", "metric", "vectorType",
                 "memoryFullness", "storageFullness"}),
])
def test_stats_fields_per_version(version, fields):
    body = {"namespaces": {}, "dimension": 8, "indexFullness": 0.0, "totalVectorCount": 0, "metric": "cosine",
            "vectorType": "dense", "memoryFullness": 0.0, "storageFullness": 0.0}
    assert set(shapes.reshape("describeIndexStats", body, version)) == fields


@pytest.mark.parametrize(("version", "expected"), [("2025-04", {}), ("2025-10", {"matchedRecords": 3})])
def test_update_answer(version, expected):
    assert shapes.reshape("updateVector", {"matchedRecords": 3}, version) == expected


def test_schema_arrives_with_2025_10_on_backups_and_namespaces():
    backup = {"backup_id": "b", "schema": {"fields": {"genre": {"filterable": True}}}}
    assert "schema" not in shapes.reshape("describe_backup", backup, "2025-04")
    assert "schema" not in shapes.reshape("list_project_backups", {"data": [backup]}, "2025-04")["data"][0]
    assert "schema" in shapes.reshape("describe_backup", backup, "2025-10")
    ns = {"name": "a", "record_count": 1, "schema": {"fields": {}}}
    assert shapes.reshape("listNamespacesOperation", {"namespaces": [ns]}, "2025-04")["namespaces"] == [
        {"name": "a", "record_count": 1}]


@pytest.mark.parametrize(("version", "namespace", "refused"), [
    ("2024-07", "__default__", True), ("2025-01", "__default__", True), ("2025-04", "__default__", False),
    ("2025-10", "__default__", False), ("2026-04", "__default__", False), ("2024-07", "", False), ("2024-07", "docs", False), ("2024-07", None, False),
])
def test_default_namespace_name_by_version(version, namespace, refused):
    assert shapes.names_default_namespace_refused(version, namespace) is refused


@pytest.mark.parametrize(("header", "version"), [
    (None, "2024-07"), ("", "2024-07"), ("2024-07", "2024-07"), ("2025-04", "2025-04"), (" 2025-10 ", "2025-10"),
    ("2026-04", "2026-04"), ("2026-07", "2026-07"),
])
def test_negotiate(header, version):
    assert versions.negotiate(header) == version


@pytest.mark.parametrize("header", ["2024-04", "2025-07", "2026-01.alpha", "latest"])
def test_negotiate_refuses_unserved(header):
    with pytest.raises(ApiError) as err:
        versions.negotiate(header)
    assert err.value.status == 400
    assert f"Unsupported API version '{header}'" in err.value.message
    assert "2024-07, 2024-10, 2025-01, 2025-04, 2025-10, 2026-04, 2026-07" in err.value.message
