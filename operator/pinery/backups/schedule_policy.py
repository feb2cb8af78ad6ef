"""When a VectorIndexBackupSchedule runs: Kubernetes CronJob's rules for missed times
(pkg/controller/cronjob/utils.go mostRecentScheduleTime, nextScheduleTime,
nextScheduleTimeDuration; cronjob_controllerv2.go syncCronJob), as one pure decision.

pinery's rule:

- The times considered are those after the later of the schedule's creation and its last
  scheduled time, up to now (CronJob takes the last scheduled time when there is one, else the
  creation time).
- Times missed while the operator was down get at most one catch-up run: the most recent one,
  and only when it is within `starting_deadline_seconds` of now (None: no deadline). The earlier
  ones are counted in `missed` and skipped, as CronJob starts only the last unmet time.
- More than 100 times in the window CronJob inspects (the last `starting_deadline_seconds`, or
  everything since the earliest time) sets `too_many_missed`: CronJob's TooManyMissedTimes
  warning, a flag here, never an error.
- A suspended schedule runs nothing; its missed times are still counted and its next time still
  reported. The caller does not move the last scheduled time while suspended, so on resume the
  most recent missed time runs if it is within the deadline, as a resumed CronJob does.

Up to 101 times are found by stepping robfig's Next from the earliest time, as CronJob did
before it counted (getRecentUnmetScheduleTimes, which gave up past 100): the usual pass, woken at
its next time, follows Next exactly. Past that (an operator down for long), the most recent time
is found by bisection over Next and the others counted from the calendar (pinery.cron),
so a per-minute schedule down for a month costs milliseconds. The two agree except around DST
changes where robfig's Next itself strays from the calendar, skipping or adding some times:
changes that do not move the clock by whole hours at the top of an hour (Lord Howe, Chatham),
and changes at midnight (Sao Paulo until 2019, Asuncion, Cairo, Beirut). There the count is the
calendar's.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Optional
from zoneinfo import ZoneInfo

from pinery.cron import CronSchedule

# utils.go mostRecentScheduleTime: more missed start times than this is "many".
TOO_MANY_MISSED = 100
# How many times are stepped one by one before counting takes over.
_WALK = TOO_MANY_MISSED + 1


@dataclass(frozen=True)
class Due:
    run_at: Optional[datetime]  # the scheduled time to run now, or None
    missed: int  # scheduled times that passed without a run (excluding run_at)
    too_many_missed: bool  # more than 100 missed, as CronJob warns
    next_at: Optional[datetime]  # the next scheduled time strictly after now (None if the cron never fires)


def due(schedule: CronSchedule, tz: ZoneInfo, *, created: datetime, last_scheduled: Optional[datetime],
        now: datetime, starting_deadline_seconds: Optional[int], suspend: bool = False) -> Due:
    """What a pass of the schedule's controller does at `now`. All datetimes timezone-aware;
    those returned are in UTC."""
    if starting_deadline_seconds is not None and starting_deadline_seconds < 0:
        # validation.go validateCronJobSpec: startingDeadlineSeconds must be non-negative.
        raise ValueError(f"startingDeadlineSeconds must be greater than or equal to 0, got {starting_deadline_seconds}")
    earliest = created if last_scheduled is None else max(created, last_scheduled)
    # mostRecentScheduleTime: with startingDeadlineSeconds nothing older than now - deadline is
    # scheduled; syncCronJob's tooLate check says the same of the most recent time.
    window_start = earliest
    if starting_deadline_seconds is not None:
        window_start = max(earliest, now - timedelta(seconds=starting_deadline_seconds))
    times = _walk(schedule, tz, earliest, now)
    if times is not None:
        latest = times[-1] if times else None
        total = len(times)
        in_window = sum(1 for t in times if t > window_start)
    else:
        latest = schedule.latest_between(earliest, now, tz)
        # At least the one found, wherever the calendar and robfig's Next disagree.
        total = max(1, schedule.count_between(earliest, now, tz))
        in_window = max(0, total - schedule.count_between(earliest, window_start, tz))
    # nextScheduleTimeDuration: the next time after the most recent one, else after the earliest
    # (for @every, whose times count from the earliest, that is not the same as after now).
    next_at = schedule.next_after(latest or earliest, tz)
    if suspend:
        # syncCronJob: a suspended CronJob starts nothing and warns of nothing.
        return Due(run_at=None, missed=total, too_many_missed=False, next_at=next_at)
    run_at = latest if latest is not None and latest > window_start else None
    missed = total - 1 if run_at is not None else total
    return Due(run_at=run_at, missed=missed, too_many_missed=in_window > TOO_MANY_MISSED, next_at=next_at)


def _walk(schedule: CronSchedule, tz: ZoneInfo, earliest: datetime, now: datetime) -> Optional[list[datetime]]:
    """The times in (earliest, now], stepping Next from earliest; None when there are more than
    _WALK of them."""
    times: list[datetime] = []
    t = schedule.next_after(earliest, tz)
    while t is not None and t <= now:
        if len(times) == _WALK:
            return None
        times.append(t)
        t = schedule.next_after(t, tz)
    return times
