"""The sleep of a per-object daemon between passes: until its next pass is due, or sooner when
something wakes it or Kopf stops it."""

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
