"""The API server's structural-schema rules, as a checker (no library implements them).

A faithful port of apiextensions-apiserver `pkg/apiserver/schema/`:

- `convert.go` `NewStructural`: the JSON schema is read into the `Structural` shape (Generic,
  Extensions, ValidationExtensions, ValueValidation; inside junctors `NestedValueValidation`
  with ForbiddenGenerics/ForbiddenExtensions), failing on what it cannot hold;
- `validation.go` `ValidateStructural`: `validateStructuralInvariants`,
  `validateStructuralMetadataInvariants`, `validateValueValidation`,
  `validateNestedValueValidation`, the int-or-string patterns;
- `complete.go` `validateStructuralCompleteness`.

`validate_structural` reports exactly what those report, worded as apimachinery's `field`
package words it and sorted as `ValidateStructural` sorts. The per-node OpenAPI rules of
`pkg/apis/apiextensions/validation/validation.go` and `defaulting/` are not part of it; those
that `check_crd` has always reported stay below, in their own section, until the CRD validator
(`pinery.schema.crd_validation`) takes them over.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from dataclasses import field as dc_field
from typing import Any

from pinery.schema import field
from pinery.schema.errors import FieldError

__all__ = ["validate_structural", "structural_conversion_error"]


# --- paths, as apimachinery's field.Path prints them -------------------------------------------

def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _key(path: str, key: str) -> str:
    return f"{path}[{key}]"


def _index(path: str, i: int) -> str:
    return f"{path}[{i}]"


# --- the Structural shape (structural.go) ------------------------------------------------------
# Absent pointers are None; Go's nil-versus-empty distinctions that reflect.DeepEqual sees are kept
# (an empty `required: []` is a non-nil slice, an empty `enum: []` leaves Enum nil), because the
# metadata and int-or-string rules compare whole values.

@dataclass(eq=True)
class Generic:
    description: str = ""
    type: str = ""
    title: str = ""
    default: Any = None  # JSON{Object}; None is the zero value (`default: null` decodes to nil)
    nullable: bool = False
    external_docs: Any = None
    example: Any = None


@dataclass(eq=True)
class Extensions:
    preserve_unknown_fields: bool = False
    embedded_resource: bool = False
    int_or_string: bool = False
    list_map_keys: list[Any] | None = None
    list_type: str | None = None
    map_type: str | None = None


@dataclass(eq=True)
class ValueValidation:
    format: str = ""
    maximum: Any = None
    exclusive_maximum: bool = False
    minimum: Any = None
    exclusive_minimum: bool = False
    max_length: Any = None
    min_length: Any = None
    pattern: str = ""
    max_items: Any = None
    min_items: Any = None
    unique_items: bool = False
    multiple_of: Any = None
    enum: list[Any] | None = None
    max_properties: Any = None
    min_properties: Any = None
    required: list[Any] | None = None
    all_of: "list[NestedValueValidation] | None" = None
    one_of: "list[NestedValueValidation] | None" = None
    any_of: "list[NestedValueValidation] | None" = None
    not_: "NestedValueValidation | None" = None


@dataclass(eq=True)
class NestedValueValidation:
    value_validation: ValueValidation = dc_field(default_factory=ValueValidation)
    x_validations: list[Any] | None = None
    items: "NestedValueValidation | None" = None
    properties: "dict[str, NestedValueValidation] | None" = None
    additional_properties: "NestedValueValidation | None" = None
    forbidden_generics: Generic = dc_field(default_factory=Generic)
    forbidden_extensions: Extensions = dc_field(default_factory=Extensions)


@dataclass(eq=True)
class StructuralOrBool:
    structural: "Structural | None" = None
    allows: bool = False


@dataclass(eq=True)
class Structural:
    items: "Structural | None" = None
    properties: "dict[str, Structural] | None" = None
    additional_properties: StructuralOrBool | None = None
    generic: Generic = dc_field(default_factory=Generic)
    extensions: Extensions = dc_field(default_factory=Extensions)
    x_validations: list[Any] | None = None
    value_validation: ValueValidation | None = None


# --- conversion (convert.go) --------------------------------------------------------------------

class _ConversionError(Exception):
    pass


def _schema(node: Any) -> dict[str, Any]:
    # A JSON value that is not an object where a schema belongs fails decoding before any of this.
    return node if isinstance(node, dict) else {}


def _string(node: dict[str, Any], key: str) -> str:
    value = node.get(key)
    return value if isinstance(value, str) else ""


def _unsupported_fields(node: dict[str, Any]) -> None:
    """convert.go `validateUnsupportedFields`: what CRD validation forbids must really be unset."""
    if _string(node, "id"):
        raise _ConversionError("OpenAPIV3Schema 'id' is not supported")
    if _string(node, "$schema"):
        raise _ConversionError("OpenAPIV3Schema 'schema' is not supported")
    if _string(node, "$ref"):
        raise _ConversionError("OpenAPIV3Schema '$ref' is not supported")
    if node.get("patternProperties"):
        raise _ConversionError("OpenAPIV3Schema 'patternProperties' is not supported")
    if node.get("dependencies"):
        raise _ConversionError("OpenAPIV3Schema 'dependencies' is not supported")
    if node.get("additionalItems") is not None:
        raise _ConversionError("OpenAPIV3Schema 'additionalItems' is not supported")
    if node.get("definitions"):
        raise _ConversionError("OpenAPIV3Schema 'definitions' is not supported")


def _value_validation(node: dict[str, Any]) -> ValueValidation:
    """convert.go `newValueValidation`: `not` first, then allOf, anyOf, oneOf (the error order)."""
    not_ = _nested(node["not"]) if node.get("not") is not None else None
    vv = ValueValidation(
        format=_string(node, "format"),
        maximum=node.get("maximum"),
        exclusive_maximum=bool(node.get("exclusiveMaximum")),
        minimum=node.get("minimum"),
        exclusive_minimum=bool(node.get("exclusiveMinimum")),
        max_length=node.get("maxLength"),
        min_length=node.get("minLength"),
        pattern=_string(node, "pattern"),
        max_items=node.get("maxItems"),
        min_items=node.get("minItems"),
        unique_items=bool(node.get("uniqueItems")),
        multiple_of=node.get("multipleOf"),
        enum=list(node["enum"]) if node.get("enum") else None,
        max_properties=node.get("maxProperties"),
        min_properties=node.get("minProperties"),
        required=list(node["required"]) if isinstance(node.get("required"), list) else None,
        not_=not_,
    )
    for key, attr in (("allOf", "all_of"), ("anyOf", "any_of"), ("oneOf", "one_of")):
        clauses = [_nested(x) for x in node.get(key) or []]
        setattr(vv, attr, clauses or None)
    return vv


def _generics(node: dict[str, Any]) -> Generic:
    """convert.go `newGenerics`."""
    return Generic(
        description=_string(node, "description"),
        type=_string(node, "type"),
        title=_string(node, "title"),
        default=node.get("default"),
        nullable=bool(node.get("nullable")),
        external_docs=node.get("externalDocs"),
        example=node.get("example"),
    )


def _extensions(node: dict[str, Any]) -> Extensions:
    """convert.go `newExtensions`: x-kubernetes-preserve-unknown-fields may only be true."""
    preserve = node.get("x-kubernetes-preserve-unknown-fields")
    if preserve is not None and not preserve:
        raise _ConversionError("internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined")
    keys = node.get("x-kubernetes-list-map-keys")
    return Extensions(
        preserve_unknown_fields=preserve is not None,
        embedded_resource=bool(node.get("x-kubernetes-embedded-resource")),
        int_or_string=bool(node.get("x-kubernetes-int-or-string")),
        list_map_keys=list(keys) if isinstance(keys, list) else None,
        list_type=node.get("x-kubernetes-list-type"),
        map_type=node.get("x-kubernetes-map-type"),
    )


def _validation_extensions(node: dict[str, Any]) -> list[Any] | None:
    """convert.go `newValidationExtensions`."""
    rules = node.get("x-kubernetes-validations")
    return list(rules) if isinstance(rules, list) else None


def _items(node: dict[str, Any]) -> dict[str, Any] | None:
    """A JSONSchemaPropsOrArray: one schema, or a list that NewStructural refuses."""
    items = node.get("items")
    if isinstance(items, list):
        if items:
            raise _ConversionError("OpenAPIV3Schema 'items' must be a schema, but is an array")
        return None
    return _schema(items) if items is not None else None


def _structural(node: Any) -> Structural:
    """convert.go `NewStructural`."""
    node = _schema(node)
    _unsupported_fields(node)
    s = Structural(value_validation=_value_validation(node), generic=_generics(node))
    s.extensions = _extensions(node)
    s.x_validations = _validation_extensions(node)
    items = _items(node)
    if items is not None:
        s.items = _structural(items)
    props = node.get("properties")
    if isinstance(props, dict) and props:
        s.properties = {name: _structural(sub) for name, sub in props.items()}
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        s.additional_properties = StructuralOrBool(_structural(extra), True)
    elif extra is not None:
        s.additional_properties = StructuralOrBool(None, bool(extra))
    return s


def _nested(node: Any) -> NestedValueValidation:
    """convert.go `newNestedValueValidation`: a junctor's clause, everything else kept aside to
    be refused (`properties: {}` is kept: the nested form tests for nil, not for empty)."""
    node = _schema(node)
    _unsupported_fields(node)
    v = NestedValueValidation(value_validation=_value_validation(node))
    v.forbidden_generics = _generics(node)
    v.forbidden_extensions = _extensions(node)
    v.x_validations = _validation_extensions(node)
    items = _items(node)
    if items is not None:
        v.items = _nested(items)
    props = node.get("properties")
    if isinstance(props, dict):
        v.properties = {name: _nested(sub) for name, sub in props.items()}
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        v.additional_properties = _nested(extra)
    elif extra:
        v.additional_properties = NestedValueValidation()
    return v


def new_structural(schema: dict[str, Any]) -> Structural:
    """convert.go `NewStructural`; raises ValueError with upstream's message when it fails."""
    try:
        return _structural(schema)
    except _ConversionError as exc:
        raise ValueError(str(exc)) from None


