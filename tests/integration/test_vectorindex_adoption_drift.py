"""The VectorIndex operator and indexes it did not make, or that changed behind its back:
adoption, fleet-wide resync sweeps (one listing per API key), drift repair and recreation."""

from __future__ import annotations

import pytest

from tests.support.vectorindex import (
    API_KEY,
    CLUSTER,
    NS,
    OTHER_KEY,
    World,
    configure_behind,
    create_index_behind,
    delete_index_behind,
    over_sweeps,
    settle,
)
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow


def owner_tags(name: str) -> dict[str, str]:
    return {"pinery-cluster": CLUSTER, "pinery-namespace": NS, "pinery-name": name}


def test_resync_sweeps_list_once_per_api_key_and_describe_nothing(vi_world: World):
    w = vi_world
    w.put_secret("other-pinecone", NS, OTHER_KEY, key="token")
    names = ["fleet-a1", "fleet-a2", "fleet-a3", "fleet-b1", "fleet-b2"]
    for name in names:
        ref = {"apiKeySecretRef": {"name": "other-pinecone", "key": "token"}} if "-b" in name else {}
        w.create(name, **ref)
    for name in names:
        w.wait_ready(name)
    assert w.index("fleet-b1", key=OTHER_KEY) is not None and w.index("fleet-b1", key=API_KEY) is None

    calls = over_sweeps(w, 2, "list_indexes", "describe_index", "configure_index", "create_index", "get secrets")
    # five objects, two keys, two sweeps: two listings per sweep, and nothing else; each key's
    # Secret is read once per sweep too, not once per object (pinery.gateways.per_sweep)
    assert calls == {"list_indexes": 4, "describe_index": 0, "configure_index": 0, "create_index": 0, "get secrets": 4}, calls
    metrics = w.operator.metrics()
    assert 'pinery_pinecone_calls_total{operation="list_indexes",outcome="ok"}' in metrics
    assert 'pinery_reconciles_total{outcome="none",resource="VectorIndex"}' in metrics


def test_drift_of_mutable_fields_is_repaired_by_the_sweep_with_one_configure_call(vi_world: World):
    w = vi_world
    w.create("drifty", tags={"team": "search"})
    w.wait_ready("drifty")
    w.create("drifty-pod", pod={"environment": "us-east1-gcp", "replicas": 2})
    w.wait_ready("drifty-pod")
    configure_behind(w, "drifty", tags={"team": "hijacked", "extra": "x"}, deletion_protection="enabled")
    configure_behind(w, "drifty-pod", replicas=1)
    count = w.counting("configure_index", "list_indexes")

    wait_for(lambda: w.index("drifty")["tags"] == {"team": "search", **owner_tags("drifty")}, timeout=10, what="tags repaired")
    assert w.index("drifty")["deletion_protection"] == "disabled"
    wait_for(lambda: w.index("drifty-pod")["deployment"]["replicas"] == 2, timeout=10, what="replicas repaired")
    w.wait_ready("drifty")
    w.wait_ready("drifty-pod")
    calls = count()
    assert calls["configure_index"] == 2 and calls["list_indexes"] >= 1, calls
    (_, _, message) = w.wait_event("drifty", "Configuring", "Normal")
    assert "deletion protection disabled" in message and "tags extra, team" in message
    assert any(r == "Configuring" and "replicas 1 -> 2" in m for _, r, m in w.events("drifty-pod"))


def test_index_deleted_behind_the_operators_back_is_created_again_with_a_warning(vi_world: World):
    w = vi_world
    w.create("phoenix", tags={"team": "a"})
    old_host = w.wait_ready("phoenix")["status"]["host"]
    count = w.counting("create_index")
    # the next sweep may make it again before any poll of ours sees it gone: the warning
    # event below is what proves the operator saw the gap
    delete_index_behind(w, "phoenix", wait_gone=False)

    (_, _, message) = w.wait_event("phoenix", "Recreating", "Warning")
    assert "deleted outside pinery" in message
    wait_for(lambda: (i := w.index("phoenix")) is not None and i["status"]["ready"], timeout=10, what="index back")
    obj = w.wait_ready("phoenix")
    assert count()["create_index"] == 1 and obj["status"]["host"] == old_host
    assert w.index("phoenix")["tags"] == {"team": "a", **owner_tags("phoenix")}


def test_adoption_of_an_existing_index_when_allowed(vi_world: World):
    w = vi_world
    create_index_behind(w, "legacy", tags={"made-by": "terraform"})
    count = w.counting("create_index", "configure_index")
    w.create("legacy", adoptExisting=True, tags={"team": "search"}, connectionConfigMap="legacy-conn")
    obj = w.wait_ready("legacy")
    assert count() == {"create_index": 0, "configure_index": 1}
    assert obj["status"]["indexName"] == "legacy" and obj["status"]["host"] == w.index("legacy")["host"]
    # fully managed from now on: the spec's tags and the ownership tags, nothing else
    assert w.index("legacy")["tags"] == {"team": "search", **owner_tags("legacy")}
    assert ("Normal", "Adopted") in {(t, r) for t, r, _ in w.events("legacy")}
    assert w.config_map("legacy-conn").data["PINECONE_INDEX_NAME"] == "legacy"


def test_adoption_refused_without_adopt_existing_then_allowed(vi_world: World):
    w = vi_world
    create_index_behind(w, "someone-elses", tags={"owner": "data-team"})
    theirs = {"pinery-cluster": "prod", "pinery-namespace": "search", "pinery-name": "docs"}
    create_index_behind(w, "other-cluster", tags=theirs)
    count = w.counting("create_index", "configure_index", "delete_index")
    w.create("someone-elses")
    w.create("other-cluster")

    cond = w.wait_condition("someone-elses", "Ready", "False", "NotOwned")
    assert "adoptExisting" in cond["message"] and w.status("someone-elses")["phase"] == "Failed"
    cond = w.wait_condition("other-cluster", "Ready", "False", "NotOwned")
    assert "prod/search/docs" in cond["message"]
    w.wait_event("someone-elses", "NotOwned", "Warning")
    settle(0.5)
    assert count() == {"create_index": 0, "configure_index": 0, "delete_index": 0}
    assert w.index("someone-elses")["tags"] == {"owner": "data-team"}
    assert "indexName" not in w.status("someone-elses")

    # deleting a refused object leaves the index alone
    w.delete("other-cluster")
    w.wait_gone("other-cluster")
    assert w.index("other-cluster")["tags"] == theirs and count()["delete_index"] == 0

    # allowing adoption takes it over at once (the spec change wakes the operator)
    w.update("someone-elses", {"adoptExisting": True})
    assert w.index("someone-elses")["tags"] == owner_tags("someone-elses")


def test_adoption_of_a_mismatched_index_is_refused_naming_the_differences(vi_world: World):
    w = vi_world
    create_index_behind(w, "mismatch", dimension=16, metric="euclidean")
    count = w.counting("create_index", "configure_index")
    w.create("mismatch", adoptExisting=True, dimension=8)
    cond = w.wait_condition("mismatch", "Ready", "False", "SpecMismatch")
    assert "dimension: spec wants 8, index has 16" in cond["message"]
    assert "metric: spec wants 'cosine', index has 'euclidean'" in cond["message"]
    assert w.condition("mismatch", "Synced")["reason"] == "SpecMismatch"
    (_, _, message) = w.wait_event("mismatch", "SpecMismatch", "Warning")
    assert "dimension" in message
    settle(0.5)
    assert count() == {"create_index": 0, "configure_index": 0}
    assert w.index("mismatch")["tags"] is None
