"""pinery.schema.crd_validation against cases of apiextensions-apiserver's validation_test.go
(TestValidateCustomResourceDefinition, TestValidateCustomResourceDefinitionUpdate,
TestValidateCustomResourceDefinitionValidation, TestValidateCustomResourceDefinitionStoredVersions,
Test_validateDeprecationWarning), written as v1 JSON objects.

Upstream asserts (error type, field) pairs; those are asserted here as (message prefix, path),
and the whole message where the code fixes it. A single-version v1 CRD is checked in the
internal form, where its schema sits at `spec.validation`, so that is where upstream's
`spec.validation.openAPIV3Schema...` paths point.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pinery.schema.crd_validation import check_crd, validate_crd

TYPES = {"invalid": "Invalid value", "required": "Required value", "forbidden": "Forbidden",
         "unsupported": "Unsupported value", "duplicate": "Duplicate value", "toomany": "Too many"}
S = "spec.validation.openAPIV3Schema"


def crd(schema: dict | None = None, *, versions: list | None = None, **spec: Any) -> dict[str, Any]:
    """plural.group.com, cluster-scoped, one version "version" (served, storage)."""
    if schema is None:
        schema = {"type": "object"}
    body = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "plural.group.com"},
        "spec": {
            "group": "group.com",
            "scope": "Cluster",
            "names": {"plural": "plural", "singular": "singular", "kind": "Plural", "listKind": "PluralList"},
            "versions": versions if versions is not None else [
                {"name": "version", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}],
        },
    }
    body["spec"].update(spec)
    return body


def two_versions(**extra: Any) -> list:
    return [{"name": "version", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object"}}, **extra},
            {"name": "version2", "served": True, "storage": False, "schema": {"openAPIV3Schema": {"type": "object"}}, **extra}]


def webhook(**client: Any) -> dict:
    return {"strategy": "Webhook", "webhook": {"clientConfig": client, "conversionReviewVersions": ["v1beta1"]}}


def pairs(errors) -> list[tuple[str, str]]:
    out = []
    for e in errors:
        kind = next(k for k, prefix in TYPES.items() if e.message.startswith(prefix))
        out.append((kind, e.path))
    return out


LABEL_1035 = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
              "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
              "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")
SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
             "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


def _mut(body: dict, fn) -> dict:
    body = copy.deepcopy(body)
    fn(body)
    return body


# (upstream case name, CRD, expected (type, field) pairs in order)
CREATE_CASES = [
    ("invalid types disallowed", crd({"type": "object", "properties": {"foo": {"type": "bogus"}}}),
     [("unsupported", f"{S}.properties[foo].type")]),
    ("webhookconfig: invalid port 0", crd(versions=two_versions(), conversion=webhook(service={"name": "n", "namespace": "ns", "port": 0})),
     [("invalid", "spec.conversion.webhookClientConfig.service.port")]),
    ("webhookconfig: invalid port 65536", crd(versions=two_versions(), conversion=webhook(service={"name": "n", "namespace": "ns", "port": 65536})),
     [("invalid", "spec.conversion.webhookClientConfig.service.port")]),
    ("webhookconfig: both service and URL provided",
     crd(versions=two_versions(), conversion=webhook(url="https://example.com/webhook", service={"name": "n", "namespace": "ns"})),
     [("required", "spec.conversion.webhookClientConfig")]),
    ("webhookconfig: blank URL", crd(versions=two_versions(), conversion=webhook(url="")),
     [("invalid", "spec.conversion.webhookClientConfig.url"), ("invalid", "spec.conversion.webhookClientConfig.url")]),
    ("webhookconfig_should_not_be_set",
     crd(versions=two_versions(), conversion={"strategy": "None", "webhook": {"clientConfig": {"url": "https://example.com/webhook"}}}),
     [("forbidden", "spec.conversion.webhookClientConfig")]),
    ("ConversionReviewVersions_should_not_be_set",
     crd(versions=two_versions(), conversion={"strategy": "None", "webhook": {"conversionReviewVersions": ["v1beta1"]}}),
     [("forbidden", "spec.conversion.conversionReviewVersions")]),
    ("webhookconfig: invalid ConversionReviewVersion",
     crd(versions=two_versions(), conversion={"strategy": "Webhook", "webhook": {
         "clientConfig": {"url": "https://example.com/webhook"}, "conversionReviewVersions": ["invalid-version"]}}),
     [("invalid", "spec.conversion.conversionReviewVersions")]),
    ("webhookconfig: invalid ConversionReviewVersion version string",
     crd(versions=two_versions(), conversion={"strategy": "Webhook", "webhook": {
         "clientConfig": {"url": "https://example.com/webhook"}, "conversionReviewVersions": ["0v"]}}),
     [("invalid", "spec.conversion.conversionReviewVersions[0]"), ("invalid", "spec.conversion.conversionReviewVersions")]),
    ("webhookconfig: at least one valid ConversionReviewVersion",
     crd(versions=two_versions(), conversion={"strategy": "Webhook", "webhook": {
         "clientConfig": {"url": "https://example.com/webhook"}, "conversionReviewVersions": ["invalid-version", "v1beta1"]}}),
     []),
    ("webhookconfig: duplicate ConversionReviewVersion",
     crd(versions=two_versions(), conversion={"strategy": "Webhook", "webhook": {
         "clientConfig": {"url": "https://example.com/webhook"}, "conversionReviewVersions": ["v1beta1", "v1beta1"]}}),
     [("invalid", "spec.conversion.conversionReviewVersions[1]")]),
    ("missing_webhookconfig", crd(versions=two_versions(), conversion={"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"]}}),
     [("required", "spec.conversion.webhookClientConfig")]),
    ("invalid_conversion_strategy", crd(versions=two_versions(), conversion={"strategy": "non_existing_conversion"}),
     [("unsupported", "spec.conversion.strategy")]),
    ("webhook conversion without preserveUnknownFields=false",
     crd(versions=two_versions(), preserveUnknownFields=True, conversion=webhook(url="https://example.com/webhook")),
     [("invalid", "spec.conversion.strategy"), ("invalid", "spec.preserveUnknownFields")]),
    ("no_storage_version", crd(versions=[{"name": "version", "served": True, "storage": False, "schema": {"openAPIV3Schema": {"type": "object"}}}]),
     [("invalid", "spec.versions"), ("invalid", "status.storedVersions")]),
    ("multiple_storage_version",
     crd(versions=[{"name": "version", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object"}}},
                   {"name": "version2", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object"}}}]),
     [("invalid", "spec.versions"), ("invalid", "status.storedVersions")]),
    ("mismatched name", _mut(crd(), lambda c: c["metadata"].update(name="something.group.com")),
     [("invalid", "metadata.name")]),
    ("bad names 01", _mut(crd(), lambda c: (c["spec"].update(group="group"), c["spec"]["names"].update(
        plural="pl_ural", singular="value()", kind="value()", listKind="value()"), c["metadata"].update(name="plural.group"))),
     [("invalid", "metadata.name"), ("invalid", "spec.group"), ("invalid", "spec.names.plural"),
      ("invalid", "spec.names.singular"), ("invalid", "spec.names.kind"), ("invalid", "spec.names.listKind"),
      ("invalid", "spec.names.listKind")]),
    ("bad names 02: kind and listKind the same", _mut(crd(), lambda c: c["spec"]["names"].update(kind="matching", listKind="matching")),
     [("invalid", "spec.names.listKind")]),
    ("additionalProperties and properties forbidden",
     crd({"type": "object", "properties": {"foo": {"type": "object", "properties": {"bar": {"type": "string"}}, "additionalProperties": False}}}),
     [("forbidden", f"{S}.properties[foo].additionalProperties")]),
    ("additionalProperties without properties allowed (map[string]string)",
     crd({"type": "object", "properties": {"foo": {"type": "object", "additionalProperties": {"type": "string"}}}}), []),
    ("x-kubernetes-preserve-unknown-field: false",
     crd({"type": "object", "x-kubernetes-preserve-unknown-fields": False}),
     [("invalid", f"{S}.x-kubernetes-preserve-unknown-fields")]),
    ("schema is required", crd(versions=[{"name": "version", "served": True, "storage": True}]),
     [("required", "spec.versions[0].schema.openAPIV3Schema")]),
    ("preserveUnknownFields: true", crd(preserveUnknownFields=True),
     [("invalid", "spec.preserveUnknownFields")]),
    ("labelSelectorPath outside of .spec and .status",
     crd(versions=[{"name": "version", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object"}},
                    "subresources": {"scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas",
                                               "labelSelectorPath": ".labelSelector"}}}]),
     [("invalid", "spec.subresources.scale.labelSelectorPath")]),
    ("x-kubernetes-embedded-resource inside resource meta",
     crd({"type": "object", "properties": {"metadata": {"type": "object", "x-kubernetes-embedded-resource": True,
                                                        "properties": {"name": {"type": "string"}}}}}),
     # (ValidateStructural also refuses anything but name and generateName in the root metadata)
     [("forbidden", f"{S}.properties[metadata]"), ("forbidden", f"{S}.properties[metadata].x-kubernetes-embedded-resource")]),
    ("top-level metadata default",
     crd({"type": "object", "properties": {"metadata": {"type": "object", "properties": {"name": {"type": "string", "default": "foo"}}}}}),
     [("forbidden", f"{S}.properties[metadata].properties[name].default")]),
    ("default inside additionalSchema of metadata",
     crd({"type": "object", "properties": {"embedded": {"type": "object", "x-kubernetes-embedded-resource": True, "properties": {
         "metadata": {"type": "object", "properties": {"annotations": {"type": "object", "additionalProperties": {"type": "string", "default": "abc"}}}}}}}}),
     [("forbidden", f"{S}.properties[embedded].properties[metadata].properties[annotations].additionalProperties.default")]),
    ("x-kubernetes-validations should have valid reason and fieldPath",
     crd({"type": "object", "properties": {"value": {"type": "object", "properties": {"a": {"type": "integer"}},
          "x-kubernetes-validations": [{"rule": "self.a > 0", "reason": "InternalError", "fieldPath": ".a"}]}}}),
     [("unsupported", f"{S}.properties[value].x-kubernetes-validations[0].reason")]),
    ("x-kubernetes-validations have invalid fieldPath",
     crd({"type": "object", "properties": {"value": {"type": "object", "properties": {"a": {"type": "integer"}},
          "x-kubernetes-validations": [{"rule": "self.a > 0", "fieldPath": ".b"}, {"rule": "self.a > 0", "fieldPath": " "},
                                       {"rule": "self.a > 0", "fieldPath": ".a\n"}]}}}),
     [("invalid", f"{S}.properties[value].x-kubernetes-validations[0].fieldPath"),
      ("invalid", f"{S}.properties[value].x-kubernetes-validations[1].fieldPath"),
      ("invalid", f"{S}.properties[value].x-kubernetes-validations[1].fieldPath"),
      ("invalid", f"{S}.properties[value].x-kubernetes-validations[2].fieldPath"),
      ("invalid", f"{S}.properties[value].x-kubernetes-validations[2].fieldPath")]),
    ("printer columns: bad type, format and jsonPath",
     crd(versions=[{"name": "version", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object"}},
                    "additionalPrinterColumns": [{"name": "x", "type": "bogus", "format": "bogus", "jsonPath": "spec.x"}, {"type": "string"}]}]),
     [("invalid", "spec.additionalPrinterColumns[0].type"), ("invalid", "spec.additionalPrinterColumns[0].format"),
      ("invalid", "spec.additionalPrinterColumns[0].JSONPath"), ("required", "spec.additionalPrinterColumns[1].name"),
      ("required", "spec.additionalPrinterColumns[1].JSONPath")]),
    ("duplicate version names and a bad version name",
     crd(versions=[{"name": "version", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object"}}},
                   {"name": "version", "served": True, "storage": False, "schema": {"openAPIV3Schema": {"type": "object"}}},
                   {"name": "1beta", "served": True, "storage": False, "schema": {"openAPIV3Schema": {"type": "object"}}}]),
     [("invalid", "spec.versions[2].name"), ("invalid", "spec.versions")]),
    ("protected group without approval", _mut(crd(), lambda c: (c["spec"].update(group="sig.k8s.io"), c["metadata"].update(name="plural.sig.k8s.io"))),
     [("required", "metadata.annotations[api-approved.kubernetes.io]")]),
    ("selectableFields: invalid, metadata, non-scalar, duplicate",
     crd(versions=[{"name": "version", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object", "properties": {
         "spec": {"type": "object", "properties": {"s": {"type": "string"}, "o": {"type": "object"}}}}}},
         "selectableFields": [{"jsonPath": ".spec.missing"}, {"jsonPath": ".spec.o"}, {"jsonPath": ".spec.s"}, {"jsonPath": ".spec.s"}]}]),
     # (one version: the conversion moves its selectableFields up to the spec)
     [("invalid", "spec.selectableFields[0].jsonPath"), ("invalid", "spec.selectableFields[1].jsonPath"),
      ("duplicate", "spec.selectableFields[3].jsonPath")]),
]


@pytest.mark.parametrize("name,body,expected", CREATE_CASES, ids=[c[0] for c in CREATE_CASES])
def test_validate_custom_resource_definition(name, body, expected):
    assert pairs(validate_crd(body)) == expected


# TestValidateCustomResourceDefinitionValidation: one schema, (type, field) under spec.validation.
SCHEMA_CASES = [
    ("root type without status", {"type": "string"}, [("invalid", f"{S}.type")]),
    ("null type", {"type": "object", "properties": {"null": {"type": "null"}}},
     [("unsupported", f"{S}.properties[null].type"), ("forbidden", f"{S}.properties[null].type")]),
    ("nullable at the root", {"type": "object", "nullable": True}, [("forbidden", f"{S}.nullable")]),
    ("invalid type with list type extension set", {"type": "object", "x-kubernetes-list-type": "set"}, [("invalid", f"{S}.type")]),
    ("invalid list type extension",
     {"type": "object", "properties": {"l": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "no-such"}}},
     [("unsupported", f"{S}.properties[l].x-kubernetes-list-type")]),
    ("invalid list type extension with list map keys extension non-empty",
     {"type": "object", "properties": {"l": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set",
                                             "x-kubernetes-list-map-keys": ["key"]}}},
     [("invalid", f"{S}.properties[l].x-kubernetes-list-type")]),
    ("unset list type extension with list map keys extension non-empty",
     {"type": "object", "properties": {"l": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-map-keys": ["key"]}}},
     [("required", f"{S}.properties[l].x-kubernetes-list-type")]),
    ("empty list map keys extension with list type extension map",
     {"type": "object", "properties": {"l": {"type": "array", "items": {"type": "object"}, "x-kubernetes-list-type": "map"}}},
     [("required", f"{S}.properties[l].x-kubernetes-list-map-keys")]),
    ("non object item with list type extension map",
     {"type": "object", "properties": {"l": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "map",
                                             "x-kubernetes-list-map-keys": ["k"]}}},
     [("invalid", f"{S}.properties[l].items.type")]),
    ("items with key missing from properties with list type extension map",
     {"type": "object", "properties": {"l": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                                             "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["b"]}}},
     [("invalid", f"{S}.properties[l].x-kubernetes-list-map-keys")]),
    ("items with non scalar key property type with list type extension map",
     {"type": "object", "properties": {"l": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "object"}}, "required": ["a"]},
                                             "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["a"]}}},
     [("invalid", f"{S}.properties[l].items.properties[a].type")]),
    ("duplicate map keys with list type extension map",
     {"type": "object", "properties": {"l": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                                             "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["a", "a"]}}},
     [("invalid", f"{S}.properties[l].x-kubernetes-list-map-keys")]),
    ("invalid list-type set with non-atomic map items",
     {"type": "object", "properties": {"l": {"type": "array", "x-kubernetes-list-type": "set",
                                             "items": {"type": "object", "x-kubernetes-map-type": "granular", "properties": {"a": {"type": "string"}}}}}},
     [("invalid", f"{S}.properties[l].items.x-kubernetes-map-type")]),
    ("invalid list-type set with with non-atomic list items",
     {"type": "object", "properties": {"l": {"type": "array", "x-kubernetes-list-type": "set",
                                             "items": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}}}},
     [("invalid", f"{S}.properties[l].items.x-kubernetes-list-type")]),
    ("unset type with map type extension (granular)",
     {"type": "object", "properties": {"m": {"x-kubernetes-map-type": "granular", "x-kubernetes-preserve-unknown-fields": True}}},
     [("required", f"{S}.properties[m].type")]),
    ("invalid map type", {"type": "object", "properties": {"m": {"type": "object", "x-kubernetes-map-type": "bogus"}}},
     [("unsupported", f"{S}.properties[m].x-kubernetes-map-type")]),
    ("invalid map with non-required key and no default",
     {"type": "object", "properties": {"l": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
                                             "items": {"type": "object", "properties": {"k": {"type": "string"}}}}}},
     [("required", f"{S}.properties[l].items.properties[k].default")]),
    ("allowed map with non-required key and default",
     {"type": "object", "properties": {"l": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
                                             "items": {"type": "object", "properties": {"k": {"type": "string", "default": "x"}}}}}}, []),
    ("uniqueItems", {"type": "object", "properties": {"l": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}}},
     [("forbidden", f"{S}.properties[l].uniqueItems")]),
    ("forbidden v1 keys", {"type": "object", "properties": {"x": {"type": "string", "id": "x", "$ref": "#/x"}}},
     [("forbidden", f"{S}.properties[x].id"), ("forbidden", f"{S}.properties[x].$ref")]),
    ("rule is required", {"type": "object", "x-kubernetes-validations": [{"rule": " "}]},
     [("required", f"{S}.x-kubernetes-validations[0].rule")]),
    ("message must not contain line breaks", {"type": "object", "x-kubernetes-validations": [{"rule": "true", "message": "a\nb"}]},
     [("invalid", f"{S}.x-kubernetes-validations[0].message")]),
    ("message needed for multi-line rule", {"type": "object", "x-kubernetes-validations": [{"rule": "true &&\ntrue"}]},
     [("required", f"{S}.x-kubernetes-validations[0].message")]),
    ("empty messageExpression", {"type": "object", "x-kubernetes-validations": [{"rule": "true", "messageExpression": " "}]},
     [("required", f"{S}.x-kubernetes-validations[0].messageExpression")]),
    ("rule does not compile", {"type": "object", "x-kubernetes-validations": [{"rule": "self.a ==="}]},
     [("invalid", f"{S}.x-kubernetes-validations[0].rule")]),
    ("oldSelf in an atomic list's items",
     {"type": "object", "properties": {"l": {"type": "array", "items": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}}},
     [("invalid", f"{S}.properties[l].items.x-kubernetes-validations[0].rule")]),
    ("optionalOldSelf without oldSelf", {"type": "object", "x-kubernetes-validations": [{"rule": "true", "optionalOldSelf": True}]},
     [("invalid", f"{S}.x-kubernetes-validations[0].optionalOldSelf")]),
    ("invalid defaults: unknown fields",
     {"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}, "default": {"b": "x", "c": 1}}}},
     [("invalid", f"{S}.properties[a].default")]),
]


@pytest.mark.parametrize("name,schema,expected", SCHEMA_CASES, ids=[c[0] for c in SCHEMA_CASES])
def test_validate_custom_resource_definition_validation(name, schema, expected):
    assert pairs(validate_crd(crd(schema))) == expected


def test_status_subresource_allows_only_some_fields_at_the_root():
    versions = [{"name": "version", "served": True, "storage": True, "subresources": {"status": {}},
                 "schema": {"openAPIV3Schema": {"type": "object", "anyOf": [{"required": ["spec"]}]}}}]
    [err] = validate_crd(crd(versions=versions))
    assert err.path == S and err.message.startswith("Invalid value: apiextensions.JSONSchemaProps{ID:\"\", Schema:\"\"")
    assert err.message.endswith(
        ": only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength "
        "Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example "
        "XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled")


# Whole messages, where the code fixes them.
MESSAGES = [
    (crd(versions=two_versions(), conversion=webhook(service={"name": "n", "namespace": "ns", "port": 0})),
     "spec.conversion.webhookClientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive"),
    (crd(versions=two_versions(), conversion={"strategy": "Webhook", "webhook": {
        "clientConfig": {"url": "https://example.com/webhook"}, "conversionReviewVersions": ["invalid-version"]}}),
     'spec.conversion.conversionReviewVersions: Invalid value: []string{"invalid-version"}: must include at least one of v1, v1beta1'),
    (crd(versions=two_versions(), conversion={"strategy": "bogus"}),
     'spec.conversion.strategy: Unsupported value: "bogus": supported values: "None", "Webhook"'),
    (_mut(crd(), lambda c: c["metadata"].update(name="something.group.com")),
     'metadata.name: Invalid value: "something.group.com": must be spec.names.plural+"."+spec.group'),
    (_mut(crd(), lambda c: c["spec"].update(group="group")),
     'spec.group: Invalid value: "group": should be a domain with at least one dot'),
    (_mut(crd(), lambda c: c["spec"]["names"].update(plural="pl_ural")),
     f'spec.names.plural: Invalid value: "pl_ural": {LABEL_1035}'),
    (_mut(crd(), lambda c: c["spec"]["names"].update(kind="value()")),
     f'spec.names.kind: Invalid value: "value()": may have mixed case, but should otherwise match: {LABEL_1035}'),
    (_mut(crd(), lambda c: c["spec"].update(scope="")), "spec.scope: Required value"),
    (crd({"type": "object", "properties": {"foo": {"type": "bogus"}}}),
     f'{S}.properties[foo].type: Unsupported value: "bogus": supported values: "array", "boolean", "integer", "number", "object", "string"'),
    (crd({"type": "object", "properties": {"l": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}}}),
     f"{S}.properties[l].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"),
    (crd({"type": "object", "properties": {"metadata": {"type": "object", "properties": {"name": {"type": "string", "default": "foo"}}}}}),
     f"{S}.properties[metadata].properties[name].default: Forbidden: must not be set in top-level metadata"),
    (crd({"type": "object", "x-kubernetes-validations": [{"rule": "true", "reason": "InternalError"}]}),
     f'{S}.x-kubernetes-validations[0].reason: Unsupported value: "InternalError": '
     'supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"'),
    (crd({"type": "object", "properties": {"l": {"type": "array", "items": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}}}),
     f'{S}.properties[l].items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": '
     f'oldSelf cannot be used on the uncorrelatable portion of the schema within {S}.properties[l]'),
    (crd({"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}, "default": {"b": "x", "c": 1}}}}),
     f'{S}.properties[a].default: Invalid value: map[string]interface {{}}{{"b":"x", "c":1}}: must not have unknown fields'),
    (crd(versions=[{"name": "version", "served": True, "storage": False, "schema": {"openAPIV3Schema": {"type": "object"}}}]),
     "status.storedVersions: Invalid value: []string(nil): must have at least one stored version"),
    (crd(versions=[{"name": "version", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object"}},
                    "subresources": {"scale": {"specReplicasPath": "spec.replicas", "statusReplicasPath": ".spec.replicas"}}}]),
     'spec.subresources.scale.specReplicasPath: Invalid value: "spec.replicas": must be a simple json path starting with .'),
    (_mut(crd(), lambda c: c["metadata"].update(name="Plural.group.com")),
     f'metadata.name: Invalid value: "Plural.group.com": {SUBDOMAIN}'),
]


@pytest.mark.parametrize("body,message", MESSAGES, ids=[m[1].split(":")[0] + str(i) for i, m in enumerate(MESSAGES)])
def test_messages_are_apimachinerys(body, message):
    assert message in [str(e) for e in validate_crd(body)]


def test_the_versions_value_is_shown_as_go_prints_it():
    body = crd(versions=[{"name": "v1", "served": True, "storage": False, "schema": {"openAPIV3Schema": {"type": "object"}}}])
    assert str(validate_crd(body)[0]) == (
        "spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{apiextensions.CustomResourceDefinitionVersion"
        '{Name:"v1", Served:true, Storage:false, Deprecated:false, DeprecationWarning:(*string)(nil), '
        "Schema:(*apiextensions.CustomResourceValidation)(nil), Subresources:(*apiextensions.CustomResourceSubresources)(nil), "
        "AdditionalPrinterColumns:[]apiextensions.CustomResourceColumnDefinition(nil), SelectableFields:[]apiextensions.SelectableField(nil)}}"
        ": must have exactly one version marked as storage version")


def test_different_schemas_per_version_are_checked_per_version():
    versions = [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"a": {"type": "bogus"}}}}},
                {"name": "v2", "served": True, "storage": False, "schema": {"openAPIV3Schema": {"type": "object"}}}]
    assert pairs(validate_crd(crd(versions=versions))) == [("unsupported", "spec.versions[0].schema.openAPIV3Schema.properties[a].type")]


def test_deprecation_warning():
    """Test_validateDeprecationWarning."""
    def errs(**v):
        return [e.message for e in validate_crd(crd(versions=[{"name": "version", "served": True, "storage": True,
                                                               "schema": {"openAPIV3Schema": {"type": "object"}}, **v}]))]
    assert errs(deprecationWarning="x") == ['Invalid value: "x": can only be set for deprecated versions']
    assert errs(deprecated=True, deprecationWarning="") == ['Invalid value: "": must not be an empty string']
    assert errs(deprecated=True, deprecationWarning="a" * 257) == [f'Invalid value: "{"a" * 257}": must be <= 256 characters long']
    assert errs(deprecated=True, deprecationWarning="a\tb") == [
        'Invalid value: "a\\tb": must only contain printable UTF-8 characters; non-printable character found at index 1']
    assert errs(deprecated=True, deprecationWarning="ok") == []


def _established(body: dict) -> dict:
    body = copy.deepcopy(body)
    body["status"] = {"storedVersions": [v["name"] for v in body["spec"]["versions"] if v.get("storage")],
                      "conditions": [{"type": "Established", "status": "True"}]}
    return body


def test_update_group_and_plural_are_immutable_and_scope_and_kind_once_established():
    """TestValidateCustomResourceDefinitionUpdate "changes" and "changes-established"."""
    old = crd()
    new = _mut(old, lambda c: (c["spec"].update(group="abc.com", scope="Namespaced"), c["spec"]["names"].update(
        plural="plural2", kind="Plural2", listKind="Plural2List"), c["metadata"].update(name="plural2.abc.com")))
    assert pairs(validate_crd(new, old)) == [("invalid", "spec.group"), ("invalid", "spec.names.plural")]
    assert str(validate_crd(new, old)[0]) == 'spec.group: Invalid value: "abc.com": field is immutable'
    assert pairs(validate_crd(new, _established(old))) == [
        ("invalid", "spec.scope"), ("invalid", "spec.names.kind"), ("invalid", "spec.group"), ("invalid", "spec.names.plural")]


def test_update_ratchets_on_what_the_stored_crd_has():
    """"invalid types updates allowed if old object has invalid types", "reject non-atomic items in
    lists of type set if not pre-existing", "schema not required if old object is missing schema",
    "webhookconfig: should pass on invalid ConversionReviewVersion with old invalid versions"."""
    bogus = crd({"type": "object", "properties": {"foo": {"type": "bogus"}}})
    assert pairs(validate_crd(bogus, crd())) == [("unsupported", f"{S}.properties[foo].type")]
    assert validate_crd(bogus, bogus) == []
    granular_set = crd({"type": "object", "properties": {"l": {"type": "array", "x-kubernetes-list-type": "set",
                                                               "items": {"type": "object", "properties": {"a": {"type": "string"}}}}}})
    assert pairs(validate_crd(granular_set, crd())) == [("invalid", f"{S}.properties[l].items.x-kubernetes-map-type")]
    assert validate_crd(granular_set, granular_set) == []
    no_schema = crd(versions=[{"name": "version", "served": True, "storage": True}])
    assert [str(e) for e in validate_crd(no_schema, no_schema)] == [
        "spec.versions[0].schema.openAPIV3Schema: Required value: because otherwise all fields are pruned"]
    invalid_review = crd(versions=two_versions(), conversion={"strategy": "Webhook", "webhook": {
        "clientConfig": {"url": "https://example.com/webhook"}, "conversionReviewVersions": ["invalid-version"]}})
    assert validate_crd(invalid_review, invalid_review) == []
    assert pairs(validate_crd(invalid_review, crd(versions=two_versions(), conversion=webhook(url="https://example.com/webhook")))) == [
        ("invalid", "spec.conversion.conversionReviewVersions")]


def test_update_a_removed_stored_version_must_stay():
    """TestValidateCustomResourceDefinitionUpdate "version-deleted"."""
    old = _established(crd(versions=two_versions()))
    old["status"]["storedVersions"] = ["version", "version2"]
    new = crd(versions=[{"name": "version", "served": True, "storage": True, "schema": {"openAPIV3Schema": {"type": "object"}}}])
    assert [str(e) for e in validate_crd(new, old)] == [
        'status.storedVersions[1]: Invalid value: "version2": missing from spec.versions; version2 was previously a storage '
        "version, and must remain in spec.versions until a storage migration ensures no data remains persisted in version2 "
        "and removes version2 from status.storedVersions"]


def test_update_preserve_unknown_fields_true_is_kept_but_never_switched_on():
    """"switch to preserveUnknownFields: true is forbidden", "keep preserveUnknownFields: true is allowed"."""
    on = crd(preserveUnknownFields=True)
    assert ("invalid", "spec.preserveUnknownFields") in pairs(validate_crd(on, crd()))
    assert ("invalid", "spec.preserveUnknownFields") not in pairs(validate_crd(on, on))


def test_root_metadata_with_a_description_is_refused():
    body = crd({"type": "object", "properties": {"metadata": {"type": "object", "description": "meta"}}})
    assert [str(e) for e in validate_crd(body)] == [
        f"{S}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"]


def test_check_crd_is_validate_crd():
    body = crd({"type": "object", "properties": {"foo": {"type": "bogus"}}})
    assert check_crd(body) == validate_crd(body)
