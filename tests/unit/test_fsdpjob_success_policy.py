"""The FSDPJob success policy: when the job runs and when it has succeeded."""

from __future__ import annotations

import pytest

from pinery.api.fsdpjob import ElasticSpec
from pinery.fsdpjob.success_policy import outcome, success_message
from tests.unit.test_fsdpjob_failure_policy import pod

S, R, F, P = "Succeeded", "Running", "Failed", "Pending"


# (n, elastic minNodes, phases of the current pods by rank) -> (succeeded, started, running nodes)
@pytest.mark.parametrize(
    "n, min_nodes, phases, want",
    [
        (2, None, [S, S], (True, True, 0)),
        (2, None, [S], (False, False, 0)),  # a node has no pod
        (2, None, [R, R], (False, True, 2)),
        (2, None, [R, P], (False, False, 1)),
        (2, None, [R, F], (False, False, 1)),
        (3, 2, [S, S, F], (True, True, 0)),  # enough exited 0, none still runs
        (3, 2, [S, R, F], (False, True, 1)),
        (3, 2, [S, F, F], (False, False, 0)),
        (3, 2, [R, P, P], (False, False, 1)),
    ],
)
def test_outcome(n, min_nodes, phases, want):
    elastic = ElasticSpec(min_nodes=min_nodes) if min_nodes else None
    current = {i: pod(i, phase, exit_code=0 if phase == S else None) for i, phase in enumerate(phases)}
    got = outcome(n, elastic, current)
    assert (got.succeeded, got.started, got.running_nodes) == want


def test_a_gang_node_that_succeeded_with_a_nonzero_code_is_no_success():
    current = {0: pod(0, S, exit_code=0), 1: pod(1, S, exit_code=3)}
    assert not outcome(2, None, current).succeeded


@pytest.mark.parametrize(
    "min_nodes, message",
    [(None, "all 3 nodes exited 0"), (2, "2 of 3 nodes exited 0 (elastic, at least 2 needed)")],
)
def test_success_message(min_nodes, message):
    elastic = ElasticSpec(min_nodes=min_nodes) if min_nodes else None
    current = {0: pod(0, S), 1: pod(1, S), 2: pod(2, F)}
    assert success_message(3, elastic, current) == message
