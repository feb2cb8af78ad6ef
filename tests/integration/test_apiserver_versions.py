"""resourceVersion, generation and the status subresource on the local control plane."""

import pytest
from kubernetes.client.rest import ApiException

from tests.integration.helpers import (
    WIDGET_GROUP,
    WIDGET_PLURAL,
    WIDGET_VERSION,
    configmap,
    install_widgets,
    pod,
    status_of,
    widget,
    widgets_path,
)


def rv(obj) -> int:
    meta = obj["metadata"] if isinstance(obj, dict) else obj.metadata
    return int(meta["resourceVersion"] if isinstance(meta, dict) else meta.resource_version)


def test_resource_versions_increase_across_kinds(control_plane):
    versions = []
    v1 = control_plane.core_v1()
    for i in range(3):
        versions.append(rv(v1.create_namespaced_config_map("default", configmap(f"c{i}"))))
        versions.append(rv(v1.create_namespaced_secret("default", {"metadata": {"name": f"s{i}"}})))
        versions.append(rv(v1.patch_namespaced_config_map(f"c{i}", "default", {"data": {"x": str(i)}})))
    assert versions == sorted(versions) and len(set(versions)) == len(versions)


def test_stale_update_is_409_conflict(control_plane):
    v1 = control_plane.core_v1()
    cm = v1.create_namespaced_config_map("default", configmap("race", a="1"))
    v1.patch_namespaced_config_map("race", "default", {"data": {"a": "2"}})
    cm.data = {"a": "3"}
    with pytest.raises(ApiException) as info:
        v1.replace_namespaced_config_map("race", "default", cm)
    assert info.value.status == 409
    body = status_of(info.value)
    assert body["reason"] == "Conflict"
    assert body["message"] == (
        'Operation cannot be fulfilled on configmaps "race": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    # a merge patch carrying a resourceVersion is a precondition too
    stale_patch = {"metadata": {"resourceVersion": cm.metadata.resource_version}, "data": {"a": "4"}}
    assert control_plane.http("PATCH", "/api/v1/namespaces/default/configmaps/race", json=stale_patch,
                              headers={"Content-Type": "application/merge-patch+json"}).status_code == 409


def test_unchanged_update_keeps_version_and_sends_no_event(control_plane):
    v1 = control_plane.core_v1()
    cm = v1.create_namespaced_config_map("default", configmap("same", a="1"))
    again = v1.replace_namespaced_config_map("same", "default", cm)
    patched = v1.patch_namespaced_config_map("same", "default", {"data": {"a": "1"}})
    assert rv(again) == rv(patched) == rv(cm)
    watch = control_plane.http(
        "GET", f"/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={rv(cm)}&timeoutSeconds=1"
    )
    assert watch.text == ""


def test_generation_follows_spec_not_metadata_or_status(control_plane):
    install_widgets(control_plane)
    co = control_plane.custom_objects()
    args = (WIDGET_GROUP, WIDGET_VERSION, "default", WIDGET_PLURAL)
    w = co.create_namespaced_custom_object(*args, widget("gen", size=1))
    assert w["metadata"]["generation"] == 1
    w = co.patch_namespaced_custom_object(*args, "gen", {"metadata": {"labels": {"a": "b"}}})
    assert w["metadata"]["generation"] == 1
    w = co.patch_namespaced_custom_object_status(*args, "gen", {"status": {"phase": "Ready"}})
    assert w["metadata"]["generation"] == 1
    w = co.patch_namespaced_custom_object(*args, "gen", {"spec": {"size": 2}})
    assert w["metadata"]["generation"] == 2


def test_generation_of_built_ins_without_spec(control_plane):
    v1 = control_plane.core_v1()
    v1.create_namespaced_config_map("default", configmap("g", a="1"))
    assert v1.patch_namespaced_config_map("g", "default", {"metadata": {"labels": {"x": "y"}}}).metadata.generation == 1
    assert v1.patch_namespaced_config_map("g", "default", {"data": {"a": "2"}}).metadata.generation == 2


def test_status_subresource_of_a_custom_resource(control_plane):
    install_widgets(control_plane)
    created = control_plane.http("POST", widgets_path(), json={**widget("st", size=1), "status": {"phase": "Forged"}}).json()
    assert "status" not in created  # a create cannot set status

    main = control_plane.http("PATCH", widgets_path(name="st"), json={"spec": {"size": 2}, "status": {"phase": "Ignored"}},
                              headers={"Content-Type": "application/merge-patch+json"}).json()
    assert main["spec"]["size"] == 2 and "status" not in main

    status = control_plane.http("PATCH", widgets_path(name="st", sub="status"), json={"spec": {"size": 9}, "status": {"phase": "Ready"}},
                                headers={"Content-Type": "application/merge-patch+json"}).json()
    assert status["status"] == {"phase": "Ready"} and status["spec"]["size"] == 2

    current = control_plane.http("GET", widgets_path(name="st", sub="status")).json()
    current["status"] = {"phase": "Done"}
    current["metadata"]["labels"] = {"ignored": "yes"}
    put = control_plane.http("PUT", widgets_path(name="st", sub="status"), json=current).json()
    assert put["status"] == {"phase": "Done"} and "labels" not in put["metadata"]

    current["status"] = {"phase": "Stale"}
    assert control_plane.http("PUT", widgets_path(name="st", sub="status"), json=current).status_code == 409


def test_custom_resource_put_needs_a_resource_version(control_plane):
    install_widgets(control_plane)
    control_plane.http("POST", widgets_path(), json=widget("rvless", size=1))
    response = control_plane.http("PUT", widgets_path(name="rvless"), json=widget("rvless", size=2))
    assert response.status_code == 422
    assert response.json()["details"]["causes"][0]["field"] == "metadata.resourceVersion"


def test_pod_status_is_its_own(control_plane):
    v1 = control_plane.core_v1()
    created = v1.create_namespaced_pod("default", pod("p"))
    assert created.status.phase == "Pending"
    v1.patch_namespaced_pod("p", "default", {"status": {"phase": "Running"}})
    assert v1.read_namespaced_pod("p", "default").status.phase == "Pending"
    v1.patch_namespaced_pod_status("p", "default", {"status": {"phase": "Running", "podIP": "127.0.0.2"}})
    read = v1.read_namespaced_pod_status("p", "default")
    assert (read.status.phase, read.status.pod_ip) == ("Running", "127.0.0.2")
