"""Upstream's own cases for the structural-schema rules, with upstream's exact messages.

Ported from kubernetes/kubernetes `staging/src/k8s.io/apiextensions-apiserver`:

- `test/integration/validation_test.go`: TestNonStructuralSchemaConditionForCRDV1Beta1MigratedData
  and TestNonStructuralSchemaConditionForCRDV1, every case whose messages come from NewStructural,
  ValidateStructural or the completeness check;
- `pkg/apiserver/schema/validation_test.go`: TestValidateStructuralMetadataInvariants,
  TestValidateStructuralCompleteness, TestValidateNestedValueValidationComplete;
- `pkg/apiserver/schema/convert_test.go`: TestStructuralRoundtripOrError (what NewStructural
  refuses, and that it drops nothing else).

Upstream's integration tests check that each listed message is contained in the reply; these
tables assert the whole list. Where the upstream code reports more than the upstream test lists,
the rest is under `also` (worked out from the same code), so `expected` stays upstream's text.
"""

from __future__ import annotations

import pytest
import yaml

from pinery.api import RESOURCES
from pinery.generate.crds import build_crd
from pinery.schema.crd_validation import check_crd
from pinery.schema.errors import FieldError
from pinery.schema.structural import (
    FIELD,
    ROOT,
    ValidationOptions,
    _metadata_invariants,
    _nested,
    _nested_errors,
    go_regexp_error,
    new_structural,
    structural_conversion_error,
    validate_structural,
    validate_structural_completeness,
)
from tests.conftest import shared_path

V1BETA1 = "spec.versions[0].schema.openAPIV3Schema"
V1BETA1_SECOND = "spec.versions[1].schema.openAPIV3Schema"
V1 = "spec.validation.openAPIV3Schema"


def messages(schema_yaml: str, path: str) -> list[str]:
    return [str(e) for e in validate_structural(yaml.safe_load(schema_yaml), path)]


def case(name, schema, expected=(), also=(), unexpected=(), path=V1BETA1):
    return pytest.param(schema, path, list(expected), list(also), list(unexpected), id=name)


def check(schema, path, expected, also, unexpected):
    got = messages(schema, path)
    assert got == sorted(expected + also)  # ValidateStructural sorts by the whole message
    for fragment in unexpected:
        assert not any(fragment in m for m in got)


# --- TestNonStructuralSchemaConditionForCRDV1Beta1MigratedData -----------------------------------

