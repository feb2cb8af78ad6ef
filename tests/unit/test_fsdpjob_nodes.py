"""A node's entry of status.nodes, typed, and what the previous status says about it."""

from __future__ import annotations

import pytest

from pinery.fsdpjob.nodes import NodeState, known_failure, observed_before


@pytest.mark.parametrize(
    "old, want",
    [
        (None, {"index": 1, "pod": "j-node-1", "restarts": 0, "attempt": 0}),
        ({"index": 1, "pod": "stale", "restarts": 2, "attempt": 2, "phase": "Running", "exitCode": None},
         {"index": 1, "pod": "j-node-1", "restarts": 2, "attempt": 2, "phase": "Running"}),
        ({"index": 1, "reason": "Creating", "future": "kept"},
         {"index": 1, "pod": "j-node-1", "restarts": 0, "attempt": 0, "reason": "Creating", "future": "kept"}),
    ],
)
def test_load_and_write_back(old, want):
    assert NodeState.load(1, "j-node-1", old).to_status() == want


def test_a_new_attempt_counts_a_restart_and_forgets_the_old_pods_outcome():
    node = NodeState.load(0, "j-node-0", {"attempt": 1, "restarts": 1, "phase": "Failed", "exitCode": 1})
    node.new_attempt(2, "Restarting")
    assert node.to_status() == {"index": 0, "pod": "j-node-0", "restarts": 2, "attempt": 2, "reason": "Restarting"}


@pytest.mark.parametrize(
    "old, attempt, seen, failed",
    [
        (None, 0, False, False),
        ({"phase": "Running", "attempt": 1}, 1, True, False),
        ({"phase": "Running", "attempt": 0}, 1, False, False),  # an older attempt's pod
        ({"phase": "Failed"}, 0, True, True),
        ({"phase": "Failed", "attempt": 1}, 2, False, False),
    ],
)
def test_what_the_previous_status_says(old, attempt, seen, failed):
    assert observed_before(old, attempt) is seen and known_failure(old, attempt) is failed
