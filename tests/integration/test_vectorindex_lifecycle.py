"""The VectorIndex operator, running under KopfRunner, through a whole life: creation of each
deployment type, kubectl, scaling and tags, and deletion under each policy."""

from __future__ import annotations

import pytest

from tests.support.vectorindex import (
    API_KEY,
    CLUSTER,
    NS,
    World,
    delete_index_behind,
    settle,
    sweep_gap,
)
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow


def assert_conditions(w: World, name: str, generation: int) -> None:
    for type_ in ("Ready", "Synced"):
        cond = w.condition(name, type_)
        assert cond["status"] == "True" and cond["observedGeneration"] == generation, cond
        assert cond["lastTransitionTime"].endswith("Z")


def test_serverless_index_becomes_ready_with_host_configmap_events_and_metrics(vi_world: World):
    w = vi_world
    count = w.counting("describe_index", "create_index", "list_indexes")
    created = w.create("docs", tags={"team": "search"}, connectionConfigMap="docs-conn")
    obj = w.wait_ready("docs")
    # readiness is polled with backoff: a handful of describes, one create, no listing
    calls = count()
    assert calls["create_index"] == 1 and calls["describe_index"] <= 6 and calls["list_indexes"] == 0, calls

    status = obj["status"]
    assert status["phase"] == "Ready" and status["state"] == "Ready" and status["type"] == "serverless"
    assert status["indexName"] == "docs" and status["observedGeneration"] == 1
    assert status["host"] == w.index("docs")["host"] and status["host"].startswith("http://")
    assert_conditions(w, "docs", 1)

    index = w.index("docs")
    assert index["schema"]["fields"]["_values"] | {"description": None} == {"type": "dense_vector", "dimension": 8, "metric": "cosine", "description": None}
    assert index["deployment"] == {"deployment_type": "managed", "cloud": "aws", "region": "us-east-1", "environment": None}
    assert index["tags"] == {"team": "search", "pinery-cluster": CLUSTER, "pinery-namespace": NS, "pinery-name": "docs"}

    cm = w.config_map("docs-conn")
    assert cm.data["PINECONE_INDEX_NAME"] == "docs" and cm.data["PINECONE_INDEX_HOST"] == status["host"]
    assert cm.data["PINECONE_CONTROLLER_HOST"] == w.emulator.url
    (owner,) = cm.metadata.owner_references
    assert (owner.kind, owner.name, owner.uid, owner.controller) == ("VectorIndex", "docs", created["metadata"]["uid"], True)

    reasons = {(t, r) for t, r, _ in w.events("docs")}
    assert {("Normal", "Creating"), ("Normal", "IndexReady"), ("Normal", "InSync")} <= reasons
    metrics = w.operator.metrics()
    assert 'pinery_reconciles_total{outcome="create",resource="VectorIndex"}' in metrics
    assert 'pinery_reconciles_total{outcome="wait",resource="VectorIndex"}' in metrics
    assert 'pinery_pinecone_calls_total{operation="create_index",outcome="ok"} 1.0' in metrics
    assert 'pinery_pinecone_calls_total{operation="describe_index",outcome="404"}' in metrics
    assert 'pinery_vectorindexes{state="Ready"} 1.0' in metrics
    ready = f'pinery_vectorindex_ready{{namespace="{NS}",vectorindex="docs"}} 1.0'
    wait_for(lambda: ready in w.operator.metrics(), timeout=30, what="the object's readiness gauge")

    # nothing more happens while it stays in sync: no status writes, no new events
    version, events = w.get("docs")["metadata"]["resourceVersion"], len(w.events("docs"))
    cm_version = w.config_map("docs-conn").metadata.resource_version
    settle(2.5)  # at least one resync sweep
    assert w.get("docs")["metadata"]["resourceVersion"] == version and len(w.events("docs")) == events
    assert w.config_map("docs-conn").metadata.resource_version == cm_version


def test_pod_index_is_created_and_scaled_with_one_configure_call_per_change(vi_world: World):
    w = vi_world
    w.create("pods", indexName="pods-index", pod={"environment": "us-east1-gcp", "podType": "p1.x1", "replicas": 1},
             metric="euclidean", dimension=16)
    obj = w.wait_ready("pods")
    assert obj["status"]["type"] == "pod" and obj["status"]["indexName"] == "pods-index"
    assert obj["status"]["host"] == w.index("pods-index")["host"] and obj["status"]["state"] == "Ready"
    assert_conditions(w, "pods", 1)
    spec = w.index("pods-index")["deployment"]
    assert (spec["environment"], spec["pod_type"], spec["replicas"]) == ("us-east1-gcp", "p1.x1", 1)

    count = w.counting("configure_index")
    w.update("pods", {"pod": {"replicas": 3}})
    assert count()["configure_index"] == 1
    assert w.index("pods-index")["deployment"]["replicas"] == 3
    assert any(r == "Configuring" and "replicas 1 -> 3" in m for _, r, m in w.events("pods"))

    count = w.counting("configure_index")
    obj = w.update("pods", {"pod": {"podType": "p1.x2"}})
    assert w.index("pods-index")["deployment"]["pod_type"] == "p1.x2"
    assert count()["configure_index"] == 1 and obj["status"]["observedGeneration"] == 3
    assert_conditions(w, "pods", 3)
    assert any(r == "Configuring" and "podType p1.x1 -> p1.x2" in m for _, r, m in w.events("pods"))