P = V1BETA1 + "."
V1BETA1_CASES = [
    case("preserve unknown fields is false", "type: object"),
    case("embedded-resource without preserve-unknown-fields, but properties", """
type: object
x-kubernetes-embedded-resource: true
properties:
 apiVersion:
   type: string
 kind:
   type: string
 metadata:
   type: object
"""),
    case("embedded-resource with preserve-unknown-fields", """
type: object
x-kubernetes-embedded-resource: true
x-kubernetes-preserve-unknown-fields: true
"""),
    case("no top-level type", 'type: ""', [P + "type: Required value: must not be empty at the root"]),
    case("non-object top-level type", 'type: "integer"', [P + 'type: Invalid value: "integer": must be object at the root']),
    case("forbidden in nested value validation", """
type: object
properties:
 foo:
   type: string
not:
 type: string
 additionalProperties: true
 title: hello
 description: world
 nullable: true
allOf:
- properties:
   foo:
     type: string
     additionalProperties: true
     title: hello
     description: world
     nullable: true
anyOf:
- items:
   type: string
   additionalProperties: true
   title: hello
   description: world
   nullable: true
oneOf:
- properties:
   foo:
     type: string
     additionalProperties: true
     title: hello
     description: world
     nullable: true
""", [
        P + "anyOf[0].items.type: Forbidden: must be empty to be structural",
        P + "anyOf[0].items.additionalProperties: Forbidden: must be undefined to be structural",
        P + "anyOf[0].items.title: Forbidden: must be empty to be structural",
        P + "anyOf[0].items.description: Forbidden: must be empty to be structural",
        P + "anyOf[0].items.nullable: Forbidden: must be false to be structural",
        P + "allOf[0].properties[foo].type: Forbidden: must be empty to be structural",
        P + "allOf[0].properties[foo].additionalProperties: Forbidden: must be undefined to be structural",
        P + "allOf[0].properties[foo].title: Forbidden: must be empty to be structural",
        P + "allOf[0].properties[foo].description: Forbidden: must be empty to be structural",
        P + "allOf[0].properties[foo].nullable: Forbidden: must be false to be structural",
        P + "oneOf[0].properties[foo].type: Forbidden: must be empty to be structural",
        P + "oneOf[0].properties[foo].additionalProperties: Forbidden: must be undefined to be structural",
        P + "oneOf[0].properties[foo].title: Forbidden: must be empty to be structural",
        P + "oneOf[0].properties[foo].description: Forbidden: must be empty to be structural",
        P + "oneOf[0].properties[foo].nullable: Forbidden: must be false to be structural",
        P + "not.type: Forbidden: must be empty to be structural",
        P + "not.additionalProperties: Forbidden: must be undefined to be structural",
        P + "not.title: Forbidden: must be empty to be structural",
        P + "not.description: Forbidden: must be empty to be structural",
        P + "not.nullable: Forbidden: must be false to be structural",
        P + "items: Required value: because it is defined in " + P + "anyOf[0].items",
    ], unexpected=[P + "not.default"]),
    case("invalid regex pattern", """
type: object
properties:
 foo:
   type: string
   pattern: "+"
""", [P + 'properties[foo].pattern: Invalid value: "+": must be a valid regular expression, '
          "but isn't: error parsing regexp: missing argument to repetition operator: `+`"]),
    case("missing types without extensions", """
properties:
 foo:
   properties:
     a: {}
 bar:
   items:
     additionalProperties:
       properties:
         a: {}
       items: {}
 abc:
   additionalProperties:
     properties:
       a:
         items:
           additionalProperties:
             items:
""", [
        P + "properties[foo].properties[a].type: Required value: must not be empty for specified object fields",
        P + "properties[foo].type: Required value: must not be empty for specified object fields",
        P + "properties[abc].additionalProperties.properties[a].items.additionalProperties.type: Required value: must not be empty for specified object fields",
        P + "properties[abc].additionalProperties.properties[a].items.type: Required value: must not be empty for specified array items",
        P + "properties[abc].additionalProperties.properties[a].type: Required value: must not be empty for specified object fields",
        P + "properties[abc].additionalProperties.type: Required value: must not be empty for specified object fields",
        P + "properties[abc].type: Required value: must not be empty for specified object fields",
        P + "properties[bar].items.additionalProperties.items.type: Required value: must not be empty for specified array items",
        P + "properties[bar].items.additionalProperties.properties[a].type: Required value: must not be empty for specified object fields",
        P + "properties[bar].items.additionalProperties.type: Required value: must not be empty for specified object fields",
        P + "properties[bar].items.type: Required value: must not be empty for specified array items",
        P + "properties[bar].type: Required value: must not be empty for specified object fields",
        P + "type: Required value: must not be empty at the root",
    ]),
    case("forbidden additionalProperties at the root", """
type: object
additionalProperties: false
""", [P + "additionalProperties: Forbidden: must not be used at the root"]),
    case("structural incomplete", """
type: object
properties:
 b:
   type: object
   properties:
     b:
       type: array
 c:
   type: array
   items:
     type: object
 d:
   type: array
not:
 properties:
   a: {}
   b:
     not:
       properties:
         a: {}
         b:
           items: {}
   c:
     items:
       not:
         items:
           properties:
             a: {}
   d:
     items: {}
allOf:
- properties:
   e: {}
anyOf:
- properties:
   f: {}
oneOf:
- properties:
   g: {}
""", [
        P + "properties[d].items: Required value: because it is defined in " + P + "not.properties[d].items",
        P + "properties[a]: Required value: because it is defined in " + P + "not.properties[a]",
        P + "properties[b].properties[a]: Required value: because it is defined in " + P + "not.properties[b].not.properties[a]",
        P + "properties[b].properties[b].items: Required value: because it is defined in " + P + "not.properties[b].not.properties[b].items",
        P + "properties[c].items.items: Required value: because it is defined in " + P + "not.properties[c].items.not.items",
        P + "properties[e]: Required value: because it is defined in " + P + "allOf[0].properties[e]",
        P + "properties[f]: Required value: because it is defined in " + P + "anyOf[0].properties[f]",
        P + "properties[g]: Required value: because it is defined in " + P + "oneOf[0].properties[g]",
    ], also=[
        # the arrays b.b and d have no items (validateStructuralInvariants)
        P + "properties[b].properties[b].items: Required value: must be specified",
        P + "properties[d].items: Required value: must be specified",
    ]),
    case("structural complete", """
type: object
properties:
 a:
   type: string
 b:
   type: object
   properties:
     a:
       type: string
     b:
       type: array
       items:
         type: string
 c:
   type: array
   items:
     type: array
     items:
       type: object
       properties:
         a:
           type: string
 d:
   type: array
   items:
     type: string
 e:
   type: string
 f:
   type: string
 g:
   type: string
not:
 properties:
   a: {}
   b:
     not:
       properties:
         a: {}
         b:
           items: {}
   c:
     items:
       not:
         items:
           properties:
             a: {}
   d:
     items: {}
allOf:
- properties:
   e: {}
anyOf:
- properties:
   f: {}
oneOf:
- properties:
   g: {}
"""),
    case("invalid v1beta1 schema (v1beta1 version)", """
type: object
properties:
 a: {}
not:
 properties:
   b: {}
""", [
        P + "properties[a].type: Required value: must not be empty for specified object fields",
        P + "properties[b]: Required value: because it is defined in " + P + "not.properties[b]",
    ]),
    case("invalid v1beta1 schema (v1 version)", """
type: object
properties:
 a:
   type: string
""", path=V1BETA1_SECOND),
    case("invalid v1beta1 and v1 schemas (v1 version)", """
type: object
properties:
 c: {}
not:
 properties:
   d: {}
""", [
        V1BETA1_SECOND + ".properties[c].type: Required value: must not be empty for specified object fields",
        V1BETA1_SECOND + ".properties[d]: Required value: because it is defined in " + V1BETA1_SECOND + ".not.properties[d]",
    ], path=V1BETA1_SECOND),
    case("metadata with non-properties", """
type: object
properties:
 metadata:
   minimum: 42.0
""", [
        P + "properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified",
        P + "properties[metadata].type: Required value: must not be empty for specified object fields",
    ], also=[P + 'properties[metadata].type: Invalid value: "": must be object']),
    case("metadata with other properties", """
type: object
properties:
 metadata:
   properties:
     name:
       pattern: "^[a-z]+$"
     labels:
       type: object
       maxLength: 4
""", [
        P + "properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified",
        P + "properties[metadata].type: Required value: must not be empty for specified object fields",
        P + "properties[metadata].properties[name].type: Required value: must not be empty for specified object fields",
    ], also=[P + 'properties[metadata].type: Invalid value: "": must be object']),
    case("metadata with name property", """
type: object
properties:
 metadata:
   type: object
   properties:
     name:
       type: string
       pattern: "^[a-z]+$"
"""),
    case("metadata with generateName property", """
type: object
properties:
 metadata:
   type: object
   properties:
     generateName:
       type: string
       pattern: "^[a-z]+$"
"""),
    case("metadata with name and generateName property", """
type: object
properties:
 metadata:
   type: object
   properties:
     name:
       type: string
       pattern: "^[a-z]+$"
     generateName:
       type: string
       pattern: "^[a-z]+$"
"""),
    case("metadata under junctors", """
type: object
properties:
 metadata:
   type: object
   properties:
     name:
       type: string
       pattern: "^[a-z]+$"
allOf:
- properties:
   metadata: {}
anyOf:
- properties:
   metadata: {}
oneOf:
- properties:
   metadata: {}
not:
 properties:
   metadata: {}
""", [
        P + "anyOf[0].properties[metadata]: Forbidden: must not be specified in a nested context",
        P + "allOf[0].properties[metadata]: Forbidden: must not be specified in a nested context",
        P + "oneOf[0].properties[metadata]: Forbidden: must not be specified in a nested context",
        P + "not.properties[metadata]: Forbidden: must not be specified in a nested context",
    ]),
    case("missing items for array", """
type: object
properties:
 slice:
   type: array
""", [P + "properties[slice].items: Required value: must be specified"]),
]


