"""Polling until something holds, for every test layer."""

from __future__ import annotations

import time
from typing import Callable, TypeVar

T = TypeVar("T")


def wait_for(check: Callable[[], T], timeout: float = 5.0, interval: float = 0.02, what: str = "condition") -> T:
    """Poll until `check()` is truthy; return its value."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)
