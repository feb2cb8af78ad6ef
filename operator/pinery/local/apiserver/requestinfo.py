"""The authorizer's view of an HTTP request: verb, group, resource, subresource, name, namespace.

Follows apiserver pkg/endpoints/request/requestinfo.go `NewRequestInfo`: paths under `/api`
and `/apis` with enough parts are resource requests; the verb comes from the HTTP method, a
GET without a name is `list` (or `watch` with `?watch=true` or the `/watch/` prefix), a
DELETE without a name is `deletecollection`; a field selector `metadata.name=x` on a list or
watch names the object. Everything else (`/healthz`, `/version`, `/api`, `/apis/g`,
`/openapi/v3`) is a non-resource request whose verb is the lower-case method.
"""

from __future__ import annotations

from typing import Mapping

from pinery.local.apiserver.rbac import Attributes, User

_METHOD_VERBS = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
# namespaceSubresources: /namespaces/{name}/status and /finalize are about the namespace itself.
_NAMESPACE_SUBRESOURCES = ("status", "finalize")


def _name_from_field_selector(selector: str) -> str:
    """x of a `metadata.name=x` (or `==`) term, as fields.Selector.RequiresExactMatch."""
    for term in selector.split(","):
        key, sep, value = term.partition("==") if "==" in term else term.partition("=")
        if sep and key.strip() == "metadata.name" and not key.endswith("!") and "/" not in value:
            return value.strip()
    return ""


def request_attributes(user: User, method: str, path: str, query: Mapping[str, str]) -> Attributes:
    parts = [p for p in path.split("/") if p]
    verb = method.lower()
    if len(parts) < 3 or parts[0] not in ("api", "apis") or (parts[0] == "apis" and len(parts) < 4):
        return Attributes(user=user, verb=verb, resource_request=False, path=path)
    group = "" if parts[0] == "api" else parts[1]
    rest = parts[2:] if parts[0] == "api" else parts[3:]
    via_path = rest[0] == "watch"
    if via_path:
        verb, rest = "watch", rest[1:]
    else:
        verb = _METHOD_VERBS.get(method.upper(), "")
    namespace = ""
    if rest and rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0] if rest else ""
    name = rest[1] if len(rest) >= 2 else ""
    subresource = rest[2] if len(rest) >= 3 else ""
    if not name and verb == "get":
        verb = "watch" if query.get("watch", "").lower() not in ("", "false", "0") else "list"
        name = _name_from_field_selector(query.get("fieldSelector", ""))
    if not name and verb == "delete":
        verb = "deletecollection"
    return Attributes(
        user=user, verb=verb, api_group=group, resource=resource, subresource=subresource, name=name, namespace=namespace, path=path
    )
