"""The RBAC authorizer: does a user's Role/ClusterRole bindings allow a request?

Pure: the policy objects come from a `Policy` (the server reads them from its store; tests
pass lists). It follows upstream kubernetes/kubernetes:

- `rule_allows`: plugin/pkg/auth/authorizer/rbac/rbac.go `RuleAllows`, with the matchers of
  pkg/apis/rbac/v1/evaluation_helpers.go (`VerbMatches`, `APIGroupMatches`, `ResourceMatches`
  incl. `*/subresource`, `ResourceNameMatches`, `NonResourceURLMatches` with a trailing `*`).
- `visit_rules` / `applies_to`: pkg/registry/rbac/validation/rule.go `VisitRulesFor` and
  `appliesToUser` (ClusterRoleBindings first, then RoleBindings of the request's namespace;
  a ServiceAccount subject without a namespace means the binding's).
- `authorize`: rbac.go `Authorize`; a binding to a missing role adds an error that becomes
  the denial's reason, `RBAC: role.rbac.authorization.k8s.io "x" not found`.
- `forbidden_message`: apiserver pkg/endpoints/handlers/responsewriters/errors.go
  `ForbiddenStatusError` / `forbiddenMessage`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Protocol

Rule = dict[str, Any]

# pkg/apis/rbac/v1 (and apiserver pkg/authentication/user): the well-known names.
SYSTEM_MASTERS = "system:masters"
AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
ANONYMOUS = "system:anonymous"


@dataclass(frozen=True)
class User:
    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: dict[str, list[str]] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class Attributes:
    """authorizer.AttributesRecord: one request as the authorizer sees it."""

    user: User
    verb: str
    resource_request: bool = True
    api_group: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    namespace: str = ""
    path: str = ""


class Policy(Protocol):
    def cluster_role_bindings(self) -> list[dict[str, Any]]: ...
    def role_bindings(self, namespace: str) -> list[dict[str, Any]]: ...
    def cluster_role(self, name: str) -> dict[str, Any] | None: ...
    def role(self, namespace: str, name: str) -> dict[str, Any] | None: ...


@dataclass
class StaticPolicy:
    """A Policy from lists of objects (upstream's `StaticRoles`, for tests and reviews)."""

    roles: list[dict[str, Any]] = field(default_factory=list)
    role_bindings_: list[dict[str, Any]] = field(default_factory=list)
    cluster_roles: list[dict[str, Any]] = field(default_factory=list)
    cluster_role_bindings_: list[dict[str, Any]] = field(default_factory=list)

    def cluster_role_bindings(self) -> list[dict[str, Any]]:
        return self.cluster_role_bindings_

    def role_bindings(self, namespace: str) -> list[dict[str, Any]]:
        return [b for b in self.role_bindings_ if b["metadata"].get("namespace") == namespace]

    def cluster_role(self, name: str) -> dict[str, Any] | None:
        return next((r for r in self.cluster_roles if r["metadata"]["name"] == name), None)

    def role(self, namespace: str, name: str) -> dict[str, Any] | None:
        return next((r for r in self.roles if r["metadata"]["name"] == name and r["metadata"].get("namespace") == namespace), None)


# Rule matching (evaluation_helpers.go)


def _verb_matches(rule: Rule, verb: str) -> bool:
    return any(v == "*" or v == verb for v in rule.get("verbs") or ())


def _group_matches(rule: Rule, group: str) -> bool:
    return any(g == "*" or g == group for g in rule.get("apiGroups") or ())


def _resource_matches(rule: Rule, combined: str, subresource: str) -> bool:
    for resource in rule.get("resources") or ():
        if resource == "*" or resource == combined:
            return True
        # `*/status` grants the status subresource of every resource.
        if subresource and resource == "*/" + subresource:
            return True
    return False


def _name_matches(rule: Rule, name: str) -> bool:
    names = rule.get("resourceNames") or ()
    return not names or name in names


def _url_matches(rule: Rule, path: str) -> bool:
    for url in rule.get("nonResourceURLs") or ():
        if url == "*" or url == path:
            return True
        if url.endswith("*") and path.startswith(url.rstrip("*")):
            return True
    return False


def rule_allows(attrs: Attributes, rule: Rule) -> bool:
    if attrs.resource_request:
        combined = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
        return (
            _verb_matches(rule, attrs.verb)
            and _group_matches(rule, attrs.api_group)
            and _resource_matches(rule, combined, attrs.subresource)
            and _name_matches(rule, attrs.name)
        )
    return _verb_matches(rule, attrs.verb) and _url_matches(rule, attrs.path)


# Rule resolution (rule.go)


def service_account_username(namespace: str, name: str) -> str:
    return f"system:serviceaccount:{namespace}:{name}"


def applies_to(user: User, subject: dict[str, Any], namespace: str) -> bool:
    kind = subject.get("kind")
    if kind == "User":
        return user.name == subject.get("name")
    if kind == "Group":
        return subject.get("name") in user.groups
    if kind == "ServiceAccount":
        sa_namespace = subject.get("namespace") or namespace
        return bool(sa_namespace) and user.name == service_account_username(sa_namespace, subject.get("name", ""))
    return False


def _role_rules(policy: Policy, ref: dict[str, Any], namespace: str) -> tuple[list[Rule], str | None]:
    kind, name = ref.get("kind"), ref.get("name", "")
    if kind == "Role":
        role = policy.role(namespace, name)
        if role is None:
            return [], f'role.rbac.authorization.k8s.io "{name}" not found'
        return list(role.get("rules") or []), None
    if kind == "ClusterRole":
        role = policy.cluster_role(name)
        if role is None:
            return [], f'clusterrole.rbac.authorization.k8s.io "{name}" not found'
        return list(role.get("rules") or []), None
    return [], f'unsupported role reference kind: "{kind}"'


def visit_rules(policy: Policy, user: User, namespace: str) -> Iterator[tuple[str, Rule | None, str | None]]:
    """(source, rule, error) for each rule that applies to the user in the namespace."""
    bindings = [(b, "") for b in policy.cluster_role_bindings()]
    if namespace:
        bindings += [(b, namespace) for b in policy.role_bindings(namespace)]
    for binding, ns in bindings:
        subject = next((s for s in binding.get("subjects") or [] if applies_to(user, s, ns)), None)
        if subject is None:
            continue
        ref = binding.get("roleRef") or {}
        rules, error = _role_rules(policy, ref, ns)
        if error:
            yield "", None, error
            continue
        meta = binding["metadata"]
        where = f'RoleBinding "{meta["name"]}/{ns}"' if ns else f'ClusterRoleBinding "{meta["name"]}"'
        source = f'{where} of {ref.get("kind")} "{ref.get("name")}" to {subject.get("kind")} "{subject.get("name")}"'
        for rule in rules:
            yield source, rule, None


def authorize(policy: Policy, attrs: Attributes) -> tuple[bool, str]:
    """(allowed, reason), as RBACAuthorizer.Authorize."""
    errors: list[str] = []
    for source, rule, error in visit_rules(policy, attrs.user, attrs.namespace):
        if rule is not None and rule_allows(attrs, rule):
            return True, f"RBAC: allowed by {source}"
        if error:
            errors.append(error)
    if not errors:
        return False, ""
    # utilerrors.NewAggregate: one error as it is, several as a bracketed list.
    return False, "RBAC: " + (errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")


def rules_for(policy: Policy, user: User, namespace: str) -> tuple[list[Rule], list[str]]:
    """Every rule that applies, and resolution errors (RulesFor, for SelfSubjectRulesReview)."""
    rules, errors = [], []
    for _, rule, error in visit_rules(policy, user, namespace):
        if rule is not None:
            rules.append(rule)
        if error:
            errors.append(error)
    return rules, errors


# The 403 (responsewriters/errors.go)


def forbidden_message(attrs: Attributes, reason: str = "") -> str:
    name = attrs.user.name
    if not attrs.resource_request:
        msg = f'User "{name}" cannot {attrs.verb} path "{attrs.path}"'
    else:
        resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
        where = f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
        msg = f'User "{name}" cannot {attrs.verb} resource "{resource}" in API group "{attrs.api_group}" {where}'
    # No HTML in errors; quotes are fine.
    msg = msg.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return f"{msg}: {reason}" if reason else msg


def forbidden_status(attrs: Attributes, reason: str = "") -> tuple[str, dict[str, Any]]:
    """(message, details) of apierrors.NewForbidden(groupResource, name, err)."""
    qualified = f"{attrs.resource}.{attrs.api_group}" if attrs.api_group else attrs.resource
    subject = f'{qualified} "{attrs.name}"' if attrs.name else qualified
    message = f"{subject} is forbidden: {forbidden_message(attrs, reason)}"
    if not attrs.resource_request:
        # An empty GroupResource: `forbidden: User ... cannot get path "/x"`.
        message = f"forbidden: {forbidden_message(attrs, reason)}"
    details: dict[str, Any] = {}
    if attrs.name:
        details["name"] = attrs.name
    if attrs.api_group:
        details["group"] = attrs.api_group
    if attrs.resource:
        details["kind"] = attrs.resource
    return message, details
