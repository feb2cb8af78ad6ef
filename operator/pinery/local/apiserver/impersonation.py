"""Impersonation: `kubectl --as`, `--as-group`, `--as-uid` (client-go's `Impersonate-*` headers).

As the API server's filter (kubernetes/apiserver pkg/endpoints/filters/impersonation/
impersonation.go, `WithImpersonation` and `buildImpersonationRequests`): each thing asked for
is authorized as verb `impersonate` for the requesting user (users, groups, serviceaccounts in
the account's namespace, userextras/<key> and uids of authentication.k8s.io); a denial is 403
naming it; groups, extras or a uid without a user are a 400. The request then runs as the
impersonated user: a ServiceAccount gets its fixed groups unless groups are given, and every
user but `system:anonymous` gets `system:authenticated` unless `system:authenticated` or
`system:unauthenticated` is among the groups (`system:anonymous` gets `system:unauthenticated`).
Not emulated: constrained impersonation (constrained_impersonation.go, a newer opt-in mode).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import unquote

from pinery.local.apiserver import errors
from pinery.local.apiserver.rbac import ANONYMOUS, AUTHENTICATED, UNAUTHENTICATED, Attributes, User, forbidden_status

USER = "impersonate-user"
GROUP = "impersonate-group"
UID = "impersonate-uid"
EXTRA_PREFIX = "impersonate-extra-"
AUTHENTICATION_GROUP = "authentication.k8s.io"
_SERVICE_ACCOUNT = re.compile(r"^system:serviceaccount:([^:]+):([^:]+)$")  # serviceaccount.SplitUsername
_ESCAPES = re.compile(r"%(?![0-9A-Fa-f]{2})")


@dataclass(frozen=True)
class Asked:
    """One thing to impersonate (upstream uses an ObjectReference per item)."""

    kind: str  # ServiceAccount, User, Group, UserExtra, UID
    name: str
    namespace: str = ""
    key: str = ""  # the extra's key


def wants(headers: Iterable[tuple[str, str]]) -> bool:
    return any(name.lower().startswith("impersonate-") for name, _ in headers)


def asked(headers: Iterable[tuple[str, str]]) -> list[Asked]:
    """What the request's headers ask to impersonate, in upstream's order (user, groups,
    extras, uid); a 400 for groups, extras or a uid without a user."""
    pairs = [(name.lower(), value) for name, value in headers]
    user = next((v for n, v in pairs if n == USER), "")  # http.Header.Get: the first value
    out: list[Asked] = []
    if user:
        account = _SERVICE_ACCOUNT.match(user)
        out.append(Asked("ServiceAccount", account.group(2), account.group(1)) if account else Asked("User", user))
    out += [Asked("Group", v) for n, v in pairs if n == GROUP]
    out += [Asked("UserExtra", v, key=_extra_key(n[len(EXTRA_PREFIX):])) for n, v in pairs if n.startswith(EXTRA_PREFIX)]
    uid = next((v for n, v in pairs if n == UID), "")
    if uid:
        out.append(Asked("UID", uid))
    if out and not user:
        raise errors.bad_request(f"requested [{' '.join(_go_value(a) for a in out)}] without impersonating a user")
    return out


def _extra_key(encoded: str) -> str:
    """url.PathUnescape of the lower-cased key; a malformed escape keeps the key as sent."""
    return encoded if _ESCAPES.search(encoded) else unquote(encoded, errors="strict")


def _go_value(item: Asked) -> str:
    """Go's %v of the v1.ObjectReference upstream builds (Kind, Namespace, Name, UID,
    APIVersion, ResourceVersion, FieldPath), as its 400 prints them."""
    version = f"{AUTHENTICATION_GROUP}/v1" if item.kind in ("UserExtra", "UID") else ""
    return "{" + " ".join((item.kind, item.namespace, item.name, "", version, "", item.key)) + "}"


def attributes(requestor: User, item: Asked) -> Attributes:
    """The authorization each item needs: verb `impersonate` on it."""
    resource, group, subresource = {
        "ServiceAccount": ("serviceaccounts", "", ""),
        "User": ("users", "", ""),
        "Group": ("groups", "", ""),
        "UserExtra": ("userextras", AUTHENTICATION_GROUP, item.key),
        "UID": ("uids", AUTHENTICATION_GROUP, ""),
    }[item.kind]
    return Attributes(user=requestor, verb="impersonate", api_group=group, resource=resource,
                      subresource=subresource, name=item.name, namespace=item.namespace)


def impersonate(requestor: User, headers: Iterable[tuple[str, str]],
                allowed: Callable[[Attributes], tuple[bool, str]]) -> User:
    """The user the request runs as: `requestor` when nothing is asked, otherwise the
    impersonated user once every item is allowed (403 on the first that is not)."""
    items = asked(headers)
    if not items:
        return requestor
    groups_given = any(i.kind == "Group" for i in items)
    name, uid = "", ""
    groups: list[str] = []
    extra: dict[str, list[str]] = {}
    for item in items:
        if item.kind == "ServiceAccount":
            name = f"system:serviceaccount:{item.namespace}:{item.name}"
            if not groups_given:
                groups = ["system:serviceaccounts", f"system:serviceaccounts:{item.namespace}"]
        elif item.kind == "User":
            name = item.name
        elif item.kind == "Group":
            groups.append(item.name)
        elif item.kind == "UserExtra":
            extra.setdefault(item.key, []).append(item.name)
        else:
            uid = item.name
        attrs = attributes(requestor, item)
        ok, reason = allowed(attrs)
        if not ok:
            message, details = forbidden_status(attrs, reason)
            raise errors.ApiError(403, "Forbidden", message, details)
    if name != ANONYMOUS:
        if AUTHENTICATED not in groups and UNAUTHENTICATED not in groups:
            groups.append(AUTHENTICATED)
    elif UNAUTHENTICATED not in groups:
        groups.append(UNAUTHENTICATED)
    return User(name=name, groups=tuple(groups), uid=uid, extra=extra)
