"""The FSDPJob disruption policy, table by table: what counts as a disruption, what it costs,
and the backoff of gang restarts.

The disruption cases follow Kubernetes' own for a Job whose podFailurePolicy has an `Ignore`
rule on `DisruptionTarget` True (kubernetes pkg/controller/job/pod_failure_policy_test.go,
`TestMatchPodFailurePolicy`): "ignore rule matched for pod conditions" (a failed pod with the
condition True, whatever its reason: the failure is not counted) and "no policy rules" / "count
rule matched for exit codes" (a failed container without it: counted). Here a condition with
status False, or the reason on another condition type, is no disruption either.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from pinery.api.fsdpjob import FSDPJobSpec
from pinery.fsdpjob.disruption_policy import DISRUPTION_TARGET_REASONS, backoff, cause, decide, is_disruption
from pinery.fsdpjob.failure_policy import Failure
from pinery.fsdpjob.observe import view_pod

T0 = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)


def failure(rank: int, reason: str, code=None, disrupted: bool | None = None, at: float = 0) -> Failure:
    """Node `rank`'s failure, `at` seconds after T0."""
    marked = reason in DISRUPTION_TARGET_REASONS if disrupted is None else disrupted
    return Failure(rank, f"train-node-{rank}", reason, code, "", T0 + timedelta(seconds=at), marked)


def spec(**kw) -> FSDPJobSpec:
    return FSDPJobSpec.model_validate({"numNodes": 4, **kw})


def pod_failure(status: dict) -> Failure:
    """A Failure as the lifecycle builds it from a pod of this status."""
    pod = {"metadata": {"name": "train-node-1", "uid": "u", "labels": {"pinery.dev/node-rank": "1"}}, "status": status}
    v = view_pod(pod)
    return Failure(1, v.name, v.reason or "Error", v.exit_code, v.detail, T0, v.disrupted)


def condition(reason: str, status: str = "True", type_: str = "DisruptionTarget") -> dict:
    return {"type": type_, "status": status, "reason": reason, "message": "..."}


