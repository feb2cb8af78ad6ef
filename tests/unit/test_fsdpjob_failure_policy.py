"""The FSDPJob failure policy, table by table: which nodes failed, and what it costs."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from pinery.api.fsdpjob import FSDPJobSpec
from pinery.fsdpjob.failure_policy import (
    Failure,
    decide,
    gang_broken,
    never_joined,
    node_failures,
    node_list,
    non_retryable,
    rank0_alone,
)
from pinery.fsdpjob.observe import PodView

T0 = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
NAMES = [f"train-node-{i}" for i in range(4)]


def pod(rank: int, phase: str = "Running", *, exit_code=None, reason=None, detail="", terminating=False,
        joined=True, finished_at=None) -> PodView:
    return PodView(
        name=f"train-node-{rank}", uid=f"uid-{rank}", rank=rank, attempt=0, controller_uid="job", phase=phase,
        terminating=terminating, deletion_timestamp=None, created_at=T0, started=phase != "Pending", joined=joined,
        exit_code=exit_code, container_exit_code=exit_code, reason=reason, detail=detail, finished_at=finished_at,
    )


def failure(rank: int, code=1, at: datetime = T0, reason="Error") -> Failure:
    return Failure(rank, f"train-node-{rank}", reason, code, "", at)


def spec(**kw) -> FSDPJobSpec:
    return FSDPJobSpec.model_validate({"numNodes": 4, **kw})


@pytest.mark.parametrize(
    "ranks, text",
    [([3], "node 3"), ([0, 1, 2], "nodes 0-2"), ([0, 1, 2, 5], "nodes 0-2, 5"), ([1, 3], "nodes 1, 3")],
)
def test_node_list(ranks, text):
    assert node_list(ranks) == text


@pytest.mark.parametrize(
    "code, f, want",
    [
        (None, failure(0, 78), True),  # the built-in trainer's configuration error
        (["sh"], failure(0, 78), False),  # a command of its own: only its own codes
        (None, failure(0, 1), False),
        (None, failure(0, None), False),
    ],
)
def test_non_retryable_exit_codes(code, f, want):
    assert non_retryable(spec(command=code), f) is want


def test_a_jobs_own_non_retryable_codes_count_with_its_own_command():
    assert non_retryable(spec(command=["sh"], nonRetryableExitCodes=[3]), failure(1, 3))


@pytest.mark.parametrize(
    "elastic, failed, broken",
    [
        (None, [1], True),  # a gang: any failure
        ({"minNodes": 2}, [1], False),  # 3 of 4 left
        ({"minNodes": 2}, [1, 2], False),  # 2 of 4 left
        ({"minNodes": 2}, [1, 2, 3], True),  # too few left
        ({"minNodes": 1}, [0], False),  # rank 0 hosts nothing: the store has a pod of its own
        ({"minNodes": 3}, [0, 3], True),  # rank 0 counts as any node
    ],
)
def test_gang_broken(elastic, failed, broken):
    s = spec(elastic=elastic) if elastic else spec()
    assert gang_broken(s.elastic, 4, [failure(r) for r in failed]) is broken


# (spec, restarts used, all failures, new failures) -> (action, restarts after, reason, message)
CASES = [
    ("gang restart", {"maxRestarts": 2}, 0, [failure(1)], [failure(1)],
     ("gang_restart", 1, "", "node 1 (pod train-node-1) failed: exit code 1 (Error); restarting all 4 nodes (restart 1 of 2)")),
    ("budget spent", {"maxRestarts": 2}, 2, [failure(1)], [failure(1)],
     ("fail", 2, "RestartLimitExceeded", "node 1 (pod train-node-1) failed: exit code 1 (Error); no restarts left (2 of 2 used)")),
    ("earliest failure named", {"maxRestarts": 2}, 0, [failure(2, at=T0), failure(1, at=T0 + timedelta(seconds=1))],
     [failure(2, at=T0), failure(1, at=T0 + timedelta(seconds=1))],
     ("gang_restart", 1, "", "node 2 (pod train-node-2) failed: exit code 1 (Error); restarting all 4 nodes (restart 1 of 2)")),
    ("non-retryable beats the budget", {"maxRestarts": 5}, 0, [failure(1, 1), failure(3, 78)], [failure(1, 1), failure(3, 78)],
     ("fail", 0, "NonRetryableExitCode", "node 3 (pod train-node-3) failed: exit code 78 (Error); exit code 78 is not retried")),
    ("nothing new", {"maxRestarts": 2}, 1, [failure(1)], [], ("none", 1, "", "")),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_decide(case):
    _, s, used, all_, new, (action, restarts, reason, message) = case
    d = decide(spec(**s), 4, used, all_, new)
    assert (d.action, d.restarts, d.reason, d.message) == (action, restarts, reason, message)
    assert [f.rank for f in d.reported] == [f.rank for f in sorted(new, key=lambda f: (f.at, f.rank))]


@pytest.mark.parametrize(
    "max_restarts, used, new, want",
    [
        (3, 0, [2, 1], [(1, True, "restart 1 of 3"), (2, True, "restart 2 of 3")]),  # by rank, one restart each
        (3, 2, [1, 2], [(1, True, "restart 3 of 3"), (2, False, "no restarts left")]),  # the budget runs out on the second
        (0, 0, [1], [(1, False, "no restarts left")]),
    ],
)
def test_elastic_failures_replace_nodes_while_budget_lasts(max_restarts, used, new, want):
    s = spec(maxRestarts=max_restarts, elastic={"minNodes": 2})
    d = decide(s, 4, used, [failure(r) for r in new], [failure(r) for r in new])
    assert d.action == "replace"
    assert [(r.failure.rank, r.replaced) for r in d.replacements] == [(rank, replaced) for rank, replaced, _ in want]
    assert all(text in r.message for r, (_, _, text) in zip(d.replacements, want, strict=True))
    assert d.restarts == used + sum(1 for _, replaced, _ in want if replaced)
    for r in d.replacements:
        assert r.message.endswith("training goes on without it") is (not r.replaced)


def test_node_failures_reads_pods_and_the_previous_status():
    current = {
        0: pod(0),
        1: pod(1, "Failed", exit_code=137, reason="OOMKilled", finished_at=T0 - timedelta(seconds=5)),
        2: pod(2, terminating=True),
    }
    old = {3: {"phase": "Failed", "reason": "Error", "exitCode": 2}}
    found = node_failures(4, current, NAMES, old, known_failed={3}, vanished=set(), now=T0)
    assert [(f.rank, f.reason, f.exit_code, f.at) for f in found] == [
        (1, "OOMKilled", 137, T0 - timedelta(seconds=5)),
        (2, "PodDeleted", None, T0),
        (3, "Error", 2, T0),
    ]
    assert found[1].detail == "the pod was deleted by someone other than pinery"
    gone = node_failures(4, {0: pod(0)}, NAMES, {}, known_failed=set(), vanished={2}, now=T0)
    assert [(f.rank, f.reason, f.detail) for f in gone] == [(2, "PodDeleted", "the pod disappeared")]


# rank 0 finished at T0; node 1 never joined.
@pytest.mark.parametrize(
    "now_after, elastic, rank0_code, want_ranks, recheck, early",
    [
        (3, None, 0, [], 7.0, False),  # within the grace: look again when it ends
        (10, None, 0, [0], None, True),  # past it: rank 0's failure
        (10, {"minNodes": 1}, 0, [], None, False),  # elastic, enough succeeded: the elastic rules decide
    ],
)
def test_rank0_exiting_before_the_others_joined(now_after, elastic, rank0_code, want_ranks, recheck, early):
    phase = "Succeeded" if rank0_code == 0 else "Failed"
    current = {0: pod(0, phase, exit_code=rank0_code, finished_at=T0), 1: pod(1, joined=False, reason="WaitingForRank0")}
    s = spec(numNodes=2, elastic=elastic) if elastic else spec(numNodes=2)
    check = rank0_alone([], n=2, current=current, known_failed=set(), node_reasons={}, elastic=s.elastic,
                        now=T0 + timedelta(seconds=now_after), grace=10.0)
    assert [f.rank for f in check.failures] == want_ranks
    assert check.recheck_after == (pytest.approx(recheck) if recheck else None)
    assert check.exited_early is early
    if early:
        assert check.failures[0].reason == "ExitedBeforeNodesJoined"
        assert check.failures[0].detail == "rank 0 exited before the other nodes joined: node 1 never joined (WaitingForRank0)"


def test_a_failed_rank0_says_who_never_joined():
    current = {0: pod(0, "Failed", exit_code=1, finished_at=T0), 1: pod(1, joined=False, reason="WaitingForRank0")}
    check = rank0_alone([failure(0)], n=2, current=current, known_failed=set(), node_reasons={}, elastic=None, now=T0, grace=10.0)
    assert [f.detail for f in check.failures] == ["node 1 never joined (WaitingForRank0)"] and not check.exited_early


def test_never_joined_groups_by_reason():
    current = {1: pod(1, joined=False, reason="WaitingForRank0")}
    assert never_joined([1, 2, 3], current, {2: "Creating"}) == (
        "nodes 1-3 never joined (node 1: WaitingForRank0; node 2: Creating; node 3: Pending)"
    )
