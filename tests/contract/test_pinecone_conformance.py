"""Every response of the Pinecone emulator, and every request the SDK sends it, checked against
the official 2025-10 OpenAPI specs with openapi-core.

A workload drives every operation through the real SDK (and a few deliberately malformed
requests through plain HTTP), the emulator records each exchange, and each is validated:
requests that the emulator accepted (or refused for reasons other than their shape) against the
request schema, responses against the status the spec documents for the operation. Statuses the
spec does not list for an operation (429, 503 and the like, which Pinecone can always answer)
must still carry the spec's error schema.
"""

from __future__ import annotations

import json
import time

import httpx
import pytest
from openapi_schema_validator import OAS30Validator  # a dev dependency, like openapi-core: never skipped
from pinecone import ByocSpec, Pinecone, PodSpec, ServerlessSpec
from pinecone.errors.exceptions import PineconeError

from pinery.local.pinecone import EmulatorAdmin, PineconeEmulator, versions
from tests.conftest import shared_path
from tests.support.pinecone_openapi import label, load_spec, mock_request, openapi, request_problem

# The 9.x SDK against API 2025-10: `make test` runs this with the 9.1.0 overlay (compat/overlay.py).
pytestmark = pytest.mark.sdk9

KEY = "conformance-key"
HEADERS = {"Api-Key": KEY, "X-Pinecone-Api-Version": "2025-10"}
ERROR_SCHEMA = {"control": "ErrorResponse", "data": "rpcStatus"}
# Operations that need integrated inference or bulk storage, which the emulator answers 501.
NOT_EMULATED: set[str] = set()  # every operation of the 2025-10 data plane is served
# Statuses Pinecone answers that the 2025-10 spec does not list for the operation, each with its
# source; their bodies must still be the spec's ErrorResponse.
UNLISTED = {
    # 10.x SDK client/backups.py Backups.create: NotFoundError "If index_name does not resolve to
    # an index in this project".
    ("create_backup", 404),
    # docs.pinecone.io API reference 2026-07 create_index_from_backup: 412 FAILED_PRECONDITION
    # "Backup <id> is not completed".
    ("create_index_from_backup_operation", 412),
}


def expect_error(call, *args, **kwargs) -> None:
    try:
        call(*args, **kwargs)
    except PineconeError:
        return
    raise AssertionError(f"{call} succeeded but should have failed")


