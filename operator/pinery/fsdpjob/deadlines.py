"""The FSDPJob's clocks: activeDeadlineSeconds, the startup timeout, ttlSecondsAfterFinished
and pods stuck terminating. Pure: each answers how many seconds are left (<= 0: it has passed).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Iterable, Mapping, Optional

from pinery.api.conditions import get_condition, parse_time
from pinery.fsdpjob.observe import PodView


def _left(start: datetime, seconds: float, now: datetime) -> float:
    return (start + timedelta(seconds=seconds) - now).total_seconds()


def active_deadline_left(deadline: Optional[int], start_time: Optional[str], suspended: Optional[Mapping[str, Any]],
                         now: datetime, queued: Optional[Mapping[str, Any]] = None) -> Optional[float]:
    """Seconds left of activeDeadlineSeconds; None without a deadline or before the start.
    A resume restarts the clock (Suspended False since then), and so does a Kueue admission
    (Queued False since then): Kueue resets a Job's startTime when it stops it after an
    eviction (job_controller_test "when workload is evicted, suspend, reset startTime and
    restore node affinity")."""
    start = parse_time(start_time)
    if deadline is None or start is None:
        return None
    for cond in (suspended, queued):
        if cond and cond.get("status") == "False":
            start = max(start, parse_time(cond.get("lastTransitionTime")) or start)
    return _left(start, deadline, now)


def startup_left(limit: int, start_time: Optional[str], conditions: list[dict[str, Any]], now: datetime,
                 later: Iterable[Optional[str]] = ()) -> Optional[float]:
    """Seconds left of startupTimeoutSeconds, counted from the latest of the first creation, the
    last gang restart (Restarting True), the last resume (Suspended False), the last Kueue
    admission (Queued False: time in the queue is no startup failure) and the `later` starts
    (the end of a restart backoff: waiting for it is not a slow start); None when none is
    known."""
    starts = [parse_time(start_time), *(parse_time(t) for t in later)]
    for type_, status in (("Restarting", "True"), ("Suspended", "False"), ("Queued", "False")):
        c = get_condition(conditions, type_)
        if c and c.get("status") == status:
            starts.append(parse_time(c.get("lastTransitionTime")))
    known = [s for s in starts if s is not None]
    if not known:
        return None
    return _left(max(known), limit, now)


def ttl_left(ttl: Optional[int], completion_time: Optional[str], now: datetime) -> Optional[float]:
    """Seconds left until a finished job is deleted; None when it is never deleted."""
    done = parse_time(completion_time)
    if ttl is None or done is None:
        return None
    return _left(done, ttl, now)


def stuck_terminating(pods: Iterable[PodView], now: datetime, force_after: float) -> tuple[list[PodView], list[float]]:
    """(the terminating pods to force-delete now, seconds until each of the others is due)."""
    force, later = [], []
    for p in pods:
        if not (p.terminating and p.deletion_timestamp):
            continue
        left = _left(p.deletion_timestamp, force_after, now)
        if left <= 0:
            force.append(p)
        else:
            later.append(left)
    return force, later
