"""The wall clock of the schedule handler, in one place so that tests can run it faster."""

from __future__ import annotations

from datetime import datetime, timezone


class WallClock:
    """The time now, and how many real seconds to sleep for a span of this clock's time."""

    def now(self) -> datetime:
        return datetime.now(timezone.utc)

    def real_seconds(self, seconds: float) -> float:
        return seconds
