"""The structural-schema checker: both CRDs pass, and each rule catches what it must."""

import copy

import pytest

from pinery.api import RESOURCES
from pinery.crds import build_crd
from pinery.schema.structural import check_crd, check_schema

GOOD = {
    "type": "object",
    "properties": {
        "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 20}}},
        "spec": {
            "type": "object",
            "properties": {
                "size": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                "mode": {"type": "string", "enum": ["a", "b"], "default": "a"},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "n": {"type": "integer", "anyOf": [{"minimum": 1}, {"maximum": -1}]},
                "items": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}},
                },
            },
            "x-kubernetes-validations": [{"rule": "self.mode == oldSelf.mode", "message": "mode is immutable", "fieldPath": ".mode"}],
        },
    },
}


def test_pinery_crds_are_structural():
    for res in RESOURCES:
        assert check_crd(build_crd(res)) == [], res.kind


def test_a_good_schema_passes():
    assert check_schema(GOOD) == []


def mutate(path, value=None, delete=False):
    schema = copy.deepcopy(GOOD)
    node = schema
    for key in path[:-1]:
        node = node[key]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return schema


SPEC = ("properties", "spec")
PROPS = (*SPEC, "properties")


@pytest.mark.parametrize(
    "schema, fragment",
    [
        (mutate(("type",), "array"), "must be object at the root"),
        (mutate(("default",), {}), "must not be set at the root"),
        (mutate((*PROPS, "mode", "type"), delete=True), "Required value: must not be empty for specified object fields"),
        (mutate((*PROPS, "n", "anyOf"), [{"type": "integer", "minimum": 1}]), "anyOf[0].type: Forbidden: must be empty to be structural"),
        (mutate((*PROPS, "n", "anyOf"), [{"description": "x"}]), "anyOf[0].description: Forbidden: must be empty to be structural"),
        (mutate((*PROPS, "n", "anyOf"), [{"default": 1}]), "anyOf[0].default: Forbidden: must be undefined to be structural"),
        (mutate((*PROPS, "n", "anyOf"), [{"nullable": True}]), "anyOf[0].nullable: Forbidden: must be false to be structural"),
        (mutate(("allOf",), [{"properties": {"x": {}}}]), "properties[x]: Required value: because it is defined in allOf[0].properties[x]"),
        (mutate((*PROPS, "size", "x-kubernetes-preserve-unknown-fields"), True), "must be false if x-kubernetes-int-or-string is true"),
        (mutate((*PROPS, "size", "anyOf"), [{"type": "integer"}]), "size].anyOf[0].type: Forbidden: must be empty to be structural"),
        (mutate(("properties", "metadata", "properties", "labels"), {"type": "object"}), "must not specify anything other than name and generateName"),
        (mutate(("properties", "metadata", "description"), "x"), "must not specify anything other than name and generateName"),
        (mutate(("properties", "metadata", "x-kubernetes-preserve-unknown-fields"), True), "must not specify anything other than name and generateName"),
        (mutate((*PROPS, "free", "additionalProperties"), False), "additionalProperties: false is not allowed"),
        (mutate((*SPEC, "additionalProperties"), {"type": "string"}), "mutually exclusive"),
        (mutate((*PROPS, "mode", "$ref"), "#/x"), "must not be used in apiextensions.k8s.io/v1"),
        (mutate((*PROPS, "mode", "patternProperties"), {}), "must not be used"),
        (mutate((*PROPS, "mode", "uniqueItems"), True), "uniqueItems cannot be set to true"),
        (mutate((*PROPS, "mode", "title_typo"), 1), "unknown field"),
        (mutate((*PROPS, "mode", "type"), "str"), "Unsupported value"),
        (mutate((*PROPS, "mode", "default"), "c"), "default does not validate"),
        (mutate((*PROPS, "free", "x-kubernetes-preserve-unknown-fields"), False), "must be true or undefined"),
        (mutate((*PROPS, "mode", "enum"), ["a", 1]), "is not of type string"),
        (mutate((*PROPS, "items", "x-kubernetes-list-map-keys"), ["missing"]), "is not a property of the items"),
        (mutate((*PROPS, "items", "items", "required"), []), "must be required or have a default"),
        (mutate((*PROPS, "items", "x-kubernetes-list-map-keys"), delete=True), "map lists need keys"),
        (mutate((*PROPS, "items", "x-kubernetes-list-type"), "set"), "set lists need scalar items"),
        (mutate((*PROPS, "mode", "x-kubernetes-list-type"), "atomic"), "must only be used with type array"),
        (mutate((*SPEC, "x-kubernetes-validations"), [{"rule": "self.mode ==", "message": "m"}]), "does not compile"),
        (mutate((*SPEC, "x-kubernetes-validations"), [{"rule": "true", "message": ""}]), "a message is needed"),
        (mutate((*SPEC, "x-kubernetes-validations"), [{"rule": "true", "message": "a\nb"}]), "must not contain line breaks"),
        (mutate((*SPEC, "x-kubernetes-validations"), [{"rule": "true", "message": "m", "fieldPath": ".nope"}]), "does not name a field"),
        (mutate((*SPEC, "x-kubernetes-validations"), [{"rule": "true", "message": "m", "reason": "Bad"}]), "Unsupported value"),
    ],
)
def test_each_rule_is_enforced(schema, fragment):
    problems = check_schema(schema)
    assert any(fragment in str(p) for p in problems), problems


def test_transition_rules_are_forbidden_under_atomic_lists():
    schema = copy.deepcopy(GOOD)
    schema["properties"]["spec"]["properties"]["plain"] = {
        "type": "array",
        "items": {"type": "object", "properties": {"x": {"type": "integer"}}, "x-kubernetes-validations": [{"rule": "self.x == oldSelf.x", "message": "m"}]},
    }
    assert any("uncorrelatable" in p.message for p in check_schema(schema))


def test_check_crd_reports_paths_inside_the_crd():
    crd = build_crd(RESOURCES[0])
    crd = copy.deepcopy(crd)
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["dimension"].pop("type")
    problems = check_crd(crd)
    assert [p.path for p in problems] == ["spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[dimension].type"]
