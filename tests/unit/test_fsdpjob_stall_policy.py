"""The progress watchdog (pinery.fsdpjob.stall_policy), case by case.

Times are seconds after T0; the gang's Running condition turned True at `run`, and the progress
(if any) was last reported at `seen` with its step changed at `changed`. Kubernetes Deployment's
`DeploymentTimedOut` (pkg/controller/deployment/util/deployment_util.go) is the model: the
deadline has passed when the last progress time plus the deadline is before now.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, Optional

import pytest

from pinery.api.conditions import now_rfc3339
from pinery.api.fsdpjob import FSDPJobSpec
from pinery.fsdpjob.stall_policy import check, first_step_deadline, watching

T0 = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)


def at(seconds: float) -> str:
    return now_rfc3339(T0 + timedelta(seconds=seconds))


def running(since: Optional[float], status: str = "True") -> Optional[dict[str, Any]]:
    if since is None:
        return None
    return {"type": "Running", "status": status, "reason": "NodesRunning", "lastTransitionTime": at(since)}


def progress(step: int, seen: float, changed: Optional[float]) -> dict[str, Any]:
    p: dict[str, Any] = {"step": step, "updatedAt": at(seen)}
    if changed is not None:
        p["stepTime"] = at(changed)
    return p


def spec(**fields: Any) -> FSDPJobSpec:
    return FSDPJobSpec.model_validate({"numNodes": 2, "command": ["torchrun", "x.py"], **fields})


PD = {"progressDeadlineSeconds": 60}
BOTH = {"progressDeadlineSeconds": 60, "firstProgressDeadlineSeconds": 300}
FIRST_ONLY = {"firstProgressDeadlineSeconds": 300}
ELASTIC = {"numNodes": 3, "elastic": {"minNodes": 2}, "progressDeadlineSeconds": 60}


@pytest.mark.parametrize(
    "fields, run, prog, now, stalled, left, fragment",
    [
        # Off.
        pytest.param({}, 0, None, 10_000, False, None, "", id="off-when-unset"),
        pytest.param({}, 0, progress(3, 10, 10), 10_000, False, None, "", id="off-when-unset-with-progress"),
        # No clock while the gang does not run: queued, pending, restarting, suspended.
        pytest.param(PD, None, None, 10_000, False, None, "", id="no-running-condition"),
        pytest.param(PD, None, progress(3, 10, 10), 10_000, False, None, "", id="no-clock-before-running"),
        # First step: defaults to progressDeadlineSeconds, counts from the gang's start.
        pytest.param(PD, 100, None, 130, False, 30, "", id="first-step-runs-from-gang-start"),
        pytest.param(PD, 100, None, 160, True, None, "no step reported within 60s (progressDeadlineSeconds) since the gang started "
                     "running at 2026-01-01T12:01:40Z; no step was ever reported", id="never-reported-stalls"),
        pytest.param(BOTH, 100, None, 160, False, 240, "", id="first-step-field-wins"),
        pytest.param(BOTH, 100, None, 400, True, None, "within 300s (firstProgressDeadlineSeconds)", id="first-step-field-stalls"),
        pytest.param(FIRST_ONLY, 100, None, 399, False, 1, "", id="first-only-guards-the-start"),
        pytest.param(FIRST_ONLY, 100, progress(3, 150, 150), 10_000, False, None, "", id="first-only-no-watch-after-a-step"),
        # A step from an earlier gang (before a restart, a resume, an admission) is not this gang's.
        pytest.param(BOTH, 100, progress(7, 90, 50), 200, False, 200, "", id="old-gangs-step-does-not-count"),
        pytest.param(BOTH, 100, progress(7, 90, 50), 400, True, None,
                     "; the last step reported, 7, was at 2026-01-01T12:01:30Z, before this gang started", id="old-gangs-step-named"),
        # Steps of this gang.
        pytest.param(BOTH, 100, progress(3, 130, 120), 150, False, 30, "", id="counts-from-step-change"),
        pytest.param(BOTH, 100, progress(3, 179, 120), 179, False, 1, "", id="a-line-repeating-the-step-is-no-advance"),
        pytest.param(BOTH, 100, progress(3, 179, 120), 180, True, None,
                     "step 3 has not advanced for 60s (progressDeadlineSeconds): unchanged since 2026-01-01T12:02:00Z, "
                     "last reported at 2026-01-01T12:02:59Z", id="stalled-names-step-and-time"),
        # This gang reported the step an earlier gang had reached: it counts from the gang's start.
        pytest.param(BOTH, 100, progress(3, 110, 50), 150, False, 10, "", id="same-step-as-before-restart"),
        pytest.param(BOTH, 100, progress(3, 110, 50), 161, True, None, "unchanged since the gang started running at 2026-01-01T12:01:40Z",
                     id="same-step-as-before-restart-stalls"),
        # A status written before stepTime existed: updatedAt is the latest the step can have changed.
        pytest.param(PD, 100, progress(3, 130, None), 180, False, 10, "", id="no-step-time-uses-updated-at"),
        # Elastic jobs: the same clock (a regrouping below minNodes turns Running False).
        pytest.param(ELASTIC, 100, progress(3, 130, 120), 181, True, None, "step 3", id="elastic"),
    ],
)
def test_check(fields, run, prog, now, stalled, left, fragment):
    result = check(spec(**fields), running(run), prog, T0 + timedelta(seconds=now))
    assert result.stalled is stalled
    assert result.left == left
    assert fragment in result.message
    assert bool(result.message) is stalled


def test_a_running_condition_that_is_false_stops_the_clock():
    assert check(spec(**PD), running(0, "False"), None, T0 + timedelta(hours=9)).left is None


@pytest.mark.parametrize(
    "fields, expected",
    [
        ({}, (None, "progressDeadlineSeconds")),
        (PD, (60, "progressDeadlineSeconds")),
        (BOTH, (300, "firstProgressDeadlineSeconds")),
        (FIRST_ONLY, (300, "firstProgressDeadlineSeconds")),
    ],
)
def test_first_step_deadline_defaults_to_the_progress_deadline(fields, expected):
    assert first_step_deadline(spec(**fields)) == expected


@pytest.mark.parametrize(
    "job_spec, conditions, expected",
    [
        ({"progressDeadlineSeconds": 60}, [running(0)], True),
        ({"firstProgressDeadlineSeconds": 60}, [running(0)], True),
        ({}, [running(0)], False),
        ({"progressDeadlineSeconds": 60}, [running(0, "False")], False),
        ({"progressDeadlineSeconds": 60}, [], False),
    ],
)
def test_watching(job_spec, conditions, expected):
    assert watching({"spec": job_spec, "status": {"conditions": conditions}}) is expected
