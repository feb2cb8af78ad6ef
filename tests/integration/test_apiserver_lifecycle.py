"""Finalizers, deletionTimestamp, garbage collection, namespace deletion and pod deletion on the
local control plane."""

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.integration.helpers import configmap, install_widgets, pod, status_of, widget, widgets_path
from tests.support.waiting import wait_for


def exists(fn, *args) -> bool:
    try:
        fn(*args)
        return True
    except ApiException as exc:
        if exc.status == 404:
            return False
        raise


def owned_by(owner, block: bool = False, controller: bool = False) -> list[dict]:
    meta = owner["metadata"] if isinstance(owner, dict) else None
    uid = meta["uid"] if meta else owner.metadata.uid
    name = meta["name"] if meta else owner.metadata.name
    kind = owner["kind"] if meta else "ConfigMap"
    api_version = owner["apiVersion"] if meta else "v1"
    return [{"apiVersion": api_version, "kind": kind, "name": name, "uid": uid, "blockOwnerDeletion": block, "controller": controller}]


def test_finalizers_hold_deletion(control_plane):
    v1 = control_plane.core_v1()
    body = configmap("held")
    body["metadata"]["finalizers"] = ["example.com/a", "example.com/b"]
    created = v1.create_namespaced_config_map("default", body)
    response = control_plane.http("DELETE", "/api/v1/namespaces/default/configmaps/held")
    assert response.status_code == 200
    marked = response.json()
    assert marked["metadata"]["deletionTimestamp"] and marked["metadata"]["deletionGracePeriodSeconds"] == 0
    assert marked["metadata"]["generation"] == created.metadata.generation + 1
    # no new finalizers while deleting
    with pytest.raises(ApiException) as info:
        v1.patch_namespaced_config_map("held", "default", {"metadata": {"finalizers": ["example.com/a", "example.com/b", "example.com/c"]}})
    assert info.value.status == 422
    assert "no new finalizers can be added if the object is being deleted" in status_of(info.value)["message"]
    # other changes are still allowed, deleting again changes nothing
    v1.patch_namespaced_config_map("held", "default", {"data": {"x": "1"}})
    deleted_again = control_plane.http("DELETE", "/api/v1/namespaces/default/configmaps/held").json()
    assert deleted_again["metadata"]["deletionTimestamp"] == marked["metadata"]["deletionTimestamp"]
    v1.patch_namespaced_config_map("held", "default", [{"op": "remove", "path": "/metadata/finalizers/0"}])
    assert exists(v1.read_namespaced_config_map, "held", "default")
    v1.patch_namespaced_config_map("held", "default", {"metadata": {"finalizers": None}})
    assert not exists(v1.read_namespaced_config_map, "held", "default")


def test_background_garbage_collection(control_plane):
    v1 = control_plane.core_v1()
    owner = v1.create_namespaced_config_map("default", configmap("owner"))
    other = v1.create_namespaced_config_map("default", configmap("other-owner"))
    for name, owners in (("child-1", owned_by(owner)), ("child-2", owned_by(owner)), ("shared", owned_by(owner) + owned_by(other))):
        body = configmap(name)
        body["metadata"]["ownerReferences"] = owners
        v1.create_namespaced_config_map("default", body)
    grandchild = configmap("grandchild")
    grandchild["metadata"]["ownerReferences"] = owned_by(v1.read_namespaced_config_map("child-1", "default"))
    v1.create_namespaced_config_map("default", grandchild)

    v1.delete_namespaced_config_map("owner", "default")
    wait_for(lambda: not exists(v1.read_namespaced_config_map, "child-1", "default"), what="child-1 collected")
    wait_for(lambda: not exists(v1.read_namespaced_config_map, "grandchild", "default"), what="grandchild collected")
    assert not exists(v1.read_namespaced_config_map, "child-2", "default")
    shared = wait_for(lambda: (c := v1.read_namespaced_config_map("shared", "default")) and len(c.metadata.owner_references) == 1 and c,
                      what="the dangling reference removed")
    assert shared.metadata.owner_references[0].name == "other-owner"