def structural_conversion_error(schema: dict[str, Any]) -> str | None:
    """What `NewStructural` fails with for this schema, or None."""
    try:
        _structural(schema)
    except _ConversionError as exc:
        return str(exc)
    return None


# --- ValidateStructural (validation.go, complete.go) ---------------------------------------------

ROOT, ITEM, FIELD = "root", "item", "field"  # validation.go `level`


@dataclass(frozen=True)
class ValidationOptions:
    """validation.go `ValidationOptions`; `ValidateStructural` (and so every CRD) uses none."""

    allow_nested_additional_properties: bool = False
    allow_nested_x_validations: bool = False
    allow_validation_properties_with_additional_properties: bool = False


# validation.go `intOrStringAnyOf`.
_INT_OR_STRING_ANY_OF = [
    NestedValueValidation(forbidden_generics=Generic(type="integer")),
    NestedValueValidation(forbidden_generics=Generic(type="string")),
]


def validate_structural(schema: dict[str, Any], path: str = "") -> list[FieldError]:
    """Everything `NewStructural` + `ValidateStructural` report for one openAPIV3Schema.

    A schema NewStructural cannot read gives its one error, as the CRD validator words it
    (validation.go: `field.Invalid(openAPIV3Schema, "", err)`); upstream shows that error only
    when the OpenAPI rules found nothing else. Otherwise ValidateStructural's errors, sorted.
    """
    try:
        s = _structural(schema)
    except _ConversionError as exc:
        return [field.invalid(path, "", str(exc))]
    return validate_structural_with_options(s, path, ValidationOptions())


