"""Go's `%#v` of the internal apiextensions types, for the bad values that field errors show.

apimachinery's `ErrorBody` prints a bad value that is neither a basic type nor a Stringer with
`%#v`; the CRD checks pass whole structs and slices (`spec.versions`, a validation rule, a
schema). These functions write what Go would print for the `apiextensions` (internal) types.
Pointers print as an address in Go, which differs on every run; a fixed one stands in for it.
"""

from __future__ import annotations

from typing import Any

from pinery.schema.field import GoRepr, go_float, go_quote

ADDRESS = "0xc000000000"  # stands in for the address Go prints for a non-nil pointer
_PKG = "apiextensions."


def _ptr(go_type: str, value: Any) -> str:
    return f"(*{go_type})(nil)" if value is None else f"(*{go_type})({ADDRESS})"


def _str(value: Any) -> str:
    return go_quote(value if isinstance(value, str) else "")


def _bool(value: Any) -> str:
    return "true" if value is True else "false"


def string_slice(values: Any) -> str:
    """`[]string{"a", "b"}`, or `[]string(nil)`."""
    if values is None:
        return "[]string(nil)"
    return "[]string{" + ", ".join(go_quote(str(v)) for v in values) + "}"


def json_value(value: Any) -> str:
    """`%#v` of an `interface{}` holding a decoded JSON value."""
    if value is None:
        return "interface {}(nil)"
    if isinstance(value, bool):
        return _bool(value)
    if isinstance(value, (int, float)):
        return go_float(float(value))
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(json_value(v) for v in value) + "}"
    if isinstance(value, dict):
        items = ", ".join(f"{go_quote(k)}:{json_value(value[k])}" for k in sorted(value))
        return "map[string]interface {}{" + items + "}"
    return go_quote(str(value))


def column(col: dict[str, Any]) -> str:
    return (
        f"{_PKG}CustomResourceColumnDefinition{{Name:{_str(col.get('name'))}, Type:{_str(col.get('type'))}, "
        f"Format:{_str(col.get('format'))}, Description:{_str(col.get('description'))}, "
        f"Priority:{int(col.get('priority') or 0)}, JSONPath:{_str(col.get('jsonPath'))}}}"
    )


def _columns(cols: Any) -> str:
    if cols is None:
        return f"[]{_PKG}CustomResourceColumnDefinition(nil)"
    return f"[]{_PKG}CustomResourceColumnDefinition{{" + ", ".join(column(c) for c in cols) + "}"


def _selectable(fields: Any) -> str:
    if fields is None:
        return f"[]{_PKG}SelectableField(nil)"
    inner = ", ".join(f"{_PKG}SelectableField{{JSONPath:{_str(f.get('jsonPath'))}}}" for f in fields)
    return f"[]{_PKG}SelectableField{{{inner}}}"


def version(v: dict[str, Any]) -> str:
    """One internal `CustomResourceDefinitionVersion` (schema, subresources and columns as the
    v1-to-internal conversion leaves them: None where they were hoisted to the spec)."""
    return (
        f"{_PKG}CustomResourceDefinitionVersion{{Name:{_str(v.get('name'))}, Served:{_bool(v.get('served'))}, "
        f"Storage:{_bool(v.get('storage'))}, Deprecated:{_bool(v.get('deprecated'))}, "
        f"DeprecationWarning:{_ptr('string', v.get('deprecationWarning'))}, "
        f"Schema:{_ptr(_PKG + 'CustomResourceValidation', v.get('schema'))}, "
        f"Subresources:{_ptr(_PKG + 'CustomResourceSubresources', v.get('subresources'))}, "
        f"AdditionalPrinterColumns:{_columns(v.get('additionalPrinterColumns'))}, "
        f"SelectableFields:{_selectable(v.get('selectableFields'))}}}"
    )


def versions(vs: Any) -> GoRepr:
    """`spec.Versions` as `field.Invalid(fldPath.Child("versions"), spec.Versions, ...)` shows it."""
    if not vs:
        return GoRepr(f"[]{_PKG}CustomResourceDefinitionVersion(nil)")
    return GoRepr(f"[]{_PKG}CustomResourceDefinitionVersion{{" + ", ".join(version(v) for v in vs) + "}")


def validation_rule(rule: dict[str, Any]) -> GoRepr:
    return GoRepr(
        f"{_PKG}ValidationRule{{Rule:{_str(rule.get('rule'))}, Message:{_str(rule.get('message'))}, "
        f"MessageExpression:{_str(rule.get('messageExpression'))}, "
        f"Reason:{_ptr(_PKG + 'FieldValueErrorReason', rule.get('reason'))}, "
        f"FieldPath:{_str(rule.get('fieldPath'))}, OptionalOldSelf:{_ptr('bool', rule.get('optionalOldSelf'))}}}"
    )


