"""ClusterRole aggregation, the pure part: which ClusterRoles an aggregationRule selects and the
rules it then holds.

As kubernetes/kubernetes pkg/controller/clusterroleaggregation/clusterroleaggregation_controller.go
(`syncClusterRole`) computes them: for each of `aggregationRule.clusterRoleSelectors` in order,
the ClusterRoles it matches (metav1.LabelSelectorAsSelector: matchLabels and matchExpressions
with In/NotIn/Exists/DoesNotExist) sorted by name, the aggregated role itself skipped; their
rules appended in that order, a rule equal to one already taken (apimachinery's semantic
equality: an empty list and a missing one are the same) skipped. The role is written only
when the result differs from its current rules (`needs_write`). A selector that is not valid
stops the sync of that role, as LabelSelectorAsSelector's error does upstream.

The controller that runs this on watch events is `Controllers` (controllers.py).
"""

from __future__ import annotations

from typing import Any, Iterable

from pinery.local.apiserver.apps_policy import selector_matches

Rule = dict[str, Any]

# The labels the default aggregated roles select (bootstrappolicy ClusterRoles()).
AGGREGATE_TO_ADMIN = "rbac.authorization.k8s.io/aggregate-to-admin"
AGGREGATE_TO_EDIT = "rbac.authorization.k8s.io/aggregate-to-edit"
AGGREGATE_TO_VIEW = "rbac.authorization.k8s.io/aggregate-to-view"

# The field manager of the controller's server-side apply, as upstream's applyClusterRoles.
FIELD_MANAGER = "clusterrole-aggregation-controller"

_RULE_FIELDS = ("verbs", "apiGroups", "resources", "resourceNames", "nonResourceURLs")
_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


class SelectorError(ValueError):
    """A clusterRoleSelector LabelSelectorAsSelector refuses."""


def is_aggregated(role: dict[str, Any]) -> bool:
    """Has an aggregationRule (upstream queues only these: `AggregationRule != nil`)."""
    return role.get("aggregationRule") is not None


def _name(role: dict[str, Any]) -> str:
    return (role.get("metadata") or {}).get("name") or ""


def check_selector(selector: Any) -> None:
    """Raise SelectorError where metav1.LabelSelectorAsSelector returns an error."""
    if not isinstance(selector, dict):
        raise SelectorError(f"invalid label selector: {selector!r}")
    for expr in selector.get("matchExpressions") or []:
        op, values = expr.get("operator"), expr.get("values") or []
        if op not in _OPERATORS:
            raise SelectorError(f'"{op}" is not a valid label selector operator')
        if op in ("In", "NotIn") and not values:
            raise SelectorError("for 'in', 'notin' operators, values set can't be empty")
        if op in ("Exists", "DoesNotExist") and values:
            raise SelectorError("values set must be empty for exists and does not exist")


def matching_roles(role: dict[str, Any], roles: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ClusterRoles role aggregates, selector by selector, each selector's matches by name
    (a role two selectors match comes twice; its rules are taken once)."""
    selectors = (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or []
    roles = sorted(roles, key=_name)
    out = []
    for selector in selectors:
        check_selector(selector)
        for other in roles:
            if _name(other) == _name(role):
                continue
            if selector_matches(selector, (other.get("metadata") or {}).get("labels")):
                out.append(other)
    return out


def normalized(rule: Rule) -> Rule:
    """A PolicyRule as semantic equality compares it: its five fields, empty ones dropped."""
    return {k: list(rule[k]) for k in _RULE_FIELDS if isinstance(rule, dict) and rule.get(k)}


def aggregated_rules(role: dict[str, Any], roles: Iterable[dict[str, Any]]) -> list[Rule]:
    """The rules role holds once aggregated (raises SelectorError for an invalid selector)."""
    out: list[Rule] = []
    seen: list[Rule] = []
    for other in matching_roles(role, roles):
        for rule in other.get("rules") or []:
            key = normalized(rule)
            if key not in seen:
                seen.append(key)
                out.append(key)
    return out


def needs_write(role: dict[str, Any], rules: list[Rule]) -> bool:
    """Whether the computed rules differ from the role's own (upstream's Semantic.DeepEqual)."""
    return [normalized(r) for r in role.get("rules") or []] != rules


def apply_config(name: str, rules: list[Rule]) -> dict[str, Any]:
    """The apply configuration upstream sends: the role's name and the rules, nothing else."""
    config: dict[str, Any] = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": name}}
    if rules:
        config["rules"] = rules
    return config


def sync(role: dict[str, Any], roles: Iterable[dict[str, Any]]) -> list[Rule] | None:
    """The rules to write to role, or None when nothing is to be written (no aggregationRule,
    an invalid selector, or the rules are already right)."""
    if not is_aggregated(role):
        return None
    try:
        rules = aggregated_rules(role, roles)
    except SelectorError:
        return None
    return rules if needs_write(role, rules) else None