def control_workload(pc: Pinecone, emu: PineconeEmulator, admin: EmulatorAdmin) -> None:
    raw = httpx.Client(base_url=emu.url, headers=HEADERS)
    pc.list_indexes()
    pc.create_index(name="sls", dimension=4, metric="dotproduct", spec=ServerlessSpec(cloud="aws", region="us-east-1"),
                    tags={"team": "a"}, deletion_protection="enabled", timeout=5)
    pc.create_index(name="pod", dimension=4, spec=PodSpec(environment="us-east-1-aws", pod_type="p1.x1",
                                                         metadata_config={"indexed": ["genre"]}), timeout=5)
    pc.create_index(name="byoc", dimension=4, spec=ByocSpec(environment="aws-us-east-1-b921"), timeout=5)
    pc.create_index(name="sparse", vector_type="sparse", metric="dotproduct",
                    spec=ServerlessSpec(cloud="gcp", region="us-central1"), timeout=5)
    pc.create_index_for_model(name="model", cloud="aws", region="us-east-1",
                              embed={"model": "llama-text-embed-v2", "field_map": {"text": "body"}}, timeout=5)
    pc.describe_index("sls")
    pc.configure_index("sls", tags={"team": "", "env": "dev"})
    pc.configure_index("sls", serverless_read_capacity={"mode": "Dedicated", "dedicated": {
        "node_type": "b1", "scaling": "Manual", "manual": {"replicas": 1, "shards": 1}}})
    pc.configure_index("pod", replicas=2, pod_type="p1.x2")
    pc.configure_index("byoc", read_capacity={"mode": "OnDemand"})
    pc.list_indexes()
    expect_error(pc.create_index, name="sls", dimension=4, spec=ServerlessSpec(cloud="aws", region="us-east-1"), timeout=-1)
    expect_error(pc.describe_index, "missing")
    expect_error(pc.delete_index, "sls", timeout=-1)
    expect_error(pc.configure_index, "missing", tags={"a": "b"})
    expect_error(pc.configure_index, "pod", pod_type="p1.x1")
    expect_error(pc.create_index, name="nowhere", dimension=4, spec=ServerlessSpec(cloud="aws", region="mars-1"), timeout=-1)
    expect_error(Pinecone(api_key="wrong", host=emu.url).list_indexes)
    raw.post("/indexes", json={"name": "Bad_Name", "dimension": 4, "spec": {"serverless": {"cloud": "aws", "region": "us-east-1"}}})
    raw.post("/indexes", json={"name": "nospec", "dimension": 4})
    raw.post("/indexes/create-for-model", json={"name": "m2", "cloud": "aws", "region": "us-east-1"})
    raw.get("/indexes", headers={"X-Pinecone-Api-Version": "2024-04"})  # not served: a 400
    admin.configure(index_quota=5)
    expect_error(pc.create_index, name="over", dimension=4, spec=ServerlessSpec(cloud="aws", region="us-east-1"), timeout=-1)
    admin.configure(index_quota=None)
    admin.add_fault("create_index", status=402, times=1)
    expect_error(pc.create_index, name="unpaid", dimension=4, spec=ServerlessSpec(cloud="aws", region="us-east-1"), timeout=-1)
    admin.add_fault("list_indexes", status=429, retry_after=0, times=1)
    admin.add_fault("list_indexes", status=503, retry_after=0, times=1)
    admin.add_fault("list_indexes", status=500, retry_after=0, times=1)
    pc.list_indexes()

    # collections (a pending one blocks deleting its source: 412)
    admin.configure(collection_delay=30)
    pc.create_collection(name="col", source="pod")
    expect_error(pc.delete_index, "pod", timeout=-1)
    pc.list_collections()
    pc.describe_collection("col")
    expect_error(pc.describe_collection, "nope")
    expect_error(pc.create_collection, name="col", source="pod")
    expect_error(pc.create_collection, name="col2", source="sls")
    pc.delete_collection("col")
    expect_error(pc.delete_collection, "nope")
    raw.post("/collections", json={"name": "c3"})

    # backups and restore jobs
    backup = pc.create_backup(index_name="sls", backup_name="b1", description="first")
    second = pc.create_backup(index_name="sls")
    pc.create_backup(index_name="byoc")  # serverless and BYOC indexes can be backed up
    expect_error(pc.create_backup, index_name="pod")  # 400
    expect_error(pc.create_backup, index_name="missing")  # 404, not listed by the spec (UNLISTED)
    admin.configure(backup_quota=3)
    expect_error(pc.create_backup, index_name="sls")  # 403, the spec's "You've exceed your backup quota."
    admin.configure(backup_quota=None, backups_allowed=False)
    expect_error(pc.create_backup, index_name="sls")  # 403, a plan without backups
    admin.configure(backups_allowed=True, backup_delay=30)
    pending = pc.create_backup(index_name="sls")
    admin.configure(backup_delay=0)
    pc.list_backups(index_name="sls")
    pc.backups.list(limit=1)
    expect_error(pc.list_backups, index_name="missing")
    pc.describe_backup(backup_id=backup.backup_id)
    expect_error(pc.describe_backup, backup_id="missing")
    expect_error(pc.create_index_from_backup, name="r3", backup_id=pending.backup_id, timeout=-1)  # 412 (UNLISTED)
    admin.configure(index_quota=5)
    expect_error(pc.create_index_from_backup, name="r4", backup_id=backup.backup_id, timeout=-1)  # 403
    admin.configure(index_quota=None, restore_delay=30)
    job = pc.create_index_from_backup(name="restored", backup_id=backup.backup_id, timeout=-1)
    expect_error(pc.create_index_from_backup, name="restored", backup_id=backup.backup_id, timeout=-1)
    expect_error(pc.create_index_from_backup, name="r2", backup_id="missing", timeout=-1)
    expect_error(pc.delete_backup, backup_id=backup.backup_id)
    pc.list_restore_jobs()
    pc.describe_restore_job(job_id=job.restore_job_id)  # Pending, percent_complete 0
    emu.call(emu.store.refresh, time.time() + 20)  # two thirds of the restore: InProgress, percent_complete ~33
    pc.list_restore_jobs()
    pc.describe_restore_job(job_id=job.restore_job_id)
    emu.call(emu.store.refresh, time.time() + 60)  # Completed: percent_complete 100, completed_at
    pc.describe_restore_job(job_id=job.restore_job_id)
    expect_error(pc.describe_restore_job, job_id="missing")
    pc.delete_backup(backup_id=second.backup_id)
    expect_error(pc.delete_backup, backup_id="missing")
    pc.configure_index("sls", deletion_protection="disabled")
    pc.delete_index("sls", timeout=-1)
    expect_error(pc.delete_index, "missing", timeout=-1)


