"""Create, get, list, update and delete on the local control plane, through the kubernetes client
and raw HTTP: status codes, server-set fields, list metadata and Status bodies."""

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.integration.helpers import configmap, status_of


def test_create_sets_server_fields_and_answers_201(control_plane):
    response = control_plane.http("POST", "/api/v1/namespaces/default/configmaps", json=configmap("one", a="1"))
    assert response.status_code == 201
    meta = response.json()["metadata"]
    assert meta["uid"] and meta["creationTimestamp"].endswith("Z")
    assert meta["generation"] == 1
    assert int(meta["resourceVersion"]) > 0
    assert meta["namespace"] == "default"

    # the client's create returns the object only because the answer is 201
    created = control_plane.core_v1().create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="two")))
    assert created.metadata.name == "two"
    assert int(created.metadata.resource_version) > int(meta["resourceVersion"])


def test_client_set_server_fields_are_replaced(control_plane):
    body = configmap("mine")
    body["metadata"].update(uid="not-yours", resourceVersion="999", creationTimestamp="2000-01-01T00:00:00Z", generation=7)
    meta = control_plane.http("POST", "/api/v1/namespaces/default/configmaps", json=body).json()["metadata"]
    assert meta["uid"] != "not-yours"
    assert meta["generation"] == 1
    assert meta["creationTimestamp"] != "2000-01-01T00:00:00Z"


def test_generate_name(control_plane):
    v1 = control_plane.core_v1()
    made = {v1.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(generate_name="gen-"))).metadata.name for _ in range(5)}
    assert len(made) == 5
    assert all(name.startswith("gen-") and len(name) == len("gen-") + 5 for name in made)


def test_get_and_404_status(control_plane):
    v1 = control_plane.core_v1()
    v1.create_namespaced_config_map("default", configmap("here"))
    assert v1.read_namespaced_config_map("here", "default").metadata.name == "here"
    with pytest.raises(ApiException) as info:
        v1.read_namespaced_config_map("absent", "default")
    assert info.value.status == 404
    body = status_of(info.value)
    assert body == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'configmaps "absent" not found', "reason": "NotFound",
        "details": {"name": "absent", "kind": "configmaps"}, "code": 404,
    }


def test_create_twice_is_409_already_exists(control_plane):
    v1 = control_plane.core_v1()
    v1.create_namespaced_config_map("default", configmap("dup"))
    with pytest.raises(ApiException) as info:
        v1.create_namespaced_config_map("default", configmap("dup"))
    assert info.value.status == 409
    body = status_of(info.value)
    assert body["reason"] == "AlreadyExists"
    assert body["message"] == 'configmaps "dup" already exists'


def test_invalid_names_are_422_with_causes(control_plane):
    response = control_plane.http("POST", "/api/v1/namespaces/default/configmaps", json=configmap("Not_Valid"))
    assert response.status_code == 422
    body = response.json()
    assert body["reason"] == "Invalid"
    assert body["message"].startswith('ConfigMap "Not_Valid" is invalid: metadata.name: Invalid value: "Not_Valid": a lowercase RFC 1123 subdomain')
    assert body["details"]["causes"][0]["field"] == "metadata.name"
    assert body["details"]["causes"][0]["reason"] == "FieldValueInvalid"

    nameless = control_plane.http("POST", "/api/v1/namespaces/default/configmaps", json={"metadata": {}})
    assert nameless.status_code == 422
    assert nameless.json()["details"]["causes"][0] == {
        "reason": "FieldValueRequired", "message": "Required value: name or generateName is required", "field": "metadata.name",
    }

    bad_label = configmap("ok")
    bad_label["metadata"]["labels"] = {"app": "not ok!"}
    assert control_plane.http("POST", "/api/v1/namespaces/default/configmaps", json=bad_label).status_code == 422


