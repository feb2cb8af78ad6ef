"""Reads shared by the passes of one resync sweep (pinery.gateways.per_sweep)."""

from __future__ import annotations

import asyncio

import pytest

from pinery.gateways.per_sweep import PerSweep


@pytest.mark.parametrize(
    "sweeps, reads",
    [
        ([7, 7, 7], 1),  # one sweep: one read for all its passes
        ([7, 8, 8, 9], 3),  # one per sweep
        ([8, 7], 1),  # a pass of an older sweep running late takes the newer read
        ([7, 8, 7], 2),
    ],
)
def test_one_read_per_key_per_sweep(sweeps, reads):
    async def main() -> tuple[list[str], int]:
        shared, fetched = PerSweep[str](), []

        async def fetch() -> str:
            fetched.append("read")
            return f"value {len(fetched)}"

        seen = [await shared.read("secret", s, fetch) for s in sweeps]
        return seen, len(fetched)

    seen, count = asyncio.run(main())
    assert count == reads and seen[-1] == f"value {reads}"


def test_passes_of_one_sweep_wait_for_the_read_in_flight():
    async def main() -> tuple[list[str], int]:
        shared, calls, release = PerSweep[str](), [], asyncio.Event()

        async def fetch() -> str:
            calls.append(1)
            await release.wait()
            return "the secret"

        readers = [asyncio.ensure_future(shared.read(("ns", "s"), 3, fetch)) for _ in range(5)]
        await asyncio.sleep(0)
        release.set()
        return list(await asyncio.gather(*readers)), len(calls)

    assert asyncio.run(main()) == (["the secret"] * 5, 1)


def test_keys_are_read_apart_and_a_failed_read_is_not_kept():
    async def main() -> list[object]:
        shared, answers = PerSweep[str](), iter([RuntimeError("API down"), "a", "b"])

        async def fetch() -> str:
            answer = next(answers)
            if isinstance(answer, Exception):
                raise answer
            return answer

        with pytest.raises(RuntimeError):
            await shared.read("one", 1, fetch)
        return [await shared.read("one", 1, fetch), await shared.read("two", 1, fetch), await shared.read("one", 1, fetch)]

    assert asyncio.run(main()) == ["a", "b", "a"]


def test_newest_is_the_last_value_read_whatever_its_sweep():
    async def main() -> list[object]:
        shared = PerSweep[list[str]]()
        seen: list[object] = [shared.newest("key")]
        first = await shared.read("key", 4, lambda: asyncio.sleep(0, ["listing of sweep 4"]))
        first.append("changed since")  # what a caller marks on the value is the value held
        seen.append(shared.newest("key"))
        await shared.read("key", 5, lambda: asyncio.sleep(0, ["listing of sweep 5"]))
        return seen + [shared.newest("key"), shared.newest("other")]

    assert asyncio.run(main()) == [None, ["listing of sweep 4", "changed since"], ["listing of sweep 5"], None]
