"""Disruptions through the lifecycle: a preempted, evicted or lost node restarts the gang
without spending maxRestarts, counted in status.disruptions; gang restarts back off."""

from __future__ import annotations

from datetime import timedelta

import pytest

from pinery.api.conditions import now_rfc3339, parse_time
from tests.unit.fsdpjob.cluster import Cluster, Crash, exited, job_object, running
from tests.unit.fsdpjob.test_lifecycle import converge, reasons, started


def disrupt(c: Cluster, rank: int, reason: str = "PreemptionByScheduler", message: str = "preempted by ml/urgent") -> None:
    """What Kubernetes leaves of a disrupted pod: the condition, then the pod Failed."""
    c.set_pod_status(rank, {
        "phase": "Failed",
        "conditions": [{"type": "DisruptionTarget", "status": "True", "reason": reason, "message": message,
                        "lastTransitionTime": now_rfc3339(c.now)}],
        "containerStatuses": [{"name": "trainer", "state": {"terminated": {"exitCode": 137, "reason": "Error",
                                                                           "finishedAt": now_rfc3339(c.now)}}}],
    })


def evict(c: Cluster, rank: int) -> None:
    """The Eviction API (a drain): the condition first, then the deletion; the pod still runs."""
    pod = c.pod(rank)
    pod["status"]["conditions"] = [{"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI",
                                    "message": "Eviction API: evicting", "lastTransitionTime": now_rfc3339(c.now)}]
    pod["metadata"]["deletionTimestamp"] = now_rfc3339(c.now + timedelta(seconds=30))


def evicted_pod_ends(c: Cluster, rank: int) -> None:
    """Its trainer stopped for SIGTERM: the pod Failed, the condition kept."""
    conditions = c.pod(rank)["status"]["conditions"]
    c.set_pod_status(rank, {**exited(143, c.now), "conditions": conditions})


