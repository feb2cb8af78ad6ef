"""Validation of Role, ClusterRole, RoleBinding and ClusterRoleBinding.

The rules of kubernetes/kubernetes pkg/apis/rbac/validation/validation.go users meet:
`ValidatePolicyRule` (verbs required; resource rules need apiGroups and resources;
non-resource URLs only in ClusterRoles and never mixed with resources),
`ValidateRoleBinding`/`ValidateClusterRoleBinding` (roleRef apiGroup, kind, name;
`ValidateRoleBindingSubject`) and the `...Update` functions (roleRef cannot change).
A ClusterRole with an aggregationRule needs at least one clusterRoleSelector; its rules are
stored unchecked, and the aggregation controller (rbac_aggregation, controllers.py) replaces
them with the rules of the ClusterRoles its selectors match.
"""

from __future__ import annotations

from typing import Any

from pinery.schema.errors import FieldError

GROUP = "rbac.authorization.k8s.io"


def _go_strings(values: list[str]) -> str:
    return "[]string{" + ", ".join(f'"{v}"' for v in values) + "}"


def rule_problems(rules: list[Any], namespaced: bool) -> list[FieldError]:
    out = []
    for i, rule in enumerate(rules or []):
        where = f"rules[{i}]"
        rule = rule if isinstance(rule, dict) else {}
        if not rule.get("verbs"):
            out.append(FieldError(f"{where}.verbs", "Required value: verbs must contain at least one value"))
        urls = rule.get("nonResourceURLs") or []
        if urls:
            if namespaced:
                out.append(FieldError(f"{where}.nonResourceURLs", f"Invalid value: {_go_strings(urls)}: namespaced rules cannot apply to non-resource URLs"))
            if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
                out.append(FieldError(
                    f"{where}.nonResourceURLs", f"Invalid value: {_go_strings(urls)}: rules cannot apply to both regular resources and non-resource URLs"
                ))
            continue
        if not rule.get("apiGroups"):
            out.append(FieldError(f"{where}.apiGroups", "Required value: resource rules must supply at least one api group"))
        if not rule.get("resources"):
            out.append(FieldError(f"{where}.resources", "Required value: resource rules must supply at least one resource"))
    return out


def binding_problems(binding: dict[str, Any], cluster: bool) -> list[FieldError]:
    out = []
    ref = binding.get("roleRef") or {}
    if ref.get("apiGroup") != GROUP:
        out.append(FieldError("roleRef.apiGroup", f'Unsupported value: "{ref.get("apiGroup", "")}": supported values: "{GROUP}"'))
    kinds = ("ClusterRole",) if cluster else ("Role", "ClusterRole")
    if ref.get("kind") not in kinds:
        listed = ", ".join(f'"{k}"' for k in kinds)
        out.append(FieldError("roleRef.kind", f'Unsupported value: "{ref.get("kind", "")}": supported values: {listed}'))
    if not ref.get("name"):
        out.append(FieldError("roleRef.name", "Required value"))
    for i, subject in enumerate(binding.get("subjects") or []):
        where = f"subjects[{i}]"
        subject = subject if isinstance(subject, dict) else {}
        kind, group = subject.get("kind", ""), subject.get("apiGroup", "")
        if not subject.get("name"):
            out.append(FieldError(f"{where}.name", "Required value"))
        if kind == "ServiceAccount":
            if group:
                out.append(FieldError(f"{where}.apiGroup", f'Unsupported value: "{group}": supported values: ""'))
            if cluster and not subject.get("namespace"):
                out.append(FieldError(f"{where}.namespace", "Required value"))
        elif kind in ("User", "Group"):
            if group != GROUP:
                out.append(FieldError(f"{where}.apiGroup", f'Unsupported value: "{group}": supported values: "{GROUP}"'))
        else:
            out.append(FieldError(f"{where}.kind", f'Unsupported value: "{kind}": supported values: "ServiceAccount", "User", "Group"'))
    return out


def validate(kind: str, obj: dict[str, Any]) -> list[FieldError]:
    if kind in ("Role", "ClusterRole"):
        if kind == "ClusterRole" and obj.get("aggregationRule") is not None:
            if not (obj.get("aggregationRule") or {}).get("clusterRoleSelectors"):
                return [FieldError(
                    "aggregationRule.clusterRoleSelectors", "Required value: at least one clusterRoleSelector required if aggregationRule is non-nil"
                )]
            return []
        return rule_problems(obj.get("rules") or [], namespaced=kind == "Role")
    if kind in ("RoleBinding", "ClusterRoleBinding"):
        return binding_problems(obj, cluster=kind == "ClusterRoleBinding")
    return []


def update_problems(kind: str, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    if kind not in ("RoleBinding", "ClusterRoleBinding") or new.get("roleRef") == old.get("roleRef"):
        return []
    ref = new.get("roleRef") or {}
    shown = f'rbac.RoleRef{{APIGroup:"{ref.get("apiGroup", "")}", Kind:"{ref.get("kind", "")}", Name:"{ref.get("name", "")}"}}'
    return [FieldError("roleRef", f"Invalid value: {shown}: cannot change roleRef")]
