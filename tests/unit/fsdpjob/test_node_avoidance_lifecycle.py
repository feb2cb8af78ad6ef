"""Failed-node avoidance through the lifecycle: a node failure that is not the job's own is
recorded with the gang restart, and every later pod keeps off that Kubernetes node."""

from __future__ import annotations

from tests.unit.fsdpjob.cluster import Cluster, job_object
from tests.unit.fsdpjob.test_lifecycle import converge, reasons

NOT_IN_A = [{"key": "metadata.name", "operator": "NotIn", "values": ["node-a"]}]


def ready(name: str) -> dict:
    return {"metadata": {"name": name}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}


def bound(spec: dict) -> Cluster:
    """A running 2-node job whose rank 0 is on node-b and rank 1 on node-a."""
    c = Cluster(job_object(spec))
    c.reconcile()
    c.bind({0: "node-b", 1: "node-a"})
    c.run()
    c.reconcile()
    assert c.status["phase"] == "Running"
    return c


def test_status_nodes_say_which_kubernetes_node_each_pod_is_on():
    c = bound({"numNodes": 2})
    assert [(n["index"], n["nodeName"]) for n in c.status["nodes"]] == [(0, "node-b"), (1, "node-a")]


def test_a_node_killed_by_sigkill_is_avoided_by_the_next_attempt_required_when_nodes_are_left():
    c = bound({"numNodes": 2, "maxRestarts": 2})
    c.cluster_nodes = [ready("node-a"), ready("node-b"), ready("node-c")]
    c.fail(1, 137)
    p = c.reconcile()
    assert "NodeAvoided" in reasons(p.events)
    [entry] = c.status["avoidedNodes"]
    assert (entry["nodeName"], entry["reason"], entry["node"], entry["attempt"]) == ("node-a", "Signal", 1, 0)
    assert "SIGKILL" in entry["message"]
    converge(c)
    assert c.attempts() == {0: 1, 1: 1}
    for rank in (0, 1):
        affinity = c.pod(rank)["spec"]["affinity"]["nodeAffinity"]
        assert affinity["requiredDuringSchedulingIgnoredDuringExecution"] == {"nodeSelectorTerms": [{"matchFields": NOT_IN_A}]}
    assert c.status["avoidanceMode"] == "Required"
    # The status says so without a restart of its own: the list stays for later attempts.
    c.bind({0: "node-b", 1: "node-c"})
    c.run()
    c.reconcile()
    assert [n["nodeName"] for n in c.status["nodes"]] == ["node-b", "node-c"]
    assert [e["nodeName"] for e in c.status["avoidedNodes"]] == ["node-a"]


def test_without_room_or_without_the_node_list_the_avoidance_is_preferred():
    c = bound({"numNodes": 2, "maxRestarts": 2})
    c.cluster_nodes = None  # the operator may not list Nodes
    c.fail(1, 137)
    converge(c)
    preferred = c.pod(0)["spec"]["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert preferred == [{"weight": 100, "preference": {"matchFields": NOT_IN_A}}]
    assert c.status["avoidanceMode"] == "Preferred"


def test_a_python_exception_exit_1_does_not_avoid_its_node():
    c = bound({"numNodes": 2, "maxRestarts": 2})
    c.fail(1, 1)
    p = c.reconcile()
    assert "NodeAvoided" not in reasons(p.events) and "avoidedNodes" not in c.status
    converge(c)
    assert c.attempts() == {0: 1, 1: 1}
    assert "affinity" not in c.pod(1)["spec"]


def test_policy_never_and_the_users_affinity_merge():
    zone = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]}
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [zone]}}}
    c = bound({"numNodes": 2, "maxRestarts": 3, "nodeAvoidance": {"mode": "Required"}, "podTemplate": {"affinity": affinity}})
    c.fail(1, 137)
    converge(c)
    terms = c.pod(1)["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [{**zone, "matchFields": NOT_IN_A}]
    # nodeAvoidance is mutable: Never takes the avoidance off the next pods and the status.
    c.job["spec"]["nodeAvoidance"] = {"policy": "Never"}
    c.bind({0: "node-b", 1: "node-c"})
    c.fail(1, 137)
    converge(c)
    assert "avoidedNodes" not in c.status and "avoidanceMode" not in c.status
    assert c.pod(1)["spec"]["affinity"] == affinity
