"""The ordinary flow of the `pinecone` 10.x SDK (API 2026-07) against a running emulator.

Run with the 10.x venv's python: `sdk10_flow.py <emulator url> <api key>`. Each step prints
`ok <step>`; the first failure raises (non-zero exit). test_pinecone_sdk10.py runs it.
"""

from __future__ import annotations

import json
import sys
import time
import urllib.request

import pinecone
from pinecone import Pinecone
from pinecone.errors.exceptions import ApiError, PineconeError

URL, KEY = sys.argv[1], sys.argv[2]


def ok(step: str) -> None:
    print("ok", step, flush=True)


def raw(method: str, path: str, version: str, body: dict | None = None) -> tuple[int, dict]:
    """A plain HTTP call with a chosen API version (to read what another SDK line would see)."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(URL + path, data=data, method=method, headers={
        "Api-Key": KEY, "X-Pinecone-Api-Version": version, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req) as resp:
            return resp.status, json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


def expect_error(fn, status: int, text: str) -> None:
    try:
        fn()
    except ApiError as exc:
        assert exc.status_code == status, (exc.status_code, str(exc))
        assert text in str(exc), str(exc)
        return
    raise AssertionError(f"expected a {status} containing {text!r}")


assert pinecone.__version__.startswith("10."), pinecone.__version__
pc = Pinecone(api_key=KEY, host=URL)

# -- control plane: a serverless index with a dimension (the legacy sugar) and with a schema ----
model = pc.indexes.create(name="movies", dimension=4, metric="cosine",
                          tags={"team": "search"}, deletion_protection="disabled", timeout=10)
assert model.status.ready and model.deployment.cloud == "aws" and model.deployment.region == "us-east-1"
assert model.dimension == 4 and model.metric == "cosine" and model.vector_type == "dense"
assert model.schema.fields["_values"].dimension == 4
assert type(model.read_capacity).__name__ == "ReadCapacityOnDemandResponse" and model.tags == {"team": "search"}
ok("create serverless index (dimension=)")

described = pc.indexes.describe("movies")
assert described.host == model.host and described.deletion_protection == "disabled"
assert [i.name for i in pc.indexes.list()] == ["movies"]
assert pc.indexes.exists("movies") and not pc.indexes.exists("nope")
ok("describe, list, exists")

# -- data plane: the vector operations --------------------------------------------------------
idx = pc.index(name="movies")
vectors = [
    {"id": "m1", "values": [1.0, 0.0, 0.0, 0.0], "metadata": {"genre": "drama", "year": 1994, "gone": None}},
    {"id": "m2", "values": [0.9, 0.1, 0.0, 0.0], "metadata": {"genre": "comedy", "year": 2001}},
    {"id": "m3", "values": [0.0, 1.0, 0.0, 0.0], "metadata": {"genre": "drama", "year": 2010}},
    {"id": "m4", "values": [0.0, 0.0, 1.0, 0.0], "metadata": {"genre": "horror", "year": 2020}},
]
assert idx.upsert(vectors=vectors, namespace="films").upserted_count == 4
ok("upsert with metadata")

result = idx.query(vector=[1.0, 0.0, 0.0, 0.0], top_k=3, namespace="films",
                   filter={"genre": {"$eq": "drama"}}, include_metadata=True)
assert [m.id for m in result.matches] == ["m1", "m3"], result.matches
assert result.matches[0].metadata == {"genre": "drama", "year": 1994.0}  # the null value was dropped
ok("query with filter in a namespace")

fetched = idx.fetch(ids=["m1", "m2", "zz"], namespace="films")
assert set(fetched.vectors) == {"m1", "m2"} and [round(v, 4) for v in fetched.vectors["m2"].values] == [0.9, 0.1, 0.0, 0.0]
ok("fetch")

listed = [v.id for page in idx.list(namespace="films") for v in page.vectors]
assert sorted(listed) == ["m1", "m2", "m3", "m4"], listed
ok("list")

idx.update(id="m2", set_metadata={"genre": "drama"}, namespace="films")
assert idx.fetch(ids=["m2"], namespace="films").vectors["m2"].metadata["genre"] == "drama"
matched = idx.update(filter={"year": {"$gte": 2010}}, set_metadata={"recent": True}, namespace="films")
assert matched.matched_records == 2
ok("update by id and by filter")

stats = idx.describe_index_stats()
assert stats.total_vector_count == 4 and stats.dimension == 4 and stats.namespaces["films"].vector_count == 4
expect_error(lambda: idx.describe_index_stats(filter={"genre": {"$eq": "drama"}}), 400, "filter")
ok("describe_index_stats (a filter is refused)")

expect_error(lambda: idx.upsert(vectors=[{"id": "bad", "values": [1, 0, 0, 0], "metadata": {"$x": 1}}],
                                namespace="films"), 400, "Metadata field '$x' cannot start with '$'")
ok("metadata key starting with $ refused")

idx.delete(ids=["m4"], namespace="films")
idx.delete(filter={"genre": {"$eq": "comedy"}}, namespace="films")
left = sorted(v.id for page in idx.list(namespace="films") for v in page.vectors)
assert left == ["m1", "m2", "m3"], left  # m2 became a drama above, so the filter matched nothing
idx.delete(filter={"recent": {"$eq": True}}, namespace="films")
assert sorted(v.id for page in idx.list(namespace="films") for v in page.vectors) == ["m1", "m2"]
ok("delete by ids and by filter")

# -- hybrid: the reserved dense and sparse fields keep the vector operations ------------------
pc.indexes.create(name="hybrid", schema={"fields": {
    "_values": {"type": "dense_vector", "dimension": 2, "metric": "dotproduct"},
    "_sparse_values": {"type": "sparse_vector"}}}, timeout=10)
hy = pc.index(name="hybrid")
hy.upsert(vectors=[{"id": "h1", "values": [1.0, 0.0], "sparse_values": {"indices": [7], "values": [2.0]}},
                   {"id": "h2", "values": [1.0, 0.0], "sparse_values": {"indices": [8], "values": [5.0]}}])
hits = hy.query(vector=[1.0, 0.0], sparse_vector={"indices": [7], "values": [1.0]}, top_k=2)
assert [m.id for m in hits.matches] == ["h1", "h2"] and hits.matches[0].score == 3.0
ok("hybrid dense + sparse query")

# -- documents: a named schema makes a document index ----------------------------------------
pc.indexes.create(name="articles", schema={"fields": {
    "embedding": {"type": "dense_vector", "dimension": 3, "metric": "cosine"},
    "terms": {"type": "sparse_vector"},
    "year": {"type": "float", "filterable": True}}}, timeout=10)
docs = pc.index(name="articles")
expect_error(lambda: docs.upsert(vectors=[("a", [1.0, 0.0, 0.0])], namespace="en"), 400,
             "This index has a document schema")
up = docs.documents.upsert(namespace="en", documents=[
    {"_id": "a1", "embedding": [1.0, 0.0, 0.0], "terms": {"indices": [1], "values": [1.0]}, "year": 2020, "title": "A"},
    {"_id": "a2", "embedding": [0.0, 1.0, 0.0], "terms": {"indices": [2], "values": [1.0]}, "year": 2021, "title": "B"},
    {"_id": "a3", "embedding": [0.7, 0.7, 0.0], "year": 2022, "title": "C"}])
assert up.upserted_count == 3
found = docs.documents.search(namespace="en", top_k=2, include_fields=["title"],
                              score_by=[{"type": "dense_vector", "field": "embedding", "values": [1.0, 0.0, 0.0]}])
assert [d.id for d in found.matches] == ["a1", "a3"] and found.matches[0].title == "A", found.matches
sparse_hits = docs.documents.search(namespace="en", top_k=5,
                                    score_by=[{"type": "sparse_vector", "field": "terms",
                                               "sparse_values": {"indices": [2], "values": [1.0]}}])
assert sparse_hits.matches[0].id == "a2"
filtered = docs.documents.search(namespace="en", top_k=5, filter={"year": {"$gte": 2021}},
                                 score_by=[{"type": "dense_vector", "field": "embedding", "values": [1.0, 0.0, 0.0]}])
assert [d.id for d in filtered.matches] == ["a3", "a2"]
got = docs.documents.fetch(namespace="en", ids=["a2"])
assert got.documents["a2"].title == "B"
by_filter = docs.documents.fetch(namespace="en", filter={"year": {"$eq": 2020}})
assert list(by_filter.documents) == ["a1"]
assert [d.id for d in docs.documents.list(namespace="en")] == ["a1", "a2", "a3"]
upd = docs.documents.update(namespace="en", filter={"year": {"$gte": 2021}}, set_fields={"reviewed": True})
assert upd.matched_records == 2
docs.documents.update(namespace="en", documents=[{"_id": "a1", "title": "A2"}])
assert docs.documents.fetch(namespace="en", ids=["a1"]).documents["a1"].title == "A2"
deleted = docs.documents.delete(namespace="en", filter={"reviewed": {"$eq": True}})
assert deleted.matched_records == 2
docs.documents.delete(namespace="en", ids=["a1"])
assert [d.id for d in docs.documents.list(namespace="en")] == []
ok("documents upsert, search, fetch, list, update, delete")

# -- backups and restore ----------------------------------------------------------------------
backup = pc.indexes.create_backup("movies", name="nightly", description="before the change")
assert backup.source_index_name == "movies" and backup.schema.fields["_values"].dimension == 4
deadline = time.monotonic() + 10
while pc.indexes.describe_backup(backup.backup_id).status != "Ready":
    assert time.monotonic() < deadline
    time.sleep(0.05)
assert [b.backup_id for b in pc.indexes.list_backups("movies")] == [backup.backup_id]
restored = pc.create_index_from_backup(name="movies-restored", backup_id=backup.backup_id, timeout=10)
assert restored.status.ready and restored.source_backup_id == backup.backup_id
assert pc.index(name="movies-restored").describe_index_stats().total_vector_count == 2
jobs = list(pc.restore_jobs.list())
assert jobs and jobs[0].backup_id == backup.backup_id
ok("backup and restore")

# -- configure --------------------------------------------------------------------------------
configured = pc.indexes.configure("movies", tags={"team": "", "env": "dev"}, deletion_protection="enabled")
assert configured.tags == {"env": "dev"} and configured.deletion_protection == "enabled"
expect_error(lambda: pc.indexes.delete("movies"), 403, "Deletion protection")
configured = pc.indexes.configure("movies", read_capacity={
    "mode": "Dedicated", "dedicated": {"node_type": "b1", "scaling": "Manual", "manual": {"replicas": 1, "shards": 1}}})
assert configured.read_capacity.dedicated.manual.replicas == 1
pc.indexes.configure("movies", deletion_protection="disabled")
ok("configure tags, deletion protection, read capacity")

# -- one store, two views ---------------------------------------------------------------------
status, old = raw("GET", "/indexes/movies", "2025-10")
assert status == 200 and old["dimension"] == 4 and old["metric"] == "cosine" and old["vector_type"] == "dense", old
assert old["spec"]["serverless"]["cloud"] == "aws" and old["tags"] == {"env": "dev"}, old
assert "schema" not in old and "deployment" not in old
status, old = raw("GET", "/indexes/articles", "2025-10")
assert status == 200 and old["dimension"] == 3, old
status, made = raw("POST", "/indexes", "2025-10", {"name": "legacy", "dimension": 5, "metric": "euclidean",
                                                     "spec": {"serverless": {"cloud": "aws", "region": "us-east-1"}}})
assert status == 201, made
legacy = pc.indexes.describe("legacy")
assert legacy.dimension == 5 and legacy.metric == "euclidean" and "_values" in legacy.schema.fields
ok("describe across 2025-10 and 2026-07")

# -- refusals ---------------------------------------------------------------------------------
expect_error(lambda: pc.indexes.create(name="pods", dimension=4, deployment={
    "deployment_type": "pod", "environment": "us-east-1-aws", "pod_type": "p1.x1", "replicas": 1, "shards": 1}),
    400, "deployment_type 'pod' is not supported on this API version")
status, body = raw("POST", "/indexes", "2026-07", {"name": "x", "dimension": 4})
assert status == 400 and "unknown field `dimension`" in body["error"]["message"], body
status, body = raw("PATCH", "/indexes/movies", "2026-07", {"embed": {"field_map": {"text": "t"}}})
assert status == 400 and "unknown field `embed`" in body["error"]["message"], body
status, body = raw("POST", "/indexes", "2026-07", {"name": "fromcol", "source_collection": "c",
                                                     "schema": {"fields": {"v": {"type": "dense_vector",
                                                                                 "dimension": 2, "metric": "cosine"}}}})
assert status == 400 and "Creating an index from collection or backup is not yet supported" in body["error"]["message"]
status, body = raw("POST", idx.host.replace(URL, "") + "/query", "2026-07",
                   {"topK": 1, "queries": [{"values": [1, 0, 0, 0]}]})
assert status == 400 and "queries" in body["message"], body
ok("refusals (pod, closed bodies, embed, collection, queries)")

# -- delete -----------------------------------------------------------------------------------
for name in ("movies", "movies-restored", "hybrid", "articles", "legacy"):
    pc.indexes.delete(name, timeout=10)
assert [i.name for i in pc.indexes.list()] == []
ok("delete indexes")
try:
    pc.close()
except PineconeError:
    pass
print("done", flush=True)
