"""VectorIndex conditions and the phase derived from them."""

from __future__ import annotations

from pinery.api.conditions import get_condition

READY = "Ready"
SYNCED = "Synced"

# Reasons that need a person: the phase is Failed until the spec, Secret or account changes.
TERMINAL_REASONS = frozenset(
    {
        "InitializationFailed",
        "SpecMismatch",
        "ImmutableFieldChanged",
        "NotOwned",
        "InvalidSpec",
        "Unauthorized",
        "PaymentRequired",
        "QuotaExceeded",
        "Forbidden",
        "SecretNotFound",
    }
)
# Reasons the operator recovers from by itself: the phase is Error while they last.
RETRYING_REASONS = frozenset({"PineconeUnavailable", "FailedPrecondition", "PineconeError"})


def phase(conditions: list[dict] | None, deleting: bool = False) -> str:
    """The display phase of a VectorIndex (see docs/api.md)."""
    if deleting:
        return "Terminating"
    conditions = conditions or []
    failing = [c for c in conditions if c.get("status") == "False"]
    if any(c.get("reason") in TERMINAL_REASONS for c in failing):
        return "Failed"
    if any(c.get("reason") in RETRYING_REASONS for c in failing):
        return "Error"
    ready, synced = get_condition(conditions, READY), get_condition(conditions, SYNCED)
    if ready and ready.get("status") == "True":
        return "Ready" if synced and synced.get("status") == "True" else "Updating"
    if ready and ready.get("reason") == "Creating":
        return "Creating"
    return "Pending"
