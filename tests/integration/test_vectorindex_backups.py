"""VectorIndexBackup and VectorIndex.spec.restoreFrom through the operator (KopfRunner) and the
emulator: one backup per object however often the operator looks, its status from Pinecone, the
failures a user can hit, deletion by policy, and an index restored from it with the backup's
records (an application on the 10.x SDK upserts and queries)."""

from __future__ import annotations

import pytest
from kubernetes.client.exceptions import ApiException

from pinery.api.base import GROUP, VERSION
from tests.support.vectorindex import API_KEY, NS, World, settle
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

PLURAL = "vectorindexbackups"


def backup(w: World, name: str, **spec) -> dict:
    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "VectorIndexBackup", "metadata": {"name": name}, "spec": spec}
    return w.api.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, body)


def backup_status(w: World, name: str) -> dict:
    try:
        return w.api.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, name).get("status") or {}
    except ApiException as exc:
        if exc.status == 404:
            return {}
        raise


def wait_phase(w: World, name: str, phase: str, timeout: float = 15.0) -> dict:
    return wait_for(lambda: (s := backup_status(w, name)).get("phase") == phase and s, timeout=timeout, interval=0.1,
                    what=f"VectorIndexBackup {name} {phase} (now {backup_status(w, name)})")


def reason(status: dict) -> str:
    return next(c["reason"] for c in status["conditions"] if c["type"] == "Ready")


def pinecone_backups(w: World, index_name: str) -> list:
    pc = w.pinecone()
    try:
        return list(pc.indexes.list_backups(index_name))
    finally:
        pc.close()


def test_a_backup_is_made_once_and_an_index_restored_from_it_has_its_records(vi_world: World):
    w = vi_world
    w.create("products", dimension=3, connectionConfigMap="products-conn")
    source = w.wait_ready("products")
    pc = w.pinecone()
    try:
        index = pc.index(host=source["status"]["host"])
        index.upsert(vectors=[("a", [1.0, 0.0, 0.0], {"color": "red"}), ("b", [0.0, 1.0, 0.0], {"color": "blue"})], namespace="n1")
        index.upsert(vectors=[("c", [0.0, 0.0, 1.0])], namespace="n2")
        wait_for(lambda: index.describe_index_stats().total_vector_count == 3, timeout=10, what="3 records")

        count = w.counting("create_backup")
        backup(w, "products-monday", vectorIndexName="products", description="before the migration")
        done = wait_phase(w, "products-monday", "Ready")
        assert (done["recordCount"], done["namespaceCount"], done["dimension"], done["metric"]) == (3, 2, 3, "cosine")
        assert done["indexName"] == "products" and done["backupId"] and "createSentAt" not in done
        settle(1.0)
        assert count()["create_backup"] == 1  # made once, however often the operator looks
        [made] = pinecone_backups(w, "products")
        assert made.backup_id == done["backupId"] and made.description == "before the migration"

        index.upsert(vectors=[("d", [1.0, 1.0, 0.0])], namespace="n1")  # after the backup: not restored
        w.create("products-restored", restoreFrom={"backupName": "products-monday"})
        restored = w.wait_ready("products-restored", timeout=20)
        assert restored["status"]["restore"]["backupId"] == done["backupId"]
        assert restored["status"]["restore"]["state"] == "Completed"
        assert ("Normal", "Restoring") in {(t, r) for t, r, _ in w.events("products-restored")}
        copy = pc.index(host=restored["status"]["host"])
        stats = copy.describe_index_stats()
        assert {ns: s.vector_count for ns, s in stats.namespaces.items()} == {"n1": 2, "n2": 1}
        found = copy.query(vector=[1.0, 0.1, 0.0], top_k=3, namespace="n1", include_metadata=True)
        assert [(m.id, m.metadata["color"]) for m in found.matches] == [("a", "red"), ("b", "blue")]
    finally:
        pc.close()

    # restoreFrom cannot change, and a spec that contradicts the backup is refused by field
    with pytest.raises(ApiException) as refused:
        w.patch_spec("products-restored", {"restoreFrom": {"backupId": "another"}})
    assert refused.value.status == 422 and "immutable" in refused.value.body
    w.create("wrong-shape", dimension=8, restoreFrom={"backupName": "products-monday"})
    cond = w.wait_condition("wrong-shape", "Ready", "False", "SpecMismatch")
    assert "dimension: spec wants 8, backup has 3" in cond["message"] and w.index("wrong-shape") is None