def _schemas(values: Any) -> str:
    if values is None:
        return f"[]{_PKG}JSONSchemaProps(nil)"
    return f"[]{_PKG}JSONSchemaProps{{" + ", ".join(schema_props(v).text for v in values) + "}"


def _schema_map(values: Any, go_type: str = f"map[string]{_PKG}JSONSchemaProps") -> str:
    if values is None:
        return f"{go_type}(nil)"
    return go_type + "{" + ", ".join(f"{go_quote(k)}:{schema_props(values[k]).text}" for k in sorted(values)) + "}"


def schema_props(s: dict[str, Any]) -> GoRepr:
    """A whole internal `JSONSchemaProps`, fields in the struct's order."""
    g = s.get
    validations = g("x-kubernetes-validations")
    rules = (
        f"{_PKG}ValidationRules(nil)"
        if validations is None
        else f"{_PKG}ValidationRules{{" + ", ".join(validation_rule(r).text for r in validations) + "}"
    )
    enum_values = g("enum")
    enum = "[]" + _PKG + "JSON(nil)" if enum_values is None else "[]" + _PKG + "JSON{" + ", ".join(json_value(e) for e in enum_values) + "}"
    parts = [
        ("ID", _str(g("id"))), ("Schema", _str(g("$schema"))), ("Ref", _ptr("string", g("$ref"))),
        ("Description", _str(g("description"))), ("Type", _str(g("type"))), ("Nullable", _bool(g("nullable"))),
        ("Format", _str(g("format"))), ("Title", _str(g("title"))), ("Default", _ptr(_PKG + "JSON", g("default"))),
        ("Maximum", _ptr("float64", g("maximum"))), ("ExclusiveMaximum", _bool(g("exclusiveMaximum"))),
        ("Minimum", _ptr("float64", g("minimum"))), ("ExclusiveMinimum", _bool(g("exclusiveMinimum"))),
        ("MaxLength", _ptr("int64", g("maxLength"))), ("MinLength", _ptr("int64", g("minLength"))),
        ("Pattern", _str(g("pattern"))), ("MaxItems", _ptr("int64", g("maxItems"))),
        ("MinItems", _ptr("int64", g("minItems"))), ("UniqueItems", _bool(g("uniqueItems"))),
        ("MultipleOf", _ptr("float64", g("multipleOf"))), ("Enum", enum),
        ("MaxProperties", _ptr("int64", g("maxProperties"))), ("MinProperties", _ptr("int64", g("minProperties"))),
        ("Required", string_slice(g("required"))), ("Items", _ptr(_PKG + "JSONSchemaPropsOrArray", g("items"))),
        ("AllOf", _schemas(g("allOf"))), ("OneOf", _schemas(g("oneOf"))), ("AnyOf", _schemas(g("anyOf"))),
        ("Not", _ptr(_PKG + "JSONSchemaProps", g("not"))), ("Properties", _schema_map(g("properties"))),
        ("AdditionalProperties", _ptr(_PKG + "JSONSchemaPropsOrBool", g("additionalProperties"))),
        ("PatternProperties", _schema_map(g("patternProperties"))),
        ("Dependencies", f"{_PKG}JSONSchemaDependencies(nil)" if g("dependencies") is None else f"{_PKG}JSONSchemaDependencies{{...}}"),
        ("AdditionalItems", _ptr(_PKG + "JSONSchemaPropsOrBool", g("additionalItems"))),
        ("Definitions", _schema_map(g("definitions"), f"{_PKG}JSONSchemaDefinitions")),
        ("ExternalDocs", _ptr(_PKG + "ExternalDocumentation", g("externalDocs"))),
        ("Example", _ptr(_PKG + "JSON", g("example"))),
        ("XPreserveUnknownFields", _ptr("bool", g("x-kubernetes-preserve-unknown-fields"))),
        ("XEmbeddedResource", _bool(g("x-kubernetes-embedded-resource"))),
        ("XIntOrString", _bool(g("x-kubernetes-int-or-string"))),
        ("XListMapKeys", string_slice(g("x-kubernetes-list-map-keys"))),
        ("XListType", _ptr("string", g("x-kubernetes-list-type"))),
        ("XMapType", _ptr("string", g("x-kubernetes-map-type"))),
        ("XValidations", rules),
    ]
    return GoRepr(f"{_PKG}JSONSchemaProps{{" + ", ".join(f"{k}:{v}" for k, v in parts) + "}")
