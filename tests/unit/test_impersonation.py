"""impersonation.py against the cases of upstream's TestImpersonationFilter
(kubernetes/apiserver pkg/endpoints/filters/impersonation/impersonation_test.go), with its test
authorizer written as a function of ours."""

from __future__ import annotations

import pytest

from pinery.local.apiserver import impersonation
from pinery.local.apiserver.errors import ApiError
from pinery.local.apiserver.rbac import Attributes, User


def authorizer(a: Attributes) -> tuple[bool, str]:
    """The decisions of upstream's impersonateAuthorizer, rule for rule."""
    groups, name = a.user.groups, a.user.name
    first, second = (groups + ("", ""))[:2]
    imp = a.verb == "impersonate"
    if name == "system:admin":
        return True, ""
    if name == "tester":
        return False, "works on my machine"  # upstream: an error, which is a denial
    if name == "deny-me":
        return False, "denied"
    rules = [
        first == "wheel" and imp and a.resource == "users",
        first == "sa-impersonater" and imp and a.resource == "serviceaccounts",
        first == "regular-impersonater" and imp and a.resource == "users",
        second == "group-impersonater" and imp and a.resource == "groups",
        second == "extra-setter-scopes" and imp and a.resource == "userextras" and a.subresource == "scopes",
        second in ("escaped-scopes", "almost-escaped-scopes"),
        second == "extra-setter-particular-scopes" and imp and a.resource == "userextras" and a.subresource == "scopes"
        and a.name == "scope-a" and a.api_group == "authentication.k8s.io",
        second == "extra-setter-project" and imp and a.resource == "userextras" and a.subresource == "project"
        and a.api_group == "authentication.k8s.io",
        first == "everything-impersonater" and imp and a.resource == "users" and a.api_group == "",
        first == "everything-impersonater" and imp and a.resource == "uids" and a.name == "some-uid"
        and a.api_group == "authentication.k8s.io",
        first == "everything-impersonater" and imp and a.resource == "groups" and a.api_group == "",
        first == "everything-impersonater" and imp and a.resource == "userextras" and a.subresource == "scopes"
        and a.api_group == "authentication.k8s.io",
    ]
    return (True, "") if any(rules) else (False, "deny by default")


def headers(user: str = "", groups: tuple[str, ...] = (), extras: dict[str, list[str]] | None = None, uid: str = "") -> list[tuple[str, str]]:
    out = [("Impersonate-User", user)] if user else []
    out += [("Impersonate-Group", g) for g in groups]
    out += [(f"Impersonate-Extra-{k}", v) for k, values in (extras or {}).items() for v in values]
    return out + ([("Impersonate-Uid", uid)] if uid else [])


