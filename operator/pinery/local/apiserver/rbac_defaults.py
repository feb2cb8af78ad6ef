"""The default ClusterRoles and ClusterRoleBindings the server creates at start-up.

The subset of kubernetes/kubernetes plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go
(`ClusterRoles`, `ClusterRoleBindings`, v1.32) that matters here: `cluster-admin` (bound to
`system:masters`), `system:discovery` and `system:basic-user` (bound to `system:authenticated`)
and `system:public-info-viewer` (also to `system:unauthenticated`), and the user-facing roles
of `ClusterRoles()`: `admin`, `edit` and `view` hold no rules of their own but an aggregationRule
selecting `rbac.authorization.k8s.io/aggregate-to-admin|edit|view: "true"` (`edit` is itself
labelled aggregate-to-admin and `view` aggregate-to-edit, so admin > edit > view), and
`system:aggregate-to-admin|edit|view` carry the rules upstream gives them, for every resource
a cluster serves (whether this control plane serves it or not), each rule's lists sorted as
upstream's PolicyRuleBuilder stores them. The aggregation controller (rbac_aggregation,
controllers.py) fills the aggregated roles' rules. They carry upstream's
`kubernetes.io/bootstrapping: rbac-defaults` label and `rbac.authorization.kubernetes.io/autoupdate`
annotation; a missing one is created again at the next start, one that exists is left alone.
The controllers' roles (`system:controller:*`, `system:node`, ...) are not served.
"""

from __future__ import annotations

from typing import Any

from pinery.local.apiserver.rbac_aggregation import AGGREGATE_TO_ADMIN, AGGREGATE_TO_EDIT, AGGREGATE_TO_VIEW

_META = {"labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}, "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}}

# bootstrappolicy's verb sets.
READ = ("get", "list", "watch")
WRITE = ("create", "update", "patch", "delete", "deletecollection")
READ_WRITE = READ + WRITE


def _rule(verbs: tuple[str, ...] | str, group: str, *resources: str) -> dict[str, Any]:
    verbs = (verbs,) if isinstance(verbs, str) else verbs
    return {"apiGroups": [group], "resources": sorted(resources), "verbs": sorted(verbs)}


