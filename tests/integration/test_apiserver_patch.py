"""PATCH by Content-Type on the local control plane."""

import json

import pytest
from kubernetes.client.rest import ApiException

from tests.integration.helpers import configmap, install_widgets, pod, widget, widgets_path

MERGE = {"Content-Type": "application/merge-patch+json"}
JSON_PATCH = {"Content-Type": "application/json-patch+json"}
STRATEGIC = {"Content-Type": "application/strategic-merge-patch+json"}
APPLY = {"Content-Type": "application/apply-patch+yaml"}


def test_merge_patch(control_plane):
    control_plane.core_v1().create_namespaced_config_map("default", configmap("m", a="1", b="2"))
    out = control_plane.http("PATCH", "/api/v1/namespaces/default/configmaps/m", json={"data": {"a": None, "c": "3"}}, headers=MERGE).json()
    assert out["data"] == {"b": "2", "c": "3"}


def test_json_patch_with_test_op_as_kopf_sends_it(control_plane):
    cm = control_plane.http("POST", "/api/v1/namespaces/default/configmaps", json=configmap("j")).json()
    version = cm["metadata"]["resourceVersion"]
    ops = [{"op": "test", "path": "/metadata/resourceVersion", "value": version},
           {"op": "add", "path": "/metadata/finalizers", "value": ["example.com/f"]}]
    ok = control_plane.http("PATCH", "/api/v1/namespaces/default/configmaps/j", json=ops, headers=JSON_PATCH)
    assert ok.status_code == 200 and ok.json()["metadata"]["finalizers"] == ["example.com/f"]
    stale = control_plane.http("PATCH", "/api/v1/namespaces/default/configmaps/j", json=ops, headers=JSON_PATCH)
    assert stale.status_code == 422
    assert stale.json()["status"] == "Failure"
    assert "test failed" in stale.json()["message"]
    current = control_plane.http("GET", "/api/v1/namespaces/default/configmaps/j").json()
    assert current["metadata"]["resourceVersion"] == ok.json()["metadata"]["resourceVersion"]


def test_json_patch_through_the_client(control_plane):
    v1 = control_plane.core_v1()
    v1.create_namespaced_config_map("default", configmap("jc", a="1"))
    out = v1.patch_namespaced_config_map("jc", "default", [{"op": "replace", "path": "/data/a", "value": "2"}])
    assert out.data == {"a": "2"}
    with pytest.raises(ApiException) as info:
        v1.patch_namespaced_config_map("jc", "default", [{"op": "remove", "path": "/data/missing"}])
    assert info.value.status == 422


def test_strategic_merge_on_pod_containers_env_volumes_ports(control_plane):
    v1 = control_plane.core_v1()
    body = pod("sp", containers=[
        {"name": "main", "image": "img:1", "env": [{"name": "A", "value": "1"}], "ports": [{"containerPort": 80}],
         "volumeMounts": [{"name": "data", "mountPath": "/data"}]},
        {"name": "side", "image": "side:1"},
    ])
    body["spec"]["volumes"] = [{"name": "data", "emptyDir": {}}]
    v1.create_namespaced_pod("default", body)
    # the client sends a strategic merge patch for a dict body on built-ins
    out = v1.patch_namespaced_pod("sp", "default", {"spec": {"containers": [{"name": "main", "image": "img:2"}]}})
    main, side = out.spec.containers
    assert (main.image, side.image) == ("img:2", "side:1")
    assert [e.name for e in main.env] == ["A"] and main.ports[0].container_port == 80
    assert [v.name for v in out.spec.volumes] == ["data"]

    # pod specs are mostly immutable: adding env is refused as on a real server
    response = control_plane.http("PATCH", "/api/v1/namespaces/default/pods/sp", headers=STRATEGIC,
                                  json={"spec": {"containers": [{"name": "main", "env": [{"name": "B", "value": "2"}]}]}})
    assert response.status_code == 422
    assert "pod updates may not change fields" in response.json()["message"]


def test_strategic_merge_on_service_ports(control_plane):
    v1 = control_plane.core_v1()
    v1.create_namespaced_service("default", {"metadata": {"name": "svc"}, "spec": {"ports": [{"port": 80, "name": "http"}, {"port": 443, "name": "https"}]}})
    out = v1.patch_namespaced_service("svc", "default", {"spec": {"ports": [{"port": 443, "name": "https", "targetPort": 8443}]}})
    assert [(p.port, p.target_port) for p in out.spec.ports] == [(80, 80), (443, 8443)]


def test_strategic_merge_is_415_for_custom_resources(control_plane):
    install_widgets(control_plane)
    control_plane.http("POST", widgets_path(), json=widget("w", size=1))
    response = control_plane.http("PATCH", widgets_path(name="w"), json={"spec": {"size": 2}}, headers=STRATEGIC)
    assert response.status_code == 415
    assert response.json()["reason"] == "UnsupportedMediaType"
    # the client falls back to merge patch for custom objects
    out = control_plane.custom_objects().patch_namespaced_custom_object("test.pinery.dev", "v1", "default", "widgets", "w", {"spec": {"size": 3}})
    assert out["spec"]["size"] == 3


def test_unknown_patch_type_is_415(control_plane):
    control_plane.core_v1().create_namespaced_config_map("default", configmap("u"))
    response = control_plane.http("PATCH", "/api/v1/namespaces/default/configmaps/u", data="{}", headers={"Content-Type": "application/json"})
    assert response.status_code == 415


def test_patch_of_a_missing_object_is_404(control_plane):
    response = control_plane.http("PATCH", "/api/v1/namespaces/default/configmaps/none", json={"data": {}}, headers=MERGE)
    assert response.status_code == 404


def test_server_side_apply_creates_updates_and_prunes_its_fields(control_plane):
    path = "/api/v1/namespaces/default/configmaps/applied"
    first = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  a: '1'\n  b: '2'\n"
    assert control_plane.http("PATCH", path, data=first, headers=APPLY).status_code == 400  # fieldManager is required
    created = control_plane.http("PATCH", path + "?fieldManager=tester", data=first, headers=APPLY)
    assert created.status_code == 201
    control_plane.http("PATCH", path, json={"data": {"other": "x"}}, headers=MERGE)
    second = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  a: '10'\n"
    updated = control_plane.http("PATCH", path + "?fieldManager=tester", data=second, headers=APPLY)
    assert updated.status_code == 200
    assert updated.json()["data"] == {"a": "10", "other": "x"}
    managers = [m["manager"] for m in updated.json()["metadata"]["managedFields"]]
    # The merge patch sent no fieldManager: its Update is named for the user agent.
    assert managers == ["tester", "python-requests"]


def test_apply_to_a_custom_resource_goes_through_its_schema(control_plane):
    install_widgets(control_plane)
    doc = json.dumps(widget("ap", size=2))
    out = control_plane.http("PATCH", widgets_path(name="ap") + "?fieldManager=me&force=true", data=doc, headers=APPLY)
    assert out.status_code == 201
    assert out.json()["spec"] == {"size": 2, "color": "red"}
    bad = control_plane.http("PATCH", widgets_path(name="ap") + "?fieldManager=me", data=json.dumps(widget("ap", size=50)), headers=APPLY)
    assert bad.status_code == 422
    assert bad.json()["details"]["causes"][0]["field"] == "spec.size"
