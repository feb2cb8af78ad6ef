"""The queue that runs every object's passes (pinery.handlers.pass_queue), on a fake clock: a
pass says when the next is due, a wake-up brings it forward (during a pass: right after it), a
Retry-After hold keeps it back, failures back off, `end` and a pass returning None stop an
object, pause forgets every object; and, on the real loop, at most `workers` passes at once,
never two of one object."""

from __future__ import annotations

import asyncio
from typing import Any, Callable

import pytest

from pinery.handlers.object_loop import ObjectLoop
from pinery.handlers.pass_queue import PassQueue


class NoJitter:
    def uniform(self, a: float, b: float) -> float:
        return a


class World:
    """A queue on a fake clock, and things that happen at given times (watch events)."""

    def __init__(self, workers: int = 4) -> None:
        self.now = 1000.0
        self.queue = PassQueue("Test", workers, monotonic=lambda: self.now)
        self.at: dict[float, Callable[[], Any]] = {}
        self.passes: list[tuple[Any, float, bool]] = []  # (key, when, woken)
        self.ended: list[tuple[Any, str]] = []
        self.errors: list[Exception] = []

    def add(self, key: Any, *results: Any, during: dict[int, Callable[[], Any]] | None = None) -> ObjectLoop:
        """Passes for `key` returning (or raising) each result in turn (a callable is called),
        then None; `during[i]` runs while the i-th pass does."""
        loop = self.queue.wired(key, ObjectLoop(monotonic=lambda: self.now, rng=NoJitter()))  # type: ignore[arg-type]
        script, count = list(results), [0]

        async def step() -> float | None:
            self.passes.append((key, self.now - 1000.0, loop.woken))
            hook = (during or {}).get(count[0])
            count[0] += 1
            if hook is not None:
                hook()
            result = script.pop(0) if script else None
            if isinstance(result, Exception):
                raise result
            return result() if callable(result) else result

        def on_error(exc: Exception) -> float:
            self.errors.append(exc)
            return loop.failed(lambda n: 4.0 * 2 ** (n - 1))

        assert self.queue.add(key, loop, step, on_error=on_error, on_end=lambda why: self.ended.append((key, why)))
        return loop

    def drive(self, until: float = 3600.0) -> None:
        """Run every pass that comes due, moving the clock to the next due time or event."""
        async def main() -> None:
            while self.now - 1000.0 <= until:
                due, timeout = self.queue.take_due()
                for entry in due:
                    await self.queue.run(entry)
                if due:
                    continue
                events = sorted(t for t in self.at if t + 1000.0 >= self.now)
                nxt = None if timeout is None else self.now + timeout
                if events and (nxt is None or events[0] + 1000.0 <= nxt):
                    self.now = events[0] + 1000.0
                    self.at.pop(events[0])()
                elif nxt is not None:
                    self.now = nxt
                else:
                    return
        asyncio.run(main())

    def times(self, key: Any = "a") -> list[float]:
        return [round(t, 6) for k, t, _ in self.passes if k == key]

    def woken(self, key: Any = "a") -> list[bool]:
        return [w for k, _, w in self.passes if k == key]


@pytest.mark.parametrize(
    "results, times, ended",
    [
        ([5.0, 30.0], [0.0, 5.0, 35.0], "done"),  # each pass says when the next is due
        ([None], [0.0], "done"),  # gone at once
        ([RuntimeError(), RuntimeError(), 7.0], [0.0, 4.0, 12.0, 19.0], "done"),  # backoff by on_error
    ],
)
def test_passes_and_their_delays(results, times, ended):
    w = World()
    w.add("a", *results)
    w.drive()
    assert w.times() == times and w.ended == [("a", ended)] and "a" not in w.queue


def test_a_wake_brings_the_next_pass_forward_and_the_pass_knows():
    w = World()
    loop = w.add("a", 60.0, 60.0, 60.0)
    w.at[10.0] = loop.wake.set
    w.drive()
    assert w.times() == [0.0, 10.0, 70.0, 130.0]
    assert w.woken() == [False, True, False, False]


def test_a_wake_during_a_pass_runs_another_right_after_it():
    w = World()
    loop = w.add("a", 60.0, 60.0, during={0: lambda: loop.wake.set()})
    w.drive()
    assert w.times() == [0.0, 0.0, 60.0] and w.woken() == [False, True, False]


def test_wakes_of_one_wait_bring_one_pass():
    w = World()
    loop = w.add("a", 60.0, 60.0)
    w.at[10.0] = lambda: (loop.wake.set(), loop.wake.set())
    w.drive()
    assert w.times() == [0.0, 10.0, 70.0]