@pytest.mark.parametrize("schema, path, expected, also, unexpected", V1BETA1_CASES)
def test_non_structural_schema_condition_for_crd_v1beta1_migrated_data(schema, path, expected, also, unexpected):
    check(schema, path, expected, also, unexpected)


# --- TestNonStructuralSchemaConditionForCRDV1 --------------------------------------------------

Q = V1 + "."
V1_CASES = [
    case("int-or-string and preserve-unknown-fields true", """
x-kubernetes-preserve-unknown-fields: true
x-kubernetes-int-or-string: true
""", [Q + "x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true"], path=V1),
    case("int-or-string and embedded-resource true", """
type: object
x-kubernetes-embedded-resource: true
x-kubernetes-int-or-string: true
""", [Q + "x-kubernetes-embedded-resource: Invalid value: true: must be false if x-kubernetes-int-or-string is true"],
        also=[Q + "properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"],
        path=V1),
    case("embedded-resource without preserve-unknown-fields", """
type: object
x-kubernetes-embedded-resource: true
""", [Q + "properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"], path=V1),
    case("embedded-resource without preserve-unknown-fields, but properties", """
type: object
x-kubernetes-embedded-resource: true
properties:
 apiVersion:
   type: string
 kind:
   type: string
 metadata:
   type: object
""", path=V1),
    case("embedded-resource with preserve-unknown-fields", """
type: object
x-kubernetes-embedded-resource: true
x-kubernetes-preserve-unknown-fields: true
""", path=V1),
    case("embedded-resource with wrong type", """
type: array
x-kubernetes-embedded-resource: true
x-kubernetes-preserve-unknown-fields: true
""", [Q + 'type: Invalid value: "array": must be object if x-kubernetes-embedded-resource is true'], also=[
        Q + "items: Required value: must be specified",
        Q + 'type: Invalid value: "array": must be object at the root',
    ], path=V1),
    case("embedded-resource with empty type", """
type: ""
x-kubernetes-embedded-resource: true
x-kubernetes-preserve-unknown-fields: true
""", [Q + "type: Required value: must be object if x-kubernetes-embedded-resource is true"], path=V1),
    case("forbidden vendor extensions in nested value validation", """
type: object
properties:
 int-or-string:
   x-kubernetes-int-or-string: true
 embedded-resource:
   type: object
   x-kubernetes-embedded-resource: true
   x-kubernetes-preserve-unknown-fields: true
not:
 properties:
   int-or-string:
     x-kubernetes-int-or-string: true
   embedded-resource:
     x-kubernetes-embedded-resource: true
     x-kubernetes-preserve-unknown-fields: true
allOf:
- properties:
   int-or-string:
     x-kubernetes-int-or-string: true
   embedded-resource:
     x-kubernetes-embedded-resource: true
     x-kubernetes-preserve-unknown-fields: true
anyOf:
- properties:
   int-or-string:
     x-kubernetes-int-or-string: true
   embedded-resource:
     x-kubernetes-embedded-resource: true
     x-kubernetes-preserve-unknown-fields: true
oneOf:
- properties:
   int-or-string:
     x-kubernetes-int-or-string: true
   embedded-resource:
     x-kubernetes-embedded-resource: true
     x-kubernetes-preserve-unknown-fields: true
""", [
        Q + "allOf[0].properties[embedded-resource].x-kubernetes-preserve-unknown-fields: Forbidden: must be false to be structural",
        Q + "allOf[0].properties[embedded-resource].x-kubernetes-embedded-resource: Forbidden: must be false to be structural",
        Q + "allOf[0].properties[int-or-string].x-kubernetes-int-or-string: Forbidden: must be false to be structural",
        Q + "anyOf[0].properties[embedded-resource].x-kubernetes-preserve-unknown-fields: Forbidden: must be false to be structural",
        Q + "anyOf[0].properties[embedded-resource].x-kubernetes-embedded-resource: Forbidden: must be false to be structural",
        Q + "anyOf[0].properties[int-or-string].x-kubernetes-int-or-string: Forbidden: must be false to be structural",
        Q + "oneOf[0].properties[embedded-resource].x-kubernetes-preserve-unknown-fields: Forbidden: must be false to be structural",
        Q + "oneOf[0].properties[embedded-resource].x-kubernetes-embedded-resource: Forbidden: must be false to be structural",
        Q + "oneOf[0].properties[int-or-string].x-kubernetes-int-or-string: Forbidden: must be false to be structural",
        Q + "not.properties[embedded-resource].x-kubernetes-preserve-unknown-fields: Forbidden: must be false to be structural",
        Q + "not.properties[embedded-resource].x-kubernetes-embedded-resource: Forbidden: must be false to be structural",
        Q + "not.properties[int-or-string].x-kubernetes-int-or-string: Forbidden: must be false to be structural",
    ], path=V1),
    case("missing types with extensions", """
properties:
 foo:
   properties:
     a: {}
 bar:
   items:
     additionalProperties:
       properties:
         a: {}
       items: {}
 abc:
   additionalProperties:
     properties:
       a:
         items:
           additionalProperties:
             items:
 json:
   x-kubernetes-preserve-unknown-fields: true
   properties:
     a: {}
 int-or-string:
   x-kubernetes-int-or-string: true
   properties:
     a: {}
""", [
        Q + "properties[foo].properties[a].type: Required value: must not be empty for specified object fields",
        Q + "properties[foo].type: Required value: must not be empty for specified object fields",
        Q + "properties[int-or-string].properties[a].type: Required value: must not be empty for specified object fields",
        Q + "properties[json].properties[a].type: Required value: must not be empty for specified object fields",
        Q + "properties[abc].additionalProperties.properties[a].items.additionalProperties.type: Required value: must not be empty for specified object fields",
        Q + "properties[abc].additionalProperties.properties[a].items.type: Required value: must not be empty for specified array items",
        Q + "properties[abc].additionalProperties.properties[a].type: Required value: must not be empty for specified object fields",
        Q + "properties[abc].additionalProperties.type: Required value: must not be empty for specified object fields",
        Q + "properties[abc].type: Required value: must not be empty for specified object fields",
        Q + "properties[bar].items.additionalProperties.items.type: Required value: must not be empty for specified array items",
        Q + "properties[bar].items.additionalProperties.properties[a].type: Required value: must not be empty for specified object fields",
        Q + "properties[bar].items.additionalProperties.type: Required value: must not be empty for specified object fields",
        Q + "properties[bar].items.type: Required value: must not be empty for specified array items",
        Q + "properties[bar].type: Required value: must not be empty for specified object fields",
        Q + "type: Required value: must not be empty at the root",
    ], path=V1),
    case("int-or-string variants", """
type: object
properties:
 a:
   x-kubernetes-int-or-string: true
 b:
   x-kubernetes-int-or-string: true
   anyOf:
   - type: integer
   - type: string
   allOf:
   - pattern: abc
 c:
   x-kubernetes-int-or-string: true
   allOf:
   - anyOf:
     - type: integer
     - type: string
   - pattern: abc
   - pattern: abc
 d:
   x-kubernetes-int-or-string: true
   anyOf:
   - type: integer
   - type: string
     pattern: abc
 e:
   x-kubernetes-int-or-string: true
   allOf:
   - anyOf:
     - type: integer
     - type: string
       pattern: abc
   - pattern: abc
 f:
   x-kubernetes-int-or-string: true
   anyOf:
   - type: integer
   - type: string
   - pattern: abc
 g:
   x-kubernetes-int-or-string: true
   anyOf:
   - type: string
   - type: integer
""", [
        Q + "properties[d].anyOf[0].type: Forbidden: must be empty to be structural",
        Q + "properties[d].anyOf[1].type: Forbidden: must be empty to be structural",
        Q + "properties[e].allOf[0].anyOf[0].type: Forbidden: must be empty to be structural",
        Q + "properties[e].allOf[0].anyOf[1].type: Forbidden: must be empty to be structural",
        Q + "properties[f].anyOf[0].type: Forbidden: must be empty to be structural",
        Q + "properties[f].anyOf[1].type: Forbidden: must be empty to be structural",
        Q + "properties[g].anyOf[0].type: Forbidden: must be empty to be structural",
        Q + "properties[g].anyOf[1].type: Forbidden: must be empty to be structural",
    ], unexpected=[Q + "properties[a]", Q + "properties[b]", Q + "properties[c]"], path=V1),
    case("metadata with name property", """
type: object
properties:
 metadata:
   type: object
   properties:
     name:
       type: string
       pattern: "^[a-z]+$"
""", path=V1),
    case("metadata with generateName property", """
type: object
properties:
 metadata:
   type: object
   properties:
     generateName:
       type: string
       pattern: "^[a-z]+$"
""", path=V1),
    case("metadata with name and generateName property", """
type: object
properties:
 metadata:
   type: object
   properties:
     name:
       type: string
       pattern: "^[a-z]+$"
     generateName:
       type: string
       pattern: "^[a-z]+$"
""", path=V1),
    # The two "items slice" cases: upstream's expected message is validation.go's ("items must be a
    # schema object and not an array"), which the CRD validator reports; NewStructural's own error,
    # below, is the one validation.go then holds back.
    case("items slice", """
type: object
properties:
 slice:
   type: array
   items:
   - type: string
   - type: integer
""", also=[V1 + ": Invalid value: \"\": OpenAPIV3Schema 'items' must be a schema, but is an array"], path=V1),
    case("items slice in value validation", """
type: object
properties:
 slice:
   type: array
   items:
     type: string
   not:
     items:
     - type: string
""", also=[V1 + ": Invalid value: \"\": OpenAPIV3Schema 'items' must be a schema, but is an array"], path=V1),
]


