"""Kubernetes `metav1.Condition`, and the pure helper that updates a list of them."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Literal, Optional

from pydantic import Field

from pinery.api.base import ApiModel

ConditionStatus = Literal["True", "False", "Unknown"]


class Condition(ApiModel):
    """One aspect of the object's state, in the shape of Kubernetes' metav1.Condition."""

    type: str = Field(
        max_length=316,
        pattern=r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$",
        description="Type of the condition, in CamelCase (for example Ready).",
    )
    status: ConditionStatus = Field(description="Status of the condition: True, False or Unknown.")
    reason: str = Field(
        min_length=1,
        max_length=1024,
        pattern=r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
        description="Programmatic identifier of the reason for the last transition, in CamelCase.",
    )
    message: str = Field(
        "",
        max_length=32768,
        description="Human-readable explanation of the last transition.",
    )
    last_transition_time: str = Field(
        json_schema_extra={"format": "date-time"},
        description="When the condition last changed status (RFC 3339).",
    )
    observed_generation: Optional[int] = Field(
        None,
        ge=0,
        description="The metadata.generation the condition was computed from.",
    )


def now_rfc3339(now: datetime | None = None) -> str:
    """A Kubernetes timestamp: UTC, second precision, `Z` suffix."""
    now = now or datetime.now(timezone.utc)
    return now.astimezone(timezone.utc).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: Optional[str]) -> Optional[datetime]:
    """A Kubernetes timestamp (RFC 3339) as an aware UTC datetime; None for none."""
    if not value:
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(timezone.utc)


def set_condition(
    conditions: list[dict[str, Any]],
    type: str,
    status: ConditionStatus,
    reason: str,
    message: str = "",
    generation: int | None = None,
    now: str | None = None,
) -> list[dict[str, Any]]:
    """Return `conditions` with condition `type` set; other conditions are kept as they are.

    `lastTransitionTime` moves only when the status changes, as Kubernetes specifies, so that
    re-asserting the same state does not look like a transition to watchers.
    """
    old = get_condition(conditions, type)
    unchanged = old is not None and old.get("status") == status and old.get("lastTransitionTime")
    new: dict[str, Any] = {
        "type": type,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": old["lastTransitionTime"] if old is not None and unchanged else (now or now_rfc3339()),
    }
    if generation is not None:
        new["observedGeneration"] = generation
    if old is None:
        return [*conditions, new]
    return [new if c.get("type") == type else c for c in conditions]


def get_condition(conditions: list[dict[str, Any]] | None, type: str) -> dict[str, Any] | None:
    """The condition of `type`, or None."""
    for cond in conditions or []:
        if cond.get("type") == type:
            return cond
    return None


def is_true(conditions: list[dict[str, Any]] | None, type: str) -> bool:
    cond = get_condition(conditions, type)
    return bool(cond) and cond is not None and cond.get("status") == "True"