def data_workload(pc: Pinecone, emu: PineconeEmulator, admin: EmulatorAdmin, tmp) -> None:
    host = pc.describe_index("pod").host
    raw = httpx.Client(base_url=host, headers=HEADERS)
    idx = pc.Index(host=host)
    idx.upsert(vectors=[
        {"id": "a", "values": [1, 0, 0, 0], "metadata": {"genre": "drama", "year": 2001, "tags": ["x"]}},
        {"id": "b", "values": [0, 1, 0, 0], "metadata": {"genre": "comedy"}},
        ("c", [0, 0, 1, 0]),
    ], namespace="ns")
    idx.query(vector=[1, 0, 0, 0], top_k=2, namespace="ns", include_values=True, include_metadata=True,
              filter={"$or": [{"genre": {"$in": ["drama"]}}, {"year": {"$lt": 2000}}]})
    idx.query(id="a", top_k=3, namespace="ns")
    idx.fetch(ids=["a", "b", "zz"], namespace="ns")
    idx.fetch_by_metadata(filter={"genre": {"$exists": True}}, namespace="ns", limit=1)
    idx.update(id="a", set_metadata={"year": 2002}, namespace="ns")
    idx.update(filter={"genre": "comedy"}, set_metadata={"seen": True}, namespace="ns", dry_run=True)
    idx.describe_index_stats()
    idx.describe_index_stats(filter={"genre": "drama"})
    # Listing and namespace management are for serverless indexes only.
    expect_error(idx.list_paginated, prefix="", limit=2, namespace="ns")
    expect_error(idx.list_namespaces_paginated, limit=1)
    expect_error(idx.create_namespace, name="empty")
    sls = pc.Index(host=pc.create_index(name="data-sls", dimension=4, timeout=5,
                                        spec=ServerlessSpec(cloud="aws", region="us-east-1")).host)
    sls.upsert(vectors=[("a", [1, 0, 0, 0]), ("b", [0, 1, 0, 0]), ("c", [0, 0, 1, 0])], namespace="ns")
    sls.list_paginated(prefix="", limit=2, namespace="ns")
    sls.create_namespace(name="empty")
    sls.list_namespaces_paginated(limit=1)
    sls.describe_namespace(namespace="ns")
    expect_error(sls.describe_namespace, namespace="none")
    expect_error(sls.create_namespace, name="empty")
    sls.delete_namespace(namespace="empty")
    expect_error(sls.upsert, vectors=[("zero", [0, 0, 0, 0])])
    expect_error(idx.query, vector=[1, 0, 0, 0], top_k=1, filter={"genre": {"$like": "d%"}})
    expect_error(idx.upsert, vectors=[("bad", [1.0, 2.0])])
    idx.delete(ids=["c"], namespace="ns")
    idx.delete(filter={"genre": "comedy"}, namespace="ns")
    idx.delete(delete_all=True, namespace="ns")
    expect_error(pc.Index(host=pc.describe_index("pod").host.replace("/pod", "/ghost")).describe_index_stats)
    raw.post("/records/namespaces/ns/upsert", content=b'{"_id": "r1", "body": "hello"}',
             headers={"Content-Type": "application/x-ndjson"})  # the pod index has no embedding: 400
    # integrated records on the index made for a model (field_map text -> body)
    model = pc.Index(host=pc.describe_index("model").host)
    model.upsert_records(namespace="ns", records=[{"_id": "r1", "body": "the cat sat on the mat", "kind": "pet"},
                                                  {"_id": "r2", "body": "stock markets fell sharply", "kind": "news"}])
    model.search(namespace="ns", top_k=2, inputs={"text": "a feline on a rug"}, fields=["body"])
    model.search(namespace="ns", top_k=2, inputs={"text": "cats"}, filter={"kind": "pet"},
                 rerank={"model": "bge-reranker-v2-m3", "rank_fields": ["body"], "top_n": 1})
    expect_error(model.search, namespace="ns", top_k=0, inputs={"text": "x"})
    # bulk imports from a local directory of <namespace>/*.jsonl
    source = tmp / "import"
    (source / "imported").mkdir(parents=True)
    (source / "imported" / "part.jsonl").write_text(
        '{"id": "i1", "values": [1, 0, 0, 0], "metadata": {"genre": "drama"}}\n')
    started = sls.start_import(uri=source.as_uri(), error_mode="abort")
    sls.list_imports_paginated(limit=1)
    sls.describe_import(started.id)
    expect_error(sls.start_import, uri="s3://bucket/path")
    expect_error(sls.describe_import, "missing")
    sls.cancel_import(started.id)
    admin.add_fault("queryVectors", status=429, retry_after=0, times=1)
    idx.query(vector=[1, 0, 0, 0], top_k=1)
    sparse = pc.Index(host=pc.describe_index("sparse").host)
    sparse.upsert(vectors=[{"id": "s", "sparse_values": {"indices": [1, 9], "values": [0.5, 0.5]}}])
    sparse.query(sparse_vector={"indices": [9], "values": [1.0]}, top_k=1, include_values=True)


