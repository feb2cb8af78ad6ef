"""The Pod eviction subresource (apiserver/eviction.py) through real clients: the `kubernetes`
Python client (`create_namespaced_pod_eviction` with `V1Eviction`), raw HTTP for what it cannot
send, and `kubectl drain`, which finds `pods/eviction` in discovery (kubectl `pkg/drain/drain.go`
`CheckEvictionSupport`) and posts a JSON `policy/v1` Eviction per pod."""

from __future__ import annotations

import json
import threading

import kubernetes
import pytest

from tests.integration.conftest_podrunner import create, get_pod, pod_manifest, wait_for_phase
from tests.integration.helpers import pod, status_of
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

SUCCESS = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def eviction(name: str, namespace: str = "default", **delete_options) -> kubernetes.client.V1Eviction:
    return kubernetes.client.V1Eviction(
        metadata=kubernetes.client.V1ObjectMeta(name=name, namespace=namespace),
        delete_options=kubernetes.client.V1DeleteOptions(**delete_options) if delete_options else None,
    )


def bound_pod(core, name: str, node: str = "node-a", phase: str | None = None, labels: dict | None = None) -> dict:
    """A pod on a node (no kubelet here, so deletion waits for its grace period), optionally
    moved to a phase through pods/status."""
    manifest = pod(name, labels)
    manifest["spec"]["nodeName"] = node
    created = core.create_namespaced_pod("default", manifest)
    if phase:
        core.patch_namespaced_pod_status(name, "default", {"status": {"phase": phase}})
    return created


def watch_until_deleted(plane, name: str) -> tuple[list[tuple[str, dict]], threading.Thread]:
    """Record every watch event of pod `name` (type, object) in a thread that ends at DELETED."""
    events: list[tuple[str, dict]] = []

    def watch() -> None:
        stream = plane.http("GET", f"/api/v1/namespaces/default/pods?watch=true&fieldSelector=metadata.name={name}", stream=True, timeout=60)
        for line in stream.iter_lines():
            event = json.loads(line)
            events.append((event["type"], event["object"]))
            if event["type"] == "DELETED":
                return

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return events, thread


def conditions_of(core, name: str) -> list[dict]:
    return [c.to_dict() for c in core.read_namespaced_pod(name, "default").status.conditions or []]


def test_evicting_a_pod_marks_it_then_deletes_it_and_answers_a_status(control_plane):
    core = control_plane.core_v1()
    bound_pod(core, "web", phase="Running")
    events, thread = watch_until_deleted(control_plane, "web")
    wait_for(lambda: events and events[0][0] == "ADDED", timeout=5, what="the watch's ADDED event")

    answer = control_plane.http("POST", "/api/v1/namespaces/default/pods/web/eviction", json={
        "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web"}, "deleteOptions": {"gracePeriodSeconds": 0},
    })
    assert answer.status_code == 201
    assert answer.json() == SUCCESS
    thread.join(5)
    kinds = [kind for kind, _ in events]
    assert kinds == ["ADDED", "MODIFIED", "DELETED"]
    marked = events[1][1]["status"]["conditions"]
    target = next(c for c in marked if c["type"] == "DisruptionTarget")
    assert {k: target[k] for k in ("status", "reason", "message", "lastProbeTime")} == {
        "status": "True", "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting", "lastProbeTime": None}
    assert target["lastTransitionTime"]
    assert "deletionTimestamp" not in events[1][1]["metadata"]  # the condition comes before the deletion


def test_the_python_client_evicts_with_the_evictions_grace_period(control_plane):
    core = control_plane.core_v1()
    bound_pod(core, "api", phase="Running")
    result = core.create_namespaced_pod_eviction("api", "default", eviction("api", grace_period_seconds=45))
    assert result.kind == "Status"
    pod_now = core.read_namespaced_pod("api", "default")
    assert pod_now.metadata.deletion_grace_period_seconds == 45  # a bound pod waits for its kubelet
    assert [c["type"] for c in conditions_of(core, "api")] == ["DisruptionTarget"]
    # Evicting it again is allowed (canIgnorePDB: terminating) and shortens nothing but the grace.
    core.create_namespaced_pod_eviction("api", "default", eviction("api", grace_period_seconds=0))
    with pytest.raises(kubernetes.client.ApiException) as gone:
        core.read_namespaced_pod("api", "default")
    assert gone.value.status == 404


@pytest.mark.parametrize("phase", ["Pending", "Succeeded", "Failed"])
def test_pending_and_terminal_pods_are_deleted(control_plane, phase):
    """TestEviction's "pod pending/succeeded/failed" cases: canIgnorePDB."""
    core = control_plane.core_v1()
    core.create_namespaced_pod("default", pod("p"))  # unbound: goes at once
    if phase != "Pending":
        core.patch_namespaced_pod_status("p", "default", {"status": {"phase": phase}})
    core.create_namespaced_pod_eviction("p", "default", eviction("p"))
    with pytest.raises(kubernetes.client.ApiException) as gone:
        core.read_namespaced_pod("p", "default")
    assert gone.value.status == 404


