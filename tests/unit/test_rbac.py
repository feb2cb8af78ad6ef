"""The RBAC authorizer (pinery.local.apiserver.rbac), from upstream's own tests:
kubernetes/kubernetes plugin/pkg/auth/authorizer/rbac/rbac_test.go `TestRuleMatches` and
`TestAuthorizer`; the request attributes from apiserver pkg/endpoints/request/requestinfo.go."""

from __future__ import annotations

import pytest

from pinery.local.apiserver.rbac import Attributes, StaticPolicy, User, authorize, forbidden_status, rule_allows
from pinery.local.apiserver.requestinfo import request_attributes
from pinery.local.apiserver.serviceaccount_tokens import TokenSigner, service_account_user

NOBODY = User("nobody")


def res(verb, group, resource, subresource="", name="", namespace=""):
    return Attributes(NOBODY, verb, True, group, resource, subresource, name, namespace)


def url(verb, path):
    return Attributes(NOBODY, verb, False, path=path)


def rule(verbs=(), groups=(), resources=(), urls=(), names=()):
    return {"verbs": list(verbs), "apiGroups": list(groups), "resources": list(resources),
            "nonResourceURLs": list(urls), "resourceNames": list(names)}


G1R1, G2R1, G1R2, G2R2 = ("group1", "resource1"), ("group2", "resource1"), ("group1", "resource2"), ("group2", "resource2")

# TestRuleMatches: (name, rule, [(request, expected)]).
RULE_MATCHES = [
    ("star verb, exact match other", rule(["*"], ["group1"], ["resource1"]), [
        (res(v, g, r), (g, r) == G1R1) for v in ("verb1", "verb2") for g, r in (G1R1, G2R1, G1R2, G2R2)]),
    ("star group, exact match other", rule(["verb1"], ["*"], ["resource1"]), [
        (res(v, g, r), v == "verb1" and r == "resource1") for v in ("verb1", "verb2") for g, r in (G1R1, G2R1, G1R2, G2R2)]),
    ("star resource, exact match other", rule(["verb1"], ["group1"], ["*"]), [
        (res(v, g, r), v == "verb1" and g == "group1") for v in ("verb1", "verb2") for g, r in (G1R1, G2R1, G1R2, G2R2)]),
    ("tuple expansion", rule(["verb1", "verb2"], ["group1", "group2"], ["resource1", "resource2"]), [
        (res(v, g, r), True) for v in ("verb1", "verb2") for g, r in (G1R1, G2R1, G1R2, G2R2)]),
    ("subresource expansion", rule(["*"], ["*"], ["resource1/subresource1"]), [
        (res(v, "group1", "resource1", "subresource1"), True) for v in ("verb1", "verb2")] + [
        (res(v, "group2", "resource1", "subresource2"), False) for v in ("verb1", "verb2")] + [
        (res(v, g, "resource2", "subresource1"), False) for v in ("verb1", "verb2") for g in ("group1", "group2")]),
    ("star nonresource, exact match other", rule(["verb1"], urls=["*"]), [
        (url(v, p), v == "verb1") for v in ("verb1", "verb2") for p in ("/foo", "/foo/bar", "/foo/baz", "/foo/bar/one", "/foo/baz/one")]),
    ("star nonresource subpath", rule(["verb1"], urls=["/foo/*"]), [
        (url("verb1", "/foo"), False), (url("verb1", "/foo/bar"), True), (url("verb1", "/foo/baz"), True),
        (url("verb1", "/foo/bar/one"), True), (url("verb1", "/foo/baz/one"), True), (url("verb1", "/notfoo"), False),
        (url("verb1", "/notfoo/bar"), False), (url("verb1", "/notfoo/baz"), False), (url("verb1", "/notfoo/bar/one"), False),
        (url("verb1", "/notfoo/baz/one"), False)]),
    ("star verb, exact nonresource", rule(["*"], urls=["/foo", "/foo/bar/one"]), [
        (url(v, p), p in ("/foo", "/foo/bar/one")) for v in ("verb1", "verb2") for p in ("/foo", "/foo/bar", "/foo/baz", "/foo/bar/one", "/foo/baz/one")]),
    # evaluation_helpers.go: `*/subresource` and resourceNames.
    ("star slash subresource", rule(["get"], ["*"], ["*/status"]), [
        (res("get", "", "pods", "status"), True), (res("get", "apps", "deployments", "status"), True),
        (res("get", "", "pods"), False), (res("get", "", "pods", "log"), False)]),
    ("resource names", rule(["get"], [""], ["secrets"], names=["api-key"]), [
        (res("get", "", "secrets", name="api-key"), True), (res("get", "", "secrets", name="other"), False),
        (res("list", "", "secrets"), False), (res("get", "", "secrets"), False)]),
]


@pytest.mark.parametrize("name, rule_, cases", RULE_MATCHES, ids=[c[0] for c in RULE_MATCHES])
def test_rule_matches(name, rule_, cases):
    for request, expected in cases:
        assert rule_allows(request, rule_) is expected, (name, request)