@pytest.mark.parametrize("schema, path, expected, also, unexpected", V1_CASES)
def test_non_structural_schema_condition_for_crd_v1(schema, path, expected, also, unexpected):
    check(schema, path, expected, also, unexpected)


def test_items_slice_hides_behind_the_openapi_rules_in_check_crd():
    """validation.go shows NewStructural's error only when the OpenAPI rules report nothing."""
    schema = yaml.safe_load(V1_CASES[-1].values[0])
    crd = {"spec": {"versions": [{"schema": {"openAPIV3Schema": schema}}]}}
    assert not any("OpenAPIV3Schema 'items'" in str(p) for p in check_crd(crd))
    assert any("items" in str(p) for p in check_crd(crd))


# --- pkg/apiserver/schema/validation_test.go -------------------------------------------------------

@pytest.mark.parametrize("type_name", ["object", "array", "number", "integer", "boolean", "string"])
def test_validate_structural_metadata_invariants_type_must_be_object(type_name):
    errs = _metadata_invariants(new_structural({"type": type_name}), True, ROOT, "")
    if type_name == "object":
        assert errs == []
    else:
        assert [str(e) for e in errs] == [f'type: Invalid value: "{type_name}": must be object']


OBJECT_META_FIELDS = [
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
    "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
    "annotations", "ownerReferences", "finalizers", "managedFields",
]
FORBIDDEN_METADATA = FieldError("", "Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified")


