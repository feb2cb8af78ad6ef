"""One pass of a VectorIndexBackupSchedule, decided (pure): which backup to make now, which to
delete, what the status says, and when to look again.

The backups a schedule made are the truth: they carry the time they were scheduled for (an
annotation) and are named after it (`<schedule>-<YYYYMMDDhhmm>`, UTC), so a pass that runs twice
for one time, or after a crash between making a backup and writing the status, makes nothing
twice: the second create of the same name is refused by the API server.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from pinery import cron
from pinery.api.backups import VectorIndexBackupScheduleSpec
from pinery.api.conditions import now_rfc3339
from pinery.backups import retention, schedule_policy
from pinery.vectorindex.status import Cond

# How far a sleeping schedule's daemon may be from its next look: retention's maxAge and the
# backups' progress are looked at again at least this often.
MAX_SLEEP = timedelta(minutes=5)


@dataclass(frozen=True)
class SchedulePlan:
    ready: Cond
    last_ok: Cond | None  # LastBackupSucceeded, None before any backup finished
    make: tuple[str, datetime] | None = None  # the backup to make now: its name and scheduled time
    delete: tuple[str, ...] = ()  # backups retention drops, oldest first
    status: dict[str, Any] = field(default_factory=dict)  # lastScheduleTime, nextScheduleTime, ...
    sleep: float | None = None  # seconds until the next look; None: only a change wakes it


def backup_name(schedule: str, at: datetime) -> str:
    """`<schedule>-<YYYYMMDDhhmm>` of the scheduled time in UTC (CronJob names its Jobs after the
    scheduled time too, in minutes since the epoch: cronjob_controllerv2.go getJobName)."""
    return f"{schedule}-{at.strftime('%Y%m%d%H%M')}"


def plan(name: str, spec: VectorIndexBackupScheduleSpec, *, created: datetime, now: datetime,
         made: list[retention.Made], last_scheduled: datetime | None) -> SchedulePlan:
    """The pass at `now` for schedule `name`, given the backups it made (`made`) and the
    lastScheduleTime of its status."""
    try:
        schedule = cron.parse(spec.schedule)
        tz = cron.check_time_zone(spec.time_zone)
        max_age = retention.parse_max_age(spec.retention.max_age) if spec.retention and spec.retention.max_age else None
    except ValueError as exc:
        return SchedulePlan(("False", "InvalidSpec", str(exc)), None, status=_counts(made))
    newest_made = max((m.scheduled_at for m in made), default=None)
    considered = max((t for t in (last_scheduled, newest_made) if t is not None), default=None)
    due = schedule_policy.due(schedule, tz, created=created, last_scheduled=considered, now=now,
                              starting_deadline_seconds=spec.starting_deadline_seconds, suspend=spec.suspend)
    make = None
    if due.run_at is not None:
        make = (backup_name(name, due.run_at), due.run_at)
        made = [*made, retention.Made(make[0], due.run_at, "Pending")]
    doomed = tuple(retention.to_delete(made, keep_last=spec.retention.keep_last if spec.retention else None,
                                       max_age=max_age, now=now))
    kept = [m for m in made if m.name not in doomed]
    status = {**_counts(kept), "missed": due.missed,
              "lastScheduleTime": _time(due.run_at or considered), "nextScheduleTime": _time(due.next_at)}
    if spec.suspend:
        ready: Cond = ("True", "Suspended", "suspended: no new backups; retention still applies")
    elif due.next_at is None:
        ready = ("True", "Scheduled", f"schedule {spec.schedule!r} never comes round again")
    else:
        ready = ("True", "Scheduled", f"next backup at {status['nextScheduleTime']}"
                 + (f"; {due.missed} scheduled times skipped" if due.missed else "")
                 + ("; more than 100 missed start times: check the schedule and startingDeadlineSeconds" if due.too_many_missed else ""))
    sleep = MAX_SLEEP
    if due.next_at is not None and not spec.suspend:
        sleep = min(sleep, max(due.next_at - now, timedelta(0)))
    return SchedulePlan(ready, _last_ok(kept), make, doomed, status, sleep.total_seconds())


def _counts(made: list[retention.Made]) -> dict[str, Any]:
    ready = sorted((m for m in made if m.state == "Ready"), key=lambda m: (m.scheduled_at, m.name))
    newest_ok = ready[-1] if ready else None
    failed_since = [m for m in made if m.state == "Failed" and (newest_ok is None or m.scheduled_at > newest_ok.scheduled_at)]
    return {
        "active": sum(1 for m in made if m.state == "Pending"),
        "failed": len(failed_since),
        "lastSuccessfulBackup": newest_ok.name if newest_ok else None,
        "lastSuccessfulTime": _time(newest_ok.scheduled_at) if newest_ok else None,
    }


def _last_ok(made: list[retention.Made]) -> Cond | None:
    finished = sorted((m for m in made if m.state != "Pending"), key=lambda m: (m.scheduled_at, m.name))
    if not finished:
        return None
    newest = finished[-1]
    if newest.state == "Ready":
        return ("True", "BackupReady", f"the latest backup, {newest.name}, is ready")
    return ("False", "BackupFailed", f"the latest backup, {newest.name}, failed: see its conditions")


def _time(at: datetime | None) -> str | None:
    return now_rfc3339(at) if at is not None else None
