"""Read capacity and hybrid indexes through the operator (KopfRunner) against the emulator, which
speaks API 2026-07 to the operator's 10.x SDK: created with a dedicated setting, scaled in place
with one configure call, disabled at 0 replicas (its own phase, not Creating), enabled again."""

from __future__ import annotations

import pytest

from tests.support.vectorindex import World
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow


def dedicated(replicas: int, shards: int = 1, node_type: str = "b1") -> dict:
    return {"mode": "Dedicated", "nodeType": node_type, "replicas": replicas, "shards": shards}


def capacity_of(w: World, name: str) -> dict:
    return w.index(name)["read_capacity"]


def test_dedicated_read_capacity_is_created_scaled_disabled_and_enabled(vi_world: World):
    w = vi_world
    w.create("reads", readCapacity=dedicated(1))
    obj = w.wait_ready("reads")
    assert capacity_of(w, "reads")["dedicated"] == {"node_type": "b1", "scaling": "Manual", "manual": {"replicas": 1, "shards": 1}}
    assert obj["status"]["readCapacity"] | {} == {"mode": "Dedicated", "nodeType": "b1", "state": "Ready",
                                                   "currentReplicas": 1, "currentShards": 1}

    count = w.counting("configure_index")
    w.update("reads", {"readCapacity": dedicated(2, node_type="t1")})
    assert count()["configure_index"] == 1
    assert capacity_of(w, "reads")["dedicated"]["manual"]["replicas"] == 2
    assert any(r == "Configuring" and "readCapacity Dedicated b1 1x1 -> Dedicated t1 2x1" in m for _, r, m in w.events("reads"))
    wait_for(lambda: w.status("reads").get("readCapacity", {}).get("currentReplicas") == 2, timeout=15,
             what="status.readCapacity shows 2 replicas")

    # 0 replicas: Pinecone's Disabled state, shown as its own phase with Synced True
    w.patch_spec("reads", {"readCapacity": dedicated(0, node_type="t1")})
    wait_for(lambda: w.status("reads").get("phase") == "Disabled", timeout=15, what="phase Disabled")
    assert w.index("reads")["status"]["state"] == "Disabled"
    ready, synced = w.condition("reads", "Ready"), w.condition("reads", "Synced")
    assert (ready["status"], ready["reason"]) == ("False", "Disabled") and (synced["status"], synced["reason"]) == ("True", "InSync")
    w.wait_event("reads", "Disabled")

    # and back
    w.update("reads", {"readCapacity": dedicated(1, node_type="t1")})
    assert w.status("reads")["phase"] == "Ready"
    assert w.index("reads")["status"]["state"] == "Ready"

    # back to on-demand (a merge patch removes the dedicated fields with nulls, as kubectl apply
    # would; left in, the CRD refuses them with OnDemand)
    w.update("reads", {"readCapacity": {"mode": "OnDemand", "nodeType": None, "replicas": None, "shards": None}})
    wait_for(lambda: capacity_of(w, "reads")["mode"] == "OnDemand", timeout=15, what="on-demand again")
    wait_for(lambda: w.status("reads").get("readCapacity") == {"mode": "OnDemand", "state": "Ready"} and w.status("reads")["phase"] == "Ready",
             timeout=15, what="status on-demand, without the dedicated figures")


def test_byoc_index_takes_read_capacity(vi_world: World):
    w = vi_world
    w.create("byoc-reads", byoc={"environment": "aws-us-east-1-b921"}, readCapacity=dedicated(1, shards=2))
    w.wait_ready("byoc-reads")
    assert capacity_of(w, "byoc-reads")["dedicated"]["manual"] == {"replicas": 1, "shards": 2}


def test_hybrid_index_declares_its_sparse_field_and_takes_sparse_values(vi_world: World):
    """2026-07 refuses sparse values on a dense index without a sparse_vector field; a hybrid
    VectorIndex declares one, and an application on the 10.x SDK writes and queries both."""
    w = vi_world
    w.create("hybrid", vectorType="hybrid", dimension=4)
    obj = w.wait_ready("hybrid")
    fields = w.index("hybrid")["schema"]["fields"]
    assert fields["_values"]["metric"] == "dotproduct" and fields["_sparse_values"]["type"] == "sparse_vector"

    pc = w.pinecone()
    try:
        index = pc.index(host=obj["status"]["host"])
        index.upsert(vectors=[{"id": "a", "values": [0.1, 0.2, 0.3, 0.4], "sparse_values": {"indices": [1, 7], "values": [0.5, 0.5]}}])
        found = index.query(vector=[0.1, 0.2, 0.3, 0.4], sparse_vector={"indices": [7], "values": [1.0]}, top_k=1)
        assert [m.id for m in found.matches] == ["a"]
    finally:
        pc.close()

    # the same spec without hybrid: sparse values are refused by Pinecone (as 2026-07 does)
    w.create("dense-dot", metric="dotproduct", dimension=4)
    obj = w.wait_ready("dense-dot")
    pc = w.pinecone()
    try:
        with pytest.raises(Exception, match="sparse"):
            pc.index(host=obj["status"]["host"]).upsert(
                vectors=[{"id": "a", "values": [0.1, 0.2, 0.3, 0.4], "sparse_values": {"indices": [1], "values": [0.5]}}])
    finally:
        pc.close()
