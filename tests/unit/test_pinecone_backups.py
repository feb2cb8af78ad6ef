"""The emulator's backup and restore-job rules as pure functions and store transitions: progress,
the two API versions' views of a restore job and a backup, snapshot sizes, BYOC locations, the
admin settings, and what finishing a restore or deleting a source index does to the store.

Sources: the 2025-10 spec's RestoreJobModel (`percent_complete` 0 to 100) and BackupModel; the
10.x SDK's models/backups/model.py (2026-07: no in-progress status, `percent_complete` 100 once
Completed and None before, `tags` null, `source_index_deleted_at`).
"""

from __future__ import annotations

import pytest

from pinery.local.pinecone import render, transitions, v2026_07
from pinery.local.pinecone.backups import byoc_location, snapshot_size
from pinery.local.pinecone.context import Settings
from pinery.local.pinecone.state import BackupRecord, IndexRecord, RestoreJobRecord, Store
from pinery.local.pinecone.vectors import IndexData, Record


def job(state: str = "Pending", percent: float = 0.0) -> RestoreJobRecord:
    return RestoreJobRecord(restore_job_id="j", project="p", backup_id="b", target_index_name="t",
                            target_index_id="t1", created_at="2026-01-01T00:00:00.000000Z", started=150.0,
                            finishes=200.0, state=state, schedule=transitions.restore(100.0, 100.0, False)
                            if state == "Pending" else [], percent_complete=percent)


def backup(**changes) -> BackupRecord:
    fields = dict(backup_id="b", project="p", source_index_name="src", source_index_id="s1", cloud="aws",
                  region="us-east-1", dimension=2, metric="cosine", vector_type="dense", record_count=2,
                  namespace_count=1, size_bytes=10, created_at="t", data_key="backup-b", state="Ready")
    return BackupRecord(**{**fields, **changes})


@pytest.mark.parametrize("now, expected", [(100.0, 0.0), (150.0, 0.0), (175.0, 50.0), (199.99, 99.9), (500.0, 99.9)])
def test_progress_grows_while_in_progress_and_stops_short_of_100(now, expected):
    assert transitions.progress(150.0, 200.0, now) == expected


def test_a_restore_is_pending_then_in_progress_then_over():
    steps = transitions.restore(100.0, 100.0, fail=False)
    assert [transitions.settle("Pending", steps, t)[0] for t in (120.0, 160.0, 200.0)] == ["Pending", "InProgress", "Completed"]
    assert transitions.restore(100.0, 100.0, fail=True)[-1] == ["Failed", 200.0]
    assert transitions.settle("Pending", transitions.restore(100.0, 0.0, False), 100.0)[0] == "Completed"


@pytest.mark.parametrize("state, percent, v2025, v2026", [
    ("Pending", 0.0, ("Pending", 0.0, False), ("Pending", None, None)),
    ("InProgress", 42.2, ("InProgress", 42.2, False), ("Pending", None, None)),
    ("Completed", 99.9, ("Completed", 100.0, True), ("Completed", 100.0, "1970-01-01T00:03:20.000000Z")),
    ("Failed", 30.0, ("Failed", 30.0, True), ("Failed", None, "1970-01-01T00:03:20.000000Z")),
])
def test_a_restore_job_in_each_version(state, percent, v2025, v2026):
    old = render.restore_job(job(state, percent))
    assert (old["status"], old["percent_complete"], "completed_at" in old) == v2025
    new = v2026_07.restore_job(job(state, percent))
    assert (new["status"], new["percent_complete"], new["completed_at"]) == v2026


def test_a_backup_in_each_version():
    old = render.backup(backup(tags=None, source_index_deleted_at=0.0))
    assert old["dimension"] == 2 and old["metric"] == "cosine" and "tags" not in old
    assert "source_index_deleted_at" not in old
    new = v2026_07.backup(backup(tags=None, source_index_deleted_at=0.0))
    assert new["tags"] is None and new["source_index_deleted_at"] == "1970-01-01T00:00:00.000000Z"
    assert "dimension" not in new and new["schema"]["fields"]["_values"]["metric"] == "cosine"
    embedded = v2026_07.backup(backup(embed={"model": "llama-text-embed-v2", "metric": "cosine",
                                             "field_map": {"text": "body"}}))
    assert embedded["schema"]["fields"]["body"]["type"] == "semantic_text"


