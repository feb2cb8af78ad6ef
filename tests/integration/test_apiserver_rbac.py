"""RBAC for ServiceAccount tokens, through real clients: kubectl (`create token`, `--token`,
`auth can-i`, `auth whoami`, `create role|rolebinding`) and the `kubernetes` Python client.
The 403 message is apiserver responsewriters.ForbiddenStatusError's."""

from __future__ import annotations

import json

import pytest
import yaml

pytestmark = pytest.mark.slow

FORBIDDEN_LIST_PODS = (
    'Error from server (Forbidden): pods is forbidden: User "system:serviceaccount:default:robot" '
    'cannot list resource "pods" in API group "" in the namespace "default"'
)


def token_for(plane, account: str, namespace: str = "default") -> str:
    plane.kubectl("create", "serviceaccount", account, "-n", namespace)
    return plane.kubectl("create", "token", account, "-n", namespace).stdout.strip()


def test_a_service_account_token_is_forbidden_until_a_role_binding_allows(control_plane):
    token = token_for(control_plane, "robot")
    denied = control_plane.kubectl("--token", token, "get", "pods", check=False)
    assert denied.returncode == 1
    assert denied.stderr.strip() == FORBIDDEN_LIST_PODS
    assert control_plane.kubectl("--token", token, "auth", "can-i", "list", "pods", check=False).stdout.strip() == "no"

    control_plane.kubectl("create", "role", "pod-reader", "--verb=get,list,watch", "--resource=pods")
    control_plane.kubectl("create", "rolebinding", "robot-reads-pods", "--role=pod-reader", "--serviceaccount=default:robot")
    assert "No resources found" in control_plane.kubectl("--token", token, "get", "pods").stderr
    assert control_plane.kubectl("--token", token, "auth", "can-i", "list", "pods").stdout.strip() == "yes"
    assert control_plane.kubectl("--token", token, "auth", "can-i", "create", "pods", check=False).stdout.strip() == "no"
    assert control_plane.kubectl("--token", token, "auth", "can-i", "list", "pods", "-n", "kube-system", check=False).stdout.strip() == "no"
    # The binding names the account, not the namespace: another namespace is still forbidden.
    other = control_plane.kubectl("--token", token, "get", "pods", "-n", "kube-system", check=False)
    assert 'cannot list resource "pods" in API group "" in the namespace "kube-system"' in other.stderr
    wide = control_plane.kubectl("get", "rolebinding", "robot-reads-pods", "-o", "wide").stdout
    assert "Role/pod-reader" in wide and "default/robot" in wide


def test_the_admin_token_stays_all_powerful(control_plane):
    assert control_plane.kubectl("auth", "can-i", "delete", "nodes").stdout.strip() == "yes"
    assert control_plane.kubectl("auth", "can-i", "get", "/metrics").stdout.strip() == "yes"


def test_whoami_for_the_admin_and_a_service_account(control_plane):
    admin = json.loads(control_plane.kubectl("auth", "whoami", "-o", "json").stdout)
    assert admin["status"]["userInfo"] == {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]}
    token = token_for(control_plane, "robot")
    uid = json.loads(control_plane.kubectl("get", "sa", "robot", "-o", "json").stdout)["metadata"]["uid"]
    robot = json.loads(control_plane.kubectl("--token", token, "auth", "whoami", "-o", "json").stdout)
    assert robot["status"]["userInfo"] == {
        "username": "system:serviceaccount:default:robot", "uid": uid,
        "groups": ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"],
    }


def test_a_deleted_service_account_token_is_401(control_plane):
    token = token_for(control_plane, "robot")
    control_plane.kubectl("delete", "serviceaccount", "robot")
    result = control_plane.kubectl("--token", token, "auth", "whoami", check=False)
    assert result.returncode == 1 and "Unauthorized" in result.stderr


def test_python_client_with_a_service_account_token(control_plane):
    import kubernetes

    token = token_for(control_plane, "robot")
    config = kubernetes.client.Configuration()
    config.host = control_plane.url
    config.ssl_ca_cert = str(control_plane.server.ca_cert)
    config.api_key = {"authorization": f"Bearer {token}"}
    with kubernetes.client.ApiClient(config) as client:
        core = kubernetes.client.CoreV1Api(client)
        with pytest.raises(kubernetes.client.ApiException) as denied:
            core.list_namespaced_config_map("default")
        assert denied.value.status == 403
        status = json.loads(denied.value.body)
        assert status["reason"] == "Forbidden" and status["details"] == {"kind": "configmaps"}
        assert status["message"] == (
            'configmaps is forbidden: User "system:serviceaccount:default:robot" cannot list resource "configmaps" '
            'in API group "" in the namespace "default"'
        )
        control_plane.kubectl("create", "clusterrole", "cm-reader", "--verb=list", "--resource=configmaps")
        control_plane.kubectl("create", "clusterrolebinding", "robot-cm", "--clusterrole=cm-reader", "--serviceaccount=default:robot")
        assert core.list_namespaced_config_map("default").items == []
        review = kubernetes.client.AuthorizationV1Api(client).create_self_subject_access_review(
            {"spec": {"resourceAttributes": {"verb": "list", "resource": "configmaps", "namespace": "kube-system"}}})
        assert review.status.allowed is True


