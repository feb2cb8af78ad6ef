"""Status of the backup kinds: the Ready condition, the phase derived from it, and the Events
its changes make (the same rules as a VectorIndex's, pinery.vectorindex.status)."""

from __future__ import annotations

from typing import Any

from pinery.api.conditions import get_condition, set_condition
from pinery.vectorindex.status import READY, RETRYING_REASONS, Cond, Event
from pinery.vectorindex.status import TERMINAL_REASONS as INDEX_TERMINAL

# Reasons that need a person (phase Failed): the backup kinds' own, and Pinecone's answers that
# need a change to the spec, the Secret or the account.
TERMINAL_REASONS = INDEX_TERMINAL | {"BackupNotFound", "BackupFailed", "NotSupported"}


def backup_phase(conditions: list[dict[str, Any]] | None, deleting: bool = False) -> str:
    """Pending, Creating, Ready, Failed or Terminating (a VectorIndexBackup's display phase)."""
    if deleting:
        return "Terminating"
    ready = get_condition(conditions, READY) or {}
    if ready.get("status") == "True":
        return "Ready"
    if ready.get("reason") in TERMINAL_REASONS:
        return "Failed"
    return "Creating" if ready.get("reason") == "Creating" else "Pending"


def next_backup_status(old: dict[str, Any] | None, generation: int | None, ready: Cond,
                       cleared: tuple[str, ...] = (), **facts: Any) -> dict[str, Any]:
    """The status after a pass: Ready, the phase, observedGeneration and the facts given (None
    keeps what was there); fields in `cleared` become None, which a merge patch removes."""
    old = old or {}
    conditions = set_condition(list(old.get("conditions") or []), READY, *ready, generation=generation)
    new: dict[str, Any] = {"conditions": conditions, "phase": backup_phase(conditions), "observedGeneration": generation}
    new.update({k: v for k, v in facts.items() if v is not None})
    new.update({k: None for k in cleared if old.get(k) is not None})
    return new


def ready_event(old: list[dict[str, Any]] | None, new: list[dict[str, Any]], type_: str = READY) -> Event | None:
    """An Event when the condition's status or reason changed: a Warning for a failure, else Normal."""
    before, after = get_condition(old, type_), get_condition(new, type_)
    if after is None or (before and (before.get("status"), before.get("reason")) == (after["status"], after["reason"])):
        return None
    failing = after["status"] == "False" and after["reason"] in TERMINAL_REASONS | RETRYING_REASONS
    return Event("Warning" if failing else "Normal", after["reason"], after.get("message", ""))
