"""The sleep of a per-object daemon between passes: until its next pass is due, or sooner when
something wakes it or Kopf stops it; and which watch events of the object itself wake it."""

from __future__ import annotations

import asyncio
from typing import Any


async def sleep_until_woken(wake: asyncio.Event, stopped: Any, delay: float) -> bool:
    """Sleep up to `delay` seconds, less when woken or stopped; True when woken."""
    waiters = [asyncio.ensure_future(wake.wait()), asyncio.ensure_future(stopped.wait())]
    try:
        await asyncio.wait(waiters, timeout=max(0.0, delay), return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
    return wake.is_set()


class Generations:
    """The generation of an object's spec its daemon's last pass read, and the newest a watch
    event showed. Only a newer generation wakes the daemon, once: its own status writes, Kopf's
    finalizer and other metadata changes keep the generation, and each wake costs a whole pass."""

    def __init__(self) -> None:
        self.read: int | None = None  # None until the first pass has read the object
        self.latest = 0

    def pass_read(self, generation: int | None) -> bool:
        """A pass read the object at `generation`; True when an event already showed a newer
        one (the read answered from before the change), so the daemon must look again."""
        self.read = generation or 0
        return self.latest > self.read

    def event_showed(self, generation: int | None) -> bool:
        """A watch event showed `generation`; True when that should wake the daemon now."""
        newer = (generation or 0) > self.latest
        self.latest = max(self.latest, generation or 0)
        # before the first read, that read decides (pass_read)
        return newer and self.read is not None and self.latest > self.read
