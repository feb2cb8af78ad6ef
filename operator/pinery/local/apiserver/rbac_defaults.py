"""The default ClusterRoles and ClusterRoleBindings the server creates at start-up.

The subset of kubernetes/kubernetes plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go
(`ClusterRoles`, `ClusterRoleBindings`, v1.32) that matters here: `cluster-admin` (bound to
`system:masters`), `system:discovery` and `system:basic-user` (bound to `system:authenticated`)
and `system:public-info-viewer` (also to `system:unauthenticated`). They carry upstream's
`kubernetes.io/bootstrapping: rbac-defaults` label and `rbac.authorization.kubernetes.io/autoupdate`
annotation; a missing one is created again at the next start, one that exists is left alone.
The user-facing roles (`admin`, `edit`, `view`) and the controllers' roles are not served.
"""

from __future__ import annotations

from typing import Any

_META = {"labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}, "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}}

CLUSTER_ROLES: dict[str, list[dict[str, Any]]] = {
    "cluster-admin": [
        {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
        {"nonResourceURLs": ["*"], "verbs": ["*"]},
    ],
    "system:discovery": [
        {"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"], "verbs": ["get"]},
    ],
    "system:basic-user": [
        {"apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"], "verbs": ["create"]},
        {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"], "verbs": ["create"]},
    ],
    "system:public-info-viewer": [
        {"nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"], "verbs": ["get"]},
    ],
}

CLUSTER_ROLE_BINDINGS: dict[str, list[str]] = {
    "cluster-admin": ["system:masters"],
    "system:discovery": ["system:authenticated"],
    "system:basic-user": ["system:authenticated"],
    "system:public-info-viewer": ["system:authenticated", "system:unauthenticated"],
}


def cluster_roles() -> list[dict[str, Any]]:
    return [{"metadata": {"name": name, **_copy_meta()}, "rules": rules} for name, rules in CLUSTER_ROLES.items()]


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
