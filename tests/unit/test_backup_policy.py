"""The pure decisions of a VectorIndexBackup and of a VectorIndex restored from a backup,
table-driven. Pinecone's shapes are the 10.x SDK's (pinecone/models/backups/model.py BackupModel,
RestoreJobModel) and the 2025-10 spec's."""

import pytest

from pinery.api.vectorindex import VectorIndexSpec
from pinery.backups.backup_policy import backup_name, decide_backup, facts
from pinery.backups.status import backup_phase, next_backup_status
from pinery.vectorindex import restore
from pinery.vectorindex.decisions import Identity, decide
from pinery.vectorindex.schedule import Timing
from pinery.vectorindex.status import phase

T = Timing(create_landing=60.0)
NOW = 1_800_000_000.0
SENT = "2027-01-15T08:00:00Z"  # 1_800_000_000 is 2027-01-15T08:00:00Z
DENSE = {"type": "dense_vector", "dimension": 8, "metric": "cosine", "description": None}


def pinecone_backup(status="Ready", fields=None, **kw):
    return {"backup_id": "b-1", "source_index_name": "docs", "source_index_id": "i-1", "name": "docs-monday-1a2b3c4d",
            "status": status, "cloud": "aws", "region": "us-east-1", "record_count": 3, "namespace_count": 2,
            "size_bytes": 512, "schema": {"fields": fields or {"_values": DENSE}}, "created_at": "2027-01-15T08:00:01Z", **kw}


SERVERLESS_INDEX = {"name": "docs", "deployment": {"deployment_type": "managed"}}


@pytest.mark.parametrize(
    "kw, action, reason",
    [
        # a first pass: the index is there and serverless (or BYOC): one create
        (dict(index=SERVERLESS_INDEX, index_kind="serverless"), "create", "Creating"),
        (dict(index=SERVERLESS_INDEX, index_kind="byoc"), "create", "Creating"),
        (dict(index={"name": "docs"}, index_kind="pod"), "refuse", "NotSupported"),
        (dict(index=None, index_kind=None), "wait", "IndexNotFound"),
        # a create was sent and no backup is listed yet: wait while one could still appear ...
        (dict(create_sent_at=SENT, index=SERVERLESS_INDEX, index_kind="serverless", now=NOW + 30), "wait", "Creating"),
        # ... then ask again
        (dict(create_sent_at=SENT, index=SERVERLESS_INDEX, index_kind="serverless", now=NOW + 61), "create", "Creating"),
        # the backup found by name, or described by id
        (dict(backup=pinecone_backup("Initializing"), create_sent_at=SENT), "wait", "Creating"),
        (dict(backup=pinecone_backup(), known_id="b-1"), "none", "BackupReady"),
        (dict(backup=pinecone_backup("Failed"), known_id="b-1"), "refuse", "BackupFailed"),
        (dict(backup=pinecone_backup("InitializationFailed"), known_id="b-1"), "refuse", "BackupFailed"),  # the 10.x SDK's word
        # a backup gone from Pinecone is not made again
        (dict(known_id="b-1", index=SERVERLESS_INDEX, index_kind="serverless"), "refuse", "BackupNotFound"),
    ],
)
def test_decide_backup(kw, action, reason):
    args = dict(backup=None, known_id=None, create_sent_at=None, index=None, index_kind=None, index_name="docs", now=NOW, timing=T)
    step = decide_backup(**{**args, **kw})
    assert (step.action, step.ready[1]) == (action, reason)
    assert (step.requeue is None) == (action in ("none", "refuse"))


def test_the_backup_name_is_the_objects_and_unique_to_it():
    assert backup_name("docs-monday", "1a2b3c4d-0000-4000-8000-000000000000") == "docs-monday-1a2b3c4d"


@pytest.mark.parametrize(
    "found, dimension, metric",
    [
        (pinecone_backup(), 8, "cosine"),
        (pinecone_backup(fields={"_sparse_values": {"type": "sparse_vector"}}), None, "dotproduct"),
        ({**pinecone_backup(fields={}), "dimension": 16, "metric": "euclidean"}, 16, "euclidean"),  # 2025-10 shape
    ],
)
def test_facts_read_dimension_and_metric_from_either_shape(found, dimension, metric):
    got = facts(found)
    assert (got["dimension"], got["metric"], got["recordCount"], got["namespaceCount"]) == (dimension, metric, 3, 2)


