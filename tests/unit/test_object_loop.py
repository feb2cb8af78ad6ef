"""The per-object loop both kinds' daemons run, on a fake clock: passes and their delays, waking
on changes the loop did not make, backoff with jitter, Retry-After, stop."""

from __future__ import annotations

import asyncio
import random

import pytest

from pinery.backoff import backoff
from pinery.handlers.object_loop import JITTER, ObjectLoop, jitter


class Stopped:
    """Kopf's `stopped` flag: truthy once the daemon is to stop."""

    def __init__(self) -> None:
        self.event = asyncio.Event()

    def __bool__(self) -> bool:
        return self.event.is_set()

    async def wait(self) -> None:
        await self.event.wait()


class FakeTime:
    """A clock that moves only when the loop sleeps; `during[i]` runs while the i-th sleep lasts
    (a watch event, a stop) and may cut it short."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[tuple[float, bool]] = []  # (delay, wakeable)
        self.during: dict[int, object] = {}
        self.loop: ObjectLoop | None = None

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, wake: asyncio.Event, stopped, delay: float) -> bool:
        assert self.loop is not None
        self.sleeps.append((round(delay, 6), wake is self.loop.wake))
        hook = self.during.get(len(self.sleeps) - 1)
        if hook is not None:
            hook()
        if not wake.is_set() and not stopped:
            self.now += delay
        return wake.is_set()


class Rng:
    """uniform() at a fixed share of its range."""

    def __init__(self, share: float) -> None:
        self.share = share

    def uniform(self, a: float, b: float) -> float:
        return a + (b - a) * self.share


def make(share: float = 0.0) -> tuple[ObjectLoop, FakeTime, Stopped]:
    t = FakeTime()
    loop = ObjectLoop(monotonic=t.monotonic, sleep=t.sleep, rng=Rng(share))  # type: ignore[arg-type]
    t.loop = loop
    return loop, t, Stopped()


def passes(*results):
    """A pass returning (or raising) each result in turn, then None (the object is gone)."""
    script = list(results)
    calls: list[int] = []

    async def one_pass():
        calls.append(1)
        result = script.pop(0) if script else None
        if isinstance(result, Exception):
            raise result
        return result() if callable(result) else result

    return one_pass, calls


def run(loop: ObjectLoop, one_pass, stopped, on_error=None) -> None:
    asyncio.run(loop.run(one_pass, stopped, on_error=on_error or (lambda exc: loop.failed(lambda n: backoff(n)))))


@pytest.mark.parametrize(
    "results, sleeps, failures",
    [
        ([5.0, 30.0], [5.0, 30.0], 0),  # each pass says when the next is due
        ([None], [], 0),  # gone at once
        ([RuntimeError(), RuntimeError(), RuntimeError()], [4.0, 8.0, 16.0], 3),  # backoff(n) doubling
        ([RuntimeError(), 7.0], [4.0, 7.0], 1),  # the pass, not the loop, decides what resets the count
    ],
)
def test_passes_and_their_delays(results, sleeps, failures):
    loop, t, stopped = make()
    one_pass, calls = passes(*results)
    run(loop, one_pass, stopped)
    assert [d for d, _ in t.sleeps] == sleeps and loop.failures == failures
    assert len(calls) == len(results) + (1 if results[-1] is not None else 0)


@pytest.mark.parametrize("share, factor", [(0.0, 1.0), (0.5, 1.0 + JITTER / 2), (1.0, 1.0 + JITTER)])
def test_backoff_is_jittered_up_to_ten_percent_more(share, factor):
    loop, t, stopped = make(share)
    one_pass, _ = passes(RuntimeError(), RuntimeError())
    run(loop, one_pass, stopped)
    assert [d for d, _ in t.sleeps] == [pytest.approx(4.0 * factor), pytest.approx(8.0 * factor)]


def test_jitter_spreads_objects_that_fail_together():
    rng = random.Random(7)
    delays = [jitter(10.0, rng) for _ in range(50)]
    assert all(10.0 <= d <= 11.0 for d in delays) and len(set(delays)) == 50


def test_retry_after_holds_even_a_woken_loop():
    loop, t, stopped = make()

    def held() -> float:
        loop.hold_for(30.0)
        return 1.0

    one_pass, calls = passes(held, 5.0)
    t.during[1] = loop.wake.set  # a watch event during the hold must not bring the pass sooner
    run(loop, one_pass, stopped)
    # slept the pass's 1 s, then the rest of the 30 s on an event nothing can set, then ran
    assert t.sleeps[:2] == [(1.0, True), (29.0, False)]
    assert t.sleeps[2] == (5.0, True) and len(calls) == 3


def test_a_wake_during_a_hold_reaches_the_next_pass():
    # The next pass may plan on what the last one read unless woken: a wake-up that came while
    # Retry-After held it must not be lost when the pass clears the event.
    loop, t, stopped = make()
    seen: list[bool] = []

    def held() -> float:
        loop.hold_for(30.0)
        return 1.0

    def record() -> float:
        seen.append(loop.woken)
        return 5.0

    one_pass, _ = passes(held, record)
    t.during[1] = loop.wake.set
    run(loop, one_pass, stopped)
    assert seen == [True]


@pytest.mark.parametrize(
    "read, events, woken",
    [
        (1, [1], False),  # its own status write, Kopf's finalizer, a label: same generation
        (1, [2], True),  # a new spec
        (1, [2, 2], True),  # once
        (None, [2], False),  # before the first read: that read decides
        (3, [2], False),  # older than what was read
    ],
)
def test_woken_by_a_change_it_did_not_make(read, events, woken):
    loop, _, _ = make()
    if read is not None:
        loop.pass_read(read)
    for generation in events:
        loop.event_showed(generation)
    assert loop.wake.is_set() is woken


def test_a_read_older_than_an_event_already_seen_wakes_it_again():
    loop, _, _ = make()
    loop.event_showed(2)
    loop.pass_read(1)  # the read answered from before the change
    assert loop.wake.is_set()


def test_a_wake_cuts_the_sleep_short_and_is_remembered_for_the_next_pass():
    loop, t, stopped = make()
    seen: list[bool] = []
    generations = [1, 5, 5]  # what each pass reads

    def record() -> float:
        loop.pass_read(generations.pop(0))
        seen.append(loop.woken)
        return 60.0

    one_pass, _ = passes(record, record, record)
    t.during[0] = lambda: loop.event_showed(5)
    run(loop, one_pass, stopped)
    assert seen == [False, True, False] and t.now == 1000.0 + 60.0 * 2


def test_stop_ends_the_loop_without_another_pass():
    loop, t, stopped = make()
    one_pass, calls = passes(60.0, 60.0, 60.0)
    t.during[0] = stopped.event.set
    run(loop, one_pass, stopped)
    assert len(calls) == 1 and len(t.sleeps) == 1


def test_the_real_sleep_returns_at_once_when_woken_or_stopped():
    from pinery.handlers.object_loop import sleep_until_woken

    async def main() -> tuple[bool, bool]:
        wake, stopped = asyncio.Event(), Stopped()
        wake.set()
        woken = await asyncio.wait_for(sleep_until_woken(wake, stopped, 3600), 5)
        wake.clear()
        stopped.event.set()
        return woken, await asyncio.wait_for(sleep_until_woken(wake, stopped, 3600), 5)

    assert asyncio.run(main()) == (True, False)


def test_passes_in_flight_are_waited_for_and_forgotten_once_ended():
    from pinery.handlers.object_loop import PassesInFlight

    async def main() -> list[object]:
        in_flight, release, seen = PassesInFlight(), asyncio.Event(), []

        async def one_pass() -> str:
            await release.wait()
            return "done"

        running = asyncio.ensure_future(in_flight.run("a", one_pass))
        await asyncio.sleep(0)
        seen.append(await in_flight.until_idle("b", 3600))  # nothing in flight for b: at once
        seen.append(await in_flight.until_idle("a", 0.01))  # still running: the wait runs out
        waiter = asyncio.ensure_future(in_flight.until_idle("a", 3600))
        await asyncio.sleep(0)
        release.set()
        seen += [await asyncio.wait_for(waiter, 5), await running, in_flight._ends]
        return seen

    assert asyncio.run(main()) == [True, False, True, "done", {}]


def test_a_failed_pass_in_flight_ends_too():
    from pinery.handlers.object_loop import PassesInFlight

    async def main() -> tuple[bool, dict]:
        in_flight = PassesInFlight()

        async def one_pass() -> None:
            raise RuntimeError("the pass failed")

        with pytest.raises(RuntimeError):
            await in_flight.run("a", one_pass)
        return await asyncio.wait_for(in_flight.until_idle("a", 3600), 5), in_flight._ends

    assert asyncio.run(main()) == (True, {})