def test_byoc_index(vi_world: World):
    w = vi_world
    w.create("byoc", byoc={"environment": "aws-us-east-1-b921"}, metric="dotproduct")
    obj = w.wait_ready("byoc")
    assert obj["status"]["type"] == "byoc" and obj["status"]["host"] and obj["status"]["state"] == "Ready"
    assert_conditions(w, "byoc", 1)
    index = w.index("byoc")
    assert index["deployment"] == {"deployment_type": "byoc", "environment": "aws-us-east-1-b921"}
    assert index["schema"]["fields"]["_values"]["metric"] == "dotproduct"


def test_tags_added_changed_and_removed_each_as_one_configure_call(vi_world: World):
    w = vi_world
    w.create("tagged", tags={"team": "a"})
    w.wait_ready("tagged")
    owner_tags = {"pinery-cluster": CLUSTER, "pinery-namespace": NS, "pinery-name": "tagged"}

    for change, expected in (
        ({"env": "dev"}, {"team": "a", "env": "dev"}),  # added
        ({"team": "b"}, {"team": "b", "env": "dev"}),  # changed
        ({"env": None}, {"team": "b"}),  # removed (a merge patch deletes the key)
    ):
        count = w.counting("configure_index")
        w.update("tagged", {"tags": change})
        assert w.index("tagged")["tags"] == {**expected, **owner_tags}
        assert count()["configure_index"] == 1, change


def test_kubectl_wait_get_and_describe(vi_world: World):
    w = vi_world
    w.plane.kubectl("apply", "-f", "-", input=(
        "apiVersion: pinery.dev/v1alpha1\nkind: VectorIndex\nmetadata:\n  name: kubectl-made\n"
        "spec:\n  dimension: 4\n  serverless:\n    cloud: gcp\n    region: us-central1\n"
    ))
    result = w.plane.kubectl("wait", "--for=condition=Ready", "vi/kubectl-made", "--timeout=20s")
    assert "condition met" in result.stdout
    table = w.plane.kubectl("get", "vi", "kubectl-made").stdout
    assert "Ready" in table and "serverless" in table and w.status("kubectl-made")["host"] in table
    wide = w.plane.kubectl("get", "vectorindex", "kubectl-made", "-o", "wide").stdout
    assert "STATE" in wide.splitlines()[0]


# --- deletion ---------------------------------------------------------------------------

def test_delete_policy_deletes_the_index(vi_world: World):
    w = vi_world
    w.create("gone-with-it", connectionConfigMap="gone-conn")
    w.wait_ready("gone-with-it")
    ready = f'pinery_vectorindex_ready{{namespace="{NS}",vectorindex="gone-with-it"}} 1.0'
    wait_for(lambda: ready in w.operator.metrics(), timeout=30, what="the object's readiness gauge")
    w.delete("gone-with-it")
    w.wait_gone("gone-with-it")
    wait_for(lambda: 'vectorindex="gone-with-it"' not in w.operator.metrics(), timeout=30, what="the gauge forgets the object")
    assert w.index("gone-with-it") is None
    reasons = [r for _, r, _ in w.events("gone-with-it")]
    assert "Deleting" in reasons and "Deleted" in reasons


def test_retain_policy_keeps_the_index_and_a_new_object_finds_it_again(vi_world: World):
    w = vi_world
    w.create("kept", deletionPolicy="Retain")
    w.wait_ready("kept")
    w.delete("kept")
    w.wait_gone("kept")
    assert w.index("kept")["status"]["ready"] is True
    assert ("Normal", "Retained") in {(t, r) for t, r, _ in w.events("kept")}
    # applied again (a GitOps re-sync): the ownership tags make it this object's index again
    count = w.counting("create_index")
    w.create("kept", deletionPolicy="Delete")
    w.wait_ready("kept")
    assert count()["create_index"] == 0
    w.delete("kept")
    w.wait_gone("kept")
    assert w.index("kept") is None


def test_deletion_protection_keeps_the_index_and_releases_the_object(vi_world: World):
    w = vi_world
    w.create("protected", deletionProtection=True)
    w.wait_ready("protected")
    assert w.index("protected")["deletion_protection"] == "enabled"
    count = w.counting("delete_index")
    w.delete("protected")
    w.wait_gone("protected")
    assert count()["delete_index"] == 0 and w.index("protected") is not None
    warning = w.wait_event("protected", "DeletionProtected", "Warning")
    assert "retained" in warning[2]
    pc = w.pinecone(API_KEY)
    try:
        pc.configure_index("protected", deletion_protection="disabled")
        pc.delete_index("protected", timeout=-1)
    finally:
        pc.close()


def test_deleting_an_object_whose_index_is_already_gone(vi_world: World):
    w = vi_world
    w.create("vanished")
    w.wait_ready("vanished")
    sweep_gap()  # well before the next resync sweep, which would create the index again
    delete_index_behind(w, "vanished")
    count = w.counting("delete_index")
    w.delete("vanished")
    w.wait_gone("vanished")
    assert count()["delete_index"] == 0
    assert ("Normal", "Deleted") in {(t, r) for t, r, _ in w.events("vanished")}
