"""What a scheduling integration adds to every pod of an attempt: the gang scheduler's group
label or annotation and scheduler name (gang.py), Kueue's admission (its flavors' node labels
and tolerations, admission checks' pod set updates), failed-node avoidance (node_avoidance.py:
the nodes to keep off, and how). Pure data; `children.build_pod` applies it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Optional


@dataclass(frozen=True)
class Placement:
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Mapping[str, Any], ...] = ()
    # Replaces podTemplate.schedulerName when set.
    scheduler_name: Optional[str] = None
    # Kubernetes nodes the pods avoid (node_avoidance.merge_affinity), required or preferred.
    avoid_nodes: tuple[str, ...] = ()
    avoid_mode: Literal["Required", "Preferred"] = "Required"

    def __add__(self, other: "Placement") -> "Placement":
        """Both; `other`'s values win on a shared key (callers check conflicts that matter first)."""
        tolerations = self.tolerations + tuple(t for t in other.tolerations if t not in self.tolerations)
        return Placement(
            labels={**self.labels, **other.labels},
            annotations={**self.annotations, **other.annotations},
            node_selector={**self.node_selector, **other.node_selector},
            tolerations=tolerations,
            scheduler_name=other.scheduler_name or self.scheduler_name,
            avoid_nodes=self.avoid_nodes + tuple(n for n in other.avoid_nodes if n not in self.avoid_nodes),
            avoid_mode=other.avoid_mode if other.avoid_nodes else self.avoid_mode,
        )


NO_PLACEMENT = Placement()
