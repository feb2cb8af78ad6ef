"""The FSDPJob clocks: activeDeadlineSeconds, the startup timeout, TTL after finished, pods
stuck terminating."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from pinery.api.conditions import now_rfc3339
from pinery.fsdpjob.deadlines import active_deadline_left, startup_left, stuck_terminating, ttl_left
from tests.unit.test_fsdpjob_failure_policy import T0, pod


def at(seconds: float) -> str:
    return now_rfc3339(T0 + timedelta(seconds=seconds))


def cond(type_: str, status: str, seconds: float) -> dict:
    return {"type": type_, "status": status, "lastTransitionTime": at(seconds)}


@pytest.mark.parametrize(
    "deadline, start, suspended, now, left",
    [
        (None, at(0), None, 50, None),  # no deadline
        (100, None, None, 50, None),  # not started
        (100, at(0), None, 40, 60),
        (100, at(0), None, 100, 0),  # passed
        (100, at(0), cond("Suspended", "False", 30), 40, 90),  # a resume restarts the clock
        (100, at(0), cond("Suspended", "True", 30), 40, 60),  # still suspended: no resume yet
    ],
)
def test_active_deadline(deadline, start, suspended, now, left):
    assert active_deadline_left(deadline, start, suspended, T0 + timedelta(seconds=now)) == left


@pytest.mark.parametrize(
    "conditions, now, left",
    [
        ([], 100, 500),
        ([cond("Restarting", "True", 200)], 300, 500),  # from the last gang restart
        ([cond("Restarting", "False", 200)], 300, 300),  # a finished restart does not count
        ([cond("Suspended", "False", 400)], 450, 550),  # from the resume
        ([cond("Queued", "False", 400)], 450, 550),  # from the (last) Kueue admission
        ([cond("Queued", "True", 400)], 450, 150),  # queued again: no admission to count from
        ([], 600, 0),
    ],
)
def test_startup_timeout_counts_from_the_latest_start(conditions, now, left):
    assert startup_left(600, at(0), conditions, T0 + timedelta(seconds=now)) == left


@pytest.mark.parametrize("queued, now, left", [
    (cond("Queued", "False", 30), 40, 90),  # a Kueue admission restarts the clock
    (cond("Queued", "True", 30), 40, 60),  # evicted, not admitted again yet
    (None, 40, 60),
])
def test_active_deadline_counts_from_the_last_admission(queued, now, left):
    assert active_deadline_left(100, at(0), None, T0 + timedelta(seconds=now), queued) == left


def test_startup_timeout_without_any_start_is_unknown():
    assert startup_left(600, None, [], T0) is None


@pytest.mark.parametrize(
    "ttl, done, now, left",
    [(None, at(0), 10, None), (60, None, 10, None), (60, at(0), 10, 50), (0, at(0), 0, 0), (60, at(0), 70, -10)],
)
def test_ttl_after_finished(ttl, done, now, left):
    assert ttl_left(ttl, done, T0 + timedelta(seconds=now)) == left


def test_pods_stuck_terminating_are_forced_after_their_deadline():
    due = replace(pod(0, terminating=True), deletion_timestamp=T0 - timedelta(seconds=60))
    later = replace(pod(1, terminating=True), deletion_timestamp=T0 - timedelta(seconds=20))
    alive = pod(2)
    no_stamp = pod(3, terminating=True)
    force, waits = stuck_terminating([due, later, alive, no_stamp], T0, force_after=60.0)
    assert [p.name for p in force] == ["train-node-0"] and waits == [40.0]