def test_role_bindings_cannot_change_their_role_ref(control_plane):
    control_plane.kubectl("create", "rolebinding", "b", "--clusterrole=view", "--user=someone")
    result = control_plane.kubectl("patch", "rolebinding", "b", "--type=merge", "-p", '{"roleRef":{"name":"edit"}}', check=False)
    assert result.returncode == 1
    assert 'roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: cannot change roleRef' in result.stderr


def test_the_charts_rbac_allows_what_the_operator_does(control_plane):
    from tests.contract.chart_support import RELEASE_NAMESPACE, render

    control_plane.install_crds()
    control_plane.kubectl("create", "namespace", RELEASE_NAMESPACE)
    objects = [o for o in render({}) if o["kind"] in ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")]
    control_plane.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(objects))
    token = control_plane.kubectl("create", "token", "pinery", "-n", RELEASE_NAMESPACE).stdout.strip()

    def can(*args: str) -> str:
        return control_plane.kubectl("--token", token, "auth", "can-i", *args, check=False).stdout.strip()

    for verb, resource in [
        ("watch", "vectorindexes.pinery.dev"), ("patch", "fsdpjobs.pinery.dev/status"), ("update", "fsdpjobs.pinery.dev/finalizers"),
        ("create", "pods"), ("get", "pods/log"), ("list", "services"), ("get", "secrets"), ("create", "events"),
        ("patch", "events.events.k8s.io"), ("list", "namespaces"), ("watch", "customresourcedefinitions.apiextensions.k8s.io"),
    ]:
        assert can(verb, resource, "-n", "team-a") == "yes", (verb, resource)
    for verb, resource in [("list", "secrets"), ("update", "services"), ("create", "rolebindings.rbac.authorization.k8s.io"), ("list", "nodes")]:
        assert can(verb, resource, "-n", "team-a") == "no", (verb, resource)
    denied = control_plane.kubectl("--token", token, "get", "secrets", "-n", "team-a", check=False)
    assert 'User "system:serviceaccount:pinery-system:pinery" cannot list resource "secrets" in API group "" in the namespace "team-a"' in denied.stderr


def test_impersonation_with_kubectl_as(control_plane):
    """`kubectl --as` (Impersonate-* headers): the admin may impersonate anyone, and the request
    is then authorized as that user; a ServiceAccount may impersonate only what RBAC grants."""
    token = token_for(control_plane, "robot")
    as_robot = ("--as", "system:serviceaccount:default:robot")
    assert control_plane.kubectl(*as_robot, "auth", "can-i", "list", "pods", check=False).stdout.strip() == "no"
    denied = control_plane.kubectl(*as_robot, "get", "pods", check=False)
    assert denied.stderr.strip() == FORBIDDEN_LIST_PODS
    whoami = json.loads(control_plane.kubectl(*as_robot, "--as-group", "team", "auth", "whoami", "-o", "json").stdout)
    assert whoami["status"]["userInfo"] == {"username": "system:serviceaccount:default:robot", "groups": ["team", "system:authenticated"]}
    assert control_plane.kubectl("--as", "alice", "auth", "can-i", "get", "pods", check=False).stdout.strip() == "no"

    # A ServiceAccount that may not impersonate is refused with the API server's message.
    refused = control_plane.kubectl("--token", token, "--as", "alice", "get", "pods", check=False)
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): users "alice" is forbidden: User "system:serviceaccount:default:robot" '
        'cannot impersonate resource "users" in API group "" at the cluster scope')
    control_plane.kubectl("create", "clusterrole", "impersonate-alice", "--verb=impersonate", "--resource=users", "--resource-name=alice")
    control_plane.kubectl("create", "clusterrolebinding", "robot-is-alice", "--clusterrole=impersonate-alice", "--serviceaccount=default:robot")
    alice = json.loads(control_plane.kubectl("--token", token, "--as", "alice", "auth", "whoami", "-o", "json").stdout)
    assert alice["status"]["userInfo"] == {"username": "alice", "groups": ["system:authenticated"]}
    assert control_plane.kubectl("--token", token, "--as", "bob", "auth", "whoami", check=False).returncode == 1
