"""When a VectorIndex is looked at again: readiness polls, retries and fleet-wide sweeps.

Pure functions of counters and the clock; the daemon of each object sleeps for what they say.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

from pinery.backoff import backoff


def readiness_delay(polls: int, first: float = 1.0, cap: float = 30.0) -> float:
    """How long to wait before describing an initializing index again: fast at first, capped."""
    return min(cap, first * (1.5 ** max(0, polls)))


@dataclass(frozen=True)
class Timing:
    """The operator's clocks. The defaults suit Pinecone; tests shrink them."""

    # Readiness polls after a create or configure: first delay, growing by half each poll.
    poll_first: float = 1.0
    poll_max: float = 30.0
    # Retries after a failed Pinecone call: doubling from retry_first (Retry-After is a floor).
    retry_first: float = 2.0
    retry_max: float = 300.0
    # Retries while the API key Secret is missing (it often arrives moments after the object).
    secret_retry_max: float = 60.0
    # Sweeps of one interval start within this share of it, so that they share one listing.
    sweep_spread: float = 0.1
    # How long after a create whose answer never came its index may still appear in Pinecone;
    # the finalizer of an object deleted meanwhile waits that long for it (status.createSentAt).
    create_landing: float = 60.0

    def poll(self, polls: int) -> float:
        return readiness_delay(polls, self.poll_first, self.poll_max)

    def retry(self, attempt: int, retry_after: float | None = None) -> float:
        return backoff(attempt, retry_after, self.retry_first, self.retry_max)

    def secret_retry(self, attempt: int) -> float:
        return backoff(attempt, None, self.retry_first, min(self.secret_retry_max, self.retry_max))


DEFAULT_TIMING = Timing()


def next_sweep(now: float, interval: float, who: str, spread: float = 0.1) -> tuple[int, float]:
    """The number of the next drift-repair sweep after `now`, and when this object joins it.

    Sweeps start on multiples of `interval` of the wall clock, the same instants for every
    object, so that the objects of one sweep all read the same `list_indexes`; each object
    joins at a stable offset within `spread` of the interval (spreading the load).
    """
    number = math.floor(now / interval) + 1
    digest = int(hashlib.sha256(who.encode()).hexdigest()[:8], 16)
    offset = interval * spread * (digest / 0xFFFFFFFF)
    return number, number * interval + offset


def current_sweep(now: float, interval: float) -> int:
    """The number of the sweep in progress at `now` (for a first look after a restart)."""
    return math.floor(now / interval)
