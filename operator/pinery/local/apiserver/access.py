"""Who is asking, and may they: authentication and RBAC enforcement for the server, and the
endpoints that answer questions about it (TokenRequest, SelfSubjectAccessReview,
SelfSubjectRulesReview, SelfSubjectReview).

- The kubeconfig's token is the admin: `kubernetes-admin` in `system:masters`, allowed
  everything without asking RBAC (kube-apiserver puts a `system:masters` authorizer before
  RBAC: apiserver pkg/authorization/authorizerfactory `NewPrivilegedGroups`).
- A ServiceAccount token (`serviceaccount_tokens`) is that account's user, and RBAC
  (`rbac`, with the objects in the store) decides each of its requests; a denial is 403
  Forbidden with the API server's message (`rbac.forbidden_status`).
- No token: only the health and version endpoints, as before.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from aiohttp import web

from pinery.local.apiserver import errors, protobuf, protobuf_workloads
from pinery.local.apiserver.objectmeta import now
from pinery.local.apiserver.rbac import (
    ANONYMOUS,
    AUTHENTICATED,
    SYSTEM_MASTERS,
    UNAUTHENTICATED,
    Attributes,
    User,
    authorize,
    forbidden_status,
    rules_for,
)
from pinery.local.apiserver.requestinfo import request_attributes
from pinery.local.apiserver.serviceaccount_tokens import (
    DEFAULT_AUDIENCES,
    DEFAULT_EXPIRATION,
    MAX_EXPIRATION,
    MIN_EXPIRATION,
    TokenSigner,
)
from pinery.local.apiserver.store import Store

ADMIN = User(name="kubernetes-admin", groups=(SYSTEM_MASTERS, AUTHENTICATED))
ANONYMOUS_USER = User(name=ANONYMOUS, groups=(UNAUTHENTICATED,))
USER_KEY = web.RequestKey("pinery.user", User)
RBAC_GROUP = "rbac.authorization.k8s.io"
_SERVICE_ACCOUNTS = ("", "serviceaccounts")


class StorePolicy:
    """rbac.Policy over the objects in the store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def cluster_role_bindings(self) -> list[dict[str, Any]]:
        return list(self.store.iterate((RBAC_GROUP, "clusterrolebindings")))

    def role_bindings(self, namespace: str) -> list[dict[str, Any]]:
        return list(self.store.iterate((RBAC_GROUP, "rolebindings"), namespace))

    def cluster_role(self, name: str) -> dict[str, Any] | None:
        return self.store.get((RBAC_GROUP, "clusterroles"), "", name)

    def role(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.store.get((RBAC_GROUP, "roles"), namespace, name)


def privileged(user: User) -> bool:
    return SYSTEM_MASTERS in user.groups


class Access:
    def __init__(self, store: Store, signer: TokenSigner, admin_token: str | None) -> None:
        self.store = store
        self.signer = signer
        self.admin_token = admin_token
        self.policy = StorePolicy(store)

    def _account(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.store.get(_SERVICE_ACCOUNTS, namespace, name)

    def authenticate(self, header: str) -> User | None:
        """The user of an `Authorization` header; None when it carries no valid credential."""
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token:
            return None
        if self.admin_token is not None and token == self.admin_token:
            return ADMIN
        return self.signer.authenticate(token.strip(), self._account)

    def allowed(self, attrs: Attributes) -> tuple[bool, str]:
        if privileged(attrs.user):
            return True, ""
        return authorize(self.policy, attrs)

    def check(self, request: web.Request, user: User) -> None:
        """403 unless the user may make this request."""
        attrs = request_attributes(user, request.method, request.path, request.query)
        allowed, reason = self.allowed(attrs)
        if not allowed:
            message, details = forbidden_status(attrs, reason)
            raise errors.ApiError(403, "Forbidden", message, details)

    # Endpoints

    async def token_request(self, request: web.Request) -> web.Response:
        """POST /api/v1/namespaces/{ns}/serviceaccounts/{name}/token (`kubectl create token`)."""
        namespace, name = request.match_info["namespace"], request.match_info["name"]
        body = await _body(request)
        account = self._account(namespace, name)
        if account is None:
            raise errors.ApiError(404, "NotFound", f'serviceaccounts "{name}" not found', {"name": name, "kind": "serviceaccounts"})
        spec = dict(body.get("spec") or {})
        seconds = spec.get("expirationSeconds") or DEFAULT_EXPIRATION
        # pkg/apis/authentication/validation ValidateTokenRequest.
        if seconds < MIN_EXPIRATION:
            raise _invalid_token_request(name, "spec.expirationSeconds", "Invalid value: " + str(seconds) + ": may not specify a duration less than 10 minutes")
        if seconds > MAX_EXPIRATION:
            raise _invalid_token_request(
                name, "spec.expirationSeconds", "Invalid value: " + str(seconds) + ": may not specify a duration larger than 2^32 seconds"
            )
        audiences = tuple(spec.get("audiences") or DEFAULT_AUDIENCES)
        token, expiry = self.signer.issue(namespace, name, account["metadata"].get("uid", ""), seconds, audiences)
        spec.update(audiences=list(audiences), expirationSeconds=seconds)
        spec.setdefault("boundObjectRef", None)
        return _json({
            "kind": "TokenRequest",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"name": name, "namespace": namespace, "creationTimestamp": now()},
            "spec": spec,
            "status": {"token": token, "expirationTimestamp": _rfc3339(expiry)},
        }, 201)

    async def self_subject_access_review(self, request: web.Request) -> web.Response:
        """POST authorization.k8s.io/v1 selfsubjectaccessreviews (`kubectl auth can-i`)."""
        body = await _body(request)
        user: User = request[USER_KEY]
        spec = body.get("spec") or {}
        resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
        if bool(resource) == bool(non_resource):
            raise errors.ApiError(
                422,
                "Invalid",
                'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: '
                'Invalid value: "": exactly one of nonResourceAttributes or resourceAttributes must be specified',
                {
                    "group": "authorization.k8s.io",
                    "kind": "SelfSubjectAccessReview",
                    "causes": [{
                        "reason": "FieldValueInvalid",
                        "field": "spec.resourceAttributes",
                        "message": 'Invalid value: "": exactly one of nonResourceAttributes or resourceAttributes must be specified',
                    }],
                },
            )
        if resource:
            attrs = Attributes(
                user=user, verb=resource.get("verb", ""), api_group=resource.get("group", ""), resource=resource.get("resource", ""),
                subresource=resource.get("subresource", ""), name=resource.get("name", ""), namespace=resource.get("namespace", ""),
            )
        else:
            assert non_resource  # exactly one of the two is set (checked above)
            attrs = Attributes(user=user, verb=non_resource.get("verb", ""), resource_request=False, path=non_resource.get("path", ""))
        allowed, reason = self.allowed(attrs)
        status: dict[str, Any] = {"allowed": allowed}
        if reason:
            status["reason"] = reason
        return _json(_review("authorization.k8s.io/v1", "SelfSubjectAccessReview", body, spec, status), 201)

    async def self_subject_rules_review(self, request: web.Request) -> web.Response:
        """POST authorization.k8s.io/v1 selfsubjectrulesreviews (`kubectl auth can-i --list`)."""
        body = await _body(request)
        user: User = request[USER_KEY]
        spec = body.get("spec") or {}
        rules, problems = rules_for(self.policy, user, spec.get("namespace", ""))
        resource_rules = [
            {k: rule[k] for k in ("verbs", "apiGroups", "resources", "resourceNames") if rule.get(k)} for rule in rules if rule.get("resources")
        ]
        non_resource_rules = [{"verbs": rule["verbs"], "nonResourceURLs": rule["nonResourceURLs"]} for rule in rules if rule.get("nonResourceURLs")]
        status: dict[str, Any] = {"resourceRules": resource_rules, "nonResourceRules": non_resource_rules, "incomplete": bool(problems)}
        if problems:
            status["evaluationError"] = "; ".join(problems)
        return _json(_review("authorization.k8s.io/v1", "SelfSubjectRulesReview", body, spec, status), 201)

    async def self_subject_review(self, request: web.Request) -> web.Response:
        """POST authentication.k8s.io/v1 selfsubjectreviews (`kubectl auth whoami`)."""
        await _body(request)
        user: User = request[USER_KEY]
        info: dict[str, Any] = {"username": user.name, "groups": list(user.groups)}
        if user.uid:
            info["uid"] = user.uid
        if user.extra:
            info["extra"] = user.extra
        return _json({
            "kind": "SelfSubjectReview",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"creationTimestamp": now()},
            "status": {"userInfo": info},
        }, 201)


