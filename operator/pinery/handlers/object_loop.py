"""One object's reconcile loop, the same for every kind: passes, and waits between them. The
backup kinds run it in a Kopf daemon per object (`ObjectLoop.run`); VectorIndexes and FSDPJobs
from their kind's pass queue (pinery.handlers.pass_queue), which keeps the same meaning.

The sleep lasts until the next pass is due (the pass says when), or less: a change the loop did
not make itself wakes it (a new generation of the spec, or whatever the kind's watch handlers
decide), and Kopf's `stopped` ends it. A failed pass is retried after a backoff with jitter, so
that objects failing together do not retry together; a Retry-After the pass recorded
(`hold_for`) holds every pass until it has passed, even a woken one.

Time is injected (`monotonic`, `sleep`, `rng`), so the loop is tested with a fake clock.
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any, Awaitable, Callable, Hashable, Optional, Protocol, TypeVar

T = TypeVar("T")

# Jitter: up to this share more than the backoff.
JITTER = 0.1


async def sleep_until_woken(wake: asyncio.Event, stopped: Any, delay: float) -> bool:
    """Sleep up to `delay` seconds, less when woken or stopped; True when woken."""
    waiters = [asyncio.ensure_future(wake.wait()), asyncio.ensure_future(stopped.wait())]
    try:
        await asyncio.wait(waiters, timeout=max(0.0, delay), return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
    return wake.is_set()


async def wait_at_most(waiting: Awaitable[Any], timeout: float) -> bool:
    """Await `waiting` for at most `timeout` seconds; False when the time ran out first."""
    try:
        async with asyncio.timeout(timeout):
            await waiting
    except TimeoutError:
        return False
    return True


class PassesInFlight:
    """Which objects have a pass in flight, for a handler that must wait for it to end before it
    decides: Kopf stops an object's daemon only after its delete handler has run
    (kopf/_core/reactor/processing.py), so a pass may still be writing while that handler runs.
    (Objects run from a pass queue have the same from `PassQueue.until_idle`.)"""

    def __init__(self) -> None:
        self._ends: dict[Hashable, asyncio.Event] = {}

    async def run(self, key: Hashable, one_pass: Callable[[], Awaitable[T]]) -> T:
        end = self._ends[key] = asyncio.Event()
        try:
            return await one_pass()
        finally:
            end.set()
            if self._ends.get(key) is end:
                del self._ends[key]

    async def until_idle(self, key: Hashable, timeout: float) -> bool:
        """Wait, at most `timeout` seconds, for the pass of `key` in flight (if any) to end;
        False when it was still running then."""
        end = self._ends.get(key)
        return end is None or await wait_at_most(end.wait(), timeout)


def jitter(delay: float, rng: Any = random) -> float:
    """Up to 10% more, so that objects failing together do not retry together."""
    return delay * rng.uniform(1.0, 1.0 + JITTER)


class Sleep(Protocol):
    def __call__(self, wake: asyncio.Event, stopped: Any, delay: float) -> Awaitable[bool]: ...


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


class ObjectLoop:
    """What one object's daemon keeps between passes: its wake-up, the generations seen, the
    failures in a row and the Retry-After hold."""

    def __init__(self, *, monotonic: Callable[[], float] = time.monotonic, sleep: Sleep = sleep_until_woken,
                 rng: Optional[random.Random] = None) -> None:
        self.wake = asyncio.Event()
        self.generations = Generations()
        self.failures = 0  # consecutive failed passes
        self.not_before = 0.0  # monotonic time before which no pass runs (Retry-After)
        self.woken = False  # the last sleep was cut short by a wake-up (or one came after it)
        # The object's DELETED event came: a pass in flight writes nothing more (a new object of
        # the same name may follow), and the next reads it gone.
        self.gone = False
        self._monotonic, self._sleep = monotonic, sleep
        # by default the random module's shared generator, as `jitter`'s: one of its own costs
        # each loop 2.5 KiB (traced)
        self._rng: Any = rng or random

    # --- waking ---------------------------------------------------------------------------

    def pass_read(self, generation: int | None) -> None:
        """A pass read the object at `generation` (a newer one already seen wakes it again)."""
        if self.generations.pass_read(generation):
            self.wake.set()

    def event_showed(self, generation: int | None) -> bool:
        """A watch event of the object showed `generation`; True (and woken) when it is newer
        than what the last pass read. Status writes and metadata keep the generation."""
        if self.generations.event_showed(generation):
            self.wake.set()
            return True
        return False

    # --- backoff --------------------------------------------------------------------------

    def jitter(self, delay: float) -> float:
        return jitter(delay, self._rng)

    def failed(self, backoff: Callable[[int], float]) -> float:
        """Count a failure; the jittered wait `backoff(failures in a row)` says."""
        self.failures += 1
        return self.jitter(backoff(self.failures))

    def hold_for(self, retry_after: float) -> None:
        """The other side asked not to be called for `retry_after` seconds."""
        self.not_before = self._monotonic() + retry_after

    # --- the loop -------------------------------------------------------------------------

    def begin_pass(self) -> None:
        """A pass starts: a wake-up that came after the last one ended (while it waited, or
        during a Retry-After hold) counts too, since a pass that plans on what it read before
        must know of it before the flag is cleared."""
        self.woken = self.woken or self.wake.is_set()
        self.wake.clear()

    async def run(self, one_pass: Callable[[], Awaitable[Optional[float]]], stopped: Any, *,
                  on_error: Callable[[Exception], float]) -> None:
        """Run passes until one returns None (the object is gone) or Kopf stops the daemon.

        A pass returns the seconds until the next; one that raises gets `on_error(exc)`'s
        (which counts it, e.g. with `failed`)."""
        while not stopped:
            hold = self.not_before - self._monotonic()
            if hold > 0:  # woken early, but Retry-After still holds
                await self._sleep(asyncio.Event(), stopped, hold)
                continue
            self.begin_pass()
            try:
                delay = await one_pass()
            except Exception as exc:  # never a crash loop: back off, look again
                delay = on_error(exc)
            if delay is None:
                return
            self.woken = await self._sleep(self.wake, stopped, delay)