@pytest.mark.parametrize("prop", OBJECT_META_FIELDS)
def test_validate_structural_metadata_invariants_only_name_and_generate_name(prop):
    errs = _metadata_invariants(new_structural({"type": "object", "properties": {prop: {}}}), True, ROOT, "")
    assert errs == ([] if prop in ("name", "generateName") else [FORBIDDEN_METADATA])


# One JSON key for every field of Structural (and of its Generic, Extensions,
# ValidationExtensions and ValueValidation), set to a non-zero value.
STRUCTURAL_FIELDS = {
    "items": {"type": "string"}, "additionalProperties": {"type": "string"}, "description": "d",
    "title": "t", "nullable": True, "externalDocs": {"url": "https://example.com"}, "example": 1,
    "x-kubernetes-preserve-unknown-fields": True, "x-kubernetes-embedded-resource": True,
    "x-kubernetes-int-or-string": True, "x-kubernetes-list-map-keys": ["k"],
    "x-kubernetes-list-type": "atomic", "x-kubernetes-map-type": "atomic",
    "x-kubernetes-validations": [{"rule": "true"}], "format": "f", "maximum": 1,
    "exclusiveMaximum": True, "minimum": 1, "exclusiveMinimum": True, "maxLength": 1,
    "minLength": 1, "pattern": "p", "maxItems": 1, "minItems": 1, "uniqueItems": True,
    "multipleOf": 2, "enum": ["x"], "maxProperties": 1, "minProperties": 1, "required": ["name"],
    "allOf": [{}], "oneOf": [{}], "anyOf": [{}], "not": {},
}


