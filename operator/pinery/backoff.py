"""Exponential backoff, shared by every reconcile loop (pure)."""

from __future__ import annotations


def backoff(attempt: int, retry_after: float | None = None, base: float = 2.0, cap: float = 300.0) -> float:
    """Exponential backoff; Retry-After, when the server sends one, is a floor."""
    delay = min(cap, base * (2 ** max(0, attempt)))
    if retry_after is not None:
        delay = max(delay, retry_after)
    return delay