def test_create_in_a_missing_namespace_is_404(control_plane):
    response = control_plane.http("POST", "/api/v1/namespaces/nowhere/configmaps", json=configmap("x"))
    assert response.status_code == 404
    assert response.json()["message"] == 'namespaces "nowhere" not found'


def test_namespace_mismatch_and_kind_mismatch_are_400(control_plane):
    body = configmap("x")
    body["metadata"]["namespace"] = "kube-system"
    assert control_plane.http("POST", "/api/v1/namespaces/default/configmaps", json=body).status_code == 400
    wrong_kind = {**configmap("y"), "kind": "Secret"}
    assert control_plane.http("POST", "/api/v1/namespaces/default/configmaps", json=wrong_kind).status_code == 400


def test_list_carries_kind_api_version_and_resource_version(control_plane):
    v1 = control_plane.core_v1()
    for name in ("c", "a", "b"):
        v1.create_namespaced_config_map("default", configmap(name))
    v1.create_namespaced_config_map("kube-system", configmap("elsewhere"))
    listing = control_plane.http("GET", "/api/v1/namespaces/default/configmaps").json()
    assert listing["kind"] == "ConfigMapList"
    assert listing["apiVersion"] == "v1"
    assert [i["metadata"]["name"] for i in listing["items"]] == ["a", "b", "c"]
    assert int(listing["metadata"]["resourceVersion"]) >= max(int(i["metadata"]["resourceVersion"]) for i in listing["items"])
    everywhere = v1.list_config_map_for_all_namespaces()
    assert {(c.metadata.namespace, c.metadata.name) for c in everywhere.items} >= {("default", "a"), ("kube-system", "elsewhere")}


def test_list_pages_with_limit_and_continue(control_plane):
    v1 = control_plane.core_v1()
    for i in range(7):
        v1.create_namespaced_config_map("default", configmap(f"page-{i}"))
    seen, token, pages = [], None, 0
    while True:
        page = v1.list_namespaced_config_map("default", limit=3, _continue=token)
        pages += 1
        seen += [c.metadata.name for c in page.items]
        token = page.metadata._continue
        if not token:
            assert page.metadata.remaining_item_count is None
            break
        assert page.metadata.remaining_item_count == 7 - len(seen)
    assert pages == 3
    assert seen == [f"page-{i}" for i in range(7)]
    bad = control_plane.http("GET", "/api/v1/namespaces/default/configmaps?limit=2&continue=garbage")
    assert bad.status_code == 400


def test_list_resource_version_semantics(control_plane):
    current = int(control_plane.http("GET", "/api/v1/configmaps").json()["metadata"]["resourceVersion"])
    assert control_plane.http("GET", "/api/v1/configmaps?resourceVersion=0").ok
    assert control_plane.http("GET", f"/api/v1/configmaps?resourceVersion={current}&resourceVersionMatch=Exact").ok
    assert control_plane.http("GET", f"/api/v1/configmaps?resourceVersion={current - 1}&resourceVersionMatch=Exact").status_code == 410
    assert control_plane.http("GET", f"/api/v1/configmaps?resourceVersion={current + 100}").status_code == 504
    assert control_plane.http("GET", "/api/v1/configmaps?resourceVersion=abc").status_code == 400


def test_update_put(control_plane):
    v1 = control_plane.core_v1()
    cm = v1.create_namespaced_config_map("default", configmap("up", a="1"))
    cm.data = {"a": "2"}
    updated = v1.replace_namespaced_config_map("up", "default", cm)
    assert updated.data == {"a": "2"}
    assert int(updated.metadata.resource_version) > int(cm.metadata.resource_version)
    assert updated.metadata.uid == cm.metadata.uid
    with pytest.raises(ApiException) as info:
        v1.replace_namespaced_config_map("missing", "default", configmap("missing"))
    assert info.value.status == 404
    renamed = configmap("other")
    assert control_plane.http("PUT", "/api/v1/namespaces/default/configmaps/up", json=renamed).status_code == 400


