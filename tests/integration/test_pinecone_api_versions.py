"""The emulator answers each served API version in its own shape, over real HTTP.

The SDK lines that send each version are driven by `make compat`; these tests pin the
middleware's part: negotiation (header spelled as 5.x-8.x and 9.x+ send it), reshaping of
2025-10 answers, and the `__default__` namespace rule of versions before 2025-04.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from tests.support.emulator import TEST_API_KEY


def call(url: str, method: str, path: str, version: str | None, body=None, header="X-Pinecone-Api-Version"):
    headers = {"Api-Key": TEST_API_KEY, "Content-Type": "application/json"}
    if version is not None:
        headers[header] = version
    req = urllib.request.Request(url + path, method=method, headers=headers,
                                 data=None if body is None else json.dumps(body).encode())
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


SERVERLESS = {"serverless": {"cloud": "aws", "region": "us-east-1"}}


def test_each_version_describes_an_index_with_its_own_fields(pinecone_emulator):
    url = pinecone_emulator.url
    status, created = call(url, "POST", "/indexes", "2025-10",
                           {"name": "docs", "dimension": 4, "metric": "cosine", "spec": SERVERLESS, "tags": {"t": "1"}})
    assert status == 201, created
    _, native = call(url, "GET", "/indexes/docs", "2025-10")
    assert "read_capacity" in native["spec"]["serverless"] and native["vector_type"] == "dense"
    # 5.x-8.x spell the header X-Pinecone-API-Version; header names are case-insensitive
    _, old = call(url, "GET", "/indexes/docs", "2024-07", header="X-Pinecone-API-Version")
    assert set(old) == {"name", "metric", "dimension", "host", "deletion_protection", "spec", "status"}
    assert old["spec"] == {"serverless": {"cloud": "aws", "region": "us-east-1"}}
    _, mid = call(url, "GET", "/indexes", "2025-04")
    assert mid["indexes"][0]["tags"] == {"t": "1"} and "read_capacity" not in mid["indexes"][0]["spec"]["serverless"]
    # no header: the oldest version served (the versioning page's rule)
    _, unversioned = call(url, "GET", "/indexes/docs", None)
    assert unversioned == old


def test_unserved_version_is_refused_naming_the_served_ones(pinecone_emulator):
    status, body = call(pinecone_emulator.url, "GET", "/indexes", "2024-04")
    assert status == 400
    assert body["error"]["code"] == "INVALID_ARGUMENT"
    assert body["error"]["message"] == ("Unsupported API version '2024-04' in the X-Pinecone-Api-Version header. "
                                        "Supported versions: 2024-07, 2024-10, 2025-01, 2025-04, 2025-10, 2026-04, 2026-07.")


@pytest.mark.parametrize(("version", "refused"), [("2024-07", True), ("2025-01", True), ("2025-04", False)])
def test_default_namespace_by_name_only_from_2025_04(pinecone_emulator, version, refused):
    url = pinecone_emulator.url
    call(url, "POST", "/indexes", "2025-10", {"name": "ns", "dimension": 2, "metric": "cosine", "spec": SERVERLESS})
    data = pinecone_emulator.index_host("ns")[len(url):]
    status, body = call(url, "POST", data + "/vectors/upsert", version,
                        {"vectors": [{"id": "a", "values": [1.0, 0.0]}], "namespace": "__default__"})
    if refused:
        assert (status, body) == (400, {"code": 3, "message": "Use of namespace='__default__' is not allowed in API "
                                                              "versions prior to 2025-04", "details": []})
        status, body = call(url, "GET", data + "/vectors/list?namespace=__default__", version)
        assert status == 400
    else:
        assert (status, body) == (200, {"upsertedCount": 1})
    # the unnamed default namespace works in every version
    status, body = call(url, "POST", data + "/vectors/upsert", version, {"vectors": [{"id": "b", "values": [0.0, 1.0]}]})
    assert (status, body) == (200, {"upsertedCount": 1})
    status, stats = call(url, "POST", data + "/describe_index_stats", version, {})
    assert ("metric" in stats) is (version != "2024-07")
    status, updated = call(url, "POST", data + "/vectors/update", version, {"id": "b", "setMetadata": {"k": 1}})
    assert (status, updated) == (200, {})


# --- 2026-04: answered exactly as 2025-10 (versions.py says why) ------------------------------

POD = {"pod": {"environment": "us-east1-gcp", "pod_type": "p1.x1", "pods": 1, "replicas": 1, "shards": 1}}
POD_INDEX = {"name": "pods", "dimension": 4, "metric": "cosine", "spec": POD}
# The pod request as 2026-07 spells it (docs/pinecone-api-versions.md, "Spec sub-objects").
POD_INDEX_2026_07 = {"name": "pods", "schema": {"fields": {"_values": {"type": "dense_vector", "dimension": 4,
                                                                       "metric": "cosine"}}},
                     "deployment": {"deployment_type": "pod", "environment": "us-east1-gcp", "pod_type": "p1.x1",
                                    "replicas": 1, "shards": 1}}
POD_REFUSED = "deployment_type 'pod' is not supported on this API version"


@pytest.mark.parametrize(("version", "body", "status", "message"), [
    ("2025-10", POD_INDEX, 201, None),
    ("2026-04", POD_INDEX, 201, None),
    ("2026-07", POD_INDEX_2026_07, 400, POD_REFUSED),
    # 2026-07's request body is closed: the 2025-10 form is refused before the pod is looked at
    ("2026-07", POD_INDEX, 400, "Invalid CreateIndexRequest: unknown field `dimension`"),
])
def test_pod_index_creation_by_version(pinecone_emulator, version, body, status, message):
    url = pinecone_emulator.url
    got, answer = call(url, "POST", "/indexes", version, body)
    assert got == status, answer
    if message is not None:
        assert answer["error"]["code"] == "INVALID_ARGUMENT"
        assert answer["error"]["message"].startswith(message)
        assert call(url, "GET", "/indexes", "2025-10")[1] == {"indexes": []}
        return
    # created, and answered in 2025-10's shape whichever of the two versions asked
    assert set(answer) == {"name", "metric", "dimension", "host", "deletion_protection", "spec", "status", "vector_type"}
    assert answer["spec"] == POD
    assert (answer["dimension"], answer["metric"], answer["vector_type"]) == (4, "cosine", "dense")
    _, described = call(url, "GET", "/indexes/pods", version)
    assert described["spec"] == POD and described["status"] == {"ready": True, "state": "Ready"}


def test_2026_04_answers_as_2025_10(pinecone_emulator):
    """The same requests under 2025-10 and 2026-04 get the same answers, control and data plane."""
    url = pinecone_emulator.url
    assert call(url, "POST", "/indexes", "2026-04", POD_INDEX)[0] == 201
    status, _ = call(url, "POST", "/indexes", "2026-04", {"name": "docs", "dimension": 2, "metric": "dotproduct",
                                                          "spec": SERVERLESS, "tags": {"t": "1"}})
    assert status == 201
    data = pinecone_emulator.index_host("docs")[len(url):]
    assert call(url, "POST", data + "/vectors/upsert", "2026-04",
                {"vectors": [{"id": "a", "values": [1.0, 0.0], "metadata": {"k": 1}}], "namespace": "n"}) == (
        200, {"upsertedCount": 1})
    requests = [
        ("GET", "/indexes/pods", None),
        ("GET", "/indexes/docs", None),
        ("GET", "/indexes", None),
        ("GET", "/indexes/missing", None),
        ("GET", "/models", None),
        ("POST", data + "/describe_index_stats", {}),
        ("POST", data + "/query", {"vector": [1.0, 0.0], "topK": 1, "namespace": "n", "includeMetadata": True}),
        ("POST", data + "/vectors/update", {"id": "a", "setMetadata": {"k": 2}, "namespace": "n"}),
        ("POST", data + "/vectors/update", {"filter": {"k": {"$eq": 2}}, "dryRun": True, "namespace": "n"}),
        ("GET", data + "/vectors/list?namespace=n", None),
        ("GET", data + "/namespaces", None),
    ]
    for method, path, body in requests:
        native = call(url, method, path, "2025-10", body)
        assert call(url, method, path, "2026-04", body) == native, (method, path)
    # spot checks that these are 2025-10's shapes, not an older version's
    _, docs = call(url, "GET", "/indexes/docs", "2026-04")
    assert "read_capacity" in docs["spec"]["serverless"] and docs["tags"] == {"t": "1"}
    _, updated = call(url, "POST", data + "/vectors/update", "2026-04", {"filter": {"k": {"$eq": 2}},
                                                                        "setMetadata": {"k": 3}, "namespace": "n"})
    assert updated == {"matchedRecords": 1}
    _, stats = call(url, "POST", data + "/describe_index_stats", "2026-04", {})
    assert stats["metric"] == "dotproduct" and stats["vectorType"] == "dense"