def test_foreground_deletion_waits_for_blocking_dependents(control_plane):
    v1 = control_plane.core_v1()
    owner = v1.create_namespaced_config_map("default", configmap("fg-owner"))
    blocker = configmap("fg-blocker")
    blocker["metadata"]["ownerReferences"] = owned_by(owner, block=True)
    blocker["metadata"]["finalizers"] = ["example.com/hold"]
    v1.create_namespaced_config_map("default", blocker)
    v1.delete_namespaced_config_map("fg-owner", "default", propagation_policy="Foreground")
    marked = v1.read_namespaced_config_map("fg-owner", "default")
    assert marked.metadata.deletion_timestamp is not None
    assert "foregroundDeletion" in marked.metadata.finalizers
    wait_for(lambda: v1.read_namespaced_config_map("fg-blocker", "default").metadata.deletion_timestamp, what="dependent deleting")
    assert exists(v1.read_namespaced_config_map, "fg-owner", "default")  # blocked by the dependent's finalizer
    v1.patch_namespaced_config_map("fg-blocker", "default", {"metadata": {"finalizers": None}})
    wait_for(lambda: not exists(v1.read_namespaced_config_map, "fg-owner", "default"), what="owner removed after its dependent")


def test_orphan_deletion_keeps_dependents(control_plane):
    v1 = control_plane.core_v1()
    owner = v1.create_namespaced_config_map("default", configmap("or-owner"))
    child = configmap("or-child")
    child["metadata"]["ownerReferences"] = owned_by(owner)
    v1.create_namespaced_config_map("default", child)
    v1.delete_namespaced_config_map("or-owner", "default", body=client.V1DeleteOptions(propagation_policy="Orphan"))
    wait_for(lambda: not exists(v1.read_namespaced_config_map, "or-owner", "default"), what="owner removed")
    assert not v1.read_namespaced_config_map("or-child", "default").metadata.owner_references


def test_dependent_of_a_missing_owner_is_collected(control_plane):
    v1 = control_plane.core_v1()
    orphan = configmap("dangling")
    orphan["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "ghost", "uid": "00000000-0000-0000-0000-000000000000"}]
    v1.create_namespaced_config_map("default", orphan)
    wait_for(lambda: not exists(v1.read_namespaced_config_map, "dangling", "default"), what="dangling dependent collected")


def test_custom_resource_owns_built_ins(control_plane):
    install_widgets(control_plane)
    owner = control_plane.http("POST", widgets_path(), json=widget("parent", size=1)).json()
    child = configmap("widget-child")
    child["metadata"]["ownerReferences"] = owned_by(owner, block=True, controller=True)
    v1 = control_plane.core_v1()
    v1.create_namespaced_config_map("default", child)
    control_plane.http("DELETE", widgets_path(name="parent"))
    wait_for(lambda: not exists(v1.read_namespaced_config_map, "widget-child", "default"), what="child of a custom resource collected")


def test_namespace_deletion_cascades(control_plane):
    v1 = control_plane.core_v1()
    ns = v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="doomed")))
    assert ns.status.phase == "Active" and ns.spec.finalizers == ["kubernetes"]
    assert ns.metadata.labels == {"kubernetes.io/metadata.name": "doomed"}
    wait_for(lambda: exists(v1.read_namespaced_service_account, "default", "doomed"), what="the default ServiceAccount")
    v1.create_namespaced_config_map("doomed", configmap("plain"))
    held = configmap("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    v1.create_namespaced_config_map("doomed", held)
    v1.create_namespaced_pod("doomed", pod("runner"))

    v1.delete_namespace("doomed")
    terminating = v1.read_namespace("doomed")
    assert terminating.status.phase == "Terminating"
    with pytest.raises(ApiException) as info:
        v1.create_namespaced_config_map("doomed", configmap("late"))
    assert info.value.status == 403
    assert "because it is being terminated" in status_of(info.value)["message"]
    wait_for(lambda: not exists(v1.read_namespaced_pod, "runner", "doomed"), what="pods deleted")
    wait_for(lambda: not exists(v1.read_namespaced_config_map, "plain", "doomed"), what="configmaps deleted")
    assert exists(v1.read_namespace, "doomed")  # waits for the finalizer of "held"
    v1.patch_namespaced_config_map("held", "doomed", {"metadata": {"finalizers": None}})
    wait_for(lambda: not exists(v1.read_namespace, "doomed"), what="namespace removed")


def test_system_namespaces_exist_and_cannot_be_deleted(control_plane):
    v1 = control_plane.core_v1()
    names = {n.metadata.name for n in v1.list_namespace().items}
    assert names >= {"default", "kube-system", "kube-public"}
    accounts = {(sa.metadata.namespace, sa.metadata.name) for sa in v1.list_service_account_for_all_namespaces().items}
    assert accounts >= {("default", "default"), ("kube-system", "default"), ("kube-public", "default")}
    with pytest.raises(ApiException) as info:
        v1.delete_namespace("default")
    assert info.value.status == 403


def test_pod_deletion_waits_for_the_kubelet_once_bound(control_plane):
    v1 = control_plane.core_v1()
    v1.create_namespaced_pod("default", pod("unbound"))
    v1.delete_namespaced_pod("unbound", "default")
    assert not exists(v1.read_namespaced_pod, "unbound", "default")

    body = pod("bound")
    body["spec"]["terminationGracePeriodSeconds"] = 5
    v1.create_namespaced_pod("default", body)
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "bound"}, "target": {"kind": "Node", "name": "local"}}
    assert control_plane.http("POST", "/api/v1/namespaces/default/pods/bound/binding", json=binding).status_code == 201
    assert control_plane.http("POST", "/api/v1/namespaces/default/pods/bound/binding", json=binding).status_code == 409
    bound = v1.read_namespaced_pod("bound", "default")
    assert bound.spec.node_name == "local"
    assert [(c.type, c.status) for c in bound.status.conditions] == [("PodScheduled", "True")]
    deleted = v1.delete_namespaced_pod("bound", "default")
    assert deleted.metadata.deletion_grace_period_seconds == 5
    assert exists(v1.read_namespaced_pod, "bound", "default")
    # the kubelet (the pod runner) confirms with a zero grace period
    v1.delete_namespaced_pod("bound", "default", grace_period_seconds=0)
    assert not exists(v1.read_namespaced_pod, "bound", "default")