def test_refusals_are_upstreams(control_plane):
    core = control_plane.core_v1()
    created = bound_pod(core, "db", phase="Running")

    with pytest.raises(kubernetes.client.ApiException) as missing:
        core.create_namespaced_pod_eviction("nope", "default", eviction("nope"))
    assert missing.value.status == 404
    assert status_of(missing.value)["message"] == 'pods "nope" not found'

    # TestEviction "bad name in Url": the Eviction names another pod.
    with pytest.raises(kubernetes.client.ApiException) as bad_name:
        core.create_namespaced_pod_eviction("db", "default", eviction("db-other"))
    assert bad_name.value.status == 400
    assert status_of(bad_name.value)["message"] == "name in URL does not match name in Eviction object"

    # TestAddConditionAndDelete "invalid uid" / "invalid resourceVersion": 409, pod untouched.
    uid, rv = created.metadata.uid, created.metadata.resource_version
    with pytest.raises(kubernetes.client.ApiException) as bad_uid:
        core.create_namespaced_pod_eviction("db", "default", eviction("db", preconditions=kubernetes.client.V1Preconditions(uid=uid + "1")))
    assert bad_uid.value.status == 409
    body = status_of(bad_uid.value)
    assert body["reason"] == "Conflict" and body["details"] == {"name": "db", "kind": "Pod"}
    assert body["message"] == (f'Operation cannot be fulfilled on Pod "db": the UID in the precondition ({uid}1) does not match the UID '
                               f"in record ({uid}). The object might have been deleted and then recreated")
    current = core.read_namespaced_pod("db", "default").metadata.resource_version
    with pytest.raises(kubernetes.client.ApiException) as bad_rv:
        core.create_namespaced_pod_eviction("db", "default", eviction("db", preconditions=kubernetes.client.V1Preconditions(resource_version=rv)))
    assert bad_rv.value.status == 409
    assert status_of(bad_rv.value)["message"].endswith(
        f"the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({current}). The object might have been modified")
    assert conditions_of(core, "db") == []

    # "valid uid" and "valid resourceVersion": the eviction goes through.
    core.create_namespaced_pod_eviction("db", "default", eviction(
        "db", grace_period_seconds=0, preconditions=kubernetes.client.V1Preconditions(uid=uid, resource_version=current)))
    with pytest.raises(kubernetes.client.ApiException):
        core.read_namespaced_pod("db", "default")

    bound_pod(core, "db2", phase="Running")
    for body, message in [
        ({"apiVersion": "policy/v1beta1", "kind": "Eviction", "metadata": {"name": "db2"}},
         "the API version in the data (policy/v1beta1) does not match the expected API version (policy/v1)"),
        ({"metadata": {"name": "db2", "namespace": "kube-system"}},
         "the namespace of the provided object does not match the namespace sent on the request"),
    ]:
        refused = control_plane.http("POST", "/api/v1/namespaces/default/pods/db2/eviction", json=body)
        assert (refused.status_code, refused.json()["message"]) == (400, message)
    wrong_verb = control_plane.http("GET", "/api/v1/namespaces/default/pods/db2/eviction")
    assert wrong_verb.status_code == 405


def test_dry_run_evicts_nothing(control_plane):
    """TestEvictionDryRun: dryRun in the request, in deleteOptions, or both."""
    core = control_plane.core_v1()
    bound_pod(core, "dry", phase="Running")
    before = core.read_namespaced_pod("dry", "default").metadata.resource_version
    core.create_namespaced_pod_eviction("dry", "default", eviction("dry"), dry_run="All")
    core.create_namespaced_pod_eviction("dry", "default", eviction("dry", dry_run=["All"]))
    core.create_namespaced_pod_eviction("dry", "default", eviction("dry", dry_run=["All"]), dry_run="All")
    after = core.read_namespaced_pod("dry", "default")
    assert after.metadata.resource_version == before and after.metadata.deletion_timestamp is None
    assert conditions_of(core, "dry") == []