@pytest.fixture(scope="module")
def exchanges(tmp_path_factory):
    specs_dir = shared_path("pinecone-api", "2025-10")
    emu = PineconeEmulator(None, api_key=KEY, ready_delay=0, record_exchanges=True).start_in_thread()
    try:
        pc = Pinecone(api_key=KEY, host=emu.url)
        admin = EmulatorAdmin(emu.url)
        control_workload(pc, emu, admin)
        data_workload(pc, emu, admin, tmp_path_factory.mktemp("conformance"))
        yield specs_dir, list(emu.exchanges)
    finally:
        emu.stop_thread()


def _validate(specs_dir, exchanges, plane):
    doc = load_spec(specs_dir, plane)
    api = openapi(doc)
    error_validator = OAS30Validator({**doc["components"]["schemas"][ERROR_SCHEMA[plane]],
                                      "components": doc["components"]})
    operations = {op["operationId"]: (path, method, op) for path, ops in doc["paths"].items()
                  for method, op in ops.items() if isinstance(op, dict) and "operationId" in op}
    problems, seen = [], set()
    from openapi_core.testing import MockResponse

    # Answers in another served version follow that version's models, not this spec
    # (tests/unit/test_pinecone_shapes.py, test_pinecone_v2026_07.py check those).
    other_versions = set(versions.SERVED) - {"2025-10"}
    for ex in (e for e in exchanges if e["plane"] == plane
               and e["headers"].get("X-Pinecone-Api-Version") not in other_versions):
        where = label(ex)
        request = mock_request(ex)
        response = MockResponse(ex["response"], status_code=ex["status"],
                                content_type=ex["content_type"] or "application/json")
        assert ex["operation"] in operations, f"{where}: the spec has no such operation"
        seen.add((ex["operation"], ex["status"]))
        checked = ex["status"] not in (400, 422) and ex["operation"] not in NOT_EMULATED
        if checked and ex["headers"].get("X-Pinecone-Api-Version") == "2025-10":
            problem = request_problem(api, ex)
            if problem:
                problems.append(problem)
        responses = operations[ex["operation"]][2]["responses"]
        status = str(ex["status"])
        if status in responses or f"{status[0]}XX" in responses:
            try:
                api.validate_response(request, response)
            except Exception as exc:  # noqa: BLE001
                problems.append(f"response {where}: {exc} {getattr(exc, '__cause__', '')} {ex['response'][:300]!r}")
        else:
            errors = list(error_validator.iter_errors(json.loads(ex["response"])))
            if errors or (ex["status"] not in (400, 429, 500, 502, 503, 504)
                          and (ex["operation"], ex["status"]) not in UNLISTED):
                problems.append(f"response {where}: undocumented status with body {ex['response'][:300]!r} {errors}")
    return problems, seen, operations


@pytest.mark.parametrize("plane", ["control", "data"])
def test_every_exchange_conforms_to_the_spec(exchanges, plane):
    specs_dir, recorded = exchanges
    problems, _, _ = _validate(specs_dir, recorded, plane)
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("plane", ["control", "data"])
def test_the_workload_covers_every_operation(exchanges, plane):
    specs_dir, recorded = exchanges
    _, seen, operations = _validate(specs_dir, recorded, plane)
    succeeded = {op for op, status in seen if status < 300}
    missing = sorted(set(operations) - succeeded - NOT_EMULATED)
    assert missing == []
    assert {op for op, status in seen if status >= 400}, "no error answers were exercised"


def test_the_workload_exercises_the_backup_failures_and_restore_progress(exchanges):
    _, recorded = exchanges
    seen = {(ex["operation"], ex["status"]) for ex in recorded}
    assert {("create_backup", 400), ("create_backup", 403), ("create_backup", 404), ("delete_backup", 412),
            ("create_index_from_backup_operation", 403), ("create_index_from_backup_operation", 404),
            ("create_index_from_backup_operation", 409), ("create_index_from_backup_operation", 412)} <= seen
    jobs = [json.loads(ex["response"]) for ex in recorded if ex["operation"] == "describe_restore_job" and ex["status"] == 200]
    progress = [(j["status"], j["percent_complete"]) for j in jobs]
    assert progress[0] == ("Pending", 0.0) and progress[-1] == ("Completed", 100.0) and "completed_at" in jobs[-1]
    assert progress[1][0] == "InProgress" and 0 < progress[1][1] < 100
