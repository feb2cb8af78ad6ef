"""Pinecone failures as conditions: a reason users can act on, and when to try again.

The gateway reduces every SDK exception to a `PineconeFailure` (status code, error code,
message with secrets removed, Retry-After); `classify` decides what it means.
"""

from __future__ import annotations

from dataclasses import dataclass

from pinery.vectorindex.schedule import DEFAULT_TIMING, Timing


@dataclass(frozen=True)
class PineconeFailure:
    """A failed Pinecone call. `status` is None for timeouts and connection errors."""

    operation: str
    status: int | None
    code: str | None
    message: str
    retry_after: float | None = None


def outcome_unknown(failure: PineconeFailure) -> bool:
    """Whether Pinecone may have carried out the call although it failed: no answer came (a
    timeout, a lost connection) or a server error did. Any other answer means it did not."""
    return failure.status is None or failure.status == 408 or failure.status >= 500


@dataclass(frozen=True)
class Classification:
    reason: str
    message: str
    # Terminal: nothing changes until the spec, the Secret or the account does (phase Failed);
    # the operator looks again at the next resync sweep.
    terminal: bool
    # Seconds until the next attempt; None for terminal failures (the next sweep).
    delay: float | None


def classify(failure: PineconeFailure, attempt: int = 0, timing: Timing = DEFAULT_TIMING) -> Classification:
    """Map a failure to a condition reason; `attempt` counts consecutive failures (backoff)."""
    status, code = failure.status, (failure.code or "").upper()
    text = failure.message.strip() or f"HTTP {status}"
    what = f"Pinecone {failure.operation} failed"

    def terminal(reason: str, message: str) -> Classification:
        return Classification(reason, message, True, None)

    def retry(reason: str, message: str) -> Classification:
        return Classification(reason, message, False, timing.retry(attempt, failure.retry_after))

    if status == 401:
        return terminal("Unauthorized", f"{what}: the API key was rejected ({text}); fix the Secret holding it")
    if status == 402:
        return terminal("PaymentRequired", f"{what}: the Pinecone account needs attention ({text})")
    if status == 403 and ("QUOTA" in code or "quota" in text.lower() or "max indexes" in text.lower()):
        quota = "backup" if "backup" in text.lower() else "index"
        return terminal("QuotaExceeded", f"{what}: the project's {quota} quota is used up ({text})")
    if status == 403:
        return terminal("Forbidden", f"{what}: the API key may not do this ({text})")
    if status in (400, 422) or (status == 404 and failure.operation in ("create_index", "create_index_from_backup")):
        # On create, 404 means the spec names a cloud region or environment Pinecone lacks; on a
        # restore, a backup it lacks.
        return terminal("InvalidSpec", f"{what}: Pinecone rejected the request: {text}")
    if status == 412:
        return retry("FailedPrecondition", f"{what}: {text}")
    if status is None or status == 429 or status >= 500 or status == 408:
        detail = f"HTTP {status}" if status else "no response"
        return retry("PineconeUnavailable", f"{what} ({detail}): {text}; retrying")
    return retry("PineconeError", f"{what} (HTTP {status}): {text}")


def redact(text: str, secrets: list[str] | tuple[str, ...]) -> str:
    """`text` with every secret (longer than 3 characters) replaced."""
    for secret in secrets:
        if secret and len(secret) > 3:
            text = text.replace(secret, "***")
    return text