@pytest.mark.parametrize("key", [*STRUCTURAL_FIELDS, "default"])
def test_validate_structural_metadata_invariants_nothing_but_type_and_properties(key):
    schema = {"type": "object", "properties": {"name": {}, "generateName": {}}}
    schema[key] = STRUCTURAL_FIELDS.get(key, {"name": "x"})
    errs = _metadata_invariants(new_structural(schema), True, ROOT, "")
    # default is left to API validation (defaulting), as upstream's test leaves it
    assert errs == ([] if key == "default" else [FORBIDDEN_METADATA])


def test_the_root_metadata_description_is_refused():
    """The case that started this port: a description on the root metadata schema."""
    schema = {"type": "object", "properties": {"metadata": {"type": "object", "description": "Standard object metadata."}}}
    assert [str(e) for e in validate_structural(schema, V1BETA1)] == [
        P + "properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified",
    ]


COMPLETENESS_CASES = [
    pytest.param({
        "additionalProperties": {"type": "object", "properties": {"bar": {"type": "string"}}},
        "allOf": [{"properties": {"foo": {"minLength": 2}}}],
    }, ValidationOptions(allow_validation_properties_with_additional_properties=True), [],
        id="allowed properties valuevalidation, additional properties structure"),
    pytest.param({
        "additionalProperties": {"type": "object", "properties": {"bar": {"type": "string"}}},
        "allOf": [{"properties": {"foo": {"minLength": 2}}}],
    }, ValidationOptions(allow_validation_properties_with_additional_properties=False),
        ["properties[foo]: Required value: because it is defined in allOf[0].properties[foo]"],
        id="disallowed properties valuevalidation, additional properties structure"),
    pytest.param({
        "properties": {"bar": {"type": "string"}},
        "allOf": [{"additionalProperties": {"minLength": 2}}],
    }, ValidationOptions(allow_nested_additional_properties=True),
        ["additionalProperties: Required value: because it is defined in allOf[0].additionalProperties"],
        id="disallowed additionalproperties valuevalidation, properties structure"),
    pytest.param({
        "properties": {"foo": {"type": "string"}},
        "allOf": [{"properties": {"foo": {"minLength": 2}}}],
    }, ValidationOptions(), [], id="allowed property in valuevalidation, and in structure"),
    pytest.param({
        "properties": {"foo": {"type": "string"}},
        "allOf": [{"properties": {"notfoo": {"minLength": 2}}}],
    }, ValidationOptions(), ["properties[notfoo]: Required value: because it is defined in allOf[0].properties[notfoo]"],
        id="disallowed property in valuevalidation, and in structure"),
    pytest.param({
        "type": "array", "items": {"type": "string"},
        "allOf": [{"items": {"minLength": 2}}],
    }, ValidationOptions(), [], id="allowed items in valuevalidation, and in structure"),
    pytest.param({
        "type": "object", "properties": {"foo": {"type": "string"}},
        "allOf": [{"items": {"minLength": 2}}],
    }, ValidationOptions(), ["items: Required value: because it is defined in allOf[0].items"],
        id="disallowed items in valuevalidation, and not in structure"),
]


@pytest.mark.parametrize("schema, opts, expected", COMPLETENESS_CASES)
def test_validate_structural_completeness(schema, opts, expected):
    errs = validate_structural_completeness(new_structural(schema), "", opts)
    assert [str(e) for e in errs] == expected


