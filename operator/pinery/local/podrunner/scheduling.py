"""Which of the pod runner's nodes a pod is bound to: the scheduler's node selector and node
affinity rules, nothing more. Pure.

Filtering follows kube-scheduler's NodeAffinity plugin (pkg/scheduler/framework/plugins/
nodeaffinity), which applies component-helpers/scheduling/corev1/nodeaffinity:
`spec.nodeSelector` must match every label exactly, and of the required node affinity's
`nodeSelectorTerms` (ORed) one must match, its `matchExpressions` on labels and `matchFields` on
`metadata.name` all ANDed; an empty term matches nothing. Scoring is the same plugin's: the sum
of the weights of the preferred terms a node matches. Ties go to the node with the fewest pods
(a stand-in for the resource-balancing scores), then to the first by name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

NODE_NAME_FIELD = "metadata.name"


def _requirement(req: Mapping[str, Any], value: str | None) -> bool:
    """One NodeSelectorRequirement against a label's (or field's) value, None when absent."""
    op, values = req.get("operator"), list(req.get("values") or [])
    if op == "In":
        return value is not None and value in values
    if op == "NotIn":
        return value is None or value not in values
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Gt", "Lt") and value is not None and len(values) == 1:
        try:
            have, want = int(value), int(values[0])
        except ValueError:
            return False
        return have > want if op == "Gt" else have < want
    return False


def term_matches(term: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    expressions, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
    if not expressions and not fields:
        return False
    meta = node.get("metadata") or {}
    labels = meta.get("labels") or {}
    if not all(_requirement(r, labels.get(r.get("key"))) for r in expressions):
        return False
    return all(r.get("key") == NODE_NAME_FIELD and _requirement(r, meta.get("name")) for r in fields)


def fits(pod: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    spec = pod.get("spec") or {}
    labels = (node.get("metadata") or {}).get("labels") or {}
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is None:
        return True
    return any(term_matches(t, node) for t in required.get("nodeSelectorTerms") or [])


def score(pod: Mapping[str, Any], node: Mapping[str, Any]) -> int:
    preferred = (((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}).get(
        "preferredDuringSchedulingIgnoredDuringExecution") or []
    return sum(int(p.get("weight") or 0) for p in preferred if term_matches(p.get("preference") or {}, node))


def choose_node(pod: Mapping[str, Any], nodes: Sequence[Mapping[str, Any]], load: Mapping[str, int]) -> str | None:
    """The node to bind `pod` to, or None when none fits."""
    feasible = [n for n in nodes if fits(pod, n)]
    if not feasible:
        return None
    best = min(feasible, key=lambda n: (-score(pod, n), load.get(n["metadata"]["name"], 0), n["metadata"]["name"]))
    name: str = best["metadata"]["name"]
    return name


def unschedulable_message(pod: Mapping[str, Any], nodes: Sequence[Mapping[str, Any]]) -> str:
    """The scheduler's FailedScheduling wording (schedule_one.go FitError: "0/%v nodes are
    available: %v.", the NodeAffinity plugin's ErrReasonPod)."""
    return f"0/{len(nodes)} nodes are available: {len(nodes)} node(s) didn't match Pod's node affinity/selector."