def validate_structural_with_options(s: Structural, path: str, opts: ValidationOptions) -> list[FieldError]:
    """validation.go `ValidateStructuralWithOptions`: invariants, then completeness, sorted by
    the whole message (Go iterates maps at random, so upstream sorts)."""
    errs = _invariants(s, ROOT, path, opts)
    errs += validate_structural_completeness(s, path, opts)
    return field.sort_errors(errs)


def _invariants(s: Structural | None, lvl: str, path: str, opts: ValidationOptions) -> list[FieldError]:
    """validation.go `validateStructuralInvariants`."""
    if s is None:
        return []
    errs: list[FieldError] = []
    g, x = s.generic, s.extensions

    # arrays need items
    if g.type == "array" and s.items is None:
        errs.append(field.required(_child(path, "items"), "must be specified"))
    errs += _invariants(s.items, ITEM, _child(path, "items"), opts)
    for name, sub in (s.properties or {}).items():
        errs += _invariants(sub, FIELD, _key(_child(path, "properties"), name), opts)

    # additionalProperties: never at the root
    if s.additional_properties is not None:
        if lvl == ROOT:
            errs.append(field.forbidden(_child(path, "additionalProperties"), "must not be used at the root"))
        if s.additional_properties.structural is not None:
            errs += _invariants(s.additional_properties.structural, FIELD, _child(path, "additionalProperties"), opts)

    # validateGeneric checks nothing; validateExtensions:
    errs += _extension_errors(x, path)

    # the two int-or-string exceptions (isIntOrStringAnyOfPattern, isIntOrStringAllOfPattern)
    skip_any_of = _is_int_or_string_any_of(s)
    skip_first_all_of_any_of = _is_int_or_string_all_of(s)
    errs += _value_validation_errors(s.value_validation, skip_any_of, skip_first_all_of_any_of, lvl, path, opts)

    check_metadata = lvl == ROOT or x.embedded_resource

    # every specified node has a type, except int-or-string and preserve-unknown-fields ones;
    # embedded resources are objects
    if x.embedded_resource and g.type != "object":
        if not g.type:
            errs.append(field.required(_child(path, "type"), "must be object if x-kubernetes-embedded-resource is true"))
        else:
            errs.append(field.invalid(_child(path, "type"), g.type, "must be object if x-kubernetes-embedded-resource is true"))
    elif not g.type and not x.int_or_string and not x.preserve_unknown_fields:
        detail = {
            ROOT: "must not be empty at the root",
            ITEM: "must not be empty for specified array items",
            FIELD: "must not be empty for specified object fields",
        }[lvl]
        errs.append(field.required(_child(path, "type"), detail))
    if x.embedded_resource and s.additional_properties is not None:
        errs.append(field.forbidden(_child(path, "additionalProperties"), "must not be used if x-kubernetes-embedded-resource is set"))

    if lvl == ROOT and g.type and g.type != "object":
        errs.append(field.invalid(_child(path, "type"), g.type, "must be object at the root"))

    # kind and apiVersion of a resource (the root, or an embedded one) are strings
    props = s.properties or {}
    for name in ("kind", "apiVersion"):
        if name in props and check_metadata and props[name].generic.type != "string":
            errs.append(field.invalid(_child(_key(_child(path, "properties"), name), "type"), props[name].generic.type, "must be string"))

    if "metadata" in props:
        errs += _metadata_invariants(props["metadata"], check_metadata, lvl, _key(_child(path, "properties"), "metadata"))

    if x.embedded_resource and not x.preserve_unknown_fields and not s.properties:
        errs.append(field.required(
            _child(path, "properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        ))
    return errs


def _metadata_invariants(s: Structural, check_metadata: bool, lvl: str, path: str) -> list[FieldError]:
    """validation.go `validateStructuralMetadataInvariants`: metadata is an object, and the root's
    may restrict name and generateName only: with those two removed, and type and default
    ignored, nothing at all may be left (no description, no value validation, no extension)."""
    errs: list[FieldError] = []
    if check_metadata and s.generic.type != "object":
        errs.append(field.invalid(_child(path, "type"), s.generic.type, "must be object"))
    if lvl == ROOT:
        props = s.properties
        names = set(props or {})
        if names in ({"name"}, {"generateName"}, {"name", "generateName"}):
            props = None
        rest = replace(
            s,
            properties=props,
            generic=replace(s.generic, type="", default=None),
            value_validation=s.value_validation if s.value_validation is not None else ValueValidation(),
        )
        if rest != Structural(value_validation=ValueValidation()):
            errs.append(field.forbidden(path, "must not specify anything other than name and generateName, but metadata is implicitly specified"))
    return errs


def _is_int_or_string_any_of(s: Structural | None) -> bool:
    """validation.go `isIntOrStringAnyOfPattern`: anyOf is exactly [{type: integer}, {type: string}]."""
    if s is None or s.value_validation is None:
        return False
    return s.value_validation.any_of == _INT_OR_STRING_ANY_OF


def _is_int_or_string_all_of(s: Structural | None) -> bool:
    """validation.go `isIntOrStringAllOfPattern`: allOf[0].anyOf is that pattern."""
    if s is None or s.value_validation is None or not s.value_validation.all_of:
        return False
    return s.value_validation.all_of[0].value_validation.any_of == _INT_OR_STRING_ANY_OF


def _extension_errors(x: Extensions, path: str) -> list[FieldError]:
    """validation.go `validateExtensions`."""
    errs = []
    if x.int_or_string and x.preserve_unknown_fields:
        errs.append(field.invalid(_child(path, "x-kubernetes-preserve-unknown-fields"), True, "must be false if x-kubernetes-int-or-string is true"))
    if x.int_or_string and x.embedded_resource:
        errs.append(field.invalid(_child(path, "x-kubernetes-embedded-resource"), True, "must be false if x-kubernetes-int-or-string is true"))
    return errs


def _value_validation_errors(
    v: ValueValidation | None, skip_any_of: bool, skip_first_all_of_any_of: bool, lvl: str, path: str, opts: ValidationOptions
) -> list[FieldError]:
    """validation.go `validateValueValidation`: each junctor clause, and the pattern compiles as
    Go's regexp does. x-kubernetes-validations stay forbidden in anyOf, oneOf and not whatever
    the options say."""
    if v is None:
        return []
    errs: list[FieldError] = []
    no_cel = replace(opts, allow_nested_x_validations=False)
    if not skip_any_of:
        for i, clause in enumerate(v.any_of or []):
            errs += _nested_errors(clause, False, False, lvl, _index(_child(path, "anyOf"), i), no_cel)
    for i, clause in enumerate(v.all_of or []):
        errs += _nested_errors(clause, skip_first_all_of_any_of and i == 0, False, lvl, _index(_child(path, "allOf"), i), opts)
    for i, clause in enumerate(v.one_of or []):
        errs += _nested_errors(clause, False, False, lvl, _index(_child(path, "oneOf"), i), no_cel)
    errs += _nested_errors(v.not_, False, False, lvl, _child(path, "not"), no_cel)
    if v.pattern:
        problem = go_regexp_error(v.pattern)
        if problem is not None:
            errs.append(field.invalid(_child(path, "pattern"), v.pattern, f"must be a valid regular expression, but isn't: {problem}"))
    return errs


def _nested_errors(
    v: NestedValueValidation | None, skip_any_of: bool, skip_all_of_any_of: bool, lvl: str, path: str, opts: ValidationOptions
) -> list[FieldError]:
    """validation.go `validateNestedValueValidation`: inside a junctor only value validations;
    every generic field but externalDocs and example, and every extension, is refused."""
    if v is None:
        return []
    errs = _value_validation_errors(v.value_validation, skip_any_of, skip_all_of_any_of, lvl, path, opts)
    errs += _nested_errors(v.items, False, False, lvl, _child(path, "items"), opts)
    for name, sub in (v.properties or {}).items():
        errs += _nested_errors(sub, False, False, FIELD, _key(_child(path, "properties"), name), opts)

    g, x = v.forbidden_generics, v.forbidden_extensions
    if g.type:
        errs.append(field.forbidden(_child(path, "type"), "must be empty to be structural"))
    if v.additional_properties is not None and not opts.allow_nested_additional_properties:
        errs.append(field.forbidden(_child(path, "additionalProperties"), "must be undefined to be structural"))
    else:
        errs += _nested_errors(v.additional_properties, False, False, lvl, _child(path, "additionalProperties"), opts)
    if g.default is not None:
        errs.append(field.forbidden(_child(path, "default"), "must be undefined to be structural"))
    if g.title:
        errs.append(field.forbidden(_child(path, "title"), "must be empty to be structural"))
    if g.description:
        errs.append(field.forbidden(_child(path, "description"), "must be empty to be structural"))
    if g.nullable:
        errs.append(field.forbidden(_child(path, "nullable"), "must be false to be structural"))

    if x.preserve_unknown_fields:
        errs.append(field.forbidden(_child(path, "x-kubernetes-preserve-unknown-fields"), "must be false to be structural"))
    if x.embedded_resource:
        errs.append(field.forbidden(_child(path, "x-kubernetes-embedded-resource"), "must be false to be structural"))
    if x.int_or_string:
        errs.append(field.forbidden(_child(path, "x-kubernetes-int-or-string"), "must be false to be structural"))
    if x.list_map_keys:
        errs.append(field.forbidden(_child(path, "x-kubernetes-list-map-keys"), "must be empty to be structural"))
    if x.list_type is not None:
        errs.append(field.forbidden(_child(path, "x-kubernetes-list-type"), "must be undefined to be structural"))
    if x.map_type is not None:
        errs.append(field.forbidden(_child(path, "x-kubernetes-map-type"), "must be undefined to be structural"))
    if v.x_validations and not opts.allow_nested_x_validations:
        errs.append(field.forbidden(_child(path, "x-kubernetes-validations"), "must be empty to be structural"))

    # no reasoning about metadata inside junctors
    if v.properties is not None and "metadata" in v.properties:
        errs.append(field.forbidden(_key(_child(path, "properties"), "metadata"), "must not be specified in a nested context"))
    return errs


def validate_structural_completeness(s: Structural | None, path: str, opts: ValidationOptions) -> list[FieldError]:
    """complete.go `validateStructuralCompleteness`: every property, items and (with the option)
    additionalProperties that the root's junctors name, through junctors nested in them, is
    also specified in the structural part of the schema."""
    if s is None:
        return []
    return _completeness(s.value_validation, s, path, path, opts)


def _completeness(v: ValueValidation | None, s: Structural | None, s_path: str, v_path: str, opts: ValidationOptions) -> list[FieldError]:
    """complete.go `validateValueValidationCompleteness`."""
    if v is None:
        return []
    if s is None:
        return [field.required(s_path, f"because it is defined in {v_path}")]
    errs = _nested_completeness(v.not_, s, s_path, _child(v_path, "not"), opts)
    for key, clauses in (("allOf", v.all_of), ("anyOf", v.any_of), ("oneOf", v.one_of)):
        for i, clause in enumerate(clauses or []):
            errs += _nested_completeness(clause, s, s_path, _index(_child(v_path, key), i), opts)
    return errs


def _nested_completeness(v: NestedValueValidation | None, s: Structural | None, s_path: str, v_path: str, opts: ValidationOptions) -> list[FieldError]:
    """complete.go `validateNestedValueValidationCompleteness`."""
    if v is None:
        return []
    if s is None:
        return [field.required(s_path, f"because it is defined in {v_path}")]
    errs = _completeness(v.value_validation, s, s_path, v_path, opts)
    errs += _nested_completeness(v.items, s.items, _child(s_path, "items"), _child(v_path, "items"), opts)
    extra = s.additional_properties.structural if s.additional_properties is not None else None
    s_props = s.properties or {}
    for name, sub in (v.properties or {}).items():
        sub_v_path = _key(_child(v_path, "properties"), name)
        if name in s_props:
            errs += _nested_completeness(sub, s_props[name], _key(_child(s_path, "properties"), name), sub_v_path, opts)
        elif extra is None or not opts.allow_validation_properties_with_additional_properties:
            errs.append(field.required(_key(_child(s_path, "properties"), name), f"because it is defined in {sub_v_path}"))
        else:
            errs += _nested_completeness(sub, extra, _child(s_path, "additionalProperties"), sub_v_path, opts)
    if v.additional_properties is not None and opts.allow_nested_additional_properties:
        errs += _nested_completeness(v.additional_properties, extra, _child(s_path, "additionalProperties"), _child(v_path, "additionalProperties"), opts)
    return errs


# --- Go regexp syntax errors ---------------------------------------------------------------------
# validation.go compiles `pattern` with Go's regexp. RE2 (the `re2` module, which pinery.schema
# already validates patterns with) accepts the same syntax and refuses it for the same reasons;
# its reasons are reworded to Go's regexp/syntax ErrorCode strings, and the message is Go's
# `syntax.Error.Error()`: "error parsing regexp: <code>: `<expr>`".

_RE2_TO_GO = {
    "no argument for repetition operator": "missing argument to repetition operator",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid repetition size": "invalid repeat count",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "missing ]": "missing closing ]",
    "trailing \\": "trailing backslash at end of expression",
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class": "invalid character class",
    "invalid character class range": "invalid character class range",
    "invalid named capture group": "invalid named capture",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid UTF-8": "invalid UTF-8",
    "pattern too large - compile failed": "expression too large",
    "pattern too large - reverse compile failed": "expression too large",
    "nesting depth exceeded": "expression nests too deeply",
}


def go_regexp_error(pattern: str) -> str | None:
    """What Go's `regexp.Compile(pattern)` fails with, or None when it compiles."""
    import re2

    options = re2.Options()
    options.log_errors = False
    try:
        re2.compile(pattern, options)
    except re2.error as exc:
        raw = exc.args[0] if exc.args else ""
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        reason, _, expr = text.partition(": ")
        if reason == "trailing \\":
            expr = ""  # Go names no expression for a trailing backslash
        code = _RE2_TO_GO.get(reason, reason)
        return f"error parsing regexp: {code}: `{expr}`"
    return None
