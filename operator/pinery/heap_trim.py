"""Freed C heap handed back to the system every few seconds (glibc's `malloc_trim`).

Each resync sweep reads, parses and drops a burst of answers; what CPython frees of them
(its blocks over 512 bytes come from C malloc: response bodies, JSON strings; and the Pinecone
SDK's worker threads allocate from arenas of their own) stays resident in glibc's free lists
until something calls `malloc_trim`. glibc itself returns only the free memory at the very top
of the main heap (M_TRIM_THRESHOLD); memory freed below a live chunk, and all of a thread
arena's, is kept. Over 20 minutes of sweeps every 10 s at 1,000 objects that kept memory grew
the operator's RSS by 6.5 MiB while its live Python memory stayed flat (docs/performance.md,
"Memory through 20 minutes of sweeps").

`malloc_trim(0)` walks every arena and gives back each whole free page (madvise MADV_DONTNEED);
it frees nothing in use, so nothing changes but the RSS. Since glibc 2.8 it trims all arenas,
not only the main one: man-pages malloc_trim(3), and glibc's malloc/malloc.c, `__malloc_trim`
calling `mtrim` for each arena. A C library without it (musl) makes `trim` a no-op.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import logging
from typing import Callable

log = logging.getLogger(__name__)

# Sweeps are spread over the resync interval, so the churn is steady; a trim walks the free
# lists (about a millisecond at 1,000 objects), so every 10 s costs nothing noticeable.
EVERY_SECONDS = 10.0


def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        function = libc.malloc_trim
    except (OSError, AttributeError, TypeError):  # no C library found, or one without malloc_trim
        return None
    function.argtypes, function.restype = [ctypes.c_size_t], ctypes.c_int
    return function


MALLOC_TRIM = _malloc_trim()


def trim() -> bool:
    """Give freed heap pages back to the system; True if any were given back."""
    return bool(MALLOC_TRIM(0)) if MALLOC_TRIM is not None else False


async def every(seconds: float = EVERY_SECONDS) -> None:
    """Trim every `seconds` until cancelled, in a worker thread: the walk holds each arena's lock,
    not the event loop."""
    if MALLOC_TRIM is None:
        log.debug("no malloc_trim in this C library: freed heap is left to it")
        return
    while True:
        await asyncio.sleep(seconds)
        await asyncio.to_thread(trim)
