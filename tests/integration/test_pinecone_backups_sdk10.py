"""A backup and a restore from start to finish, driven by the real `pinecone` 10.x SDK (API 2026-07)
in-process, as the backup operator drives them: records in several namespaces with sparse values
and metadata, a backup, more writes, a restore into a new index followed through its restore job,
and the restored index holding exactly the records, and giving exactly the query answers, that
the source had when the backup was taken.

The SDK calls are the 10.2.0 wheel's: `pc.backups.create/describe/list/delete`
(client/backups.py), `pc.create_index_from_backup` (_client.py), `pc.restore_jobs.describe/list`
(client/restore_jobs.py). What they return: models/backups/model.py (BackupModel,
RestoreJobModel, CreateIndexFromBackupResponse).

No test waits on the wall clock: backups and restores take an hour here, and each step is made
to happen by moving the emulator's clock (`clock_ahead`, on the emulator's own loop).
"""

from __future__ import annotations

import pytest
from pinecone import Pinecone
from pinecone.errors.exceptions import FailedPreconditionError, NotFoundError

from tests.support.emulator import TEST_API_KEY, api_call, clock_ahead

HOUR = 3600.0
SCHEMA = {"fields": {"_values": {"type": "dense_vector", "dimension": 4, "metric": "dotproduct"},
                     "_sparse_values": {"type": "sparse_vector"}}}
MANAGED = {"deployment_type": "managed", "cloud": "aws", "region": "us-east-1"}
NAMESPACES = {
    "films": [
        {"id": "f1", "values": [1.0, 0.0, 0.0, 0.0], "sparse_values": {"indices": [3, 9], "values": [0.5, 1.5]},
         "metadata": {"genre": "drama", "year": 1994, "tags": ["a", "b"]}},
        {"id": "f2", "values": [0.6, 0.8, 0.0, 0.0], "metadata": {"genre": "comedy", "year": 2001}},
        {"id": "f3", "values": [0.0, 1.0, 0.0, 0.0], "sparse_values": {"indices": [9], "values": [2.0]},
         "metadata": {"genre": "drama", "year": 2010, "seen": True}},
    ],
    "books": [
        {"id": "b1", "values": [0.0, 0.0, 1.0, 0.0], "metadata": {"author": "x"}},
        {"id": "b2", "values": [0.0, 0.0, 0.6, 0.8], "sparse_values": {"indices": [1], "values": [0.25]}},
    ],
    "": [{"id": "d1", "values": [0.5, 0.5, 0.5, 0.5], "metadata": {"kind": "default"}}],
}
QUERIES = [
    {"vector": [1.0, 0.5, 0.0, 0.0], "top_k": 10},
    {"vector": [1.0, 0.5, 0.0, 0.0], "sparse_vector": {"indices": [9], "values": [1.0]}, "top_k": 2},
    {"vector": [0.2, 0.2, 0.9, 0.1], "top_k": 10, "filter": {"genre": {"$eq": "drama"}}},
]


@pytest.fixture
def emulator(make_pinecone_emulator):
    """Indexes are ready at once; backups and restores take an hour unless the clock is moved."""
    return make_pinecone_emulator(backup_delay=HOUR, restore_delay=HOUR)


@pytest.fixture
def pc(emulator):
    client = Pinecone(api_key=TEST_API_KEY, host=emulator.url)
    yield client
    client.close()


def records(pc: Pinecone, name: str) -> dict[str, dict]:
    """Every record of every namespace: {namespace: {id: (values, sparse, metadata)}}."""
    index = pc.index(name=name)
    out: dict = {}
    for ns in index.describe_index_stats().namespaces:
        ids = [v.id for page in index.list(namespace=ns) for v in page.vectors]
        fetched = index.fetch(ids=ids, namespace=ns).vectors
        out[ns] = {i: (list(v.values), v.sparse_values and (list(v.sparse_values.indices), list(v.sparse_values.values)),
                       v.metadata) for i, v in fetched.items()}
    return out


def answers(pc: Pinecone, name: str) -> list:
    """The matches (id, score, metadata) of every query in every namespace."""
    index = pc.index(name=name)
    out = []
    for ns in ("films", "books", ""):
        for query in QUERIES:
            result = index.query(namespace=ns, include_metadata=True, **query)
            out.append([(m.id, round(m.score, 6), m.metadata) for m in result.matches])
    return out


