"""Which backups a VectorIndexBackupSchedule deletes: its `retention` (keepLast, maxAge). Pure.

The rules:

- A Pending backup (not finished yet) is never deleted.
- A Ready backup is kept when it is among the `keep_last` newest Ready ones, or younger than
  `max_age` (its age counts from its scheduled time), or it is the newest Ready one: retention
  never deletes the last good backup. With neither rule set, every Ready backup is kept.
- Of the Failed backups only the newest is kept, as CronJob keeps one failed Job by default
  (pkg/apis/batch/v1/defaults.go SetDefaults_CronJob: failedJobsHistoryLimit 1); older Failed
  ones are deleted whatever the rules say.

"Newest" is by scheduled time, then name. The names to delete come oldest first.

`maxAge` is written as a Go duration (time.ParseDuration: `90m`, `720h`, `1h30m`) with one
addition of pinery's, the unit `d` for 24 hours (`30d`, `1d12h`), as CloudNativePG's
retentionPolicy writes `30d`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal, Optional

from pinery.cron import parse_go_duration


@dataclass(frozen=True)
class Made:
    name: str
    scheduled_at: datetime
    state: Literal["Ready", "Failed", "Pending"]  # Pending = not finished yet


def _newest_first(made: list[Made], state: str) -> list[Made]:
    return sorted((m for m in made if m.state == state), key=lambda m: (m.scheduled_at, m.name), reverse=True)


def to_delete(made: list[Made], *, keep_last: Optional[int], max_age: Optional[timedelta], now: datetime) -> list[str]:
    """The names of the backups to delete, oldest first."""
    if keep_last is not None and keep_last < 0:
        raise ValueError(f"keepLast must be greater than or equal to 0, got {keep_last}")
    doomed: list[Made] = []
    if keep_last is not None or max_age is not None:
        for i, m in enumerate(_newest_first(made, "Ready")):
            kept = (i == 0
                    or (keep_last is not None and i < keep_last)
                    or (max_age is not None and now - m.scheduled_at < max_age))
            if not kept:
                doomed.append(m)
    doomed += _newest_first(made, "Failed")[1:]
    return [m.name for m in sorted(doomed, key=lambda m: (m.scheduled_at, m.name))]


def parse_max_age(text: str) -> timedelta:
    """A positive Go duration, plus `d` for 24h: `30d`, `12h`, `90m`, `1d12h`, `720h`."""
    try:
        ns = parse_go_duration(text, days=True)
    except ValueError as err:
        raise ValueError(f"maxAge {text!r}: {err}") from None
    age = timedelta(microseconds=ns // 1000)
    if age <= timedelta(0):
        raise ValueError(f"maxAge {text!r} must be a positive duration")
    return age
