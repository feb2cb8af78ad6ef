"""Pinecone failures as conditions: a reason users can act on, and when to try again.

The gateway reduces every SDK exception to a `PineconeFailure` (status code, error code,
message with secrets removed, Retry-After); `classify` decides what it means.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PineconeFailure:
    """A failed Pinecone call. `status` is None for timeouts and connection errors."""

    operation: str
    status: int | None
    code: str | None
    message: str
    retry_after: float | None = None


@dataclass(frozen=True)
class Classification:
    reason: str
    message: str
    # Terminal: nothing changes until the spec, the Secret or the account does (phase Failed).
    terminal: bool
    # Seconds until the next attempt.
    delay: float


# Slow retries for problems that need a person, so that a fixed key or raised quota is
# picked up without an edit of the object.
SLOW_RETRY = 300.0


def classify(failure: PineconeFailure, attempt: int = 0) -> Classification:
    """Map a failure to a condition reason; `attempt` counts consecutive failures (backoff)."""
    status, code = failure.status, (failure.code or "").upper()
    text = failure.message.strip() or f"HTTP {status}"
    what = f"Pinecone {failure.operation} failed"
    if status == 401:
        return Classification("Unauthorized", f"{what}: the API key was rejected ({text})", True, SLOW_RETRY)
    if status == 402:
        return Classification("PaymentRequired", f"{what}: the Pinecone account needs attention ({text})", True, SLOW_RETRY)
    if status == 403 and ("QUOTA" in code or "quota" in text.lower()):
        return Classification("QuotaExceeded", f"{what}: the project's index quota is used up ({text})", True, SLOW_RETRY)
    if status == 403:
        return Classification("Forbidden", f"{what}: {text}", True, SLOW_RETRY)
    if status in (400, 422):
        return Classification("InvalidSpec", f"{what}: Pinecone rejected the request: {text}", True, SLOW_RETRY)
    if status == 412:
        return Classification("FailedPrecondition", f"{what}: {text}", False, backoff(attempt, failure.retry_after))
    if status is None or status == 429 or status >= 500 or status == 408:
        detail = f"HTTP {status}" if status else "no response"
        return Classification(
            "PineconeUnavailable",
            f"{what} ({detail}): {text}; retrying",
            False,
            backoff(attempt, failure.retry_after),
        )
    return Classification("PineconeError", f"{what} (HTTP {status}): {text}", False, backoff(attempt, failure.retry_after))


def backoff(attempt: int, retry_after: float | None = None, base: float = 2.0, cap: float = 300.0) -> float:
    """Exponential backoff; Retry-After, when Pinecone sends one, is a floor."""
    delay = min(cap, base * (2 ** max(0, attempt)))
    if retry_after is not None:
        delay = max(delay, retry_after)
    return delay


def readiness_delay(polls: int, first: float = 1.0, cap: float = 30.0) -> float:
    """How long to wait before describing an initializing index again: fast at first, capped."""
    return min(cap, first * (1.5 ** max(0, polls)))


def redact(text: str, secrets: list[str] | tuple[str, ...]) -> str:
    """`text` with every secret (longer than 3 characters) replaced."""
    for secret in secrets:
        if secret and len(secret) > 3:
            text = text.replace(secret, "***")
    return text
