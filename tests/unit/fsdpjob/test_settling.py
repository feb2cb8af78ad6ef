"""When a finished FSDPJob is settled (pinery.fsdpjob.settling): the daemon's filter, and when a
pass may write status.settledGeneration."""

import pytest

from pinery.fsdpjob.observe import view_pod
from pinery.fsdpjob.settling import at_rest, daemon_wanted


@pytest.mark.parametrize(
    "status, generation, wanted",
    [
        (None, 1, True),  # new: no status yet
        ({"phase": "Running"}, 1, True),
        ({"phase": "Succeeded"}, 1, True),  # finished, not settled yet
        ({"phase": "Succeeded", "settledGeneration": 1}, 1, False),
        ({"phase": "Failed", "settledGeneration": 3}, 3, False),
        ({"phase": "Succeeded", "settledGeneration": 1}, 2, True),  # the spec changed since: look again
        ({"phase": "Running", "settledGeneration": 1}, 1, True),  # not finished (a status put back by hand)
        ({"phase": "Failed", "settledGeneration": 0}, None, False),  # no generation reads as 0
    ],
)
def test_daemon_wanted(status, generation, wanted):
    meta = {"generation": generation} if generation is not None else {}
    assert daemon_wanted(status, meta) is wanted


def pod(phase: str, deleting: bool = False) -> dict:
    meta = {"name": "j-node-0", "uid": "u", "labels": {}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta, "spec": {}, "status": {"phase": phase}}


@pytest.mark.parametrize(
    "phase, idle, requeue, refused, pods, rest",
    [
        ("Succeeded", True, None, False, [], True),
        ("Failed", True, None, False, [pod("Failed"), pod("Succeeded")], True),  # finished pods stay for their logs
        ("Running", True, None, False, [], False),
        (None, True, None, False, [], False),
        ("Succeeded", False, None, False, [], False),  # this pass wrote something
        ("Succeeded", True, 30.0, False, [], False),  # ttlSecondsAfterFinished to wait for
        ("Failed", True, None, True, [], False),  # a creation refused
        ("Failed", True, None, False, [pod("Running")], False),  # a pod not stopped yet
        ("Failed", True, None, False, [pod("Running", deleting=True)], False),  # stopping
        ("Failed", True, None, False, [pod("Failed", deleting=True)], False),
        ("Failed", True, None, False, [pod("Pending")], False),
    ],
)
def test_at_rest(phase, idle, requeue, refused, pods, rest):
    assert at_rest(phase, idle, requeue, refused, [view_pod(p) for p in pods]) is rest