def test_pod_defaults_and_validation(control_plane):
    v1 = control_plane.core_v1()
    created = v1.create_namespaced_pod("default", pod("defaults"))
    spec = created.spec
    assert (spec.restart_policy, spec.dns_policy, spec.termination_grace_period_seconds) == ("Always", "ClusterFirst", 30)
    assert spec.service_account_name == "default"
    assert spec.containers[0].termination_message_path == "/dev/termination-log"
    assert created.status.qos_class == "BestEffort"
    bad = pod("bad", containers=[{"name": "main"}])
    response = control_plane.http("POST", "/api/v1/namespaces/default/pods", json=bad)
    assert response.status_code == 422
    assert response.json()["details"]["causes"] == [{"reason": "FieldValueRequired", "message": "Required value", "field": "spec.containers[0].image"}]


def test_services_get_cluster_ips(control_plane):
    v1 = control_plane.core_v1()
    one = v1.create_namespaced_service("default", {"metadata": {"name": "one"}, "spec": {"ports": [{"port": 80}]}})
    two = v1.create_namespaced_service("default", {"metadata": {"name": "two"}, "spec": {"ports": [{"port": 80}]}})
    headless = v1.create_namespaced_service("default", {"metadata": {"name": "hl"}, "spec": {"clusterIP": "None", "selector": {"a": "b"}}})
    assert one.spec.cluster_ip.startswith("10.9") and one.spec.cluster_ip != two.spec.cluster_ip
    assert one.spec.ports[0].target_port == 80 and one.spec.ports[0].protocol == "TCP"
    assert headless.spec.cluster_ip == "None"
    # an update that leaves clusterIP out keeps it; one that changes it is refused
    replaced = v1.replace_namespaced_service("one", "default", {"metadata": {"name": "one", "resourceVersion": one.metadata.resource_version},
                                                                "spec": {"ports": [{"port": 81}]}})
    assert replaced.spec.cluster_ip == one.spec.cluster_ip
    with pytest.raises(ApiException) as info:
        v1.patch_namespaced_service("one", "default", {"spec": {"clusterIP": "10.96.99.99"}})
    assert info.value.status == 422


def test_nodes_register_with_their_status(control_plane):
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "local"},
            "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}
    created = control_plane.http("POST", "/api/v1/nodes", json=node).json()
    assert created["status"]["conditions"][0]["type"] == "Ready"
    assert control_plane.core_v1().read_node("local").metadata.name == "local"
