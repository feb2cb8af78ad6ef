"""Freed C heap handed back (pinery.heap_trim): memory freed below a live allocation stays
resident until `trim`, which returns it and leaves what is in use alone."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap

import pytest

from pinery import heap_trim

glibc = pytest.mark.skipif(heap_trim.MALLOC_TRIM is None, reason="this C library has no malloc_trim")

# A child process: 64 MiB of 4 KiB blocks (C malloc, not pymalloc: over 512 bytes), all freed
# but the last, which pins the top of the heap so glibc's own trimming at free cannot give the
# rest back. The RSS is read from /proc before and after the trim.
FRAGMENTED_HEAP = textwrap.dedent("""
    from pinery import heap_trim

    def rss_mib():
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024

    blocks = [bytes(4096) for _ in range(16384)]
    pinned = blocks[-1]
    del blocks[:-1]
    before = rss_mib()
    released = heap_trim.trim()
    after = rss_mib()
    print(before, after, released, len(pinned), sep=",")
""")


@glibc
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_trim_gives_back_memory_freed_below_a_live_block_and_keeps_the_live_one():
    out = subprocess.run([sys.executable, "-c", FRAGMENTED_HEAP], capture_output=True, text=True, check=True).stdout
    before, after, released, pinned = out.strip().split(",")
    assert released == "True"
    assert float(before) - float(after) > 48, out  # most of the 64 MiB freed, none of it given back before
    assert pinned == "4096"  # the live block is intact


async def test_every_trims_until_cancelled(monkeypatch):
    calls: list[int] = []
    monkeypatch.setattr(heap_trim, "MALLOC_TRIM", lambda pad: calls.append(pad) or 1)
    task = asyncio.create_task(heap_trim.every(0.01))
    while len(calls) < 3:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert set(calls) == {0}


async def test_every_returns_at_once_without_malloc_trim(monkeypatch):
    monkeypatch.setattr(heap_trim, "MALLOC_TRIM", None)
    await asyncio.wait_for(heap_trim.every(0.01), 1)
