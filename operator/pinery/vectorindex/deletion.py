"""When the finalizer of a VectorIndex gives up on Pinecone. Pure.

The finalizer retries a failed attempt at deleting the index, but not forever: after repeated
failures it releases the object with a Warning naming the index it left behind, so that a GitOps
prune never hangs. Failures that need a person (terminal ones) give up sooner; a missing API key
Secret gives up after half the attempts (or at once when no index was ever created); a delete
Forbidden because deletion protection was switched on since the describe is never forced.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from pinery.vectorindex.errors import PineconeFailure, classify
from pinery.vectorindex.schedule import DEFAULT_TIMING, Timing
from pinery.vectorindex.status import Event

# About an hour with the default backoff; a few for failures that need a person.
MAX_DELETE_ATTEMPTS = 20
MAX_DELETE_ATTEMPTS_TERMINAL = 3


@dataclass(frozen=True)
class Retry:
    """What the finalizer does after a failed attempt: wait `delay` seconds (before jitter) and
    try again, or (`give_up`, delay None) post `event` and let the object go."""

    attempts: int  # failed attempts so far, this one included
    delay: Optional[float] = None
    event: Optional[Event] = None
    message: str = ""  # what failed, for the log

    @property
    def give_up(self) -> bool:
        return self.delay is None


def after_missing_secret(attempts: int, *, index_created: bool, index_name: str, secret: str,
                         timing: Timing = DEFAULT_TIMING) -> Retry:
    """The API key Secret `secret` (namespace/name) is missing; `attempts` failed before."""
    if not index_created:
        return Retry(attempts, event=Event(
            "Normal", "Released", f"the API key Secret {secret} is missing and no index was created for this object"))
    attempts += 1
    if attempts >= MAX_DELETE_ATTEMPTS // 2:
        return Retry(attempts, event=Event(
            "Warning", "IndexLeft",
            f"the API key Secret {secret} is missing, so index {index_name} could not be deleted and was left in Pinecone"))
    return Retry(attempts, timing.secret_retry(attempts - 1))


def after_failed_call(failure: PineconeFailure, attempts: int, *, index_name: str,
                      timing: Timing = DEFAULT_TIMING) -> Retry:
    """A describe or delete of the index failed; `attempts` failed before."""
    verdict = classify(failure, attempts, timing)
    attempts += 1
    if failure.operation == "delete_index" and verdict.reason == "Forbidden":
        # protection switched on since the describe: never force it
        return Retry(attempts, event=Event(
            "Warning", "DeletionProtected",
            f"index {index_name} could not be deleted ({verdict.message}); it was left in Pinecone"), message=verdict.message)
    limit = MAX_DELETE_ATTEMPTS_TERMINAL if verdict.terminal else MAX_DELETE_ATTEMPTS
    if attempts >= limit:
        return Retry(attempts, event=Event(
            "Warning", "IndexLeft",
            f"giving up on deleting index {index_name} after {attempts} attempts ({verdict.message}); it was left in Pinecone"),
            message=verdict.message)
    delay = verdict.delay if verdict.delay is not None else timing.retry(attempts - 1)
    return Retry(attempts, delay, message=verdict.message)
