"""The ways backups and restores fail, with Pinecone's statuses and messages, through the real
`pinecone` 10.x SDK (API 2026-07) in-process, and as plain HTTP under API 2025-10 where the spec
shows the body (`{"status": N, "error": {"code", "message"}}`).

Sources, per test: the 2025-10 control-plane spec (db_control_2025-10.oas.yaml: create_backup 403
"You've exceed your backup quota.", create_index_from_backup_operation 403/404/409,
delete_backup 412, describe_backup / describe_restore_job 404); the 10.x SDK's docstrings
(client/backups.py Backups.create and list, client/restore_jobs.py, _client.py
create_index_from_backup); docs.pinecone.io (2026-07 create_index_from_backup 412 "Backup <id> is
not completed"; backups overview: no backups on the Starter and Builder plans).
"""

from __future__ import annotations

import pytest
from pinecone import Pinecone
from pinecone.errors.exceptions import (
    ApiError,
    ConflictError,
    FailedPreconditionError,
    ForbiddenError,
    NotFoundError,
)

from pinery.local.pinecone import EmulatorAdmin
from tests.support.emulator import TEST_API_KEY, api_call, clock_ahead

HOUR = 3600.0
SCHEMA = {"fields": {"_values": {"type": "dense_vector", "dimension": 2, "metric": "cosine"}}}
MANAGED = {"deployment_type": "managed", "cloud": "aws", "region": "us-east-1"}


@pytest.fixture
def emulator(make_pinecone_emulator):
    return make_pinecone_emulator(backup_delay=0.0, restore_delay=0.0)


@pytest.fixture
def pc(emulator):
    client = Pinecone(api_key=TEST_API_KEY, host=emulator.url)
    client.indexes.create(name="src", schema=SCHEMA, deployment=MANAGED, timeout=-1)
    client.index(name="src").upsert(vectors=[("a", [1.0, 0.0]), ("b", [0.0, 1.0])], namespace="ns")
    yield client
    client.close()


def error(status: int, code: str, message: str) -> dict:
    return {"status": status, "error": {"code": code, "message": message}}


def test_unknown_backups_and_restore_jobs_are_404(pc, emulator):
    with pytest.raises(NotFoundError, match="Backup nope not found."):
        pc.backups.describe(backup_id="nope")
    with pytest.raises(NotFoundError, match="Restore job nope not found."):
        pc.restore_jobs.describe(job_id="nope")
    with pytest.raises(NotFoundError):
        pc.backups.delete(backup_id="nope")
    with pytest.raises(NotFoundError):
        pc.create_index_from_backup(name="x", backup_id="nope", timeout=-1)
    # 2025-10: the spec's examples ("Backup bkp_123abc not found.", "Restore job ... not found.").
    assert api_call(emulator, "GET", "/backups/nope") == (404, error(404, "NOT_FOUND", "Backup nope not found."))
    assert api_call(emulator, "GET", "/restore-jobs/nope") == (404, error(404, "NOT_FOUND", "Restore job nope not found."))


def test_backing_up_a_missing_index_is_404(pc, emulator):
    # The 2025-10 spec lists no 404 for create_backup; the 10.x SDK's Backups.create raises
    # NotFoundError "If index_name does not resolve to an index in this project".
    with pytest.raises(NotFoundError, match="Index ghost not found."):
        pc.backups.create(index_name="ghost")
    for version in ("2025-10", "2026-07"):
        assert api_call(emulator, "POST", "/indexes/ghost/backups", {}, version) == (
            404, error(404, "NOT_FOUND", "Index ghost not found."))
    with pytest.raises(NotFoundError):  # list_index_backups 404 (2025-10 spec)
        pc.backups.list(index_name="ghost")


def test_pod_indexes_cannot_be_backed_up_and_byoc_ones_can(pc, emulator):
    # 2026-07 cannot create pod indexes: make one under 2025-10.
    status, _ = api_call(emulator, "POST", "/indexes", {"name": "pods", "dimension": 2, "spec": {
        "pod": {"environment": "us-east-1-aws", "pod_type": "p1.x1"}}})
    assert status == 201
    # 10.x SDK Backups.create: ApiError "If index_name names a pod-based index".
    with pytest.raises(ApiError) as refused:
        pc.backups.create(index_name="pods")
    assert refused.value.status_code == 400 and "pod-based" in refused.value.message
    assert api_call(emulator, "POST", "/indexes/pods/backups", {})[0] == 400

    # "Only serverless and BYOC indexes can be backed up" (same docstring); a restore makes a BYOC
    # index in the same environment.
    pc.indexes.create(name="own", schema=SCHEMA, deployment={"deployment_type": "byoc",
                                                             "environment": "aws-us-east-1-b921"}, timeout=-1)
    pc.index(name="own").upsert(vectors=[("x", [0.5, 0.5])])
    backup = pc.backups.create(index_name="own")
    assert (backup.cloud, backup.region, backup.record_count) == ("aws", "us-east-1", 1)
    restored = pc.create_index_from_backup(name="own-copy", backup_id=backup.backup_id, timeout=5)
    assert type(restored.deployment).__name__ == "ByocDeployment" and restored.deployment.environment == "aws-us-east-1-b921"
    assert pc.index(name="own-copy").fetch(ids=["x"]).vectors["x"].values == [0.5, 0.5]