def _role(kind, name, namespace="", *rules):
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"kind": kind, "metadata": meta, "rules": list(rules)}


def _subjects(*subjects):
    out = []
    for s in subjects:
        kind, name = s.split(":", 1)
        out.append({"kind": kind, "name": name, "apiGroup": "" if kind == "ServiceAccount" else "rbac.authorization.k8s.io"})
    return out


def _binding(namespace, role_kind, role_name, *subjects):
    meta = {"name": f"{role_name}-binding", **({"namespace": namespace} if namespace else {})}
    return {"metadata": meta, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role_name},
            "subjects": _subjects(*subjects)}


def who(user, groups, verb, resource, subresource, namespace, group=""):
    return Attributes(User(user, tuple(g for g in groups.split(",") if g)), verb, True, group, resource, subresource, "", namespace)


def who_url(user="", groups=(), verb="get", path=""):
    return Attributes(User(user, tuple(groups)), verb, False, path=path)


# TestAuthorizer: (policy, should pass, should fail).
AUTHORIZER = [
    (StaticPolicy(cluster_roles=[_role("ClusterRole", "admin", "", rule(["*"], ["*"], ["*"], ["*"]))],
                  role_bindings_=[_binding("ns1", "ClusterRole", "admin", "User:admin", "Group:admins")]),
     [who("admin", "", "get", "Pods", "", "ns1"), who("admin", "", "watch", "Pods", "", "ns1"),
      who("admin", "group1", "watch", "Foobar", "", "ns1"), who("joe", "admins", "watch", "Foobar", "", "ns1"),
      who("joe", "group1,admins", "watch", "Foobar", "", "ns1")],
     [who("admin", "", "GET", "Pods", "", "ns2"), who("admin", "", "GET", "Nodes", "", ""),
      who("admin", "admins", "GET", "Pods", "", "ns2"), who("admin", "admins", "GET", "Nodes", "", "")]),
    (StaticPolicy(
        cluster_roles=[_role("ClusterRole", "non-resource-url-getter", "", rule(["get"], [""], [""], ["/apis"])),
                       _role("ClusterRole", "non-resource-url", "", rule(["*"], [""], [""], ["/apis"])),
                       _role("ClusterRole", "non-resource-url-prefix", "", rule(["get"], [""], [""], ["/apis/*"]))],
        cluster_role_bindings_=[_binding("", "ClusterRole", "non-resource-url-getter", "User:foo", "Group:bar"),
                                _binding("", "ClusterRole", "non-resource-url", "User:admin", "Group:admin"),
                                _binding("", "ClusterRole", "non-resource-url-prefix", "User:prefixed", "Group:prefixed")]),
     [who_url("foo", path="/apis"), who_url(groups=["bar"], path="/apis"), who_url("admin", path="/apis"),
      who_url(groups=["admin"], path="/apis"), who_url("admin", verb="watch", path="/apis"),
      who_url(groups=["admin"], verb="watch", path="/apis"), who_url("prefixed", path="/apis/v1"),
      who_url(groups=["prefixed"], path="/apis/v1"), who_url("prefixed", path="/apis/v1/foobar"),
      who_url(groups=["prefixed"], path="/apis/v1/foorbar")],
     [who_url("foo", verb="watch", path="/apis"), who_url(groups=["bar"], verb="watch", path="/apis"),
      who_url("foo", path="/api/v1"), who_url(groups=["bar"], path="/api/v1"), who_url("admin", path="/api/v1"),
      who_url(groups=["admin"], path="/api/v1"), who_url("prefixed", path="/api/v1"), who_url(groups=["prefixed"], path="/api/v1")]),
    (StaticPolicy(cluster_roles=[_role("ClusterRole", "admin", "", rule(["*"], ["*"], ["pods"], ["*"]))],
                  role_bindings_=[_binding("ns1", "ClusterRole", "admin", "User:admin", "Group:admins")]),
     [who("admin", "", "get", "pods", "", "ns1")], [who("admin", "", "get", "pods", "status", "ns1")]),
    (StaticPolicy(cluster_roles=[_role("ClusterRole", "admin", "", rule(["*"], ["*"], ["pods/status"], ["*"]))],
                  role_bindings_=[_binding("ns1", "ClusterRole", "admin", "User:admin", "Group:admins")]),
     [who("admin", "", "get", "pods", "status", "ns1")], [who("admin", "", "get", "pods", "", "ns1")]),
    # rule.go appliesToUser: a ServiceAccount subject without a namespace is the binding's.
    (StaticPolicy(roles=[_role("Role", "reader", "ns1", rule(["list"], [""], ["pods"]))],
                  role_bindings_=[_binding("ns1", "Role", "reader", "ServiceAccount:sa")]),
     [who("system:serviceaccount:ns1:sa", "", "list", "pods", "", "ns1")],
     [who("system:serviceaccount:ns2:sa", "", "list", "pods", "", "ns1"), who("system:serviceaccount:ns1:sa", "", "list", "pods", "", "ns2")]),
]