def test_eviction_in_a_terminating_namespace_is_forbidden_with_the_cause_drain_looks_for(control_plane):
    core = control_plane.core_v1()
    core.create_namespace({"metadata": {"name": "going"}})
    core.create_namespaced_config_map("going", {"metadata": {"name": "held", "finalizers": ["test.pinery.dev/hold"]}})
    core.create_namespaced_pod("going", pod("p"))
    core.delete_namespace("going")
    with pytest.raises(kubernetes.client.ApiException) as refused:
        core.create_namespaced_pod_eviction("p", "going", eviction("p", "going"))
    body = status_of(refused.value)
    assert refused.value.status == 403
    assert body["message"] == 'pods "p" is forbidden: unable to create new content in namespace going because it is being terminated'
    assert body["details"]["causes"] == [
        {"reason": "NamespaceTerminating", "message": "namespace going is being terminated", "field": "metadata.namespace"}]
    core.patch_namespaced_config_map("held", "going", {"metadata": {"finalizers": None}})


def test_discovery_and_rbac(control_plane):
    resources = {r["name"]: r for r in control_plane.http("GET", "/api/v1").json()["resources"]}
    assert resources["pods/eviction"] == {"name": "pods/eviction", "singularName": "", "namespaced": True,
                                          "group": "policy", "version": "v1", "kind": "Eviction", "verbs": ["create"]}
    control_plane.kubectl("create", "serviceaccount", "editor")
    control_plane.kubectl("create", "serviceaccount", "viewer")
    control_plane.kubectl("create", "rolebinding", "editor-edits", "--clusterrole=edit", "--serviceaccount=default:editor")
    control_plane.kubectl("create", "rolebinding", "viewer-views", "--clusterrole=view", "--serviceaccount=default:viewer")

    tokens = {account: control_plane.kubectl("create", "token", account).stdout.strip() for account in ("editor", "viewer")}

    def can_evict(account: str) -> str:
        asked = control_plane.kubectl("--token", tokens[account], "auth", "can-i", "create", "pods", "--subresource=eviction", check=False)
        return asked.stdout.strip()

    # edit (through system:aggregate-to-edit) creates pods/eviction, as in bootstrappolicy; view does not.
    assert wait_for(lambda: can_evict("editor") == "yes", timeout=10, what="the edit role to aggregate")
    assert can_evict("viewer") == "no"
    core = control_plane.core_v1()
    core.create_namespaced_pod("default", pod("guarded"))
    viewer = tokens["viewer"]
    refused = control_plane.http("POST", "/api/v1/namespaces/default/pods/guarded/eviction", json={"metadata": {"name": "guarded"}},
                                 headers={"Authorization": f"Bearer {viewer}"})
    assert refused.status_code == 403
    assert refused.json()["message"] == ('pods "guarded" is forbidden: User "system:serviceaccount:default:viewer" cannot create '
                                        'resource "pods/eviction" in API group "" in the namespace "default"')


def test_kubectl_drain_cordons_the_node_and_evicts_its_pods(pod_runner):
    plane = pod_runner.plane
    owner = plane.core_v1().create_namespaced_config_map("default", {"metadata": {"name": "owner"}})
    for name in ("drained-1", "drained-2", "kept"):
        manifest = pod_manifest(name, ["python", "-c", "import time; time.sleep(120)"])
        manifest["metadata"]["labels"] = {"app": "drained" if name != "kept" else "kept"}
        # A controller makes the pods replicated for drain (unreplicatedFilter); an emptyDir
        # needs --delete-emptydir-data (localStorageFilter).
        manifest["metadata"]["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.metadata.uid, "controller": True}]
        manifest["spec"]["volumes"] = [{"name": "scratch", "emptyDir": {}}]
        manifest["spec"]["terminationGracePeriodSeconds"] = 5
        create(plane, manifest)
    for name in ("drained-1", "drained-2", "kept"):
        wait_for_phase(plane, name, "Running")
    events, thread = watch_until_deleted(plane, "drained-1")
    wait_for(lambda: events, timeout=5, what="the watch's ADDED event")
    drained = plane.kubectl("drain", "pinery-local", "--pod-selector=app=drained", "--ignore-daemonsets", "--delete-emptydir-data",
                            "--timeout=60s", timeout=90)
    assert "node/pinery-local cordoned" in drained.stdout
    assert "evicting pod default/drained-1" in drained.stdout and "pod/drained-1 evicted" in drained.stdout
    assert "pod/drained-2 evicted" in drained.stdout and "node/pinery-local drained" in drained.stdout
    assert get_pod(plane, "drained-1") is None and get_pod(plane, "drained-2") is None
    thread.join(10)
    # From the eviction on, every version of the pod (the runner's confirmation included) is
    # marked, as a kubelet keeps the conditions it does not own.
    marked = [any(c["type"] == "DisruptionTarget" for c in (obj.get("status") or {}).get("conditions") or []) for _, obj in events]
    assert [kind for kind, _ in events][-1] == "DELETED" and marked[-1]
    assert marked == sorted(marked)
    assert get_pod(plane, "kept")["status"]["phase"] == "Running"
    assert plane.core_v1().read_node("pinery-local").spec.unschedulable is True
    plane.kubectl("uncordon", "pinery-local")