@pytest.mark.parametrize(
    "break_node, reason",
    [
        (lambda c: disrupt(c, 1), "PreemptionByScheduler"),
        (lambda c: disrupt(c, 1, "EvictionByEvictionAPI", "Eviction API: evicting"), "EvictionByEvictionAPI"),
        (lambda c: c.set_pod_status(1, {"phase": "Failed", "reason": "Evicted", "message": "The node was low on resource: memory.",
                                        "conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "TerminationByKubelet"}]}),
         "TerminationByKubelet"),
        (lambda c: c.set_pod_status(1, {"phase": "Unknown"}), "NodeLost"),
    ],
)
def test_a_disruption_restarts_the_gang_without_spending_a_restart(break_node, reason):
    c = started({"numNodes": 3, "maxRestarts": 0})
    break_node(c)
    p = c.reconcile()
    assert c.status["restarts"] == 0 and c.status["disruptions"] == 1
    assert c.status["phase"] == "Restarting"
    assert c.condition("Restarting")["reason"] == "Disrupted"
    assert "a disruption, not a failure of the job" in c.condition("Restarting")["message"]
    assert c.status["lastDisruption"]["reason"] == reason and c.status["lastDisruption"]["node"] == 1
    assert reasons(p.events)[:2] == ["NodeDisrupted", "Disrupted"]
    assert [n["attempt"] for n in c.status["nodes"]] == [1, 1, 1]
    converge(c)
    assert c.attempts() == {0: 1, 1: 1, 2: 1}  # the new gang, with maxRestarts 0
    assert "Failed" not in {x["type"] for x in c.status["conditions"] if x["status"] == "True"}


def test_disruptions_are_capped_by_max_disruptions_then_spend_restarts():
    c = started({"numNodes": 2, "maxRestarts": 1, "maxDisruptions": 1})
    disrupt(c, 0)
    converge(c)
    c.run()
    c.reconcile()
    assert (c.status["restarts"], c.status["disruptions"]) == (0, 1)
    disrupt(c, 1)
    c.reconcile()
    assert (c.status["restarts"], c.status["disruptions"]) == (1, 1)
    assert "disruption limit reached (1 of 1)" in c.condition("Restarting")["message"]
    converge(c)
    c.run()
    c.reconcile()
    disrupt(c, 1)
    c.reconcile()
    assert c.condition("Failed")["reason"] == "RestartLimitExceeded"


def drain(c: Cluster, *, passes: str) -> None:
    """Node 1 of 3 evicted at T; ranks 0 and 2 fail after it (torch.distributed errors, exit 1)
    at T+1; node 1's trainer ends at T+2. `passes`: "one" reconciles once, after it all;
    "each" after each step."""
    evict(c, 1)
    if passes == "each":
        c.reconcile()
    c.tick(1)
    c.fail(0, 1)
    c.fail(2, 1)
    if passes == "each":
        c.reconcile()
    c.tick(1)
    evicted_pod_ends(c, 1)
    c.reconcile()


@pytest.mark.parametrize("passes", ["one", "each"])
def test_a_drain_costs_one_disruption_however_the_passes_see_it(passes):
    c = started({"numNodes": 3, "maxRestarts": 0})
    drain(c, passes=passes)
    assert (c.status["restarts"], c.status["disruptions"]) == (0, 1)
    assert c.condition("Restarting")["reason"] == "Disrupted"
    assert c.status["lastDisruption"]["reason"] == "EvictionByEvictionAPI" and c.status["lastDisruption"]["node"] == 1
    converge(c)
    assert c.attempts() == {0: 1, 1: 1, 2: 1}  # one new gang, with maxRestarts 0
    assert "Failed" not in {x["type"] for x in c.status["conditions"] if x["status"] == "True"}


def test_failures_seen_with_the_eviction_are_named_as_following_it():
    c = started({"numNodes": 3, "maxRestarts": 0})
    drain(c, passes="one")
    message = c.condition("Restarting")["message"]
    assert message.startswith("node 1 (pod train-node-1) failed: exit code 143 (EvictionByEvictionAPI): Eviction API: evicting; "
                              "nodes 0, 2 failed after it; a disruption, not a failure of the job"), message
    assert c.status["lastDisruption"]["message"] == "Eviction API: evicting; nodes 0, 2 failed after it"


def test_a_real_failure_before_a_disruption_spends_a_restart():
    c = started({"numNodes": 3, "maxRestarts": 2})
    c.fail(2, 1)
    c.tick(1)
    disrupt(c, 1)
    c.fail(0, 1)  # after the disruption, but the gang had failed already
    c.reconcile()
    assert (c.status["restarts"], c.status.get("disruptions", 0)) == (1, 0)
    assert c.condition("Restarting")["reason"] == "GangRestart"
    assert c.condition("Restarting")["message"].startswith("node 2 (pod train-node-2) failed: exit code 1 (Error)")
    assert "lastDisruption" not in c.status


def test_a_failure_in_the_disruptions_second_is_part_of_it():
    c = started({"numNodes": 3, "maxRestarts": 2})
    disrupt(c, 1)
    c.fail(2, 1)
    c.reconcile()
    assert (c.status["restarts"], c.status["disruptions"]) == (0, 1)
    assert c.status["lastDisruption"]["message"] == "preempted by ml/urgent; node 2 failed after it"


@pytest.mark.parametrize("crash_after", range(0, 7))
def test_a_crash_at_any_step_of_a_disruption_restart_counts_it_once(crash_after):
    c = started({"numNodes": 3, "maxRestarts": 5})
    disrupt(c, 1)
    try:
        c.apply(c.plan(), crash_after=crash_after)
    except Crash:
        pass
    before = c.created_pods
    converge(c)
    assert (c.status["restarts"], c.status["disruptions"]) == (0, 1)
    assert c.attempts() == {0: 1, 1: 1, 2: 1}
    assert c.created_pods - before == 3  # exactly one new gang


def test_attempts_keep_rising_across_disruptions_and_failures():
    c = started({"numNodes": 2, "maxRestarts": 3})
    disrupt(c, 0)
    converge(c)
    c.run()
    c.reconcile()
    c.fail(1, 1)
    c.reconcile()
    converge(c)
    assert (c.status["restarts"], c.status["disruptions"]) == (1, 1)
    assert c.attempts() == {0: 2, 1: 2}  # attempt 1 was the disruption's, 2 the failure's


def test_elastic_disrupted_node_is_replaced_without_spending_a_restart():
    c = started({"numNodes": 3, "maxRestarts": 0, "elastic": {"minNodes": 2}})
    disrupt(c, 2, "DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint")
    c.reconcile()
    assert (c.status["restarts"], c.status["disruptions"]) == (0, 1)
    converge(c)
    assert c.attempts() == {0: 0, 1: 0, 2: 1}


def test_gang_restarts_back_off_exponentially_and_say_when_the_next_attempt_starts():
    c = started({"numNodes": 2, "maxRestarts": 3, "restartBackoffSeconds": 20, "startupTimeoutSeconds": 30})
    c.fail(1, 1)
    c.reconcile()
    due = parse_time(c.status["nextAttemptAfter"])
    assert due == c.now + timedelta(seconds=20)
    assert "the next attempt starts at" in c.condition("Restarting")["message"]
    c.finish_deletions()
    p = c.reconcile()
    assert not [o for o in p.create if o["kind"] == "Pod"]
    assert {n["reason"] for n in c.status["nodes"]} == {"BackingOff"}
    assert p.requeue_after == pytest.approx(20, abs=1)
    c.tick(19)
    assert not [o for o in c.reconcile().create if o["kind"] == "Pod"]
    c.tick(1)
    assert len([o for o in c.reconcile().create if o["kind"] == "Pod"]) == 2
    # the startup timeout (30 s) counts from the end of the backoff, not from the restart
    c.tick(25)
    c.reconcile()
    assert c.status["phase"] != "Failed"
    # the second restart waits twice as long, a disruption's as well
    c.run()
    c.reconcile()
    disrupt(c, 0)
    c.reconcile()
    assert parse_time(c.status["nextAttemptAfter"]) == c.now + timedelta(seconds=40)


def test_without_backoff_the_next_attempt_starts_at_once():
    c = started({"numNodes": 2, "maxRestarts": 3})
    c.fail(1, 1)
    c.reconcile()
    assert "nextAttemptAfter" not in c.status
    c.finish_deletions()
    assert len([o for o in c.reconcile().create if o["kind"] == "Pod"]) == 2


def test_a_lost_status_repairs_restarts_from_the_attempt_labels_upwards():
    c = Cluster(job_object({"numNodes": 2, "maxRestarts": 5}, status={"restarts": 0, "disruptions": 2}))
    c.reconcile()
    for rank in (0, 1):
        c.pod(rank)["metadata"]["labels"]["pinery.dev/attempt"] = "2"
        c.set_pod_status(rank, running())
    c.reconcile()
    # a status that has its counts is trusted: two disruptions made attempt 2
    assert (c.status["restarts"], c.status["disruptions"]) == (0, 2)
    assert [n["attempt"] for n in c.status["nodes"]] == [2, 2]
