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

from datetime import datetime, timezone

import pytest

from pinery.api.fsdpjob import FSDPJobSpec
from pinery.fsdpjob.disruption_policy import DISRUPTION_TARGET_REASONS, backoff, decide, is_disruption
from pinery.fsdpjob.failure_policy import Failure
from pinery.fsdpjob.observe import view_pod

T0 = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)


def failure(rank: int, reason: str, code=None, disrupted: bool | None = None) -> Failure:
    marked = reason in DISRUPTION_TARGET_REASONS if disrupted is None else disrupted
    return Failure(rank, f"train-node-{rank}", reason, code, "", T0, marked)


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


def test_a_disruption_beside_a_real_failure_is_a_failure():
    both = [failure(1, "PreemptionByScheduler"), failure(2, "Error", code=1)]
    d = decide(spec(), 4, 0, 0, both, both)
    assert (d.action, d.restarts, d.disruptions, d.disrupted) == ("gang_restart", 1, 0, None)
    assert "restart 1 of 3" in d.message


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


def test_elastic_rank0_disrupted_restarts_the_gang_as_a_disruption():
    f = failure(0, "PreemptionByScheduler")
    d = decide(spec(**ELASTIC), 4, 0, 0, [f], [f])
    assert (d.action, d.restarts, d.disruptions) == ("gang_restart", 0, 1)


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