NESTED_FORBIDDEN = {
    "description": "description: Forbidden: must be empty to be structural",
    "type": "type: Forbidden: must be empty to be structural",
    "title": "title: Forbidden: must be empty to be structural",
    "default": "default: Forbidden: must be undefined to be structural",
    "nullable": "nullable: Forbidden: must be false to be structural",
    "externalDocs": None,  # allowed in nested value validations
    "example": None,
    "x-kubernetes-preserve-unknown-fields": "x-kubernetes-preserve-unknown-fields: Forbidden: must be false to be structural",
    "x-kubernetes-embedded-resource": "x-kubernetes-embedded-resource: Forbidden: must be false to be structural",
    "x-kubernetes-int-or-string": "x-kubernetes-int-or-string: Forbidden: must be false to be structural",
    "x-kubernetes-list-map-keys": "x-kubernetes-list-map-keys: Forbidden: must be empty to be structural",
    "x-kubernetes-list-type": "x-kubernetes-list-type: Forbidden: must be undefined to be structural",
    "x-kubernetes-map-type": "x-kubernetes-map-type: Forbidden: must be undefined to be structural",
}
NESTED_VALUES = {"description": "d", "type": "string", "title": "t", "default": 42.0, "nullable": True,
                 "externalDocs": {"url": "u"}, "example": 42.0, "x-kubernetes-preserve-unknown-fields": True,
                 "x-kubernetes-embedded-resource": True, "x-kubernetes-int-or-string": True,
                 "x-kubernetes-list-map-keys": ["k"], "x-kubernetes-list-type": "set", "x-kubernetes-map-type": "atomic"}


@pytest.mark.parametrize("key", NESTED_FORBIDDEN)
def test_validate_nested_value_validation_complete_forbidden_generics_and_extensions(key):
    errs = _nested_errors(_nested({key: NESTED_VALUES[key]}), False, False, FIELD, "", ValidationOptions())
    assert [str(e) for e in errs] == ([NESTED_FORBIDDEN[key]] if NESTED_FORBIDDEN[key] else [])


@pytest.mark.parametrize("allow_x_validations", [False, True])
@pytest.mark.parametrize("allow_additional_properties", [False, True])
def test_validate_nested_value_validation_complete_options(allow_x_validations, allow_additional_properties):
    opts = ValidationOptions(allow_nested_x_validations=allow_x_validations, allow_nested_additional_properties=allow_additional_properties)
    errs = _nested_errors(_nested({"x-kubernetes-validations": [{"rule": "true"}]}), False, False, FIELD, "", opts)
    assert [str(e) for e in errs] == ([] if allow_x_validations else ["x-kubernetes-validations: Forbidden: must be empty to be structural"])
    errs = _nested_errors(_nested({"additionalProperties": {}}), False, False, FIELD, "", opts)
    assert [str(e) for e in errs] == ([] if allow_additional_properties else ["additionalProperties: Forbidden: must be undefined to be structural"])


# --- pkg/apiserver/schema/convert_test.go: TestStructuralRoundtripOrError --------------------------

UNSUPPORTED = [
    ("id", "x", "OpenAPIV3Schema 'id' is not supported"),
    ("$schema", "x", "OpenAPIV3Schema 'schema' is not supported"),
    ("$ref", "#/x", "OpenAPIV3Schema '$ref' is not supported"),
    ("patternProperties", {"a": {}}, "OpenAPIV3Schema 'patternProperties' is not supported"),
    ("dependencies", {"a": ["b"]}, "OpenAPIV3Schema 'dependencies' is not supported"),
    ("additionalItems", False, "OpenAPIV3Schema 'additionalItems' is not supported"),
    ("definitions", {"a": {}}, "OpenAPIV3Schema 'definitions' is not supported"),
    ("items", [{}], "OpenAPIV3Schema 'items' must be a schema, but is an array"),
    ("x-kubernetes-preserve-unknown-fields", False, "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined"),
]


@pytest.mark.parametrize("key, value, message", UNSUPPORTED, ids=[u[0] for u in UNSUPPORTED])
def test_structural_roundtrip_or_error_refuses(key, value, message):
    assert structural_conversion_error({"type": "object", key: value}) == message
    # at any depth, junctors included
    assert structural_conversion_error({"type": "object", "properties": {"a": {"not": {key: value}}}}) == message


@pytest.mark.parametrize("key, value", [("id", ""), ("$ref", ""), ("patternProperties", {}), ("definitions", {}), ("items", [])])
def test_structural_roundtrip_or_error_empty_values_are_unset(key, value):
    assert structural_conversion_error({"type": "object", key: value}) is None