@pytest.mark.parametrize("case", range(len(AUTHORIZER)))
def test_authorizer(case):
    policy, should_pass, should_fail = AUTHORIZER[case]
    for attrs in should_pass:
        assert authorize(policy, attrs)[0], attrs
    for attrs in should_fail:
        assert not authorize(policy, attrs)[0], attrs


def test_a_binding_to_a_missing_role_is_the_denial_reason():
    policy = StaticPolicy(role_bindings_=[_binding("ns", "Role", "gone", "User:u")])
    assert authorize(policy, who("u", "", "get", "pods", "", "ns")) == (False, 'RBAC: role.rbac.authorization.k8s.io "gone" not found')


@pytest.mark.parametrize("attrs, message, details", [
    (res("list", "", "pods", namespace="ns"),
     'pods is forbidden: User "nobody" cannot list resource "pods" in API group "" in the namespace "ns"', {"kind": "pods"}),
    (res("get", "pinery.dev", "fsdpjobs", "status", "j", "ns"),
     'fsdpjobs.pinery.dev "j" is forbidden: User "nobody" cannot get resource "fsdpjobs/status" in API group "pinery.dev" in the namespace "ns"',
     {"name": "j", "group": "pinery.dev", "kind": "fsdpjobs"}),
    (res("list", "", "nodes"), 'nodes is forbidden: User "nobody" cannot list resource "nodes" in API group "" at the cluster scope', {"kind": "nodes"}),
    (url("get", "/metrics"), 'forbidden: User "nobody" cannot get path "/metrics"', {}),
])
def test_forbidden_message_is_responsewriters_forbidden_status_error(attrs, message, details):
    assert forbidden_status(attrs) == (message, details)


@pytest.mark.parametrize("method, path, query, expected", [
    ("GET", "/api/v1/namespaces/ns/pods", {}, ("list", "", "pods", "", "", "ns")),
    ("GET", "/api/v1/namespaces/ns/pods", {"watch": "true"}, ("watch", "", "pods", "", "", "ns")),
    ("GET", "/api/v1/watch/namespaces/ns/pods", {}, ("watch", "", "pods", "", "", "ns")),
    ("GET", "/api/v1/namespaces/ns/pods", {"fieldSelector": "metadata.name=p"}, ("list", "", "pods", "", "p", "ns")),
    ("GET", "/api/v1/namespaces/ns/pods/p/log", {}, ("get", "", "pods", "log", "p", "ns")),
    ("DELETE", "/api/v1/namespaces/ns/pods", {}, ("deletecollection", "", "pods", "", "", "ns")),
    ("DELETE", "/api/v1/namespaces/ns/pods/p", {}, ("delete", "", "pods", "", "p", "ns")),
    ("PATCH", "/apis/pinery.dev/v1alpha1/namespaces/ns/fsdpjobs/j/status", {}, ("patch", "pinery.dev", "fsdpjobs", "status", "j", "ns")),
    ("POST", "/api/v1/namespaces/ns/serviceaccounts/sa/token", {}, ("create", "", "serviceaccounts", "token", "sa", "ns")),
    ("GET", "/api/v1/namespaces/ns", {}, ("get", "", "namespaces", "", "ns", "ns")),
    ("PUT", "/api/v1/namespaces/ns/finalize", {}, ("update", "", "namespaces", "finalize", "ns", "ns")),
    ("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {}, ("list", "apiextensions.k8s.io", "customresourcedefinitions", "", "", "")),
])
def test_request_attributes(method, path, query, expected):
    a = request_attributes(NOBODY, method, path, query)
    assert a.resource_request and (a.verb, a.api_group, a.resource, a.subresource, a.name, a.namespace) == expected


@pytest.mark.parametrize("path", ["/", "/api", "/api/v1", "/apis", "/apis/pinery.dev", "/apis/pinery.dev/v1", "/healthz", "/version", "/openapi/v3"])
def test_non_resource_requests(path):
    a = request_attributes(NOBODY, "GET", path, {})
    assert (a.resource_request, a.verb, a.path) == (False, "get", path)


def test_tokens_authenticate_while_the_account_exists(tmp_path):
    signer = TokenSigner(tmp_path / "key")
    token, _ = signer.issue("ns", "sa", "uid-1")
    account = {"metadata": {"name": "sa", "namespace": "ns", "uid": "uid-1"}}
    assert signer.authenticate(token, lambda ns, name: account) == service_account_user("ns", "sa", "uid-1")
    assert service_account_user("ns", "sa").groups == ("system:serviceaccounts", "system:serviceaccounts:ns", "system:authenticated")
    recreated = {"metadata": {"name": "sa", "namespace": "ns", "uid": "uid-2"}}
    assert signer.authenticate(token, lambda ns, name: recreated) is None
    assert signer.authenticate(token, lambda ns, name: None) is None
    assert signer.authenticate(token[:-2] + "xx", lambda ns, name: account) is None
    assert TokenSigner(tmp_path / "key").verify(token) is not None  # the key survives restarts
    expired, _ = signer.issue("ns", "sa", "uid-1", 600, now=0)
    assert signer.verify(expired) is None
