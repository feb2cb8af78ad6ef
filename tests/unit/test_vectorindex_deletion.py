"""When the finalizer of a VectorIndex gives up on Pinecone, table by table."""

from __future__ import annotations

import pytest

from pinery.vectorindex.deletion import (
    MAX_DELETE_ATTEMPTS,
    MAX_DELETE_ATTEMPTS_TERMINAL,
    after_failed_call,
    after_missing_secret,
)
from pinery.vectorindex.errors import PineconeFailure
from pinery.vectorindex.schedule import Timing

TIMING = Timing()
SECRET = "ml/pinecone"


@pytest.mark.parametrize(
    "attempts, created, give_up, reason, delay",
    [
        (0, False, True, "Released", None),  # no index was ever made: nothing to leave behind
        (0, True, False, None, TIMING.secret_retry(0)),
        (3, True, False, None, TIMING.secret_retry(3)),
        (MAX_DELETE_ATTEMPTS // 2 - 2, True, False, None, TIMING.secret_retry(MAX_DELETE_ATTEMPTS // 2 - 2)),
        (MAX_DELETE_ATTEMPTS // 2 - 1, True, True, "IndexLeft", None),  # half the attempts
    ],
)
def test_a_missing_secret(attempts, created, give_up, reason, delay):
    r = after_missing_secret(attempts, index_created=created, index_name="idx", secret=SECRET, timing=TIMING)
    assert r.give_up is give_up and r.delay == delay
    assert (r.event.reason if r.event else None) == reason
    assert r.attempts == attempts + (1 if created else 0)
    if reason == "IndexLeft":
        assert r.event.type == "Warning" and "index idx could not be deleted" in r.event.message and SECRET in r.event.message


def failure(operation: str = "describe_index", status: int | None = 503, retry_after: float | None = None) -> PineconeFailure:
    return PineconeFailure(operation, status, None, "boom", retry_after)


@pytest.mark.parametrize(
    "f, attempts, give_up, reason, delay",
    [
        (failure(), 0, False, None, TIMING.retry(0)),  # a hiccup: back off and retry
        (failure(), 4, False, None, TIMING.retry(4)),
        (failure(status=429, retry_after=120.0), 0, False, None, 120.0),  # Retry-After is a floor
        (failure(), MAX_DELETE_ATTEMPTS - 1, True, "IndexLeft", None),  # about an hour: give up
        (failure(status=401), 0, False, None, TIMING.retry(0)),  # terminal: a few attempts only
        (failure(status=401), MAX_DELETE_ATTEMPTS_TERMINAL - 1, True, "IndexLeft", None),
        (failure("delete_index", 403), 0, True, "DeletionProtected", None),  # protection: never forced
        (failure("describe_index", 403), 0, False, None, TIMING.retry(0)),  # Forbidden on a describe is no protection
    ],
)
def test_a_failed_call(f, attempts, give_up, reason, delay):
    r = after_failed_call(f, attempts, index_name="idx", timing=TIMING)
    assert r.give_up is give_up and r.attempts == attempts + 1
    assert (r.event.reason if r.event else None) == reason
    if not give_up:
        assert r.delay == pytest.approx(delay) and r.event is None and r.message
    else:
        assert r.event.type == "Warning" and "it was left in Pinecone" in r.event.message
