"""Failed-node avoidance (pinery.fsdpjob.node_avoidance): which failures avoid their node, the
bounded list, required or preferred, and the merge with the user's own affinity."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from pinery.api.fsdpjob import NodeAvoidanceSpec
from pinery.fsdpjob.failure_policy import Failure
from pinery.fsdpjob.node_avoidance import PREFERRED_WEIGHT, merge_affinity, mode, node_fault, record, trimmed

T = datetime(2026, 1, 1, tzinfo=timezone.utc)
TORCHRUN_TAIL = "[rank1]: RuntimeError: CUDA error: uncorrectable ECC error encountered\nRoot Cause (first observed failure):\n  exitcode  : 1"


def failure(rank: int = 1, reason: str = "Error", code: int | None = 1, *, node: str | None = "n1", disrupted: bool = False,
            message: str = "", at: int = 0) -> Failure:
    return Failure(rank, f"job-node-{rank}", reason, code, "", T.replace(second=at), disrupted, node, message)


@pytest.mark.parametrize(
    "f, policy, expected",
    [
        # The job's own: a Python exception, its own memory limit, an exit it chose, SIGTERM.
        pytest.param(failure(code=1), "Auto", None, id="exit-1-is-the-jobs-own"),
        pytest.param(failure(code=137, reason="OOMKilled"), "Auto", None, id="oomkilled-is-the-containers-limit"),
        pytest.param(failure(code=139), "Auto", None, id="sigsegv-is-usually-the-program"),
        pytest.param(failure(code=143), "Auto", None, id="sigterm-is-how-pods-are-stopped"),
        pytest.param(failure(code=1, reason="Rank0Unreachable"), "Auto", None, id="rank0-unreachable"),
        pytest.param(failure(reason="PreemptionByScheduler", code=137, disrupted=True), "Auto", None, id="preemption-node-is-fine"),
        # Not the job's own.
        pytest.param(failure(code=137), "Auto", "Signal", id="sigkill-without-oomkilled"),
        pytest.param(failure(code=135), "Auto", "Signal", id="sigbus-hardware-memory-error"),
        pytest.param(failure(reason="EvictionByEvictionAPI", code=None, disrupted=True), "Auto", "EvictionByEvictionAPI", id="drain"),
        pytest.param(failure(reason="TerminationByKubelet", code=None, disrupted=True), "Auto", "TerminationByKubelet", id="node-pressure"),
        pytest.param(failure(reason="NodeLost", code=None), "Auto", "NodeLost", id="node-lost"),
        pytest.param(failure(reason="Evicted", code=None), "Auto", "Evicted", id="evicted-without-condition"),
        pytest.param(failure(reason="OutOfmemory", code=None), "Auto", "OutOfmemory", id="kubelet-admission"),
        pytest.param(failure(code=1, message=TORCHRUN_TAIL), "Auto", "DeviceError", id="ecc-error-in-the-log-tail"),
        pytest.param(failure(code=1, message="ncclSystemError: System call (e.g. socket, malloc) or external library call failed"),
                     "Auto", "DeviceError", id="nccl-system-error"),
        pytest.param(failure(code=1, message="ncclRemoteError: A call failed possibly due to a network error or a remote process exiting"),
                     "Auto", None, id="nccl-remote-error-blames-the-peer"),
        pytest.param(failure(reason="Stalled", code=None), "Auto", "Stalled", id="stall-of-one-node"),
        # Always: every failure; Never: none; no node known: nothing to avoid.
        pytest.param(failure(code=1), "Always", "Error", id="always-exit-1"),
        pytest.param(failure(code=137), "Never", None, id="never"),
        pytest.param(failure(code=137, node=None), "Auto", None, id="never-scheduled"),
    ],
)
def test_which_failures_avoid_their_node(f, policy, expected):
    fault = node_fault(f, policy)
    assert (fault.reason if fault else None) == expected


def test_a_device_error_names_the_line_it_was_found_in():
    fault = node_fault(failure(message=TORCHRUN_TAIL), "Auto")
    assert fault is not None and fault.message.endswith("RuntimeError: CUDA error: uncorrectable ECC error encountered")


def test_a_stall_of_every_node_avoids_none():
    spec = NodeAvoidanceSpec()
    stalls = [failure(0, "Stalled", None, node="a"), failure(1, "Stalled", None, node="b")]
    assert record(spec, [], stalls, n=2, attempts={}, now="t").avoided == []
    assert [e["nodeName"] for e in record(spec, [], stalls[1:], n=2, attempts={}, now="t").avoided] == ["b"]


def test_record_keeps_the_first_entry_of_a_node_and_the_newest_max_avoided_nodes():
    spec = NodeAvoidanceSpec(max_avoided_nodes=2)
    first = record(spec, [], [failure(1, code=137, node="a")], n=2, attempts={1: 0}, now="t0")
    assert first.added == first.avoided == [
        {"nodeName": "a", "reason": "Signal", "message": first.avoided[0]["message"], "node": 1, "attempt": 0, "time": "t0"}
    ]
    again = record(spec, first.avoided, [failure(0, code=137, node="a"), failure(1, code=137, node="b", at=1)], n=2,
                   attempts={0: 1, 1: 1}, now="t1")
    assert [(e["nodeName"], e["attempt"]) for e in again.avoided] == [("a", 0), ("b", 1)]
    assert [e["nodeName"] for e in again.added] == ["b"]
    third = record(spec, again.avoided, [failure(1, code=137, node="c")], n=2, attempts={1: 2}, now="t2")
    assert [e["nodeName"] for e in third.avoided] == ["b", "c"]  # a, avoided longest ago, is used again


def test_own_failures_add_nothing_and_never_clears_the_list():
    previous = [{"nodeName": "a", "reason": "Signal"}]
    assert record(NodeAvoidanceSpec(), previous, [failure(code=1)], n=2, attempts={}, now="t").avoided == previous
    assert record(NodeAvoidanceSpec(policy="Never"), previous, [failure(code=137)], n=2, attempts={}, now="t").avoided == []
    assert trimmed(NodeAvoidanceSpec(policy="Never"), previous) == []
    assert trimmed(NodeAvoidanceSpec(max_avoided_nodes=1), previous + [{"nodeName": "b", "reason": "x"}]) == [{"nodeName": "b", "reason": "x"}]


def node(name: str, *, ready: bool = True, cordoned: bool = False, labels: dict | None = None) -> dict:
    return {
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"unschedulable": True} if cordoned else {},
        "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


@pytest.mark.parametrize(
    "nodes, selector, expected",
    [
        pytest.param(None, {}, "Preferred", id="nodes-not-listable"),
        pytest.param([node("a"), node("b"), node("c")], {}, "Required", id="room-left"),
        pytest.param([node("a"), node("b")], {}, "Preferred", id="too-few-left"),
        pytest.param([node("a"), node("b"), node("c", ready=False)], {}, "Preferred", id="not-ready-does-not-count"),
        pytest.param([node("a"), node("b"), node("c", cordoned=True)], {}, "Preferred", id="cordoned-does-not-count"),
        pytest.param([node("a", labels={"gpu": "h100"}), node("b", labels={"gpu": "h100"}), node("c")], {"gpu": "h100"}, "Preferred",
                     id="selector-leaves-too-few"),
        pytest.param([node("a"), node("b", labels={"gpu": "h100"}), node("c", labels={"gpu": "h100"})], {"gpu": "h100"}, "Required",
                     id="selector-leaves-enough"),
    ],
)
def test_auto_mode_is_required_only_when_enough_nodes_are_left(nodes, selector, expected):
    assert mode(NodeAvoidanceSpec(), ["a"], nodes, selector, needed=2) == expected


def test_an_explicit_mode_is_kept_whatever_the_nodes():
    assert mode(NodeAvoidanceSpec(mode="Required"), ["a"], None, {}, needed=2) == "Required"
    assert mode(NodeAvoidanceSpec(mode="Preferred"), ["a"], [node("b"), node("c"), node("d")], {}, needed=2) == "Preferred"


def not_in(*names: str) -> list[dict]:
    return [{"key": "metadata.name", "operator": "NotIn", "values": [n]} for n in names]


ZONE = {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["z1"]}
POD_AFFINITY = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "podAffinityTerm": {"topologyKey": "x"}}]}}


@pytest.mark.parametrize(
    "user, avoided, mode_, expected",
    [
        pytest.param(None, [], "Required", None, id="nothing-avoided-no-affinity"),
        pytest.param(POD_AFFINITY, [], "Required", POD_AFFINITY, id="nothing-avoided-users-kept"),
        pytest.param(None, ["b", "a"], "Required",
                     {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchFields": not_in("a", "b")}]}}},
                     id="required-one-term-one-notin-per-node"),
        pytest.param(
            {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [ZONE]}, {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["x"]}]}]}}},
            ["a"], "Required",
            {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [ZONE], "matchFields": not_in("a")},
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["x"]}, *not_in("a")]}]}}},
            id="required-anded-into-every-ored-term"),
        pytest.param(
            {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{}, {"matchExpressions": [ZONE]}]}}},
            ["a"], "Required",
            {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {}, {"matchExpressions": [ZONE], "matchFields": not_in("a")}]}}},
            id="an-empty-term-matches-nothing-and-stays-so"),
        pytest.param(
            {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "preference": {"matchExpressions": [ZONE]}}]},
             **POD_AFFINITY},
            ["a"], "Required",
            {"nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "preference": {"matchExpressions": [ZONE]}}],
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchFields": not_in("a")}]}},
             **POD_AFFINITY},
            id="required-beside-users-preferred-and-pod-affinity"),
        pytest.param(
            {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [ZONE]}]},
                              "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "preference": {"matchExpressions": [ZONE]}}]}},
            ["a", "b"], "Preferred",
            {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [ZONE]}]},
                              "preferredDuringSchedulingIgnoredDuringExecution": [
                                  {"weight": 5, "preference": {"matchExpressions": [ZONE]}},
                                  {"weight": PREFERRED_WEIGHT, "preference": {"matchFields": not_in("a", "b")}}]}},
            id="preferred-adds-a-term-users-required-untouched"),
    ],
)
def test_the_avoidance_merges_with_the_users_affinity(user, avoided, mode_, expected):
    before = repr(user)
    assert merge_affinity(user, avoided, mode_) == expected
    assert repr(user) == before  # the spec's own dict is never changed