def _review(api_version: str, kind: str, body: dict[str, Any], spec: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    meta = dict(body.get("metadata") or {})
    meta.setdefault("creationTimestamp", None)
    return {"kind": kind, "apiVersion": api_version, "metadata": meta, "spec": spec, "status": status}


def _invalid_token_request(name: str, path: str, message: str) -> errors.ApiError:
    return errors.ApiError(
        422, "Invalid", f'TokenRequest.authentication.k8s.io "{name}" is invalid: {path}: {message}',
        {"name": name, "group": "authentication.k8s.io", "kind": "TokenRequest",
         "causes": [{"reason": errors.cause_reason(message), "message": message, "field": path}]},
    )


def _rfc3339(unix: int) -> str:
    return datetime.fromtimestamp(unix, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _json(body: Any, status: int = 200) -> web.Response:
    return web.Response(body=json.dumps(body, separators=(",", ":")).encode(), status=status, content_type="application/json")


async def _body(request: web.Request) -> dict[str, Any]:
    raw = await request.read()
    try:
        if request.content_type == protobuf.CONTENT_TYPE:
            body = protobuf.decode(raw)
        else:
            body = json.loads(raw or b"{}")
    except (ValueError, protobuf.ProtobufError) as exc:
        raise errors.bad_request(f"error decoding request body: {exc}") from None
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request must be an object")
    return body


# kubectl's typed clients send these kinds as protobuf (field numbers: k8s.io/api
# authorization/v1 and authentication/v1 generated.proto).
_META = {1: ("name", "str"), 2: ("generateName", "str"), 3: ("namespace", "str")}
protobuf.KINDS.setdefault(("authorization.k8s.io/v1", "SelfSubjectAccessReview"), {
    1: ("metadata", _META),
    2: ("spec", {
        1: ("resourceAttributes", {1: ("namespace", "str"), 2: ("verb", "str"), 3: ("group", "str"), 4: ("version", "str"),
                                   5: ("resource", "str"), 6: ("subresource", "str"), 7: ("name", "str")}),
        2: ("nonResourceAttributes", {1: ("path", "str"), 2: ("verb", "str")}),
    }),
})
protobuf.KINDS.setdefault(("authorization.k8s.io/v1", "SelfSubjectRulesReview"), {1: ("metadata", _META), 2: ("spec", {1: ("namespace", "str")})})
protobuf.KINDS.setdefault(("authentication.k8s.io/v1", "SelfSubjectReview"), {1: ("metadata", _META)})
protobuf.KINDS.setdefault(("authentication.k8s.io/v1", "TokenRequest"), {
    1: ("metadata", _META),
    2: ("spec", {1: ("audiences", ("list", "str")), 4: ("expirationSeconds", "optint"),
                 3: ("boundObjectRef", {1: ("kind", "str"), 2: ("apiVersion", "str"), 3: ("name", "str"), 4: ("uid", "str")})}),
})

# `kubectl create role|clusterrole|rolebinding|clusterrolebinding` send protobuf too
# (k8s.io/api rbac/v1 generated.proto).
_OBJECT_META = getattr(protobuf, "_OBJECT_META", _META)
_RULE = {1: ("verbs", ("list", "str")), 2: ("apiGroups", ("list", "str")), 3: ("resources", ("list", "str")),
         4: ("resourceNames", ("list", "str")), 5: ("nonResourceURLs", ("list", "str"))}
_SUBJECT = {1: ("kind", "str"), 2: ("apiGroup", "str"), 3: ("name", "str"), 4: ("namespace", "str")}
_ROLE_REF = {1: ("apiGroup", "str"), 2: ("kind", "str"), 3: ("name", "str")}
protobuf.KINDS.setdefault(("rbac.authorization.k8s.io/v1", "Role"), {1: ("metadata", _OBJECT_META), 2: ("rules", ("list", _RULE))})
# `--aggregation-rule`: ClusterRole field 3, AggregationRule{clusterRoleSelectors: []LabelSelector}.
protobuf.KINDS.setdefault(("rbac.authorization.k8s.io/v1", "ClusterRole"), {
    1: ("metadata", _OBJECT_META), 2: ("rules", ("list", _RULE)),
    3: ("aggregationRule", {1: ("clusterRoleSelectors", ("list", protobuf_workloads.LABEL_SELECTOR))})})
for _kind in ("RoleBinding", "ClusterRoleBinding"):
    protobuf.KINDS.setdefault(("rbac.authorization.k8s.io/v1", _kind), {
        1: ("metadata", _OBJECT_META), 2: ("subjects", ("list", _SUBJECT)), 3: ("roleRef", _ROLE_REF)})