def test_snapshot_size_counts_ids_values_sparse_values_and_metadata():
    data = IndexData(2)
    data.namespace("ns", create=True).upsert([
        Record("ab", [1.0, 0.0], None, {"k": 1}),
        Record("c", [0.0, 1.0], ([3, 4], [0.5, 0.5]), None)])
    assert snapshot_size(data) == (2 + 8 + len('{"k":1}')) + (1 + 8 + 16)
    assert snapshot_size(IndexData(2)) == 0


@pytest.mark.parametrize("environment, expected", [
    ("aws-us-east-1-b921", ("aws", "us-east-1")),
    ("gcp-us-central1-4a9f", ("gcp", "us-central1")),
    ("my-own-cloud", ("my-own-cloud", "my-own-cloud")),
])
def test_byoc_location(environment, expected):
    assert byoc_location(environment) == expected


def test_backup_settings():
    settings = Settings()
    assert (settings.backup_quota, settings.backups_allowed, settings.fail_backups) == (None, True, set())
    settings.update({"backup_quota": "3", "backups_allowed": False, "fail_backups": ["x"]})
    assert (settings.backup_quota, settings.backups_allowed, settings.fail_backups) == (3, False, {"x"})
    assert settings.as_json()["fail_backups"] == ["x"]
    settings.update({"backup_quota": None})
    assert settings.backup_quota is None
    with pytest.raises(ValueError, match="backups_allowed must be true or false"):
        settings.update({"backups_allowed": "no"})


def store_with_a_restore(percent_state: str = "Pending") -> Store:
    store = Store(None)
    snapshot = IndexData(2)
    snapshot.namespace("ns", create=True).upsert([Record("a", [1.0, 0.0], None, {"g": "x"})])
    store.data["backup-b"] = snapshot
    store.backups["b"] = backup()
    store.indexes[("p", "t")] = IndexRecord(id="t1", project="p", name="t", metric="cosine", vector_type="dense",
                                            spec={"serverless": {"cloud": "aws", "region": "us-east-1"}}, dimension=2)
    store.data["t1"] = IndexData(2)
    store.restore_jobs["j"] = job()
    return store


def test_finishing_a_restore_gives_the_index_the_backups_records():
    store = store_with_a_restore()
    store.refresh(175.0)
    assert (store.restore_jobs["j"].state, store.restore_jobs["j"].percent_complete) == ("InProgress", 50.0)
    assert store.indexes[("p", "t")].state == "Initializing" and store.data["t1"].count() == 0
    store.refresh(170.0)  # an earlier clock never takes progress back
    assert store.restore_jobs["j"].percent_complete == 50.0
    store.refresh(200.0)
    assert (store.restore_jobs["j"].state, store.restore_jobs["j"].percent_complete) == ("Completed", 100.0)
    assert store.indexes[("p", "t")].state == "Ready" and store.data["t1"].count() == 1
    store.data["t1"].namespace("ns").delete(["a"])
    assert store.data["backup-b"].count() == 1  # the index has a copy, not the snapshot itself


def test_a_restore_whose_backup_is_gone_fails():
    store = store_with_a_restore()
    del store.data["backup-b"]
    store.refresh(200.0)
    assert store.restore_jobs["j"].state == "Failed" and store.indexes[("p", "t")].state == "InitializationFailed"


def test_deleting_a_source_index_marks_its_backups_and_fails_restores_into_it():
    store = store_with_a_restore()
    store.backups["b"].source_index_id = "t1"  # the index being restored is also the backup's source, for brevity
    rec = store.indexes[("p", "t")]
    rec.state, rec.schedule = transitions.termination(120.0, 0.0)
    store.refresh(130.0)
    assert ("p", "t") not in store.indexes
    assert store.backups["b"].source_index_deleted_at == 130.0
    assert store.restore_jobs["j"].state == "Failed" and store.restore_jobs["j"].schedule == []
