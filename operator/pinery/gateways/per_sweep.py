"""Reads shared by every pass of one resync sweep.

A sweep looks at every settled object once per interval (pinery.vectorindex.schedule); what
many of them read alike (the API key Secret they share, the Pinecone listing of a key) is read
once per sweep, by the first
pass that needs it, and the others of that sweep wait for that read rather than send their own.
A pass outside a sweep (a new object, a change, a retry) reads for itself, so a changed Secret
is seen at once there and by the next sweep at the latest.
"""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable, Generic, Hashable, TypeVar

V = TypeVar("V")


class PerSweep(Generic[V]):
    """The value of each key as read in the newest sweep that asked for it."""

    def __init__(self) -> None:
        self._values: dict[Hashable, tuple[int, V]] = {}
        self._locks: dict[Hashable, asyncio.Lock] = {}

    async def read(self, key: Hashable, sweep: int, fetch: Callable[[], Awaitable[V]]) -> V:
        """`fetch()`'s answer for `key`, read at most once for sweep number `sweep`: a pass of
        an older sweep running late takes a newer read too. A failed read is not kept (the next
        pass reads again)."""
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            held = self._values.get(key)
            if held is None or held[0] < sweep:
                held = self._values[key] = (sweep, await fetch())
        return held[1]

    def newest(self, key: Hashable) -> V | None:
        """The newest value read for `key`, of whichever sweep; None before any."""
        held = self._values.get(key)
        return None if held is None else held[1]
