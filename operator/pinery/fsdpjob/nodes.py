"""One node's entry of `status.nodes`, typed, and what the previous status says about it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

# The keys of a node entry this module knows; any other key an old status carries is kept as is.
_KNOWN = ("index", "pod", "restarts", "attempt", "phase", "exitCode", "reason", "nodeName")


@dataclass
class NodeState:
    index: int
    pod: str
    restarts: int = 0
    attempt: int = 0
    phase: Optional[str] = None
    exit_code: Optional[int] = None
    reason: Optional[str] = None
    node_name: Optional[str] = None  # the Kubernetes node of the current pod (spec.nodeName)
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, index: int, pod: str, old: Optional[Mapping[str, Any]]) -> "NodeState":
        """The node as the previous status left it (null values count as absent); `pod` is
        always the node's current name."""
        old = {k: v for k, v in (old or {}).items() if v is not None}
        return cls(
            index=index,
            pod=pod,
            restarts=old.get("restarts", 0),
            attempt=old.get("attempt", 0),
            phase=old.get("phase"),
            exit_code=old.get("exitCode"),
            reason=old.get("reason"),
            node_name=old.get("nodeName"),
            extra={k: v for k, v in old.items() if k not in _KNOWN},
        )

    def clear_outcome(self) -> None:
        """A new attempt (or no pod): the old pod's phase and exit code no longer apply."""
        self.phase = None
        self.exit_code = None
        self.node_name = None

    def new_attempt(self, attempt: int, reason: str) -> None:
        self.attempt = attempt
        self.restarts += 1
        self.reason = reason
        self.clear_outcome()

    def to_status(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "index": self.index, "pod": self.pod, "restarts": self.restarts, "attempt": self.attempt,
            "phase": self.phase, "exitCode": self.exit_code, "reason": self.reason,
            "nodeName": self.node_name, **self.extra,
        }
        return {k: v for k, v in entry.items() if v is not None}


def observed_before(old: Optional[Mapping[str, Any]], attempt: int) -> bool:
    """The previous status shows this node's pod of `attempt` was seen, so its absence now
    means it was deleted."""
    old = old or {}
    return old.get("phase") is not None and old.get("attempt", 0) == attempt


def known_failure(old: Optional[Mapping[str, Any]], attempt: int) -> bool:
    """An elastic node whose failure in `attempt` was recorded without replacing it (no
    budget left)."""
    old = old or {}
    return old.get("phase") == "Failed" and old.get("attempt", 0) == attempt