def test_backup_quota_is_403(pc, emulator):
    admin = EmulatorAdmin(emulator.url)
    assert admin.configure(backup_quota=1)["backup_quota"] == 1
    pc.backups.create(index_name="src")
    with pytest.raises(ForbiddenError) as refused:
        pc.backups.create(index_name="src")
    assert refused.value.message == "Increase your quota or upgrade to create more backups."
    assert api_call(emulator, "POST", "/indexes/src/backups", {}) == (
        403, error(403, "FORBIDDEN", "Increase your quota or upgrade to create more backups."))
    admin.configure(backup_quota=None)
    pc.backups.create(index_name="src")
    assert len(pc.backups.list()) == 2


def test_a_plan_without_backups_is_403(pc, emulator):
    admin = EmulatorAdmin(emulator.url)
    assert admin.configure(backups_allowed=False)["backups_allowed"] is False
    with pytest.raises(ForbiddenError) as refused:
        pc.backups.create(index_name="src")
    assert "not available on your plan" in refused.value.message and refused.value.body["error"]["code"] == "FORBIDDEN"
    assert api_call(emulator, "POST", "/indexes/src/backups", {})[0] == 403
    assert len(pc.backups.list()) == 0
    admin.configure(backups_allowed=True)
    pc.backups.create(index_name="src")


def test_restore_refusals(pc, emulator):
    admin = EmulatorAdmin(emulator.url)
    backup = pc.backups.create(index_name="src")
    # An index of that name exists: 409 (2025-10 spec, "Index of given name already exists.").
    with pytest.raises(ConflictError):
        pc.create_index_from_backup(name="src", backup_id=backup.backup_id, timeout=-1)
    # Beyond the index quota: 403, the spec's example for create_index_from_backup_operation.
    admin.configure(index_quota=1)
    with pytest.raises(ForbiddenError) as refused:
        pc.create_index_from_backup(name="more", backup_id=backup.backup_id, timeout=-1)
    assert refused.value.message == "Increase your quota or upgrade to create more indexes."
    assert refused.value.body["error"]["code"] == "FORBIDDEN"
    admin.configure(index_quota=None)
    # An invalid name: 400.
    with pytest.raises(ApiError) as bad:
        pc.create_index_from_backup(name="Not_Valid", backup_id=backup.backup_id, timeout=-1)
    assert bad.value.status_code == 400
    assert not pc.restore_jobs.list().data  # nothing was started


def test_a_backup_that_is_not_ready_or_failed_cannot_be_restored(make_pinecone_emulator):
    emulator = make_pinecone_emulator(backup_delay=HOUR, restore_delay=0.0, fail_backups=["broken"])
    pc = Pinecone(api_key=TEST_API_KEY, host=emulator.url)
    pc.indexes.create(name="src", schema=SCHEMA, deployment=MANAGED, timeout=-1)
    pending = pc.backups.create(index_name="src")
    with pytest.raises(FailedPreconditionError, match=f"Backup {pending.backup_id} is not completed"):
        pc.create_index_from_backup(name="early", backup_id=pending.backup_id, timeout=-1)
    status, body = api_call(emulator, "POST", f"/backups/{pending.backup_id}/create-index", {"name": "early"})
    assert (status, body) == (412, error(412, "FAILED_PRECONDITION", f"Backup {pending.backup_id} is not completed"))
    # A backup that fails settles on InitializationFailed (10.x SDK Backups.create).
    pc.indexes.create(name="broken", schema=SCHEMA, deployment=MANAGED, timeout=-1)
    failed = pc.backups.create(index_name="broken")
    clock_ahead(emulator, 2 * HOUR)
    assert pc.backups.describe(backup_id=pending.backup_id).status == "Ready"
    assert pc.backups.describe(backup_id=failed.backup_id).status == "InitializationFailed"
    with pytest.raises(FailedPreconditionError):
        pc.create_index_from_backup(name="never", backup_id=failed.backup_id, timeout=-1)
    pc.close()