def test_structural_roundtrip_or_error_keeps_every_other_field():
    schema = {"type": "object", **{k: v for k, v in STRUCTURAL_FIELDS.items() if k not in ("x-kubernetes-int-or-string",)}}
    s = new_structural(schema)
    assert s.items.generic.type == "string" and s.additional_properties.structural.generic.type == "string"
    assert (s.generic.description, s.generic.title, s.generic.nullable, s.generic.example) == ("d", "t", True, 1)
    assert s.generic.external_docs == {"url": "https://example.com"}
    assert s.extensions.list_map_keys == ["k"] and s.extensions.map_type == "atomic" and s.extensions.list_type == "atomic"
    assert s.x_validations == [{"rule": "true"}]
    vv = s.value_validation
    assert (vv.format, vv.maximum, vv.exclusive_maximum, vv.pattern, vv.multiple_of, vv.enum, vv.required) == ("f", 1, True, "p", 2, ["x"], ["name"])
    assert len(vv.all_of) == len(vv.one_of) == len(vv.any_of) == 1 and vv.not_ is not None


# --- Go regexp messages (validateValueValidation compiles `pattern` with Go's regexp) ------------

@pytest.mark.parametrize("pattern, message", [
    ("+", "error parsing regexp: missing argument to repetition operator: `+`"),
    ("a**", "error parsing regexp: invalid nested repetition operator: `**`"),
    ("a(b", "error parsing regexp: missing closing ): `a(b`"),
    ("a)b", "error parsing regexp: unexpected ): `a)b`"),
    ("x[ab", "error parsing regexp: missing closing ]: `[ab`"),
    ("[z-a]", "error parsing regexp: invalid character class range: `z-a`"),
    ("a{2,1}", "error parsing regexp: invalid repeat count: `{2,1}`"),
    ("a{1001}", "error parsing regexp: invalid repeat count: `{1001}`"),
    ("\\8", "error parsing regexp: invalid escape sequence: `\\8`"),
    ("(?=a)", "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"),
    ("ab\\", "error parsing regexp: trailing backslash at end of expression: ``"),
    ("^[a-z]([-a-z0-9]*[a-z0-9])?$", None),
    ("(?P<name>a)|(?<other>b)", None),
])
def test_go_regexp_errors(pattern, message):
    assert go_regexp_error(pattern) == message


# --- upstream behaviour the tables above rely on ----------------------------------------------------

def test_completeness_follows_the_root_junctors_only():
    """complete.go starts from the root's value validation and follows only junctors (as in
    "structural incomplete"); a junctor on a property below the root is not checked for
    completeness, so upstream accepts this schema."""
    schema = {"type": "object", "properties": {"spec": {"type": "object", "allOf": [{"properties": {"x": {}}}]}}}
    assert validate_structural(schema) == []


def test_int_or_string_patterns_do_not_need_the_extension():
    """isIntOrStringAnyOfPattern looks at the anyOf only."""
    schema = {"type": "object", "properties": {"a": {"type": "string", "anyOf": [{"type": "integer"}, {"type": "string"}]}}}
    assert validate_structural(schema) == []


# --- real CRDs -------------------------------------------------------------------------------------

@pytest.mark.parametrize("res", RESOURCES, ids=lambda r: r.kind)
def test_pinery_crds_are_structural(res):
    crd = build_crd(res)
    for i, version in enumerate(crd["spec"]["versions"]):
        base = f"spec.versions[{i}].schema.openAPIV3Schema"
        assert validate_structural(version["schema"]["openAPIV3Schema"], base) == []
    assert check_crd(crd) == []


UPSTREAM_CRDS = [
    "kueue/kueue.x-k8s.io_admissionchecks.yaml", "kueue/kueue.x-k8s.io_clusterqueues.yaml",
    "kueue/kueue.x-k8s.io_cohorts.yaml", "kueue/kueue.x-k8s.io_localqueues.yaml",
    "kueue/kueue.x-k8s.io_resourceflavors.yaml", "kueue/kueue.x-k8s.io_topologies.yaml",
    "kueue/kueue.x-k8s.io_workloadpriorityclasses.yaml", "kueue/kueue.x-k8s.io_workloads.yaml",
    "volcano/scheduling.volcano.sh_podgroups.yaml", "volcano/scheduling.volcano.sh_queues.yaml",
    "scheduler-plugins/scheduling.x-k8s.io_podgroups.yaml",
]


@pytest.mark.parametrize("name", UPSTREAM_CRDS)
def test_upstream_crds_are_structural(name):
    """Every real API server accepts these, so neither check may find anything in them."""
    path = shared_path("kube-crds", *name.split("/"))
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    assert docs
    for crd in docs:
        assert crd["kind"] == "CustomResourceDefinition"
        for i, version in enumerate(crd["spec"]["versions"]):
            base = f"spec.versions[{i}].schema.openAPIV3Schema"
            assert validate_structural(version["schema"]["openAPIV3Schema"], base) == []
        assert check_crd(crd) == []
