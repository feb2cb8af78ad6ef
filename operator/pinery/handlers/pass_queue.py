"""The passes of every object of a kind, run by a bounded set of workers from one heap of due
times, as controller-runtime's work queue does, instead of a Kopf daemon per object.

A daemon per object kept, for each, an asyncio task and its frames, Kopf's copy of the object's
body (Kopf keeps the live body of every object with a daemon), its stop flag and invocation
state; and a burst of new objects ran all their first passes at once, so that the operator's
memory was set by that peak: about 200 KiB per object (docs/performance.md, "Operator
memory"). Here an object costs its `ObjectLoop` and an entry in the heap while it waits, and at
most `workers` passes run at once.

What the loop of each object means is unchanged (`ObjectLoop`): a pass says when the next is due,
a wake-up (`ObjectLoop.wake.set()`) brings it forward to now, a Retry-After hold
(`ObjectLoop.not_before`) keeps it back even from a wake-up, a failed pass gets its backoff from
`on_error`, and a pass that returns None ends the object's entry. A wake-up during a pass runs
the next pass as soon as this one ends (`ObjectLoop.woken` then tells it). An object's passes
never overlap.

Time is injected (`monotonic`), so the queue is tested with a fake clock.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import time
from dataclasses import dataclass
from typing import Awaitable, Callable, Hashable, Optional, TypeVar

from pinery.handlers.object_loop import ObjectLoop, wait_at_most

log = logging.getLogger("pinery.passes")

Step = Callable[[], Awaitable[Optional[float]]]
L = TypeVar("L", bound=ObjectLoop)


class Wake(asyncio.Event):
    """An object's wake-up flag that also tells its queue: setting it brings the next pass
    forward."""

    def __init__(self, notify: Callable[[], None]) -> None:
        super().__init__()
        self._notify = notify

    def set(self) -> None:
        super().set()
        self._notify()


@dataclass(eq=False, slots=True)
class Entry:
    key: Hashable
    loop: ObjectLoop
    step: Step
    on_error: Callable[[Exception], float]
    on_end: Callable[[str], None]  # told why the object's passes ended: "done", or what `end` said
    due: Optional[float] = None  # when the next pass is due; None while it runs or waits for a worker
    running: bool = False
    ending: Optional[str] = None  # `end` came while a pass ran: no pass after it
    # set when the pass in flight ends; made only for whoever waits for that
    idle: Optional[asyncio.Event] = None

    async def until_idle(self) -> None:
        if self.running:
            self.idle = self.idle or asyncio.Event()
            await self.idle.wait()


class PassQueue:
    def __init__(self, name: str, workers: int, *, grace: float = 5.0, monotonic: Callable[[], float] = time.monotonic,
                 paused: bool = False) -> None:
        self.name, self.workers = name, workers
        self.grace = grace  # what passes in flight get to finish when the operator stops
        self._monotonic = monotonic
        self._entries: dict[Hashable, Entry] = {}
        self._heap: list[tuple[float, int, Entry]] = []
        self._order = itertools.count()  # ties in the heap go first come, first served
        self._ready: asyncio.Queue[Entry] = asyncio.Queue()
        self._changed = asyncio.Event()
        self._tasks: list[asyncio.Task] = []
        self.paused = paused

    # --- objects --------------------------------------------------------------------------

    def __contains__(self, key: Hashable) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def wired(self, key: Hashable, loop: L) -> L:
        """`loop`, a new one for `key`, with its wake-ups reaching this queue (pass it to `add`)."""
        loop.wake = Wake(lambda: self._woken(key, loop))
        return loop

    def add(self, key: Hashable, loop: ObjectLoop, step: Step, *, on_error: Callable[[Exception], float],
            on_end: Callable[[str], None] = lambda why: None) -> bool:
        """Run `step` for `key` from now on, the first pass at once; False (and nothing done)
        when `key` has passes already."""
        if key in self._entries:
            return False
        entry = self._entries[key] = Entry(key, loop, step, on_error, on_end)
        self._schedule(entry, self._monotonic())
        return True

    def end(self, key: Hashable, why: str) -> None:
        """No more passes for `key`: at once, or after the pass in flight (which is not cut
        short: a pass is as safe to finish as it is to crash)."""
        entry = self._entries.get(key)
        if entry is None:
            return
        if entry.running:
            entry.ending = why
        else:
            self._drop(entry, why)

    def running(self, key: Hashable) -> bool:
        entry = self._entries.get(key)
        return entry is not None and entry.running

    async def until_idle(self, key: Hashable, timeout: float) -> None:
        """Wait, at most `timeout` seconds, for a pass of `key` in flight to end."""
        entry = self._entries.get(key)
        if entry is not None:
            await wait_at_most(entry.until_idle(), timeout)

    # --- pause (peering) ------------------------------------------------------------------

    def pause(self) -> None:
        """Start no pass until `resume`, and forget every object: Kopf lists them all again on
        resume, and what another replica did meanwhile makes whatever a loop kept stale."""
        self.paused = True
        for entry in list(self._entries.values()):
            self.end(entry.key, "paused")

    def resume(self) -> None:
        self.paused = False
        self._changed.set()

    # --- running --------------------------------------------------------------------------

    def start(self) -> None:
        """Start the workers, once. Called from a Kopf handler, so that they inherit its context:
        `kopf.event` finds Kopf's event queue through context variables that Kopf's startup
        handlers do not have yet."""
        if self._tasks:
            return
        self._tasks = [asyncio.create_task(self._dispatch(), name=f"{self.name} passes: dispatch")]
        self._tasks += [asyncio.create_task(self._work(), name=f"{self.name} passes: worker {i}") for i in range(self.workers)]

    async def stop(self, grace: Optional[float] = None) -> None:
        """Start no more passes; give those in flight `grace` seconds (by default the queue's),
        then cancel them."""
        grace = self.grace if grace is None else grace
        self.paused = True
        running = [asyncio.ensure_future(e.until_idle()) for e in self._entries.values() if e.running]
        if running:
            await asyncio.wait(running, timeout=grace)
        for task in [*self._tasks, *running]:
            task.cancel()
        await asyncio.gather(*self._tasks, *running, return_exceptions=True)
        self._tasks = []

    def _schedule(self, entry: Entry, at: float) -> None:
        if entry.due is not None and entry.due <= at:
            return  # due sooner already
        entry.due = at
        heapq.heappush(self._heap, (at, next(self._order), entry))
        self._changed.set()

    def _woken(self, key: Hashable, loop: ObjectLoop) -> None:
        entry = self._entries.get(key)
        if entry is None or entry.loop is not loop or entry.running:
            return  # gone, or a pass runs: it looks at the flag when it ends
        if entry.due is None:
            return  # waiting for a worker already
        self._schedule(entry, max(self._monotonic(), loop.not_before))

    def _drop(self, entry: Entry, why: str) -> None:
        if self._entries.get(entry.key) is entry:
            del self._entries[entry.key]
        entry.due = None  # its heap items are stale now
        try:
            entry.on_end(why)
        except Exception:
            log.exception("%s passes of %s: ending failed", self.name, entry.key)

    def take_due(self) -> tuple[list[Entry], Optional[float]]:
        """The entries whose passes are due now, in order of their due times (they wait for a
        worker from now on), and the seconds until the next one is due (None: none is, or
        the queue is paused)."""
        due: list[Entry] = []
        if self.paused:
            return due, None
        now = self._monotonic()
        while self._heap:
            at, _, entry = self._heap[0]
            if entry.due != at or self._entries.get(entry.key) is not entry:
                heapq.heappop(self._heap)  # rescheduled, or ended
            elif at <= now:
                heapq.heappop(self._heap)
                entry.due = None
                due.append(entry)
            else:
                return due, at - now
        return due, None

    async def _dispatch(self) -> None:
        """Hand the passes that are due to the workers."""
        while True:
            self._changed.clear()
            due, timeout = self.take_due()
            for entry in due:
                self._ready.put_nowait(entry)
            # asyncio.timeout, not wait_for: in Python 3.11 wait_for loses a cancellation that
            # comes as the event is set, and this loop would wait on, never stopping.
            try:
                async with asyncio.timeout(timeout):
                    await self._changed.wait()
            except TimeoutError:
                pass

    async def _work(self) -> None:
        while True:
            entry = await self._ready.get()
            if self._entries.get(entry.key) is not entry:
                continue  # ended while it waited
            if self.paused:
                self._schedule(entry, self._monotonic())  # after the resume
                continue
            await self.run(entry)

    async def run(self, entry: Entry) -> None:
        """One pass of `entry` (taken by `take_due`), and when the next is due."""
        loop = entry.loop
        now = self._monotonic()
        if loop.not_before > now:  # woken early, but Retry-After still holds
            self._schedule(entry, loop.not_before)
            return
        loop.begin_pass()
        entry.running = True
        try:
            delay = await entry.step()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # never a crash loop: back off, look again
            try:
                delay = entry.on_error(exc)
            except Exception:
                log.exception("%s passes of %s: on_error failed", self.name, entry.key)
                delay = 60.0
        finally:
            entry.running = False
            if entry.idle is not None:
                entry.idle.set()
                entry.idle = None
        if delay is None or entry.ending is not None:
            self._drop(entry, entry.ending or "done")
            return
        if self._entries.get(entry.key) is not entry:
            return
        if loop.wake.is_set():  # changed during the pass
            loop.woken = True
            self._schedule(entry, max(self._monotonic(), loop.not_before))
        else:
            loop.woken = False
            self._schedule(entry, self._monotonic() + delay)