def test_a_failed_restore_and_a_restore_whose_index_is_deleted(make_pinecone_emulator):
    emulator = make_pinecone_emulator(restore_delay=HOUR, fail_initialization=["doomed"])
    pc = Pinecone(api_key=TEST_API_KEY, host=emulator.url)
    pc.indexes.create(name="src", schema=SCHEMA, deployment=MANAGED, timeout=-1)
    backup = pc.backups.create(index_name="src")
    doomed = pc.create_index_from_backup(name="doomed", backup_id=backup.backup_id, timeout=-1)
    gone = pc.create_index_from_backup(name="gone", backup_id=backup.backup_id, timeout=-1)
    # The target of a running restore is deleted: the job no longer holds the backup, and it is
    # left out of listings and answered 404 (10.x SDK RestoreJobs.list and describe).
    pc.indexes.delete("gone", timeout=-1)
    with pytest.raises(NotFoundError):
        pc.restore_jobs.describe(job_id=gone.restore_job_id)
    assert [j.restore_job_id for j in pc.restore_jobs.list()] == [doomed.restore_job_id]
    with pytest.raises(FailedPreconditionError):  # the restore into "doomed" still runs
        pc.backups.delete(backup_id=backup.backup_id)
    clock_ahead(emulator, 2 * HOUR)
    job = pc.restore_jobs.describe(job_id=doomed.restore_job_id)
    assert (job.status, job.percent_complete) == ("Failed", None)
    assert pc.indexes.describe("doomed").status.state == "InitializationFailed"
    pc.backups.delete(backup_id=backup.backup_id)
    pc.close()


def test_backups_of_a_deleted_index(pc, emulator):
    first = pc.backups.create(index_name="src", name="one")
    pc.indexes.delete("src", timeout=-1)
    # 10.x SDK Backups.list: without include_deleted a name that no longer resolves is a 404; with
    # it, the backups of every index that used the name, with source_index_deleted_at set.
    with pytest.raises(NotFoundError):
        pc.backups.list(index_name="src")
    kept = pc.backups.list(index_name="src", include_deleted=True)
    assert [b.backup_id for b in kept] == [first.backup_id] and kept[0].source_index_deleted_at
    assert pc.backups.describe(backup_id=first.backup_id).source_index_deleted_at
    # A new index of the same name lists only its own backups unless include_deleted is given.
    pc.indexes.create(name="src", schema=SCHEMA, deployment=MANAGED, timeout=-1)
    second = pc.backups.create(index_name="src", name="two")
    assert [b.backup_id for b in pc.backups.list(index_name="src")] == [second.backup_id]
    assert len(pc.backups.list(index_name="src", include_deleted=True)) == 2
    # The backup outlives its index: it restores.
    pc.create_index_from_backup(name="revived", backup_id=first.backup_id, timeout=5)
    assert pc.index(name="revived").describe_index_stats().total_vector_count == 2
    # Pagination (limit, pagination.next) over the project's backups.
    page = pc.backups.list(limit=1)
    assert len(page) == 1 and page.pagination and page.pagination.next
    rest = pc.backups.list(pagination_token=page.pagination.next)
    assert {page[0].backup_id, rest[0].backup_id} == {first.backup_id, second.backup_id}
    # 2025-10 has no source_index_deleted_at and no include_deleted.
    _, described = api_call(emulator, "GET", f"/backups/{first.backup_id}")
    assert "source_index_deleted_at" not in described and described["dimension"] == 2


def test_backup_schedules_are_not_served_and_say_so(pc, emulator):
    # Backup schedules (10.x SDK client/backup_schedules.py) are not emulated: 501, not a 404 that
    # would read as a missing index.
    with pytest.raises(ApiError) as refused:
        pc.backup_schedules.create(index_name="src", name="nightly", frequency="daily", retention_days=7)
    assert refused.value.status_code == 501 and "Backup schedules" in refused.value.message
    for method, path in (("GET", "/indexes/src/backup-schedules"), ("GET", "/backup-schedules/s1"),
                         ("DELETE", "/backup-schedules/s1"), ("GET", "/backup-schedules/s1/history")):
        status, body = api_call(emulator, method, path, version="2026-07")
        assert status == 501 and body["error"]["code"] == "UNIMPLEMENTED", (method, path)
