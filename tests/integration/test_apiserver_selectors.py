"""Label and field selectors on lists of the local control plane."""

from tests.integration.helpers import configmap, pod


def names(items):
    return sorted(i.metadata.name for i in items)


def test_label_selectors_on_lists(control_plane):
    v1 = control_plane.core_v1()
    for name, labels in (("a", {"app": "web", "tier": "front"}), ("b", {"app": "web", "tier": "back"}), ("c", {"app": "db"}), ("d", {})):
        v1.create_namespaced_config_map("default", configmap(name, labels=labels))
    assert names(v1.list_namespaced_config_map("default", label_selector="app=web").items) == ["a", "b"]
    assert names(v1.list_namespaced_config_map("default", label_selector="app=web,tier!=front").items) == ["b"]
    assert names(v1.list_namespaced_config_map("default", label_selector="app in (db, cache)").items) == ["c"]
    assert names(v1.list_namespaced_config_map("default", label_selector="!app").items) == ["d"]
    assert names(v1.list_namespaced_config_map("default", label_selector="app,tier notin (back)").items) == ["a", "c"]
    bad = control_plane.http("GET", "/api/v1/namespaces/default/configmaps?labelSelector=app%20in%20web")
    assert bad.status_code == 400 and bad.json()["reason"] == "BadRequest"


def test_field_selectors_on_metadata_and_dotted_paths(control_plane):
    v1 = control_plane.core_v1()
    v1.create_namespaced_config_map("default", configmap("x", a="1"))
    v1.create_namespaced_config_map("kube-system", configmap("x", a="2"))
    v1.create_namespaced_config_map("default", configmap("y", a="2"))
    found = v1.list_config_map_for_all_namespaces(field_selector="metadata.name=x")
    assert sorted(c.metadata.namespace for c in found.items) == ["default", "kube-system"]
    assert names(v1.list_config_map_for_all_namespaces(field_selector="metadata.namespace=default,metadata.name!=x").items) == ["y"]
    assert names(v1.list_namespaced_config_map("default", field_selector="data.a=2").items) == ["y"]


def test_pod_field_selectors_as_kubelets_use_them(control_plane):
    v1 = control_plane.core_v1()
    for name in ("p1", "p2", "p3"):
        v1.create_namespaced_pod("default", pod(name))
    v1.create_namespaced_pod_binding("p1", "default", {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p1"},
                                                       "target": {"apiVersion": "v1", "kind": "Node", "name": "local"}},
                                     _preload_content=False)
    v1.patch_namespaced_pod_status("p2", "default", {"status": {"phase": "Succeeded"}})
    assert names(v1.list_pod_for_all_namespaces(field_selector="spec.nodeName=local").items) == ["p1"]
    assert names(v1.list_pod_for_all_namespaces(field_selector="spec.nodeName=").items) == ["p2", "p3"]
    assert names(v1.list_namespaced_pod("default", field_selector="status.phase=Succeeded").items) == ["p2"]
    assert names(v1.list_namespaced_pod("default", field_selector="status.phase!=Succeeded,status.phase!=Failed").items) == ["p1", "p3"]


def test_event_field_selectors_on_involved_object(control_plane):
    v1 = control_plane.core_v1()
    target = v1.create_namespaced_config_map("default", configmap("target"))
    for name, involved, reason in (("e1", "target", "Made"), ("e2", "other", "Made"), ("e3", "target", "Broke")):
        v1.create_namespaced_event("default", {
            "metadata": {"name": name},
            "involvedObject": {"kind": "ConfigMap", "name": involved, "namespace": "default", "uid": target.metadata.uid if involved == "target" else "u"},
            "reason": reason, "message": "m", "type": "Normal", "source": {"component": "tester"},
        })
    selector = f"involvedObject.name=target,involvedObject.namespace=default,involvedObject.kind=ConfigMap,involvedObject.uid={target.metadata.uid}"
    assert names(v1.list_namespaced_event("default", field_selector=selector).items) == ["e1", "e3"]
    assert names(v1.list_namespaced_event("default", field_selector="reason=Broke").items) == ["e3"]
    assert names(v1.list_namespaced_event("default", field_selector="source=tester,type=Normal").items) == ["e1", "e2", "e3"]
