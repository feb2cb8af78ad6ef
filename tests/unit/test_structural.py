"""The CRD checker on one schema: pinery's CRDs pass, and each rule catches what it must.

The exact upstream cases are in test_structural_upstream.py and test_crd_validation.py; this
table walks one good schema through a broken variant per rule, as a CRD the API server would see.
"""

import copy

import pytest

from pinery.api import RESOURCES
from pinery.generate.crds import build_crd
from pinery.schema.crd_validation import check_crd


def crd_of(schema):
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"plural": "things", "singular": "thing", "kind": "Thing", "listKind": "ThingList"},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}],
        },
    }


def check_schema(schema):
    """What the API server says of a one-version CRD with this schema (a schema shared by every
    version is checked at spec.validation, after the conversion to the internal form)."""
    return [p for p in check_crd(crd_of(schema))]


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


# Not refused, as upstream does not refuse them: `additionalProperties: false` without properties
# (pruning makes it moot), an empty `patternProperties`, an enum entry of another type, an empty
# rule message (the rule then is the message), and unknown keys (dropped by decoding, a warning).
@pytest.mark.parametrize(
    "schema, fragment",
    [
        (mutate(("type",), "array"), "must be object at the root"),
        (mutate((*PROPS, "mode", "type"), delete=True), "Required value: must not be empty for specified object fields"),
        (mutate((*PROPS, "n", "anyOf"), [{"type": "integer", "minimum": 1}]), "anyOf[0].type: Forbidden: must be empty to be structural"),
        (mutate((*PROPS, "n", "anyOf"), [{"description": "x"}]), "anyOf[0].description: Forbidden: must be empty to be structural"),
        (mutate((*PROPS, "n", "anyOf"), [{"default": 1}]), "anyOf[0].default: Forbidden: must be undefined to be structural"),
        (mutate((*PROPS, "n", "anyOf"), [{"nullable": True}]), "anyOf[0].nullable: Forbidden: must be false to be structural"),
        (mutate(("allOf",), [{"properties": {"x": {}}}]),
         "properties[x]: Required value: because it is defined in spec.validation.openAPIV3Schema.allOf[0].properties[x]"),
        (mutate((*PROPS, "size", "x-kubernetes-preserve-unknown-fields"), True), "must be false if x-kubernetes-int-or-string is true"),
        (mutate((*PROPS, "size", "anyOf"), [{"type": "integer"}]), "size].anyOf[0].type: Forbidden: must be empty to be structural"),
        (mutate(("properties", "metadata", "properties", "labels"), {"type": "object"}), "must not specify anything other than name and generateName"),
        (mutate(("properties", "metadata", "description"), "x"), "must not specify anything other than name and generateName"),
        (mutate(("properties", "metadata", "x-kubernetes-preserve-unknown-fields"), True), "must not specify anything other than name and generateName"),
        (mutate((*SPEC, "additionalProperties"), {"type": "string"}),
         "additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"),
        (mutate((*PROPS, "mode", "$ref"), "#/x"), "$ref: Forbidden: $ref is not supported"),
        (mutate((*PROPS, "mode", "patternProperties"), {"x": {"type": "string"}}), "patternProperties: Forbidden: patternProperties is not supported"),
        (mutate((*PROPS, "mode", "uniqueItems"), True), "uniqueItems cannot be set to true"),
        (mutate((*PROPS, "mode", "type"), "str"), "Unsupported value"),
        (mutate((*PROPS, "mode", "default"), "c"), "default: Unsupported value: \"c\": supported values: \"a\", \"b\""),
        (mutate((*PROPS, "free", "x-kubernetes-preserve-unknown-fields"), False), "must be true or undefined"),
        (mutate((*PROPS, "items", "x-kubernetes-list-map-keys"), ["missing"]),
         "x-kubernetes-list-map-keys: Invalid value: []string{\"missing\"}: entries must all be names of item properties"),
        (mutate((*PROPS, "items", "items", "required"), []),
         "properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"),
        (mutate((*PROPS, "items", "x-kubernetes-list-map-keys"), delete=True),
         "x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map"),
        (mutate((*PROPS, "items", "x-kubernetes-list-type"), "set"),
         "x-kubernetes-list-type: Invalid value: \"set\": must be map if x-kubernetes-list-map-keys is non-empty"),
        (mutate((*PROPS, "mode", "x-kubernetes-list-type"), "atomic"), "type: Invalid value: \"string\": must be array if x-kubernetes-list-type is specified"),
        (mutate((*SPEC, "x-kubernetes-validations"), [{"rule": "self.mode ==", "message": "m"}]), "compilation failed: self.mode =="),
        (mutate((*SPEC, "x-kubernetes-validations"), [{"rule": "true", "message": " "}]), "message: Invalid value: \" \": must be non-empty if specified"),
        (mutate((*SPEC, "x-kubernetes-validations"), [{"rule": "true", "message": "a\nb"}]), "must not contain line breaks"),
        (mutate((*SPEC, "x-kubernetes-validations"), [{"rule": "true", "message": "m", "fieldPath": ".nope"}]),
         "fieldPath: Invalid value: \".nope\": must be a valid path"),
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
    # one version: its schema is checked as the CRD's top-level validation (v1 -> internal form)
    assert [p.path for p in problems] == ["spec.validation.openAPIV3Schema.properties[spec].properties[dimension].type"]