def test_delete_answers_status_or_object(control_plane):
    v1 = control_plane.core_v1()
    created = v1.create_namespaced_config_map("default", configmap("bye"))
    response = control_plane.http("DELETE", "/api/v1/namespaces/default/configmaps/bye")
    assert response.status_code == 200
    body = response.json()
    assert body["kind"] == "Status" and body["status"] == "Success"
    assert body["details"] == {"name": "bye", "kind": "configmaps", "uid": created.metadata.uid}
    assert control_plane.http("DELETE", "/api/v1/namespaces/default/configmaps/bye").status_code == 404


def test_delete_preconditions(control_plane):
    v1 = control_plane.core_v1()
    cm = v1.create_namespaced_config_map("default", configmap("pre"))
    stale = {"preconditions": {"resourceVersion": "1"}}
    assert control_plane.http("DELETE", "/api/v1/namespaces/default/configmaps/pre", json=stale).status_code == 409
    wrong_uid = {"preconditions": {"uid": "nope"}}
    assert control_plane.http("DELETE", "/api/v1/namespaces/default/configmaps/pre", json=wrong_uid).status_code == 409
    right = {"preconditions": {"uid": cm.metadata.uid, "resourceVersion": cm.metadata.resource_version}}
    assert control_plane.http("DELETE", "/api/v1/namespaces/default/configmaps/pre", json=right).status_code == 200


def test_delete_collection(control_plane):
    v1 = control_plane.core_v1()
    for name, team in (("a", "x"), ("b", "x"), ("c", "y")):
        v1.create_namespaced_config_map("default", configmap(name, labels={"team": team}))
    v1.delete_collection_namespaced_config_map("default", label_selector="team=x")
    assert [c.metadata.name for c in v1.list_namespaced_config_map("default", label_selector="team").items] == ["c"]


def test_dry_run_changes_nothing(control_plane):
    before = control_plane.http("GET", "/api/v1/configmaps").json()["metadata"]["resourceVersion"]
    response = control_plane.http("POST", "/api/v1/namespaces/default/configmaps?dryRun=All", json=configmap("dry"))
    assert response.status_code == 201
    assert response.json()["metadata"]["uid"]
    assert control_plane.http("GET", "/api/v1/namespaces/default/configmaps/dry").status_code == 404
    assert control_plane.http("GET", "/api/v1/configmaps").json()["metadata"]["resourceVersion"] == before


def test_unknown_paths_and_methods(control_plane):
    assert control_plane.http("GET", "/api/v1/frobs").status_code == 404
    assert control_plane.http("GET", "/apis/nope.example.com/v1").status_code == 404
    assert control_plane.http("GET", "/api/v1/namespaces/default/configmaps/x/status").status_code == 404
    assert control_plane.http("POST", "/api/v1/configmaps", json=configmap("x")).status_code == 405


def test_secrets_fold_string_data_and_check_base64(control_plane):
    v1 = control_plane.core_v1()
    secret = v1.create_namespaced_secret("default", client.V1Secret(metadata=client.V1ObjectMeta(name="s"), string_data={"key": "hunter2"}))
    assert secret.data == {"key": "aHVudGVyMg=="}
    assert secret.string_data is None
    assert secret.type == "Opaque"
    bad = {"metadata": {"name": "bad"}, "data": {"key": "not base64!"}}
    assert control_plane.http("POST", "/api/v1/namespaces/default/secrets", json=bad).status_code == 400


def test_immutable_configmaps(control_plane):
    v1 = control_plane.core_v1()
    body = configmap("frozen", a="1")
    body["immutable"] = True
    v1.create_namespaced_config_map("default", body)
    with pytest.raises(ApiException) as info:
        v1.patch_namespaced_config_map("frozen", "default", {"data": {"a": "2"}})
    assert info.value.status == 422
    assert "immutable" in status_of(info.value)["message"]
