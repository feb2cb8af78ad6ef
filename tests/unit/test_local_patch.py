"""Merge patch, JSON patch, strategic merge patch and server-side apply of the local control plane."""

import pytest

from pinery.local.apiserver.apply import apply_config, field_set, from_fields_v1, to_fields_v1
from pinery.local.apiserver.errors import ApiError
from pinery.local.apiserver.patch import json_patch, merge_patch
from pinery.local.apiserver.strategic import strategic_merge


def test_merge_patch_rfc7386():
    target = {"a": "b", "c": {"d": "e", "f": "g"}, "l": [1, 2]}
    patch = {"a": "z", "c": {"f": None}, "l": [3], "n": {"x": None, "y": 1}}
    assert merge_patch(target, patch) == {"a": "z", "c": {"d": "e"}, "l": [3], "n": {"y": 1}}
    assert target["c"] == {"d": "e", "f": "g"}  # the original is untouched


def test_json_patch_operations():
    doc = {"metadata": {"resourceVersion": "5", "finalizers": ["a"]}, "spec": {"x": 1}}
    ops = [
        {"op": "test", "path": "/metadata/resourceVersion", "value": "5"},
        {"op": "add", "path": "/metadata/finalizers/-", "value": "b"},
        {"op": "replace", "path": "/spec/x", "value": 2},
        {"op": "copy", "from": "/spec/x", "path": "/spec/y"},
        {"op": "move", "from": "/spec/y", "path": "/spec/z"},
        {"op": "add", "path": "/metadata/labels", "value": {"a~b/c": "1"}},
        {"op": "remove", "path": "/metadata/labels/a~0b~1c"},
    ]
    out = json_patch(doc, ops)
    assert out == {"metadata": {"resourceVersion": "5", "finalizers": ["a", "b"], "labels": {}}, "spec": {"x": 2, "z": 2}}
    assert doc["metadata"]["finalizers"] == ["a"]


def test_failed_test_op_is_422_and_changes_nothing():
    doc = {"metadata": {"resourceVersion": "5"}}
    with pytest.raises(ApiError) as info:
        json_patch(doc, [{"op": "test", "path": "/metadata/resourceVersion", "value": "4"}, {"op": "add", "path": "/x", "value": 1}])
    assert info.value.code == 422
    assert "/metadata/resourceVersion" in info.value.message


@pytest.mark.parametrize(
    "op, code",
    [
        ({"op": "remove", "path": "/missing"}, 422),
        ({"op": "replace", "path": "/missing/deep", "value": 1}, 422),
        ({"op": "add", "path": "/a/b/c", "value": 1}, 422),
        ({"op": "frobnicate", "path": "/x"}, 400),
        ({"op": "add", "path": "/x"}, 400),
    ],
)
def test_json_patch_errors(op, code):
    with pytest.raises(ApiError) as info:
        json_patch({"a": {}}, [op])
    assert info.value.code == code


POD = {
    "metadata": {"name": "p", "finalizers": ["a"], "labels": {"x": "1"}},
    "spec": {
        "containers": [
            {"name": "main", "image": "img:1", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
             "ports": [{"containerPort": 80, "protocol": "TCP"}], "volumeMounts": [{"name": "data", "mountPath": "/data"}]},
            {"name": "side", "image": "side:1"},
        ],
        "volumes": [{"name": "data", "emptyDir": {}}],
        "tolerations": [{"key": "a"}],
    },
}