@pytest.mark.parametrize(
    "reason, status, expected",
    [("BackupReady", "True", "Ready"), ("Creating", "False", "Creating"), ("IndexNotFound", "False", "Pending"),
     ("PineconeUnavailable", "False", "Pending"), ("NotSupported", "False", "Failed"), ("QuotaExceeded", "False", "Failed"),
     ("BackupNotFound", "False", "Failed")],
)
def test_backup_phase(reason, status, expected):
    new = next_backup_status({}, 1, (status, reason, "m"))
    assert new["phase"] == backup_phase(new["conditions"]) == expected


# --- restore -------------------------------------------------------------------------------

WHO = Identity("prod", "search", "copy")


def restore_spec(**kw):
    return VectorIndexSpec.model_validate({"serverless": {"cloud": "aws", "region": "us-east-1"}, "restoreFrom": {"backupId": "b-1"}, **kw})


@pytest.mark.parametrize(
    "the_spec, differences",
    [
        (restore_spec(), []),  # the shape comes from the backup
        (restore_spec(dimension=8, metric="cosine"), []),
        (restore_spec(dimension=16), ["dimension"]),
        (restore_spec(metric="dotproduct"), ["metric"]),
        (restore_spec(vectorType="sparse"), ["vectorType"]),
        (restore_spec(serverless={"cloud": "gcp", "region": "us-central1"}), ["serverless.cloud", "serverless.region"]),
        (restore_spec(textFields=[{"name": "body"}]), ["vector field names", "textFields"]),
    ],
)
def test_a_spec_that_contradicts_the_backup_is_named_by_field(the_spec, differences):
    found = restore.differences(the_spec, pinecone_backup())
    assert [d.split(":")[0] for d in found] == differences
    assert all("backup has" in d for d in found)


@pytest.mark.parametrize(
    "view, action, reason",
    [
        (None, "wait", "Restoring"),
        (restore.RestoreView(waiting=("False", "Restoring", "VectorIndexBackup default/monday is Creating")), "wait", "Restoring"),
        (restore.RestoreView("b-1", None), "refuse", "BackupNotFound"),
        (restore.RestoreView("b-1", pinecone_backup("Initializing")), "wait", "Restoring"),
        (restore.RestoreView("b-1", pinecone_backup()), "restore", "Restoring"),
    ],
)
def test_an_absent_index_is_restored_once_its_backup_is_ready(view, action, reason):
    step = decide(restore_spec(), WHO, None, restoring=view, timing=T)
    assert (step.action, step.ready[1]) == (action, reason)
    if action == "restore":
        assert step.request == {"backup_id": "b-1", "name": "copy", "deletion_protection": "disabled", "tags": WHO.tags()}
        assert step.events[0].reason == "Restoring" and step.restore == {"backupId": "b-1"}


def restored_index(ready):
    return {"name": "copy", "host": "copy.svc", "status": {"ready": ready, "state": "Ready" if ready else "Initializing"},
            "schema": {"fields": {"_values": DENSE}}, "deployment": {"deployment_type": "managed", "cloud": "aws", "region": "us-east-1"},
            "deletion_protection": "disabled", "tags": WHO.tags(), "read_capacity": None}


def job(status, pct):
    return {"restore_job_id": "j-1", "backup_id": "b-1", "target_index_name": "copy", "status": status, "percent_complete": pct}


@pytest.mark.parametrize(
    "index, the_job, action, reason, shown",
    [
        (restored_index(False), job("InProgress", 40.0), "wait", "Restoring", "Restoring"),
        (restored_index(True), job("Completed", 100.0), "none", "IndexReady", "Ready"),
        (restored_index(False), job("Failed", 40.0), "refuse", "RestoreFailed", "Failed"),
        (restored_index(False), job("Cancelled", None), "refuse", "RestoreFailed", "Failed"),
        (restored_index(False), job("Pending", None), "wait", "Restoring", "Restoring"),  # 2026-07: no progress until done
        (restored_index(False), None, "wait", "Creating", "Creating"),  # the job is not known: the index's state says it
    ],
)
def test_a_restore_in_progress_is_its_own_phase(index, the_job, action, reason, shown):
    step = decide(restore_spec(), WHO, index, known_index_name="copy", restore_job=the_job, timing=T)
    assert (step.action, step.ready[1]) == (action, reason)
    assert phase([{"type": "Ready", "status": step.ready[0], "reason": step.ready[1]},
                  {"type": "Synced", "status": step.synced[0], "reason": step.synced[1]}]) == shown
    if the_job is not None and action != "refuse":
        expected = {"backupId": "b-1", "restoreJobId": "j-1", "state": the_job["status"], "percentComplete": the_job["percent_complete"]}
        assert step.restore == {k: v for k, v in expected.items() if v is not None}
        if action == "wait" and the_job["percent_complete"] is not None:
            assert "40% done" in step.ready[2]