CLUSTER_ROLES: dict[str, list[dict[str, Any]]] = {
    "cluster-admin": [
        {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
        {"nonResourceURLs": ["*"], "verbs": ["*"]},
    ],
    "system:discovery": [
        {
            "nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"],
            "verbs": ["get"],
        },
    ],
    "system:basic-user": [
        {"apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"], "verbs": ["create"]},
        {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"], "verbs": ["create"]},
    ],
    "system:public-info-viewer": [
        {"nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"], "verbs": ["get"]},
    ],
    # The rules that aggregate into admin (on top of edit's).
    "system:aggregate-to-admin": [
        _rule("create", "authorization.k8s.io", "localsubjectaccessreviews"),
        _rule(READ_WRITE, "rbac.authorization.k8s.io", "roles", "rolebindings"),
    ],
    # The rules that aggregate into edit (on top of view's): writes of user workloads, reads of
    # escalating resources (secrets, exec/attach/proxy), impersonating service accounts.
    "system:aggregate-to-edit": [
        _rule(READ, "", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward", "secrets", "services/proxy"),
        _rule("impersonate", "", "serviceaccounts"),
        _rule(WRITE, "", "pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward"),
        _rule("create", "", "pods/eviction"),
        _rule(WRITE, "", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
              "services", "services/proxy", "persistentvolumeclaims", "configmaps", "secrets", "events"),
        _rule("create", "", "serviceaccounts/token"),
        _rule(WRITE, "apps", "statefulsets", "statefulsets/scale", "daemonsets", "deployments", "deployments/scale",
              "deployments/rollback", "replicasets", "replicasets/scale"),
        _rule(WRITE, "autoscaling", "horizontalpodautoscalers"),
        _rule(WRITE, "batch", "jobs", "cronjobs"),
        _rule(WRITE, "extensions", "daemonsets", "deployments", "deployments/scale", "deployments/rollback", "ingresses",
              "replicasets", "replicasets/scale", "replicationcontrollers/scale", "networkpolicies"),
        _rule(WRITE, "policy", "poddisruptionbudgets"),
        _rule(WRITE, "networking.k8s.io", "networkpolicies", "ingresses"),
    ],
    # The rules that aggregate into view: reads of non-escalating namespaced resources.
    "system:aggregate-to-view": [
        _rule(READ, "", "pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services",
              "services/status", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status", "configmaps"),
        _rule(READ, "", "limitranges", "resourcequotas", "bindings", "events", "pods/status", "resourcequotas/status",
              "namespaces/status", "replicationcontrollers/status", "pods/log"),
        # Reading namespaces at the namespace scope reads *this* namespace.
        _rule(READ, "", "namespaces"),
        _rule(READ, "discovery.k8s.io", "endpointslices"),
        _rule(READ, "apps", "controllerrevisions", "statefulsets", "statefulsets/status", "statefulsets/scale", "daemonsets",
              "daemonsets/status", "deployments", "deployments/status", "deployments/scale", "replicasets",
              "replicasets/status", "replicasets/scale"),
        _rule(READ, "autoscaling", "horizontalpodautoscalers", "horizontalpodautoscalers/status"),
        _rule(READ, "batch", "jobs", "cronjobs", "cronjobs/status", "jobs/status"),
        _rule(READ, "extensions", "daemonsets", "daemonsets/status", "deployments", "deployments/scale", "deployments/status",
              "ingresses", "ingresses/status", "replicasets", "replicasets/scale", "replicasets/status",
              "replicationcontrollers/scale", "networkpolicies"),
        _rule(READ, "policy", "poddisruptionbudgets", "poddisruptionbudgets/status"),
        _rule(READ, "networking.k8s.io", "networkpolicies", "ingresses", "ingresses/status"),
    ],
}

# The aggregated roles: name -> (the label each selects, the labels it carries itself).
AGGREGATED_ROLES: dict[str, tuple[str, dict[str, str]]] = {
    "admin": (AGGREGATE_TO_ADMIN, {}),
    "edit": (AGGREGATE_TO_EDIT, {AGGREGATE_TO_ADMIN: "true"}),
    "view": (AGGREGATE_TO_VIEW, {AGGREGATE_TO_EDIT: "true"}),
}

# The labels of the roles that aggregate into them.
ROLE_LABELS: dict[str, dict[str, str]] = {
    "system:aggregate-to-admin": {AGGREGATE_TO_ADMIN: "true"},
    "system:aggregate-to-edit": {AGGREGATE_TO_EDIT: "true"},
    "system:aggregate-to-view": {AGGREGATE_TO_VIEW: "true"},
}

CLUSTER_ROLE_BINDINGS: dict[str, list[str]] = {
    "cluster-admin": ["system:masters"],
    "system:discovery": ["system:authenticated"],
    "system:basic-user": ["system:authenticated"],
    "system:public-info-viewer": ["system:authenticated", "system:unauthenticated"],
}


def cluster_roles() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for name, (selects, labels) in AGGREGATED_ROLES.items():
        role: dict[str, Any] = {"metadata": {"name": name, **_copy_meta()},
                "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {selects: "true"}}]}}
        role["metadata"]["labels"].update(labels)
        out.append(role)
    for name, rules in CLUSTER_ROLES.items():
        role = {"metadata": {"name": name, **_copy_meta()}, "rules": [dict(r) for r in rules]}
        role["metadata"]["labels"].update(ROLE_LABELS.get(name, {}))
        out.append(role)
    return out


def cluster_role_bindings() -> list[dict[str, Any]]:
    return [
        {
            "metadata": {"name": name, **_copy_meta()},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": g} for g in groups],
        }
        for name, groups in CLUSTER_ROLE_BINDINGS.items()
    ]


def _copy_meta() -> dict[str, Any]:
    return {k: dict(v) for k, v in _META.items()}
