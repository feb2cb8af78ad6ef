"""Field ownership (fieldmanager.py, fieldsets.py, fieldpath.py), as table tests converted from
upstream: structured-merge-diff merge/leaf_test.go TestUpdateLeaf, merge/key_test.go-style
associative lists, fieldpath/serialize_test.go, and apimachinery managedfields/internal
conflict_test.go TestNewConflictError."""

from __future__ import annotations

import pytest

from pinery.local.apiserver import fieldpath as fp
from pinery.local.apiserver.fieldmanager import Conflicts, FieldManager, Manager
from pinery.local.apiserver.fieldschema import Shape
from pinery.local.apiserver.fieldsets import field_set

LEAVES = Shape("Leaf", {"type": "object", "properties": {
    "numeric": {"type": "integer"}, "string": {"type": "string"}, "bool": {"type": "boolean"}}})


def _run(shape, ops):
    fm = FieldManager(shape, "v1", lambda: "2001-02-03T04:05:06Z")
    obj, managed = {}, {}
    for op, manager, config, *conflicts in ops:
        if op == "update":
            managed = fm.update(obj, config, managed, manager, tracked=True)
            obj = config
            continue
        try:
            obj, managed = fm.apply(obj, config, managed, manager, force=op == "force")
            assert not conflicts, f"expected conflicts {conflicts}"
        except Conflicts as exc:
            assert conflicts, exc.message()
            assert sorted(fp.path_string(p) for _, p in exc.conflicts) == sorted(conflicts[0])
    return obj, {(w.manager, w.operation): {fp.path_string(p) for p in o.paths} for w, o in managed.items()}


# (name, ops, object, managed) from merge/leaf_test.go
LEAF_CASES = [
    ("apply_twice", [("apply", "default", {"numeric": 1, "string": "string"}),
                     ("apply", "default", {"numeric": 1, "string": "string"})],
     {"numeric": 1, "string": "string"}, {("default", "Apply"): {".numeric", ".string"}}),
    ("apply_update_apply_no_conflict", [
        ("apply", "default", {"numeric": 1, "string": "string"}),
        ("update", "controller", {"numeric": 1, "string": "string", "bool": True}),
        ("apply", "default", {"numeric": 2, "string": "string"})],
     {"numeric": 2, "string": "string", "bool": True},
     {("default", "Apply"): {".numeric", ".string"}, ("controller", "Update"): {".bool"}}),
    ("apply_update_apply_with_conflict", [
        ("apply", "default", {"numeric": 1, "string": "string"}),
        ("update", "controller", {"numeric": 1, "string": "controller string", "bool": True}),
        ("apply", "default", {"numeric": 2, "string": "user string"}, [".string"]),
        ("force", "default", {"numeric": 2, "string": "user string"})],
     {"numeric": 2, "string": "user string", "bool": True},
     {("default", "Apply"): {".numeric", ".string"}, ("controller", "Update"): {".bool"}}),
    ("apply_twice_remove", [
        ("apply", "default", {"numeric": 1, "string": "string", "bool": False}),
        ("apply", "default", {"string": "new string"})],
     {"string": "new string"}, {("default", "Apply"): {".string"}}),
    ("update_apply_omits", [
        ("apply", "default", {"numeric": 2}),
        ("update", "controller", {"numeric": 1}),
        ("apply", "default", {})],
     {"numeric": 1}, {("controller", "Update"): {".numeric"}}),
    ("update_remove_empty_set", [
        ("apply", "default", {"string": "string"}),
        ("update", "controller", {"string": "new string"})],
     {"string": "new string"}, {("controller", "Update"): {".string"}}),
    ("apply_remove_empty_set", [
        ("apply", "default", {"string": "string"}),
        ("apply", "default", {})],
     {}, {}),
    # multiple_appliers_test.go: the same value applied by two managers is shared, not a conflict.
    ("shared_value", [
        ("apply", "a", {"numeric": 1}),
        ("apply", "b", {"numeric": 1, "string": "x"}),
        ("apply", "a", {})],
     {"numeric": 1, "string": "x"}, {("b", "Apply"): {".numeric", ".string"}}),
]


