"""RBAC for ServiceAccount tokens, through real clients: kubectl (`create token`, `--token`,
`auth can-i`, `auth whoami`, `create role|rolebinding`) and the `kubernetes` Python client.
The 403 message is apiserver responsewriters.ForbiddenStatusError's."""

from __future__ import annotations

import json
import time

import pytest
import yaml

pytestmark = pytest.mark.slow

FORBIDDEN_LIST_PODS = (
    'Error from server (Forbidden): pods is forbidden: User "system:serviceaccount:default:robot" '
    'cannot list resource "pods" in API group "" in the namespace "default"'
)


def eventually(probe, expected, timeout: float = 10.0):
    """What probe() returns once it equals expected (the aggregation controller works
    asynchronously, as kube-controller-manager does); the last value if it never does."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value == expected or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


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
    from tests.support.chart import RELEASE_NAMESPACE, render

    control_plane.install_crds()
    control_plane.kubectl("create", "namespace", RELEASE_NAMESPACE)
    objects = [o for o in render({}) if o["kind"] in ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")]
    control_plane.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(objects))
    token = control_plane.kubectl("create", "token", "pinery", "-n", RELEASE_NAMESPACE).stdout.strip()

    def can(verb: str, resource: str, *args: str) -> str:
        # `kubectl auth can-i patch x/status` would ask about the object named "status":
        # a subresource goes in --subresource.
        resource, _, sub = resource.partition("/")
        extra = ("--subresource", sub) if sub else ()
        return control_plane.kubectl("--token", token, "auth", "can-i", verb, resource, *extra, *args, check=False).stdout.strip()

    for verb, resource in [
        ("watch", "vectorindexes.pinery.dev"), ("patch", "fsdpjobs.pinery.dev/status"), ("update", "fsdpjobs.pinery.dev/finalizers"),
        ("create", "pods"), ("get", "pods/log"), ("list", "services"), ("get", "secrets"), ("create", "events"),
        ("patch", "events.events.k8s.io"), ("list", "namespaces"), ("watch", "customresourcedefinitions.apiextensions.k8s.io"),
        ("list", "nodes"),  # failed-node avoidance counts the schedulable nodes left
    ]:
        assert can(verb, resource, "-n", "team-a") == "yes", (verb, resource)
    for verb, resource in [("list", "secrets"), ("update", "services"), ("create", "rolebindings.rbac.authorization.k8s.io"), ("watch", "nodes"),
                          ("patch", "nodes")]:
        assert can(verb, resource, "-n", "team-a") == "no", (verb, resource)
    denied = control_plane.kubectl("--token", token, "get", "secrets", "-n", "team-a", check=False)
    assert 'User "system:serviceaccount:pinery-system:pinery" cannot list resource "secrets" in API group "" in the namespace "team-a"' in denied.stderr


def test_the_charts_rbac_allows_the_podgroups_of_gang_jobs_and_no_more(control_plane):
    """With the upstream PodGroup CRDs installed (kubectl resolves the resources by discovery)."""
    from tests.conftest import shared_path
    from tests.support.chart import RELEASE_NAMESPACE, render

    for crd in ("scheduler-plugins/scheduling.x-k8s.io_podgroups.yaml", "volcano/scheduling.volcano.sh_podgroups.yaml"):
        control_plane.kubectl("apply", "-f", str(shared_path("kube-crds", *crd.split("/"))))
    control_plane.kubectl("create", "namespace", RELEASE_NAMESPACE)
    objects = [o for o in render({}) if o["kind"] in ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")]
    control_plane.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(objects))
    token = control_plane.kubectl("create", "token", "pinery", "-n", RELEASE_NAMESPACE).stdout.strip()
    for group in ("scheduling.x-k8s.io", "scheduling.volcano.sh"):
        for verb, allowed in (("get", "yes"), ("list", "yes"), ("create", "yes"), ("delete", "yes"), ("watch", "no"), ("patch", "no"), ("update", "no")):
            answer = control_plane.kubectl("--token", token, "auth", "can-i", verb, f"podgroups.{group}", "-n", "team-a", check=False).stdout.strip()
            assert answer == allowed, (verb, group)


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


def test_default_roles_aggregate_the_charts_pinery_roles(control_plane):
    """The chart's pinery-edit and pinery-view ClusterRoles aggregate into the default `admin`,
    `edit` and `view` (the ClusterRole aggregation controller), so a RoleBinding to `edit` or
    `view` in a namespace is all a namespaced user needs."""
    from tests.support.chart import RELEASE_NAMESPACE, render

    control_plane.install_crds()
    control_plane.kubectl("create", "namespace", RELEASE_NAMESPACE)
    control_plane.kubectl("create", "namespace", "team-a")
    objects = [o for o in render({}) if o["kind"] in ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")]
    assert {"pinery-edit", "pinery-view"} <= {o["metadata"]["name"] for o in objects if o["kind"] == "ClusterRole"}
    control_plane.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(objects))
    token = token_for(control_plane, "alice-sa", "team-a")
    alice = "system:serviceaccount:team-a:alice-sa"

    def can(*args: str, who: tuple[str, ...] = ("--token", token)) -> str:
        return control_plane.kubectl(*who, "auth", "can-i", *args, check=False).stdout.strip()

    assert can("create", "vectorindexes.pinery.dev", "-n", "team-a") == "no"
    control_plane.kubectl("create", "rolebinding", "alice-edits", "--clusterrole=edit", "--serviceaccount=team-a:alice-sa", "-n", "team-a")
    status = "--subresource=status"  # `TYPE/NAME` would name an object, not the subresource
    assert eventually(lambda: can("create", "vectorindexes.pinery.dev", "-n", "team-a"), "yes") == "yes"
    for args in [("delete", "fsdpjobs.pinery.dev"), ("deletecollection", "fsdpjobs.pinery.dev"), ("get", "vectorindexes.pinery.dev", status),
                 ("list", "pods"), ("create", "deployments.apps"), ("get", "secrets")]:
        assert can(*args, "-n", "team-a") == "yes", args
    for args in [("patch", "vectorindexes.pinery.dev", status), ("update", "fsdpjobs.pinery.dev", status),
                 ("create", "rolebindings.rbac.authorization.k8s.io")]:
        assert can(*args, "-n", "team-a") == "no", args
    assert can("create", "vectorindexes.pinery.dev", "-n", "default") == "no"
    # The same through impersonation, by the admin.
    assert can("create", "fsdpjobs.pinery.dev", "-n", "team-a", who=("--as", alice)) == "yes"
    assert can("create", "fsdpjobs.pinery.dev", "-n", "default", who=("--as", alice)) == "no"

    edit = yaml.safe_load(control_plane.kubectl("get", "clusterrole", "edit", "-o", "yaml").stdout)
    assert edit["aggregationRule"] == {"clusterRoleSelectors": [{"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-edit": "true"}}]}
    pinery_edit = yaml.safe_load(control_plane.kubectl("get", "clusterrole", "pinery-edit", "-o", "yaml").stdout)
    pinery_view = yaml.safe_load(control_plane.kubectl("get", "clusterrole", "pinery-view", "-o", "yaml").stdout)
    for rule in pinery_edit["rules"] + pinery_view["rules"]:
        assert rule in edit["rules"], rule
    admin = yaml.safe_load(control_plane.kubectl("get", "clusterrole", "admin", "-o", "yaml").stdout)
    assert all(rule in admin["rules"] for rule in edit["rules"])
    shown = yaml.safe_load(control_plane.kubectl("get", "clusterrole", "edit", "-o", "yaml", "--show-managed-fields").stdout)
    managers = {(f["manager"], f["operation"]) for f in shown["metadata"]["managedFields"]}
    assert ("clusterrole-aggregation-controller", "Apply") in managers

    # view: reads, no writes.
    control_plane.kubectl("delete", "rolebinding", "alice-edits", "-n", "team-a")
    control_plane.kubectl("create", "rolebinding", "alice-views", "--clusterrole=view", "--serviceaccount=team-a:alice-sa", "-n", "team-a")
    assert can("create", "vectorindexes.pinery.dev", "-n", "team-a") == "no"
    assert can("list", "vectorindexes.pinery.dev", "-n", "team-a") == "yes"
    assert can("get", "fsdpjobs.pinery.dev", "--subresource=status", "-n", "team-a") == "yes"
    assert can("get", "secrets", "-n", "team-a") == "no"
    assert "No resources found" in control_plane.kubectl("--token", token, "get", "vectorindexes", "-n", "team-a").stderr
    denied = control_plane.kubectl("--token", token, "get", "vectorindexes", "-n", "default", check=False)
    assert f'User "{alice}" cannot list resource "vectorindexes" in API group "pinery.dev" in the namespace "default"' in denied.stderr

    # Deleting pinery-edit takes its rules out of edit and admin; view keeps pinery-view's.
    control_plane.kubectl("delete", "clusterrole", "pinery-edit")
    only_edit = [r for r in pinery_edit["rules"] if r not in pinery_view["rules"]]

    def edit_rules() -> list:
        return yaml.safe_load(control_plane.kubectl("get", "clusterrole", "edit", "-o", "yaml").stdout)["rules"]

    eventually(lambda: any(rule in edit_rules() for rule in only_edit), False)
    edit = {"rules": edit_rules()}
    assert only_edit and not any(rule in edit["rules"] for rule in only_edit)
    admin = yaml.safe_load(control_plane.kubectl("get", "clusterrole", "admin", "-o", "yaml").stdout)
    assert not any(rule in admin["rules"] for rule in only_edit)
    assert all(rule in edit["rules"] for rule in pinery_view["rules"])
    control_plane.kubectl("create", "rolebinding", "alice-edits", "--clusterrole=edit", "--serviceaccount=team-a:alice-sa", "-n", "team-a")
    assert can("create", "vectorindexes.pinery.dev", "-n", "team-a") == "no"
    assert can("list", "vectorindexes.pinery.dev", "-n", "team-a") == "yes"


def test_an_aggregated_cluster_role_follows_its_selected_roles(control_plane):
    """A ClusterRole of one's own with an aggregationRule (matchExpressions too), as
    `kubectl create clusterrole --aggregation-rule` makes it."""
    control_plane.kubectl("create", "clusterrole", "monitoring", "--aggregation-rule=example.com/aggregate-to-monitoring=true")
    assert yaml.safe_load(control_plane.kubectl("get", "clusterrole", "monitoring", "-o", "yaml").stdout).get("rules") in (None, [])
    control_plane.kubectl("create", "clusterrole", "b-pods", "--verb=get,list", "--resource=pods")
    control_plane.kubectl("create", "clusterrole", "a-services", "--verb=get", "--resource=services")
    control_plane.kubectl("label", "clusterrole", "b-pods", "a-services", "example.com/aggregate-to-monitoring=true")

    def rules() -> list:
        return yaml.safe_load(control_plane.kubectl("get", "clusterrole", "monitoring", "-o", "yaml").stdout).get("rules") or []

    services = {"apiGroups": [""], "resources": ["services"], "verbs": ["get"]}
    pods = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}
    assert eventually(rules, [services, pods]) == [services, pods]  # by role name: a-services first
    control_plane.kubectl("patch", "clusterrole", "b-pods", "--type=json", "-p", '[{"op":"add","path":"/rules/0/verbs/-","value":"watch"}]')
    pods = {**pods, "verbs": ["get", "list", "watch"]}
    assert eventually(rules, [services, pods]) == [services, pods]
    control_plane.kubectl("label", "clusterrole", "a-services", "example.com/aggregate-to-monitoring-")
    assert eventually(rules, [pods]) == [pods]
    control_plane.kubectl("patch", "clusterrole", "monitoring", "--type=merge", "-p",
                          '{"aggregationRule":{"clusterRoleSelectors":[{"matchExpressions":'
                          '[{"key":"tier","operator":"In","values":["gold"]}]}]}}')
    assert eventually(rules, []) == []
    control_plane.kubectl("label", "clusterrole", "a-services", "tier=gold")
    assert eventually(rules, [services]) == [services]
    token = token_for(control_plane, "robot")
    control_plane.kubectl("create", "clusterrolebinding", "robot-monitors", "--clusterrole=monitoring", "--serviceaccount=default:robot")
    assert control_plane.kubectl("--token", token, "auth", "can-i", "get", "services", "-n", "kube-system").stdout.strip() == "yes"
    assert control_plane.kubectl("--token", token, "auth", "can-i", "get", "pods", check=False).stdout.strip() == "no"
