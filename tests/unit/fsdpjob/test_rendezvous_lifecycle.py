"""An elastic job's rendezvous store over many passes: made before the nodes, kept across node
replacements and gang restarts, replaced when it ends, stopped when the job stops, never
counted as a node; and the run each node joins (rendezvous.py)."""

from __future__ import annotations

import pytest

from tests.unit.fsdpjob.cluster import UID, Cluster, Crash, exited, job_object
from tests.unit.fsdpjob.test_lifecycle import converge, reasons, started

ELASTIC = {"numNodes": 3, "elastic": {"minNodes": 2}, "maxRestarts": 3, "command": ["torchrun", "t.py"]}
STORE = "train-rendezvous"


def run_of(pod: dict) -> str:
    return next(e["value"] for e in pod["spec"]["containers"][0]["env"] if e["name"] == "PET_RDZV_ID")


def test_the_store_is_created_before_the_nodes_and_is_no_node():
    c = Cluster(job_object(ELASTIC))
    p = c.reconcile()
    assert [o["metadata"]["name"] for o in p.create] == ["train", STORE, "train-node-0", "train-node-1", "train-node-2"]
    assert [n["index"] for n in c.status["nodes"]] == [0, 1, 2]
    c.run()
    c.reconcile()
    # The store is still Pending (nobody ran it here): the job runs on its nodes alone.
    assert c.status["phase"] == "Running" and c.condition("Running")["message"] == "3 of 3 nodes running"
    assert {run_of(c.pod(i)) for i in range(3)} == {f"{UID}-0"}


def test_a_static_job_has_no_store():
    c = Cluster(job_object({"numNodes": 2}))
    c.reconcile()
    assert c.store() is None


def waiting_for_store() -> dict:
    return {"phase": "Pending", "initContainerStatuses": [{"name": "wait-for-rendezvous", "state": {"running": {}}}]}


def test_a_store_that_ended_before_any_node_joined_is_replaced_and_the_nodes_wait_on():
    c = Cluster(job_object(ELASTIC))
    c.reconcile()
    for i in range(3):
        c.set_pod_status(i, waiting_for_store())
    nodes = {i: c.pod(i)["metadata"]["uid"] for i in range(3)}
    old = c.store()["metadata"]["uid"]
    c.store()["status"] = {"phase": "Failed", "reason": "Evicted", "message": "The node was low on resource: memory."}
    p = c.reconcile()
    assert [d.name for d in p.delete_pods] == [STORE]
    (event,) = [e for e in p.events if e.reason == "RendezvousStoreLost"]
    assert event.message == ("the rendezvous store pod train-rendezvous ended (Evicted: The node was low on resource: memory.); "
                             "replacing it")
    assert c.reconcile().create == ()  # still terminating: not created again yet
    c.finish_deletions()
    p = c.reconcile()
    assert [o["metadata"]["name"] for o in p.create] == [STORE] and c.store()["metadata"]["uid"] != old
    assert {i: c.pod(i)["metadata"]["uid"] for i in range(3)} == nodes
    assert c.status["restarts"] == 0 and c.condition("Restarting") == {}


def test_a_store_lost_under_a_training_gang_restarts_it_on_a_new_store_and_run():
    """Every agent exits once the store is gone (measured): the gang restarts at once, a
    failure of the store's own spending a restart, whatever pass sees the agents fail."""
    c = started(ELASTIC)
    c.store()["status"] = {"phase": "Failed", "reason": "Evicted", "message": "low on memory"}
    c.fail(1)  # an agent that already noticed: part of the same restart, not a failure of its own
    p = c.reconcile()
    assert c.condition("Restarting")["reason"] == "RendezvousStoreLost" and c.status["restarts"] == 1
    assert c.condition("Restarting")["message"].startswith(
        "the rendezvous store pod train-rendezvous ended (Evicted: low on memory); restarting all 3 nodes (restart 1 of 3)")
    assert "NodeFailed" not in reasons(p.events) and "RendezvousStoreLost" in reasons(p.events)
    converge(c)
    assert c.status["restarts"] == 1 and c.attempts() == {0: 1, 1: 1, 2: 1}
    assert {run_of(c.pod(i)) for i in range(3)} == {f"{UID}-1"} and c.store() is not None


def test_a_disrupted_store_restarts_the_gang_as_a_disruption():
    c = started(ELASTIC)
    c.store()["status"] = {"phase": "Failed", "conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI"}]}
    c.reconcile()
    assert (c.status["restarts"], c.status["disruptions"]) == (0, 1)
    assert "a disruption, not a failure of the job" in c.condition("Restarting")["message"]


@pytest.mark.parametrize("crash_after", range(0, 8))
def test_a_crash_at_any_step_of_a_store_restart_counts_it_once(crash_after):
    c = started(ELASTIC)
    c.store()["status"] = {"phase": "Failed"}
    try:
        c.apply(c.plan(), crash_after=crash_after)
    except Crash:
        pass
    converge(c)
    assert c.status["restarts"] == 1 and c.attempts() == {0: 1, 1: 1, 2: 1}