AUTH = "system:authenticated"
CASES = [
    # name, requestor (name, groups), headers, expected (name, groups, extra, uid) or an HTTP code
    ("not-impersonating", ("tester", ()), headers(), ("tester", (), {}, "")),
    ("impersonating-error", ("tester", ()), headers("anyone"), 403),
    ("impersonating-group-without-user", ("tester", ()), headers(groups=("some-group",)), 400),
    ("impersonating-extra-without-user", ("tester", ()), headers(extras={"scopes": ["scope-a"]}), 400),
    ("impersonating-uid-without-user", ("tester", ()), headers(uid="some-uid"), 400),
    ("disallowed-group", ("dev", ("wheel",)), headers("system:admin", ("some-group",)), 403),
    ("allowed-group", ("dev", ("wheel", "group-impersonater")), headers("system:admin", ("some-group",)),
     ("system:admin", ("some-group", AUTH), {}, "")),
    ("disallowed-userextra-1", ("dev", ("wheel",)), headers("system:admin", ("some-group",), {"scopes": ["scope-a"]}), 403),
    ("disallowed-userextra-2", ("dev", ("wheel", "extra-setter-project")),
     headers("system:admin", ("some-group",), {"scopes": ["scope-a"]}), 403),
    ("disallowed-userextra-3", ("dev", ("wheel", "extra-setter-particular-scopes")),
     headers("system:admin", ("some-group",), {"scopes": ["scope-a", "scope-b"]}), 403),
    ("allowed-userextras", ("dev", ("wheel", "extra-setter-scopes")), headers("system:admin", extras={"scopes": ["scope-a", "scope-b"]}),
     ("system:admin", (AUTH,), {"scopes": ["scope-a", "scope-b"]}, "")),
    ("percent-escaped-userextras", ("dev", ("wheel", "escaped-scopes")),
     headers("system:admin", extras={"example.com%2fescaped%e1%9b%84scopes": ["scope-a", "scope-b"]}),
     ("system:admin", (AUTH,), {"example.com/escapedᛄscopes": ["scope-a", "scope-b"]}, "")),
    ("almost-percent-escaped-userextras", ("dev", ("wheel", "almost-escaped-scopes")),
     headers("system:admin", extras={"almost%zzpercent%xxencoded": ["scope-a", "scope-b"]}),
     ("system:admin", (AUTH,), {"almost%zzpercent%xxencoded": ["scope-a", "scope-b"]}, "")),
    ("allowed-users-impersonation", ("dev", ("regular-impersonater",)), headers("tester"), ("tester", (AUTH,), {}, "")),
    ("disallowed-impersonating", ("dev", ("sa-impersonater",)), headers("tester"), 403),
    ("allowed-sa-impersonating", ("dev", ("sa-impersonater",)), headers("system:serviceaccount:foo:default"),
     ("system:serviceaccount:foo:default", ("system:serviceaccounts", "system:serviceaccounts:foo", AUTH), {}, "")),
    ("anonymous-username-prevents-adding-authenticated-group", ("system:admin", ()), headers("system:anonymous"),
     ("system:anonymous", ("system:unauthenticated",), {}, "")),
    ("unauthenticated-group-prevents-adding-authenticated-group", ("system:admin", ()),
     headers("unknown", ("system:unauthenticated",)), ("unknown", ("system:unauthenticated",), {}, "")),
    ("unauthenticated-group-prevents-double-adding-authenticated-group", ("system:admin", ()),
     headers("unknown", ("system:authenticated",)), ("unknown", (AUTH,), {}, "")),
    ("specified-authenticated-group-prevents-double-adding-authenticated-group", ("dev", ("wheel", "group-impersonater")),
     headers("system:admin", ("some-group", AUTH)), ("system:admin", ("some-group", AUTH), {}, "")),
    ("anonymous-user-prevents-double-adding-unauthenticated-group", ("system:admin", ()),
     headers("system:anonymous", ("system:unauthenticated",)), ("system:anonymous", ("system:unauthenticated",), {}, "")),
    ("allowed-user-impersonation-with-uid", ("dev", ("everything-impersonater",)), headers("tester", uid="some-uid"),
     ("tester", (AUTH,), {}, "some-uid")),
    ("disallowed-user-impersonation-with-uid", ("dev", ("everything-impersonater",)), headers("tester", uid="disallowed-uid"), 403),
    ("allowed-impersonation-with-all-headers", ("dev", ("everything-impersonater",)),
     headers("tester", (AUTH,), {"scopes": ["scope-a", "scope-b"]}, "some-uid"),
     ("tester", (AUTH,), {"scopes": ["scope-a", "scope-b"]}, "some-uid")),
]


@pytest.mark.parametrize(("name", "requestor", "sent", "expected"), CASES, ids=[c[0] for c in CASES])
def test_upstream_impersonation_cases(name, requestor, sent, expected):
    user = User(name=requestor[0], groups=requestor[1])
    if isinstance(expected, int):
        with pytest.raises(ApiError) as refused:
            impersonation.impersonate(user, sent, authorizer)
        assert refused.value.code == expected
        return
    got = impersonation.impersonate(user, sent, authorizer)
    assert (got.name, got.groups, got.extra, got.uid) == expected


def test_a_denial_names_what_could_not_be_impersonated():
    with pytest.raises(ApiError) as refused:
        impersonation.impersonate(User("dev", ("sa-impersonater",)), headers("tester"), authorizer)
    assert refused.value.message == (
        'users "tester" is forbidden: User "dev" cannot impersonate resource "users" in API group "" '
        "at the cluster scope: deny by default")
    with pytest.raises(ApiError) as refused:
        impersonation.impersonate(User("dev", ("wheel",)), headers("system:serviceaccount:ns:sa"), authorizer)
    assert 'cannot impersonate resource "serviceaccounts" in API group "" in the namespace "ns"' in refused.value.message


def test_groups_without_a_user_are_a_bad_request_printed_as_go_prints_the_references():
    with pytest.raises(ApiError) as refused:
        impersonation.asked(headers(groups=("a", "b")))
    assert refused.value.message == "requested [{Group  a    } {Group  b    }] without impersonating a user"


def test_header_names_are_case_insensitive_and_the_first_user_counts():
    sent = [("impersonate-user", "alice"), ("IMPERSONATE-USER", "bob"), ("impersonate-group", "g")]
    assert [(a.kind, a.name) for a in impersonation.asked(sent)] == [("User", "alice"), ("Group", "g")]
    assert impersonation.wants(sent) and not impersonation.wants([("Authorization", "Bearer x")])