def test_retry_after_holds_even_a_woken_object_and_the_wake_reaches_the_pass():
    w = World()
    loop = w.add("a", lambda: (loop.hold_for(30.0), 1.0)[1], 5.0)
    w.at[2.0] = loop.wake.set  # a watch event during the hold must not bring the pass sooner
    w.drive()
    assert w.times() == [0.0, 30.0, 35.0] and w.woken() == [False, True, False]


def test_end_stops_an_object_at_once_or_after_the_pass_in_flight():
    w = World()
    w.add("a", 60.0, 60.0)
    w.add("b", 60.0, 60.0, during={0: lambda: w.queue.end("b", "settled")})
    w.at[10.0] = lambda: w.queue.end("a", "deleted")
    w.drive()
    assert w.times("a") == [0.0] and w.times("b") == [0.0]
    assert sorted(w.ended) == [("a", "deleted"), ("b", "settled")] and len(w.queue) == 0


def test_an_ended_object_may_be_added_again_and_a_key_has_one_entry():
    w = World()
    w.add("a", None)
    assert not w.queue.add("a", ObjectLoop(), lambda: None, on_error=lambda exc: 1.0)
    w.drive()
    w.add("a", None)
    w.drive()
    assert w.ended == [("a", "done"), ("a", "done")]


def test_objects_due_together_run_in_the_order_they_came():
    w = World()
    for key in "cab":
        w.add(key, None)
    w.drive()
    assert [k for k, _, _ in w.passes] == ["c", "a", "b"]


def test_a_wake_of_a_loop_no_longer_in_the_queue_does_nothing():
    w = World()
    old = w.add("a", None)
    w.drive()
    w.add("a", 60.0)
    old.wake.set()  # the ended object's loop: not the new one's
    w.drive(until=30.0)
    assert w.times() == [0.0, 0.0]


def test_pause_forgets_every_object_and_resume_runs_those_added_since():
    w = World()
    w.add("a", 60.0, 60.0)
    w.at[10.0] = w.queue.pause
    w.drive(until=20.0)
    assert w.ended == [("a", "paused")] and len(w.queue) == 0
    w.add("a", 60.0)  # Kopf lists everything again on resume: events may come before it
    w.drive(until=100.0)
    assert w.times() == [0.0]
    w.now = 1100.0
    w.queue.resume()
    w.drive(until=200.0)
    assert w.times() == [0.0, 100.0, 160.0]


def test_at_most_workers_passes_at_once_never_two_of_one_object():
    async def main() -> tuple[int, int, list[str]]:
        queue = PassQueue("Test", 3)
        running: set[str] = set()
        most, overlap, order = [0], [0], []
        gates = {f"o{i}": asyncio.Event() for i in range(8)}

        def make(key: str, loop: ObjectLoop):
            count = [0]

            async def step() -> float | None:
                overlap[0] += key in running
                running.add(key)
                most[0] = max(most[0], len(running))
                loop.wake.set()  # woken during its own pass: another pass right after, not beside
                await gates[key].wait()
                running.discard(key)
                order.append(key)
                count[0] += 1
                return None if count[0] == 2 else 0.0
            return step

        for key in gates:
            loop = queue.wired(key, ObjectLoop())
            queue.add(key, loop, make(key, loop), on_error=lambda exc: 1.0)
        queue.start()
        for _ in range(3):
            for gate in gates.values():
                await asyncio.sleep(0.01)
                gate.set()
        while len(queue):
            await asyncio.sleep(0.01)
        await queue.stop(1.0)
        return most[0], overlap[0], order

    most, overlap, order = asyncio.run(asyncio.wait_for(main(), 30))
    assert most == 3 and overlap == 0 and sorted(order) == sorted(f"o{i}" for i in range(8) for _ in range(2))


def test_until_idle_waits_for_the_pass_in_flight_and_stop_cancels_one_that_overruns():
    async def main() -> tuple[bool, bool]:
        queue = PassQueue("Test", 2)
        release, cancelled = asyncio.Event(), []

        async def slow() -> float | None:
            await release.wait()
            return None

        async def stuck() -> float | None:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                cancelled.append(True)
                raise
            return None

        queue.add("slow", queue.wired("slow", ObjectLoop()), slow, on_error=lambda exc: 1.0)
        queue.start()
        while not queue.running("slow"):
            await asyncio.sleep(0.01)
        waiter = asyncio.ensure_future(queue.until_idle("slow", 30))
        await asyncio.sleep(0.05)
        waited = not waiter.done()
        release.set()
        await asyncio.wait_for(waiter, 5)
        queue.add("stuck", queue.wired("stuck", ObjectLoop()), stuck, on_error=lambda exc: 1.0)
        while not queue.running("stuck"):
            await asyncio.sleep(0.01)
        await queue.stop(0.1)
        return waited, cancelled == [True]

    assert asyncio.run(asyncio.wait_for(main(), 30)) == (True, True)

