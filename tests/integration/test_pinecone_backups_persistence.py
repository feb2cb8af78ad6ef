"""Backups and restores survive a restart of the emulator on the same state directory (seen
through the `pinecone` 10.x SDK, API 2026-07, in-process): a backup keeps its snapshot (in
`data/backup-<id>.npz`) and its description, and a restore under way goes on where it was.
No test waits on the wall clock (`clock_ahead` moves the emulator's)."""

from __future__ import annotations

from pinecone import Pinecone

from tests.support.emulator import TEST_API_KEY, clock_ahead

HOUR = 3600.0
SCHEMA = {"fields": {"_values": {"type": "dense_vector", "dimension": 3, "metric": "dotproduct"},
                     "_sparse_values": {"type": "sparse_vector"}}}
MANAGED = {"deployment_type": "managed", "cloud": "gcp", "region": "us-central1"}
VECTORS = {
    "a": [{"id": "1", "values": [1.0, 0.0, 0.0], "sparse_values": {"indices": [4], "values": [0.5]},
           "metadata": {"genre": "drama", "year": 1999}}],
    "b": [{"id": "2", "values": [0.0, 1.0, 0.0], "metadata": {"tags": ["x", "y"]}},
          {"id": "3", "values": [0.0, 0.0, 1.0]}],
}


def snapshot(pc: Pinecone, name: str) -> dict:
    index = pc.index(name=name)
    out = {}
    for ns, vectors in VECTORS.items():
        fetched = index.fetch(ids=[v["id"] for v in vectors], namespace=ns).vectors
        out[ns] = {i: (list(v.values), v.sparse_values and list(v.sparse_values.indices), v.metadata)
                   for i, v in fetched.items()}
    return out


def client(emulator) -> Pinecone:
    return Pinecone(api_key=TEST_API_KEY, host=emulator.url)


def test_a_backup_keeps_its_snapshot_across_a_restart(make_pinecone_emulator, tmp_path):
    state = tmp_path / "state"
    first = make_pinecone_emulator(state_dir=state, backup_delay=0.0, restore_delay=0.0)
    pc = client(first)
    pc.indexes.create(name="src", schema=SCHEMA, deployment=MANAGED, tags={"k": "v"}, timeout=-1)
    for ns, vectors in VECTORS.items():
        pc.index(name="src").upsert(vectors=vectors, namespace=ns)
    taken = snapshot(pc, "src")
    backup = pc.backups.create(index_name="src", name="keep", description="kept")
    pc.index(name="src").delete(ids=["2", "3"], namespace="b")  # after the backup
    pc.indexes.delete("src", timeout=-1)
    first.stop_thread()

    second = make_pinecone_emulator(state_dir=state, backup_delay=0.0, restore_delay=0.0)
    pc = client(second)
    again = pc.backups.describe(backup_id=backup.backup_id)
    assert (again.status, again.name, again.description, again.record_count, again.namespace_count) == (
        "Ready", "keep", "kept", 3, 2)
    assert (again.size_bytes, again.cloud, again.region, again.tags) == (backup.size_bytes, "gcp", "us-central1", {"k": "v"})
    assert again.source_index_deleted_at and again.schema.fields["_values"].metric == "dotproduct"
    assert (state / "data" / f"backup-{backup.backup_id}.npz").exists()
    restored = pc.create_index_from_backup(name="back", backup_id=backup.backup_id, timeout=5)
    assert restored.status.ready and restored.deployment.cloud == "gcp"
    assert snapshot(pc, "back") == taken


def test_a_restore_under_way_goes_on_after_a_restart(make_pinecone_emulator, tmp_path):
    state = tmp_path / "state"
    first = make_pinecone_emulator(state_dir=state, backup_delay=0.0, restore_delay=HOUR)
    pc = client(first)
    pc.indexes.create(name="src", schema=SCHEMA, deployment=MANAGED, timeout=-1)
    for ns, vectors in VECTORS.items():
        pc.index(name="src").upsert(vectors=vectors, namespace=ns)
    taken = snapshot(pc, "src")
    backup = pc.backups.create(index_name="src")
    assert pc.backups.describe(backup_id=backup.backup_id).status == "Ready"
    job = pc.create_index_from_backup(name="dst", backup_id=backup.backup_id, timeout=-1)
    first.stop_thread()

    second = make_pinecone_emulator(state_dir=state, backup_delay=0.0, restore_delay=HOUR)
    pc = client(second)
    assert pc.restore_jobs.describe(job_id=job.restore_job_id).status == "Pending"
    assert pc.indexes.describe("dst").status.state == "Initializing"
    clock_ahead(second, 2 * HOUR)
    assert pc.restore_jobs.describe(job_id=job.restore_job_id).status == "Completed"
    assert pc.indexes.describe("dst").status.ready
    assert snapshot(pc, "dst") == taken
    second.stop_thread()

    third = make_pinecone_emulator(state_dir=state)
    pc = client(third)
    assert pc.restore_jobs.describe(job_id=job.restore_job_id).percent_complete == 100.0
    assert snapshot(pc, "dst") == taken  # the restored records were written to the state directory