def test_a_replaced_node_rank_0_too_joins_the_run_its_peers_are_in():
    c = started(ELASTIC)
    store = c.store()["metadata"]["uid"]
    c.fail(0, 1)
    c.reconcile()
    c.finish_deletions()
    c.reconcile()
    assert c.attempts() == {0: 1, 1: 0, 2: 0} and run_of(c.pod(0)) == f"{UID}-0"
    assert c.store()["metadata"]["uid"] == store and c.condition("Restarting") == {}


def test_a_gang_restart_starts_a_new_run_on_the_same_store():
    """A closed rendezvous stays closed (launch_agent): the next gang gets a run of its own."""
    c = started(ELASTIC)
    store = c.store()["metadata"]["uid"]
    for i in (0, 1):
        c.fail(i, 1)
    converge(c)
    assert c.attempts() == {0: 1, 1: 1, 2: 1} and c.status["restarts"] == 1
    assert {run_of(c.pod(i)) for i in range(3)} == {f"{UID}-1"}
    assert c.store()["metadata"]["uid"] == store


@pytest.mark.parametrize("end", ["succeeded", "failed", "suspended"])
def test_the_store_stops_when_the_job_stops(end):
    c = started({**ELASTIC, "maxRestarts": 0, "activeDeadlineSeconds": 60})
    if end == "succeeded":
        for i in range(3):
            c.set_pod_status(i, exited(0, c.now))
    elif end == "failed":
        c.tick(61)  # past activeDeadlineSeconds
    else:
        c.job["spec"]["suspend"] = True
    c.reconcile()
    assert c.store()["metadata"].get("deletionTimestamp"), c.status
    c.finish_deletions()
    converge(c)
    assert c.store() is None


def test_a_resumed_job_gets_a_store_again_and_a_new_run():
    c = started(ELASTIC)
    c.job["spec"]["suspend"] = True
    converge(c)
    assert c.store() is None and c.attempts() == {}
    c.job["spec"]["suspend"] = False
    converge(c)
    assert c.store() is not None and {run_of(c.pod(i)) for i in range(3)} == {f"{UID}-1"}


@pytest.mark.parametrize("crash_after", range(0, 6))
def test_a_crash_during_creation_makes_one_store(crash_after):
    c = Cluster(job_object(ELASTIC))
    try:
        c.apply(c.plan(), crash_after=crash_after)
    except Crash:
        pass
    converge(c)
    assert c.created_pods == 4 and c.store() is not None and c.attempts() == {0: 0, 1: 0, 2: 0}


def test_someone_elses_pod_of_the_name_is_waited_for():
    c = Cluster(job_object(ELASTIC))
    c._create({"kind": "Pod", "metadata": {"name": STORE, "labels": {"pinery.dev/job-name": "train"},
                                            "ownerReferences": [{"controller": True, "uid": "a-deleted-job"}]}})
    p = c.reconcile()
    assert STORE not in [o["metadata"]["name"] for o in p.create] and p.requeue_after is not None
    assert all(d.name != STORE for d in p.delete_pods)  # never ours to delete
    del c.objects[("Pod", STORE)]
    assert STORE in [o["metadata"]["name"] for o in c.reconcile().create]


def test_a_store_being_evicted_restarts_the_gang_once_as_a_disruption():
    """A drain's eviction marks the store (DisruptionTarget) and deletes it: the gang it served
    restarts at once; the new gang's pods, made after the eviction, are never counted against it."""
    c = started(ELASTIC)
    meta = c.store()["metadata"]
    meta["deletionTimestamp"] = "2026-01-01T12:00:30Z"
    c.store()["status"] = {"phase": "Running", "conditions": [
        {"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI", "lastTransitionTime": "2026-01-01T12:00:00Z"}]}
    c.tick(5)
    c.reconcile()
    assert (c.status["restarts"], c.status["disruptions"]) == (0, 1) and c.condition("Restarting")["reason"] == "RendezvousStoreLost"
    for pod in c.node_pods():  # the old nodes go; the old store is still terminating
        del c.objects[("Pod", pod["metadata"]["name"])]
    c.tick(5)
    c.reconcile()
    assert c.attempts() == {0: 1, 1: 1, 2: 1}
    for _ in range(3):  # the new nodes join before the old store is gone: still one restart
        c.tick(1)
        c.run()
        c.reconcile()
    assert (c.status["restarts"], c.status["disruptions"]) == (0, 1) and c.attempts() == {0: 1, 1: 1, 2: 1}
    c.finish_deletions()
    converge(c)
    assert c.store() is not None and not c.store()["metadata"].get("deletionTimestamp")
    assert (c.status["restarts"], c.status["disruptions"]) == (0, 1)
