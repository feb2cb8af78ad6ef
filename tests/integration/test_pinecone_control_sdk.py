"""The real `pinecone` SDK (9.x, API 2025-10) against the emulator's control plane, over HTTP."""

from __future__ import annotations

import time

import pytest
from pinecone import ByocSpec, Pinecone, PodSpec, ServerlessSpec
from pinecone.errors.exceptions import (
    ApiError,
    ConflictError,
    ForbiddenError,
    IndexInitFailedError,
    NotFoundError,
    UnauthorizedError,
)

from tests.support.emulator import TEST_API_KEY

# The 9.x SDK against API 2025-10: `make test` runs this with the 9.1.0 overlay (compat/overlay.py).
pytestmark = pytest.mark.sdk9

SERVERLESS = ServerlessSpec(cloud="aws", region="us-east-1")


def wait_state(pc: Pinecone, name: str, state: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while pc.describe_index(name).status.state != state:
        assert time.monotonic() < deadline, f"{name} never reached {state}"
        time.sleep(0.05)


def test_serverless_lifecycle_with_host_and_tags(pinecone_client, pinecone_emulator):
    pc = pinecone_client
    created = pc.create_index(name="docs", dimension=8, metric="dotproduct", spec=SERVERLESS,
                              tags={"team": "search", "env": "dev"}, timeout=-1)
    assert created.status.state == "Initializing" and created.status.ready is False
    ready = pc.create_index  # the create call above returned before Ready; now poll like the SDK does
    assert pc.indexes.describe("docs").status.ready
    model = pc.describe_index("docs")
    assert model.host == pinecone_emulator.index_host("docs")
    assert model.spec.serverless.cloud == "aws" and model.dimension == 8 and model.metric == "dotproduct"
    assert model.tags == {"team": "search", "env": "dev"}
    assert pc.has_index("docs") and not pc.has_index("nope")
    assert pc.list_indexes().names() == ["docs"]
    pc.configure_index("docs", tags={"env": "", "owner": "me"})  # an empty value removes a tag
    assert pc.describe_index("docs").tags == {"team": "search", "owner": "me"}
    pc.delete_index("docs", timeout=5)
    assert pc.list_indexes().names() == []
    del ready


def test_pod_scaling_goes_through_transitional_states(make_pinecone_emulator):
    emulator = make_pinecone_emulator(ready_delay=0.0, scale_delay=0.6)
    pc = Pinecone(api_key=TEST_API_KEY, host=emulator.url)
    pc.create_index(name="pods", dimension=4, spec=PodSpec(environment="us-east-1-aws", pod_type="p1.x1"), timeout=5)
    pc.configure_index("pods", replicas=3)
    described = pc.describe_index("pods")
    assert described.status.state == "ScalingUp" and described.status.ready  # pods keep serving while scaling
    assert described.spec.pod.replicas == 3
    wait_state(pc, "pods", "Ready")
    pc.configure_index("pods", replicas=1)
    assert pc.describe_index("pods").status.state == "ScalingDown"
    wait_state(pc, "pods", "Ready")
    pc.configure_index("pods", pod_type="p1.x2")
    assert pc.describe_index("pods").status.state == "ScalingUpPodSize"
    wait_state(pc, "pods", "Ready")
    with pytest.raises(ApiError) as err:
        pc.configure_index("pods", pod_type="p1.x1")
    assert err.value.status_code == 400 and "scale down" in err.value.message
    with pytest.raises(ApiError) as err:
        pc.configure_index("pods", pod_type="s1.x2")
    assert err.value.status_code == 400 and "family" in err.value.message


def test_initializing_then_ready_after_the_delay(make_pinecone_emulator):
    emulator = make_pinecone_emulator(ready_delay=0.5, terminate_delay=0.5)
    pc = Pinecone(api_key=TEST_API_KEY, host=emulator.url)
    pc.create_index(name="slow", dimension=2, spec=SERVERLESS, timeout=-1)
    assert pc.describe_index("slow").status.state == "Initializing"
    wait_state(pc, "slow", "Ready")
    pc.delete_index("slow", timeout=-1)
    assert pc.describe_index("slow").status.state == "Terminating"
    with pytest.raises(ConflictError):  # the name stays taken until the index is gone
        pc.create_index(name="slow", dimension=2, spec=SERVERLESS, timeout=-1)
    deadline = time.monotonic() + 10
    while pc.has_index("slow"):
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_initialization_failure_is_injectable(pinecone_client, pinecone_admin):
    pinecone_admin.configure(fail_initialization=["broken"])
    with pytest.raises(IndexInitFailedError):
        pinecone_client.create_index(name="broken", dimension=2, spec=SERVERLESS, timeout=5)
    assert pinecone_client.describe_index("broken").status.state == "InitializationFailed"


def test_byoc_and_integrated_indexes(pinecone_client):
    pc = pinecone_client
    byoc = pc.create_index(name="byoc", dimension=16, spec=ByocSpec(environment="aws-us-east-1-b921"), timeout=5)
    assert byoc.spec.byoc.environment == "aws-us-east-1-b921" and byoc.status.ready
    model = pc.create_index_for_model(name="integrated", cloud="aws", region="us-east-1",
                                      embed={"model": "multilingual-e5-large", "field_map": {"text": "chunk"}},
                                      timeout=5)
    assert model.dimension == 1024 and model.embed.model == "multilingual-e5-large"
    assert sorted(pc.list_indexes().names()) == ["byoc", "integrated"]


def test_errors_map_to_the_sdk_exceptions(pinecone_client, pinecone_emulator, pinecone_admin):
    pc = pinecone_client
    pc.create_index(name="guarded", dimension=3, spec=SERVERLESS, deletion_protection="enabled", timeout=5)
    with pytest.raises(ConflictError) as conflict:
        pc.create_index(name="guarded", dimension=3, spec=SERVERLESS, timeout=-1)
    assert conflict.value.error_code == "ALREADY_EXISTS"
    with pytest.raises(ForbiddenError) as forbidden:
        pc.delete_index("guarded")
    assert forbidden.value.error_code == "FORBIDDEN" and "Deletion protection" in forbidden.value.message
    pc.configure_index("guarded", deletion_protection="disabled")
    pc.delete_index("guarded", timeout=5)

    with pytest.raises(NotFoundError):
        pc.describe_index("missing")
    with pytest.raises(NotFoundError) as region:
        pc.create_index(name="x", dimension=3, spec=ServerlessSpec(cloud="aws", region="mars-1"), timeout=-1)
    assert "region: mars-1" in region.value.message
    with pytest.raises(ApiError) as bad:
        pc.create_index(name="x", dimension=30000, spec=SERVERLESS, timeout=-1)
    assert bad.value.status_code == 400 and "Dimension" in bad.value.message
    with pytest.raises(UnauthorizedError):
        Pinecone(api_key="wrong-key", host=pinecone_emulator.url).list_indexes()

    pinecone_admin.configure(index_quota=1)
    pc.create_index(name="one", dimension=3, spec=SERVERLESS, timeout=-1)
    with pytest.raises(ForbiddenError) as quota:
        pc.create_index(name="two", dimension=3, spec=SERVERLESS, timeout=-1)
    assert quota.value.error_code == "QUOTA_EXCEEDED"

    pinecone_admin.add_fault("configure_index", status=402, times=1)
    with pytest.raises(ApiError) as payment:
        pc.configure_index("one", tags={"a": "b"})
    assert payment.value.status_code == 402 and payment.value.error_code == "PAYMENT_REQUIRED"


def test_collections_from_pod_indexes_and_412_while_pending(make_pinecone_emulator):
    emulator = make_pinecone_emulator(collection_delay=0.5)
    pc = Pinecone(api_key=TEST_API_KEY, host=emulator.url)
    pc.create_index(name="source", dimension=2, spec=PodSpec(environment="us-east-1-aws"), timeout=5)
    pc.Index(host=pc.describe_index("source").host).upsert(vectors=[("a", [1.0, 0.0]), ("b", [0.0, 1.0])])
    col = pc.create_collection(name="snap", source="source")
    assert col.status == "Initializing"
    with pytest.raises(ApiError) as pending:
        pc.delete_index("source", timeout=-1)
    assert pending.value.status_code == 412 and pending.value.error_code == "FAILED_PRECONDITION"
    deadline = time.monotonic() + 10
    while pc.describe_collection("snap").status != "Ready":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert pc.describe_collection("snap").vector_count == 2
    assert [c.name for c in pc.list_collections()] == ["snap"]
    pc.create_index(name="copy", dimension=2, timeout=5,
                    spec=PodSpec(environment="us-east-1-aws", source_collection="snap"))
    assert pc.Index(host=pc.describe_index("copy").host).describe_index_stats().total_vector_count == 2
    with pytest.raises(ApiError) as serverless_source:
        pc.create_index(name="sls", dimension=2, spec=SERVERLESS, timeout=5)
        pc.create_collection(name="nope", source="sls")
    assert serverless_source.value.status_code == 400
    pc.delete_collection("snap")


def test_backups_and_restore_jobs(make_pinecone_emulator):
    emulator = make_pinecone_emulator(backup_delay=0.0, restore_delay=0.0)
    pc = Pinecone(api_key=TEST_API_KEY, host=emulator.url)
    pc.create_index(name="prod", dimension=2, spec=SERVERLESS, tags={"t": "1"}, timeout=5)
    pc.Index(host=pc.describe_index("prod").host).upsert(vectors=[("a", [1.0, 0.0])], namespace="n1")
    backup = pc.create_backup(index_name="prod", backup_name="nightly", description="before the migration")
    assert backup.source_index_name == "prod" and backup.name == "nightly"
    assert pc.describe_backup(backup_id=backup.backup_id).status == "Ready"
    assert [b.backup_id for b in pc.list_backups(index_name="prod")] == [backup.backup_id]
    assert [b.backup_id for b in pc.list_backups()] == [backup.backup_id]
    restored = pc.create_index_from_backup(name="restored", backup_id=backup.backup_id, timeout=5)
    assert restored.status.ready
    stats = pc.Index(host=restored.host).describe_index_stats()
    assert stats.total_vector_count == 1 and "n1" in stats.namespaces
    jobs = pc.list_restore_jobs()
    assert [j.target_index_name for j in jobs] == ["restored"]
    assert pc.describe_restore_job(job_id=jobs[0].restore_job_id).status == "Completed"
    pc.delete_backup(backup_id=backup.backup_id)
    with pytest.raises(NotFoundError):
        pc.describe_backup(backup_id=backup.backup_id)


def test_restore_progress_as_the_9x_sdk_sees_it(make_pinecone_emulator):
    """API 2025-10: a restore job is Pending, then InProgress with percent_complete growing (the
    spec's RestoreJobModel), then Completed (100, completed_at); the index is not ready until then.
    The emulator's clock is moved (restores take an hour here), never waited on."""
    emulator = make_pinecone_emulator(backup_delay=0.0, restore_delay=3600.0)
    pc = Pinecone(api_key=TEST_API_KEY, host=emulator.url)
    pc.create_index(name="prod", dimension=2, spec=SERVERLESS, timeout=5)
    pc.Index(host=pc.describe_index("prod").host).upsert(vectors=[("a", [1.0, 0.0], {"k": "v"})], namespace="n1")
    backup = pc.create_backup(index_name="prod", backup_name="b")
    assert (backup.dimension, backup.metric, backup.record_count, backup.namespace_count) == (2, "cosine", 1, 1)
    job = pc.create_index_from_backup(name="copy", backup_id=backup.backup_id, timeout=-1)
    pending = pc.describe_restore_job(job_id=job.restore_job_id)
    assert (pending.status, pending.percent_complete, pending.completed_at) == ("Pending", 0.0, None)
    emulator.call(emulator.store.refresh, time.time() + 2700)  # three quarters of the hour
    running = pc.describe_restore_job(job_id=job.restore_job_id)
    assert running.status == "InProgress" and 49 < running.percent_complete < 60
    assert pc.describe_index("copy").status.state == "Initializing"
    emulator.call(emulator.store.refresh, time.time() + 7200)
    done = pc.describe_restore_job(job_id=job.restore_job_id)
    assert (done.status, done.percent_complete) == ("Completed", 100.0) and done.completed_at
    copy = pc.describe_index("copy")
    assert copy.status.ready and copy.dimension == 2
    assert pc.Index(host=copy.host).fetch(ids=["a"], namespace="n1").vectors["a"].metadata == {"k": "v"}


@pytest.mark.parametrize("method, path, what", [
    ("GET", "/assistant/assistants", "the Assistant API"),
    ("POST", "/assistant/chat/helper", "the Assistant API"),
    ("GET", "/admin/projects", "the Admin API"),
])
def test_pinecone_apis_not_emulated_are_501_saying_so(pinecone_emulator, method, path, what):
    import json
    import urllib.error
    import urllib.request

    req = urllib.request.Request(pinecone_emulator.url + path, method=method, data=b"{}" if method == "POST" else None,
                                 headers={"Api-Key": TEST_API_KEY, "X-Pinecone-Api-Version": "2025-10"})
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(req, timeout=10)
    assert caught.value.code == 501
    error = json.loads(caught.value.read())["error"]
    assert error["code"] == "UNIMPLEMENTED"
    assert error["message"].startswith(f"{what} ({method} {path}) is not emulated by local mode's Pinecone emulator")
    # anything else unknown is Pinecone's plain 404
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(urllib.request.Request(pinecone_emulator.url + "/assistants-nope"), timeout=10)
    assert caught.value.code == 404
