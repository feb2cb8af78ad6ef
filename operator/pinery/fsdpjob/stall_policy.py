"""The progress watchdog: whether a running gang has stalled. Pure.

A gang is stalled when its reported step (status.progress.step, from rank 0's progress lines)
has not changed for `spec.progressDeadlineSeconds`, or when it has run
`firstProgressDeadlineSeconds` (default: progressDeadlineSeconds) without reporting a step at
all. It is Kubernetes Deployment's `progressDeadlineSeconds` for a training job: the controller
compares the time of the last progress with now (pkg/controller/deployment/util/deployment_util.go
`DeploymentTimedOut`), and as there every input is in the object's status, so an operator that
restarts mid-way decides the same. Unlike a Deployment (which only reports
ProgressDeadlineExceeded), a stalled gang is restarted, as a failure: the lifecycle spends one
of maxRestarts on it (failure_policy.restart_gang).

The clock runs only while the gang runs: it starts at the Running condition's last transition
to True, which every gang restart, resume, Kueue admission and elastic regrouping below
minNodes moves. So queueing, suspension and restarts are never stalls, and a step recorded by an
earlier gang counts from the new gang's start, never from its own time. A line is this gang's
when its time (the log's timestamp, `updatedAt`) is not before that start. Any change of the
step is an advance, a lower one too (a gang resumed from an older checkpoint).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Mapping, Optional

from pinery.api.conditions import get_condition, parse_time
from pinery.api.fsdpjob import FSDPJobSpec

REASON = "Stalled"


@dataclass(frozen=True)
class StallCheck:
    stalled: bool = False
    message: str = ""  # what stalled, naming the last step and when it was seen
    left: Optional[float] = None  # seconds until the deadline that runs (None: no clock runs)


def first_step_deadline(spec: FSDPJobSpec) -> tuple[Optional[int], str]:
    """The first-step deadline in seconds and the field it comes from."""
    if spec.first_progress_deadline_seconds is not None:
        return spec.first_progress_deadline_seconds, "firstProgressDeadlineSeconds"
    return spec.progress_deadline_seconds, "progressDeadlineSeconds"


def watching(job: Mapping[str, Any]) -> bool:
    """Whether a deadline may run out for this job as read (raw): a deadline is set and the gang
    runs. The handler then reads the log before planning, so that the decision sees the newest
    step, not the one of the previous pass."""
    spec = job.get("spec") or {}
    if spec.get("progressDeadlineSeconds") is None and spec.get("firstProgressDeadlineSeconds") is None:
        return False
    running = get_condition((job.get("status") or {}).get("conditions") or [], "Running")
    return running is not None and running.get("status") == "True"


def check(spec: FSDPJobSpec, running: Optional[Mapping[str, Any]], progress: Optional[Mapping[str, Any]], now: datetime) -> StallCheck:
    """Whether the gang has stalled: `running` is the Running condition, `progress` status.progress."""
    first, first_field = first_step_deadline(spec)
    if running is None or running.get("status") != "True" or (first is None and spec.progress_deadline_seconds is None):
        return StallCheck()
    started = parse_time(running.get("lastTransitionTime"))
    if started is None:
        return StallCheck()
    progress = progress or {}
    step = progress.get("step")
    reported = parse_time(progress.get("updatedAt"))
    if step is None or reported is None or reported < started:
        # Nothing reported by this gang yet.
        if first is None:
            return StallCheck()
        left = (started + timedelta(seconds=first) - now).total_seconds()
        if left > 0:
            return StallCheck(left=left)
        before = (f"; the last step reported, {step}, was at {progress.get('updatedAt')}, before this gang started"
                  if step is not None else "; no step was ever reported")
        return StallCheck(True, f"no step reported within {first}s ({first_field}) since the gang started running "
                                f"at {running.get('lastTransitionTime')}{before}")
    limit = spec.progress_deadline_seconds
    if limit is None:
        return StallCheck()
    changed = parse_time(progress.get("stepTime")) or reported  # a status written before stepTime existed
    since = max(changed, started)
    left = (since + timedelta(seconds=limit) - now).total_seconds()
    if left > 0:
        return StallCheck(left=left)
    seen = (f"since {progress.get('stepTime') or progress.get('updatedAt')}" if changed >= started
            else f"since the gang started running at {running.get('lastTransitionTime')}")
    return StallCheck(True, f"step {step} has not advanced for {limit}s (progressDeadlineSeconds): unchanged {seen}, "
                            f"last reported at {progress.get('updatedAt')}")