@pytest.mark.parametrize("name,ops,obj,managed", LEAF_CASES, ids=[c[0] for c in LEAF_CASES])
def test_leaf_fields(name, ops, obj, managed):
    assert _run(LEAVES, ops) == (obj, managed)


POD = Shape("Pod")


def _pod(*containers, finalizers=None):
    meta = {"name": "p", **({"finalizers": finalizers} if finalizers else {})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": list(containers)}}


def test_containers_are_owned_by_name_and_conflict_per_field():
    obj, managed = _run(POD, [
        ("apply", "a", _pod({"name": "a", "image": "x"})),
        ("apply", "b", _pod({"name": "b", "image": "y"})),
        ("apply", "b", _pod({"name": "b", "image": "y"}, {"name": "a", "image": "z"}), ['.spec.containers[name="a"].image']),
    ])
    assert [c["name"] for c in obj["spec"]["containers"]] == ["a", "b"]
    assert managed[("a", "Apply")] == {'.spec.containers[name="a"]', '.spec.containers[name="a"].image', '.spec.containers[name="a"].name'}


def test_ports_are_keyed_by_port_and_defaulted_protocol():
    paths = field_set(POD, _pod({"name": "a", "ports": [{"containerPort": 80}]}))
    assert ("f:spec", "f:containers", 'k:{"name":"a"}', "f:ports", 'k:{"containerPort":80,"protocol":"TCP"}') in paths


def test_finalizers_are_a_set():
    obj, managed = _run(POD, [
        ("apply", "a", _pod(finalizers=["x"])),
        ("apply", "b", _pod(finalizers=["y"])),
    ])
    assert obj["metadata"]["finalizers"] == ["x", "y"]
    assert managed[("b", "Apply")] >= {'.metadata.finalizers[="y"]'}


def test_crd_list_map_keys_and_atomic_lists():
    shape = Shape("W", {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["id"],
                  "items": {"type": "object", "properties": {"id": {"type": "string"}, "v": {"type": "integer"}}}},
        "args": {"type": "array", "items": {"type": "string"}}}}}})
    paths = field_set(shape, {"spec": {"items": [{"id": "a", "v": 1}], "args": ["x"]}})
    assert paths == {("f:spec", "f:items", 'k:{"id":"a"}'), ("f:spec", "f:items", 'k:{"id":"a"}', "f:id"),
                     ("f:spec", "f:items", 'k:{"id":"a"}', "f:v"), ("f:spec", "f:args")}


def test_fields_v1_encoding_marks_members_that_are_parents():
    # fieldpath/serialize_test.go: a keyed item with fields is written with "."
    paths = {("f:data",), ("f:data", "f:a"), ("f:spec", "f:containers", 'k:{"name":"a"}'),
             ("f:spec", "f:containers", 'k:{"name":"a"}', "f:image")}
    tree = fp.to_fields_v1(paths)
    assert tree == {"f:data": {".": {}, "f:a": {}},
                    "f:spec": {"f:containers": {'k:{"name":"a"}': {".": {}, "f:image": {}}}}}
    assert fp.from_fields_v1(tree) == paths


# conflict_test.go TestNewConflictError (our identities carry no time, as BuildManagerIdentifier's)
def test_conflict_messages():
    one = Conflicts([(Manager("foo", "Update", "v1"), ("f:spec", "f:replicas"))])
    assert one.message() == 'Apply failed with 1 conflict: conflict with "foo" using v1: .spec.replicas'
    assert one.causes() == [{"reason": "FieldManagerConflict", "message": 'conflict with "foo" using v1', "field": ".spec.replicas"}]
    two = Conflicts([(Manager("foo", "Update", "v1"), ("f:spec", "f:replicas")),
                     (Manager("bar", "Apply"), ("f:metadata", "f:labels", "f:app"))])
    assert two.message() == ('Apply failed with 2 conflicts: conflicts with "bar":\n- .metadata.labels.app\n'
                             'conflicts with "foo" using v1:\n- .spec.replicas')
    scale = Conflicts([(Manager("foo", "Update", "v1", "scale"), ("f:spec", "f:replicas"))])
    assert scale.message() == 'Apply failed with 1 conflict: conflict with "foo" with subresource "scale" using v1: .spec.replicas'