def test_backup_then_restore_gives_back_the_records_as_they_were(pc, emulator):
    pc.indexes.create(name="catalog", schema=SCHEMA, deployment=MANAGED, tags={"team": "search"}, timeout=-1)
    source = pc.index(name="catalog")
    for ns, vectors in NAMESPACES.items():
        source.upsert(vectors=vectors, namespace=ns)
    before, asked = records(pc, "catalog"), answers(pc, "catalog")
    assert sum(len(v) for v in before.values()) == 6

    backup = pc.backups.create(index_name="catalog", name="nightly", description="before the change")
    assert (backup.status, backup.source_index_name, backup.name, backup.description) == (
        "Initializing", "catalog", "nightly", "before the change")
    assert (backup.record_count, backup.namespace_count, backup.cloud, backup.region) == (6, 3, "aws", "us-east-1")
    assert backup.size_bytes > 6 * 4 * 4 and backup.tags == {"team": "search"} and backup.source_index_deleted_at is None
    assert backup.schema.fields["_values"].dimension == 4 and backup.schema.fields["_values"].metric == "dotproduct"
    assert "_sparse_values" in backup.schema.fields
    # A backup that is not Ready cannot be restored (docs.pinecone.io 2026-07 create_index_from_backup: 412).
    with pytest.raises(FailedPreconditionError) as refused:
        pc.create_index_from_backup(name="too-early", backup_id=backup.backup_id, timeout=-1)
    assert refused.value.status_code == 412 and "is not completed" in refused.value.message
    assert not pc.indexes.exists("too-early")

    # Writes after the backup do not reach it.
    source.upsert(vectors=[{"id": "f9", "values": [1.0, 1.0, 1.0, 1.0]}], namespace="films")
    source.upsert(vectors=[{"id": "f1", "values": [0.0, 0.0, 0.0, 1.0], "metadata": {"genre": "changed"}}], namespace="films")
    source.delete(ids=["b1"], namespace="books")
    source.upsert(vectors=[{"id": "n1", "values": [0.1, 0.2, 0.3, 0.4]}], namespace="later")

    clock_ahead(emulator, 2 * HOUR)
    ready = pc.backups.describe(backup_id=backup.backup_id)
    assert ready.status == "Ready" and (ready.record_count, ready.namespace_count) == (6, 3)
    assert ready.size_bytes == backup.size_bytes
    assert [b.backup_id for b in pc.backups.list(index_name="catalog")] == [backup.backup_id]
    assert [b.backup_id for b in pc.backups.list()] == [backup.backup_id]

    started = pc.create_index_from_backup(name="catalog-restored", backup_id=backup.backup_id, timeout=-1)
    job_id = started.restore_job_id
    job = pc.restore_jobs.describe(job_id=job_id)
    # 2026-07 (10.x SDK RestoreJobModel): "a restore that is actively running reports Pending";
    # percent_complete and completed_at are None until Completed.
    assert (job.status, job.percent_complete, job.completed_at) == ("Pending", None, None)
    assert (job.backup_id, job.target_index_name, job.target_index_id) == (
        backup.backup_id, "catalog-restored", started.index_id)
    restored = pc.indexes.describe("catalog-restored")
    assert (restored.status.ready, restored.status.state) == (False, "Initializing")
    assert restored.source_backup_id == backup.backup_id
    # The data plane of an index being restored answers as for any index that is not ready.
    status, body = api_call(emulator, "POST", "/index/default/catalog-restored/describe_index_stats", {}, "2026-07")
    assert status == 503 and "not ready (state Initializing)" in body["message"]
    # The backup cannot go while a restore from it runs (2025-10 spec delete_backup 412).
    with pytest.raises(FailedPreconditionError) as blocked:
        pc.backups.delete(backup_id=backup.backup_id)
    assert job_id in blocked.value.message and "pending restore jobs" in blocked.value.message

    # Half way and three quarters of the way: still Pending under 2026-07; 2025-10 shows the progress.
    clock_ahead(emulator, 0.75 * HOUR)
    assert pc.restore_jobs.describe(job_id=job_id).status == "Pending"
    _, halfway = api_call(emulator, "GET", f"/restore-jobs/{job_id}")
    assert halfway["status"] == "InProgress" and 0 < halfway["percent_complete"] < 100
    clock_ahead(emulator, 0.9 * HOUR)
    _, later = api_call(emulator, "GET", f"/restore-jobs/{job_id}")
    assert halfway["percent_complete"] < later["percent_complete"] < 100 and "completed_at" not in later
    assert not pc.indexes.describe("catalog-restored").status.ready

    clock_ahead(emulator, 2 * HOUR)
    done = pc.restore_jobs.describe(job_id=job_id)
    assert (done.status, done.percent_complete) == ("Completed", 100.0) and done.completed_at
    assert [j.restore_job_id for j in pc.restore_jobs.list()] == [job_id]
    restored = pc.indexes.describe("catalog-restored")
    assert restored.status.ready and restored.status.state == "Ready"
    assert restored.schema.fields["_values"].dimension == 4 and "_sparse_values" in restored.schema.fields
    assert restored.tags == {"team": "search"}  # "When omitted, the server copies the backup's tags."
    assert records(pc, "catalog-restored") == before
    assert answers(pc, "catalog-restored") == asked
    assert records(pc, "catalog") != before  # the source went on changing

    pc.backups.delete(backup_id=backup.backup_id)
    with pytest.raises(NotFoundError):
        pc.backups.describe(backup_id=backup.backup_id)
    assert records(pc, "catalog-restored") == before  # a restored index outlives its backup


def test_a_zero_restore_delay_is_over_at_once(make_pinecone_emulator):
    emulator = make_pinecone_emulator(backup_delay=0.0, restore_delay=0.0)
    pc = Pinecone(api_key=TEST_API_KEY, host=emulator.url)
    pc.indexes.create(name="small", schema=SCHEMA, deployment=MANAGED, timeout=-1)
    pc.index(name="small").upsert(vectors=NAMESPACES["books"], namespace="books")
    backup = pc.backups.create(index_name="small")
    assert backup.status == "Initializing" and backup.name is None  # the answer to create, as the SDK documents it
    assert pc.backups.describe(backup_id=backup.backup_id).status == "Ready"
    index = pc.create_index_from_backup(name="small-copy", backup_id=backup.backup_id, tags={"copy": "yes"},
                                        deletion_protection="enabled", timeout=5)
    assert index.status.ready and index.tags == {"copy": "yes"} and index.deletion_protection == "enabled"
    assert records(pc, "small-copy") == records(pc, "small")
    pc.close()
