"""Backups end to end in local mode: `pinery run` as its own process, kubectl with the examples,
the `pinecone` 10.x SDK as the application. Records are upserted, backed up, more are upserted,
and the index restored from the backup holds exactly the backup's records and answers queries
as the source did when it was backed up."""

from __future__ import annotations

import pytest
import yaml
from pinecone import Pinecone

from tests.e2e.conftest import EXAMPLES, LocalMode, example
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

QUERIES = {"n1": [[1.0, 0.0, 0.0, 0.0], [0.2, 0.9, 0.1, 0.0]], "n2": [[0.0, 0.0, 1.0, 0.5]]}


def vector(i: int) -> list[float]:
    return [float((i * k) % 7 + 1) / 7 for k in (1, 2, 3, 5)]  # never all zeros, which Pinecone refuses


def answers(index, top_k: int = 5) -> dict:
    out = {}
    for ns, queries in QUERIES.items():
        for q in queries:
            found = index.query(vector=q, top_k=top_k, namespace=ns, include_metadata=True)
            out[(ns, tuple(q))] = [(m.id, round(m.score, 5), dict(m.metadata or {})) for m in found.matches]
    return out


def all_ids(index, namespace: str) -> set[str]:
    return {item.id for page in index.list(namespace=namespace) for item in page.vectors}


def test_upsert_back_up_upsert_more_restore_and_find_exactly_the_backup(local_mode: LocalMode):
    kubectl = local_mode.kubectl
    kubectl.apply(example("vectorindex-serverless.yaml", spec_dimension=4, metadata_name="docs-search"))
    kubectl.wait_for("vi/docs-search", "Ready", timeout=60)
    source = kubectl.get("vi/docs-search")
    pc = Pinecone(api_key=local_mode.cluster.state.api_key, host=local_mode.cluster.pinecone_url)
    try:
        index = pc.index(host=source["status"]["host"])
        index.upsert(vectors=[(f"a{i}", vector(i), {"i": i, "kind": "odd" if i % 2 else "even"}) for i in range(1, 31)], namespace="n1")
        index.upsert(vectors=[(f"b{i}", vector(i + 3), {"i": i}) for i in range(1, 11)], namespace="n2")
        wait_for(lambda: index.describe_index_stats().total_vector_count == 40, timeout=20, what="40 records")
        at_backup = answers(index)
        ids_at_backup = {ns: all_ids(index, ns) for ns in ("n1", "n2")}

        # the example's backup by hand (the schedule beside it runs at 03:00 Berlin, not now)
        docs = list(yaml.safe_load_all((EXAMPLES / "vectorindex-backup-schedule.yaml").read_text()))
        kubectl.apply(*docs)
        kubectl.wait_for("vib/docs-search-before-migration", "Ready", timeout=60)
        backup = kubectl.get("vib/docs-search-before-migration")["status"]
        assert (backup["recordCount"], backup["namespaceCount"], backup["dimension"]) == (40, 2, 4)
        listed = kubectl("get", "vib").stdout
        assert "docs-search-before-migration" in listed and "Ready" in listed and "40" in listed
        schedule = kubectl.get("vibs/docs-search-nightly")["status"]
        assert schedule["nextScheduleTime"] and next(c for c in schedule["conditions"] if c["type"] == "Ready")["reason"] == "Scheduled"

        # after the backup: not in the restored index
        index.upsert(vectors=[("late", [1.0, 0.0, 0.0, 0.0], {"i": 99})], namespace="n1")
        index.delete(ids=["a1", "a2"], namespace="n1")
        wait_for(lambda: index.describe_index_stats().total_vector_count == 39, timeout=20, what="39 records")

        kubectl("apply", "-f", str(EXAMPLES / "vectorindex-restore.yaml"))
        kubectl.wait_for("vi/docs-search-restored", "Ready", timeout=90)
        restored = kubectl.get("vi/docs-search-restored")["status"]
        assert restored["restore"]["backupId"] == backup["backupId"] and restored["restore"]["state"] == "Completed"
        copy = pc.index(host=restored["host"])
        assert {ns: all_ids(copy, ns) for ns in ("n1", "n2")} == ids_at_backup
        assert answers(copy) == at_backup
        conn = kubectl.get("configmap/docs-search-restored-connection")["data"]
        assert conn["PINECONE_INDEX_HOST"] == restored["host"] and conn["PINECONE_DENSE_FIELD"] == "_values"

        # Retain: deleting the object keeps the Pinecone backup; the restored index goes with its object
        kubectl("delete", "-f", str(EXAMPLES / "vectorindex-restore.yaml"), "--timeout=60s")
        kubectl("delete", "-f", "-", "--timeout=60s", input=yaml.safe_dump_all(docs))
        assert [b.backup_id for b in pc.indexes.list_backups("docs-search")] == [backup["backupId"]]
        assert not pc.indexes.exists("docs-search-restored")
    finally:
        pc.close()
