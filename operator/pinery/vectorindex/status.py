"""VectorIndex status: conditions, the phase derived from them, and the Events their changes make."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pinery.api.conditions import ConditionStatus, get_condition, set_condition
from pinery.vectorindex import observed

READY = "Ready"
SYNCED = "Synced"

Cond = tuple[ConditionStatus, str, str]  # (status, reason, message)

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
        "ReadCapacityFailed",
        "RestoreFailed",
        "BackupNotFound",
    }
)
# Reasons the operator recovers from by itself: the phase is Error while they last.
RETRYING_REASONS = frozenset({"PineconeUnavailable", "FailedPrecondition", "PineconeError"})


@dataclass(frozen=True)
class Event:
    type: str  # Normal or Warning
    reason: str
    message: str


def phase(conditions: list[dict[str, Any]] | None, deleting: bool = False) -> str:
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
    if ready and ready.get("reason") == "Disabled":  # a change that re-enables it shows as Updating
        return "Disabled" if synced and synced.get("status") == "True" else "Updating"
    if ready and ready.get("reason") in ("Creating", "Restoring"):
        return str(ready["reason"])
    return "Pending"


def read_capacity_report(index: dict[str, Any]) -> dict[str, Any] | None:
    """status.readCapacity from the index's read capacity (None for a pod-based index)."""
    capacity = observed.read_capacity(index)
    if not capacity:
        return None
    found, dedicated = capacity.get("status") or {}, capacity.get("dedicated") or {}
    report = {"mode": capacity.get("mode"), "nodeType": dedicated.get("node_type"), "state": found.get("state"),
              "currentReplicas": found.get("current_replicas"), "currentShards": found.get("current_shards"),
              "message": found.get("error_message")}
    return {k: v for k, v in report.items() if v is not None}


def next_status(old: dict[str, Any] | None, generation: int | None, ready: Cond, synced: Cond,
                cleared: tuple[str, ...] = (), **facts: Any) -> dict[str, Any]:
    """The status after a reconcile pass: both conditions, the phase, observedGeneration, and
    the index facts given (indexName, type, host, state; None keeps what was there). Fields
    in `cleared` that the old status has become None, which a merge patch removes."""
    old = old or {}
    conditions = set_condition(list(old.get("conditions") or []), READY, *ready, generation=generation)
    conditions = set_condition(conditions, SYNCED, *synced, generation=generation)
    new: dict[str, Any] = {"conditions": conditions, "phase": phase(conditions), "observedGeneration": generation}
    for key, value in facts.items():
        if value is not None:
            new[key] = value
    for key in cleared:
        if old.get(key) is not None:
            new[key] = None
    return new


def status_changes(old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    """The members of `new` that differ from `old`: what a merge patch must carry. A merge patch
    merges objects, so a key an object member (readCapacity) no longer has is sent as null."""
    old = old or {}
    changes = {}
    for key, value in new.items():
        if old.get(key) == value:
            continue
        before = old.get(key)
        if isinstance(value, dict) and isinstance(before, dict):
            value = {**{k: None for k in before if k not in value}, **value}
        changes[key] = value
    return changes


def condition_events(old: list[dict[str, Any]] | None, new: list[dict[str, Any]]) -> list[Event]:
    """One Event for each condition whose status or reason changed (the same reason once).

    Failures (terminal or retrying) are Warnings; progress and recovery are Normal.
    """
    events: list[Event] = []
    for type_ in (READY, SYNCED):
        before, after = get_condition(old, type_), get_condition(new, type_)
        if after is None or (before and (before.get("status"), before.get("reason")) == (after["status"], after["reason"])):
            continue
        reason = after["reason"]
        if any(e.reason == reason for e in events):
            continue
        failing = after["status"] == "False" and reason in TERMINAL_REASONS | RETRYING_REASONS
        events.append(Event("Warning" if failing else "Normal", reason, after.get("message", "")))
    return events