def test_strategic_merge_by_keys():
    patch = {
        "metadata": {"finalizers": ["b"], "labels": {"x": None}},
        "spec": {
            "containers": [
                {"name": "main", "image": "img:2", "env": [{"name": "B", "value": "20"}, {"name": "C", "value": "3"}],
                 "ports": [{"containerPort": 8080}]},
                {"name": "new", "image": "new:1"},
            ],
            "volumes": [{"name": "cache", "emptyDir": {}}],
            "tolerations": [{"key": "b"}],
        },
    }
    out = strategic_merge("Pod", POD, patch)
    main, side, new = out["spec"]["containers"]
    assert main["image"] == "img:2"
    assert main["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "20"}, {"name": "C", "value": "3"}]
    assert [p["containerPort"] for p in main["ports"]] == [80, 8080]
    assert main["volumeMounts"] == [{"name": "data", "mountPath": "/data"}]
    assert side == {"name": "side", "image": "side:1"} and new["name"] == "new"
    assert [v["name"] for v in out["spec"]["volumes"]] == ["data", "cache"]
    assert out["spec"]["tolerations"] == [{"key": "b"}]  # no merge key: replaced
    assert out["metadata"]["finalizers"] == ["a", "b"]  # merged as a set
    assert out["metadata"]["labels"] == {}


def test_strategic_merge_directives():
    patch = {
        "spec": {
            "$setElementOrder/containers": [{"name": "side"}, {"name": "main"}],
            "containers": [{"name": "main", "$patch": "delete"}, {"name": "side", "env": [{"name": "X", "value": "1"}]}],
            "volumes": [{"$patch": "replace"}, {"name": "only", "emptyDir": {}}],
        },
        "metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]},
    }
    out = strategic_merge("Pod", POD, patch)
    assert [c["name"] for c in out["spec"]["containers"]] == ["side"]
    assert out["spec"]["containers"][0]["env"] == [{"name": "X", "value": "1"}]
    assert out["spec"]["volumes"] == [{"name": "only", "emptyDir": {}}]
    assert out["metadata"]["finalizers"] == []


def test_strategic_retain_keys_and_map_replace():
    patch = {"spec": {"volumes": [{"name": "data", "$retainKeys": ["name", "hostPath"], "hostPath": {"path": "/x"}}]},
             "metadata": {"labels": {"$patch": "replace", "y": "2"}}}
    out = strategic_merge("Pod", POD, patch)
    assert out["spec"]["volumes"] == [{"name": "data", "hostPath": {"path": "/x"}}]
    assert out["metadata"]["labels"] == {"y": "2"}


def test_service_ports_merge_by_port():
    svc = {"spec": {"ports": [{"port": 80, "name": "http"}, {"port": 443, "name": "https"}]}}
    out = strategic_merge("Service", svc, {"spec": {"ports": [{"port": 443, "targetPort": 8443}]}})
    assert out["spec"]["ports"] == [{"port": 80, "name": "http"}, {"port": 443, "name": "https", "targetPort": 8443}]


def test_missing_merge_key_is_400():
    with pytest.raises(ApiError) as info:
        strategic_merge("Pod", POD, {"spec": {"containers": [{"image": "x"}]}})
    assert info.value.code == 400


def test_field_sets_round_trip_through_fields_v1():
    config = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "1"}},
              "spec": {"containers": [{"name": "main", "image": "x", "env": [{"name": "A", "value": "1"}]}]}}
    paths = field_set("Pod", config)
    assert ("f:metadata", "f:labels", "f:a") in paths
    assert ("f:spec", "f:containers", 'k:{"name":"main"}', "f:env", 'k:{"name":"A"}', "f:value") in paths
    assert ("f:metadata", "f:name") not in paths
    assert from_fields_v1(to_fields_v1(paths)) == paths


def test_apply_removes_what_the_manager_no_longer_applies():
    live = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"other": "kept"}}
    first = apply_config("ConfigMap", live, {"metadata": {"name": "c", "labels": {"a": "1"}}, "data": {"x": "1", "y": "2"}}, "me", "v1")
    assert first["data"] == {"other": "kept", "x": "1", "y": "2"}
    second = apply_config("ConfigMap", first, {"metadata": {"name": "c"}, "data": {"x": "1"}}, "me", "v1")
    assert second["data"] == {"other": "kept", "x": "1"}
    assert "labels" not in second["metadata"] or not second["metadata"]["labels"]
    managers = [(e["manager"], e["operation"]) for e in second["metadata"]["managedFields"]]
    # "other" was there before any apply: skipNonApplied gives it to before-first-apply.
    assert managers == [("me", "Apply"), ("before-first-apply", "Update")]


def test_apply_keeps_fields_another_manager_applies():
    live = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    one = apply_config("ConfigMap", live, {"data": {"x": "1"}}, "a", "v1")
    two = apply_config("ConfigMap", one, {"data": {"x": "1", "y": "2"}}, "b", "v1")
    three = apply_config("ConfigMap", two, {"data": {}}, "a", "v1")
    assert three["data"] == {"x": "1", "y": "2"}