@pytest.mark.parametrize(
    "status, disruption",
    [
        *[pytest.param({"phase": "Failed", "conditions": [condition(r)]}, True, id=r) for r in sorted(DISRUPTION_TARGET_REASONS)],
        # a reason Kubernetes may add (the cluster autoscaler writes its own): the condition decides
        pytest.param({"phase": "Failed", "conditions": [condition("DeletionByClusterAutoscaler")]}, True, id="any reason"),
        # a pod being deleted by the eviction API: the condition comes before the deletion
        pytest.param({"phase": "Running", "conditions": [condition("EvictionByEvictionAPI")]}, False, id="not ended yet"),
        pytest.param({"phase": "Unknown"}, True, id="node lost"),
        pytest.param({"phase": "Failed", "reason": "Evicted", "conditions": [condition("TerminationByKubelet")]}, True,
                     id="kubelet eviction"),
        pytest.param({"phase": "Failed", "reason": "Evicted"}, False, id="Evicted without the condition"),
        pytest.param({"phase": "Failed", "conditions": [condition("PreemptionByScheduler", status="False")]}, False,
                     id="condition False"),
        pytest.param({"phase": "Failed", "conditions": [condition("PreemptionByScheduler", type_="Ready")]}, False,
                     id="another condition type"),
        pytest.param({"phase": "Failed", "containerStatuses": [
            {"name": "trainer", "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}]}, False, id="OOMKilled"),
        pytest.param({"phase": "Failed", "containerStatuses": [
            {"name": "trainer", "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}]}, False, id="exit 1"),
    ],
)
def test_what_is_a_disruption(status, disruption):
    assert is_disruption(pod_failure(status)) is disruption


@pytest.mark.parametrize("reason", ["PodDeleted", "Rank0Unreachable", "ExitedBeforeNodesJoined", "Error", "Evicted"])
def test_failures_recorded_by_reason_alone_are_not_disruptions(reason):
    assert not is_disruption(failure(1, reason, disrupted=False))


@pytest.mark.parametrize("reason", [*sorted(DISRUPTION_TARGET_REASONS), "NodeLost"])
def test_a_disruption_restarts_the_gang_without_spending_a_restart(reason):
    f = failure(1, reason)
    d = decide(spec(maxRestarts=3), 4, 2, 4, [f], [f])
    assert (d.action, d.restarts, d.disruptions, d.disrupted) == ("gang_restart", 2, 5, f)
    assert "disruption 5 of 10" in d.message and "restarts used 2 of 3" in d.message
    assert d.reported == (f,)


def test_a_disruption_with_no_restarts_left_still_restarts():
    f = failure(2, "PreemptionByScheduler")
    d = decide(spec(maxRestarts=0), 4, 0, 0, [f], [f])
    assert (d.action, d.restarts, d.disruptions) == ("gang_restart", 0, 1)


@pytest.mark.parametrize(
    "max_restarts, used, want",
    [
        (3, 1, ("gang_restart", 2, "")),  # past the cap a disruption spends a restart
        (1, 1, ("fail", 1, "RestartLimitExceeded")),  # and with none left the job fails
    ],
)
def test_past_max_disruptions_a_disruption_is_a_failure(max_restarts, used, want):
    f = failure(1, "TerminationByKubelet")
    d = decide(spec(maxRestarts=max_restarts, maxDisruptions=2), 4, used, 2, [f], [f])
    assert (d.action, d.restarts, d.reason) == want
    assert d.disruptions == 2 and d.disrupted is None
    assert "disruption limit reached (2 of 2), counted as a failure" in d.message


def test_max_disruptions_zero_counts_every_disruption_as_a_failure():
    f = failure(1, "PreemptionByScheduler")
    d = decide(spec(maxDisruptions=0), 4, 0, 0, [f], [f])
    assert (d.action, d.restarts, d.disruptions) == ("gang_restart", 1, 0)


def evicted(rank: int, at: float = 0) -> Failure:
    return failure(rank, "EvictionByEvictionAPI", code=143, at=at)


def exited(rank: int, code: int = 1, at: float = 0) -> Failure:
    return failure(rank, "Error", code=code, at=at)


# What a gang's new failures are, by their order in time (seconds after T0): the rule of
# `cause`. A disruption's time is its DisruptionTarget condition's, a failure's its container's end.
@pytest.mark.parametrize(
    "new, disruption_of",
    [
        # a drain: node 1 evicted, the other ranks fail after it (torch.distributed errors, exit 1)
        pytest.param([evicted(1), exited(0, at=1), exited(2, at=2), exited(3, at=1)], 1, id="eviction, then collateral"),
        # the API's times are whole seconds: a failure in the eviction's second cannot be told earlier
        pytest.param([exited(0), evicted(1), exited(2)], 1, id="same second"),
        pytest.param([exited(2, at=-1), evicted(1)], None, id="a real failure first"),
        pytest.param([exited(2, at=-1), evicted(1), exited(0, at=1)], None, id="a real failure first, collateral after"),
        # the first of several disruptions is the cause
        pytest.param([evicted(3, at=2), failure(1, "PreemptionByScheduler", code=137), exited(0, at=1)], 1, id="two disruptions"),
        pytest.param([exited(0), exited(2, at=1)], None, id="no disruption"),
        # a collateral rank exiting with a code the job never retries is part of the disruption
        pytest.param([evicted(1), exited(2, code=78, at=1)], 1, id="non-retryable after"),
        pytest.param([exited(2, code=78, at=-5), evicted(1)], None, id="non-retryable before"),
    ],
)
def test_failures_after_the_first_disruption_are_part_of_it(new, disruption_of):
    first = cause(new)
    assert (first.rank if first else None) == disruption_of


def test_a_drain_with_collateral_failures_is_one_disruption():
    new = [exited(2, at=2), evicted(1), exited(0, at=1), exited(3, code=78, at=1)]
    d = decide(spec(maxRestarts=0, nonRetryableExitCodes=[78]), 4, 0, 3, new, new)
    assert (d.action, d.restarts, d.disruptions, d.disrupted) == ("gang_restart", 0, 4, new[1])
    assert [f.rank for f in d.collateral] == [0, 3, 2]  # in the order they failed
    assert [f.rank for f in d.reported] == [1, 0, 3, 2]
    assert d.message.startswith("node 1 (pod train-node-1) failed: exit code 143 (EvictionByEvictionAPI); nodes 0, 2-3 failed after it; "
                                "a disruption, not a failure of the job: restarting all 4 nodes (disruption 4 of 10")


def test_a_real_failure_before_the_disruption_is_a_failure():
    new = [evicted(1), exited(2, at=-1), exited(0, at=1)]
    d = decide(spec(), 4, 0, 0, new, new)
    assert (d.action, d.restarts, d.disruptions, d.disrupted, d.collateral) == ("gang_restart", 1, 0, None, ())
    assert d.message.startswith("node 2 (pod train-node-2) failed: exit code 1 (Error); restarting all 4 nodes (restart 1 of 3)")


def test_a_non_retryable_exit_before_the_disruption_ends_the_job():
    new = [evicted(1), exited(2, code=78, at=-1)]
    d = decide(spec(nonRetryableExitCodes=[78]), 4, 0, 0, new, new)
    assert (d.action, d.reason) == ("fail", "NonRetryableExitCode")


def test_a_disruption_and_its_collateral_past_max_disruptions_spend_one_restart():
    new = [evicted(1), exited(0, at=1), exited(2, at=1)]
    d = decide(spec(maxDisruptions=1, maxRestarts=2), 4, 0, 1, new, new)
    assert (d.action, d.restarts, d.disruptions, d.disrupted) == ("gang_restart", 1, 1, None)
    assert "disruption limit reached (1 of 1), counted as a failure" in d.message


def test_a_non_retryable_exit_still_ends_the_job():
    f = failure(1, "Error", code=78)
    d = decide(spec(nonRetryableExitCodes=[78]), 4, 0, 3, [f], [f])
    assert (d.action, d.reason, d.disruptions) == ("fail", "NonRetryableExitCode", 3)


def test_nothing_new_costs_nothing():
    old = failure(1, "PreemptionByScheduler")
    d = decide(spec(), 4, 1, 2, [old], [])
    assert (d.action, d.restarts, d.disruptions) == ("none", 1, 2)


ELASTIC = {"elastic": {"minNodes": 2}}


def test_elastic_disrupted_nodes_are_replaced_without_spending_restarts():
    new = [failure(3, "DeletionByTaintManager"), failure(2, "DeletionByPodGC")]
    d = decide(spec(**ELASTIC), 4, 1, 0, new, new)
    assert (d.action, d.restarts, d.disruptions) == ("replace", 1, 2)
    assert [(r.failure.rank, r.replaced) for r in d.replacements] == [(2, True), (3, True)]
    assert "disruption 1 of 10" in d.replacements[0].message and "disruption 2 of 10" in d.replacements[1].message


def test_elastic_replacements_past_the_cap_spend_restarts():
    new = [failure(2, "PreemptionByScheduler"), failure(3, "PreemptionByScheduler")]
    d = decide(spec(maxDisruptions=1, maxRestarts=1, **ELASTIC), 4, 0, 0, new, new)
    assert (d.action, d.restarts, d.disruptions) == ("replace", 1, 0)
    assert [(r.failure.rank, r.replaced) for r in d.replacements] == [(2, True), (3, False)]
    assert all("disruption limit reached" in r.message for r in d.replacements)


def test_elastic_nodes_failing_after_a_disruption_are_replaced_with_it():
    new = [failure(2, "PreemptionByScheduler"), exited(3, at=1)]
    d = decide(spec(maxRestarts=0, **ELASTIC), 4, 0, 0, new, new)
    assert (d.action, d.restarts, d.disruptions, d.disrupted) == ("replace", 0, 1, new[0])
    assert [(r.failure.rank, r.replaced) for r in d.replacements] == [(2, True), (3, True)]
    assert "after the disruption of node 2: replacing its pod (part of that disruption, no restart spent)" in d.replacements[1].message


def test_elastic_a_failure_before_the_disruption_spends_restarts():
    new = [failure(2, "PreemptionByScheduler"), exited(3, at=-1)]
    d = decide(spec(maxRestarts=5, **ELASTIC), 4, 0, 0, new, new)
    assert (d.action, d.restarts, d.disruptions) == ("replace", 2, 0)


def test_elastic_collateral_that_breaks_the_gang_is_one_disruption():
    new = [failure(2, "PreemptionByScheduler"), exited(3, at=1), exited(1, at=1)]
    d = decide(spec(**ELASTIC), 4, 0, 0, new, new)
    assert (d.action, d.restarts, d.disruptions) == ("gang_restart", 0, 1)  # 1 node left of minNodes 2


def test_elastic_rank0_disrupted_is_replaced_as_a_disruption():
    f = failure(0, "PreemptionByScheduler")
    d = decide(spec(**ELASTIC), 4, 0, 0, [f], [f])
    assert (d.action, d.restarts, d.disruptions) == ("replace", 0, 1)


@pytest.mark.parametrize(
    "restart, base, seconds",
    [
        (1, 0, 0.0),  # off
        (0, 10, 0.0),  # no restart yet
        (1, 10, 10.0),
        (2, 10, 20.0),
        (5, 10, 160.0),
        (9, 10, 2560.0),
        (10, 10, 3600.0),  # capped
        (1000, 3600, 3600.0),  # no overflow however many restarts
    ],
)
def test_backoff_doubles_per_restart_and_is_capped(restart, base, seconds):
    assert backoff(restart, base) == seconds