def test_backup_failures_name_their_cause_and_deletion_follows_the_policy(vi_world: World):
    w = vi_world
    backup(w, "of-nothing", indexName="no-such-index")
    wait_for(lambda: backup_status(w, "of-nothing").get("conditions") and reason(backup_status(w, "of-nothing")) == "IndexNotFound",
             timeout=10, what="IndexNotFound")
    backup(w, "of-no-object", vectorIndexName="absent")
    wait_for(lambda: backup_status(w, "of-no-object").get("conditions")
             and reason(backup_status(w, "of-no-object")) == "VectorIndexNotFound", timeout=10, what="VectorIndexNotFound")

    w.create("pods", pod={"environment": "us-east1-gcp"})
    w.wait_ready("pods")
    backup(w, "of-pods", vectorIndexName="pods")
    failed = wait_phase(w, "of-pods", "Failed")
    assert reason(failed) == "NotSupported" and "pod-based" in next(c["message"] for c in failed["conditions"])

    # Delete (the default) deletes the Pinecone backup with the object; Retain keeps it
    w.create("kept", dimension=3)
    w.wait_ready("kept")
    backup(w, "kept-delete", vectorIndexName="kept")
    backup(w, "kept-retain", vectorIndexName="kept", deletionPolicy="Retain")
    deleted_id, retained_id = wait_phase(w, "kept-delete", "Ready")["backupId"], wait_phase(w, "kept-retain", "Ready")["backupId"]
    for name in ("kept-delete", "kept-retain"):
        w.api.delete_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, name)
    wait_for(lambda: not backup_status(w, "kept-delete") and not backup_status(w, "kept-retain"), timeout=10, what="both gone")
    assert [b.backup_id for b in pinecone_backups(w, "kept")] == [retained_id] != [deleted_id]


def test_a_restore_waits_for_its_backup_object(vi_world: World):
    w = vi_world
    w.create("later", restoreFrom={"backupName": "not-yet"})
    cond = w.wait_condition("later", "Ready", "False", "Restoring")
    assert "VectorIndexBackup default/not-yet does not exist" in cond["message"]
    assert w.status("later")["phase"] == "Restoring" and w.index("later") is None
    w.create("origin", dimension=3)
    w.wait_ready("origin")
    backup(w, "not-yet", vectorIndexName="origin")
    w.wait_ready("later", timeout=20)
    assert w.index("later")["tags"]["pinery-name"] == "later"  # the restored index is owned by its object


def test_api_key_of_an_index_named_directly(vi_world: World):
    w = vi_world
    w.put_secret("team-key", NS, API_KEY)
    w.create("direct", dimension=3)
    w.wait_ready("direct")
    backup(w, "direct-backup", indexName="direct", apiKeySecretRef={"name": "team-key"})
    assert wait_phase(w, "direct-backup", "Ready")["apiKeySecretRef"] == {"name": "team-key", "key": "api-key"}


def test_what_pinecone_refuses_is_named_and_a_failed_backup_is_not_retried(no_faults: World):
    w = no_faults
    w.create("limited", dimension=3)
    w.wait_ready("limited")
    w.admin.configure(backups_allowed=False)
    backup(w, "on-starter", vectorIndexName="limited")
    refused = wait_phase(w, "on-starter", "Failed")
    assert reason(refused) == "Forbidden" and "plan" in next(c["message"] for c in refused["conditions"])
    w.admin.configure(backups_allowed=True, backup_quota=0)
    backup(w, "over-quota", vectorIndexName="limited")
    refused = wait_phase(w, "over-quota", "Failed")
    assert reason(refused) == "QuotaExceeded" and "backup quota" in next(c["message"] for c in refused["conditions"])
    w.admin.configure(backup_quota=None, fail_backups=["limited"])
    count = w.counting("create_backup")
    backup(w, "broken", vectorIndexName="limited")
    failed = wait_phase(w, "broken", "Failed")
    assert reason(failed) == "BackupFailed" and failed["backupId"]
    settle(1.0)
    assert count()["create_backup"] == 1  # a failed backup is a fact: not made again
    assert ("Warning", "BackupFailed") in {(t, r) for t, r, _ in w.events("broken", kind="VectorIndexBackup")}


def test_a_failed_restore_and_a_backup_deleted_outside_pinery_are_named(no_faults: World):
    w = no_faults
    w.create("short-lived", dimension=3)
    w.wait_ready("short-lived")
    backup(w, "gone-later", vectorIndexName="short-lived")
    made = wait_phase(w, "gone-later", "Ready")
    # a restore Pinecone cannot finish
    w.admin.configure(fail_initialization=["restore-fails"])
    w.create("restore-fails", restoreFrom={"backupId": made["backupId"]})
    cond = w.wait_condition("restore-fails", "Ready", "False", "RestoreFailed", timeout=20)
    assert made["backupId"] in cond["message"] and w.status("restore-fails")["phase"] == "Failed"

    # the backup deleted in Pinecone, behind pinery's back: a restore from it says so, by field
    pc = w.pinecone()
    try:
        pc.backups.delete(backup_id=made["backupId"])
    finally:
        pc.close()
    w.create("from-deleted", restoreFrom={"backupName": "gone-later"})
    cond = w.wait_condition("from-deleted", "Ready", "False", "BackupNotFound")
    assert cond["message"].startswith(f"spec.restoreFrom: backup {made['backupId']} does not exist in Pinecone")
    assert w.index("from-deleted") is None
