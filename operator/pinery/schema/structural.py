"""The API server's rules for CRD schemas, as a checker (no library implements them).

Follows apiextensions-apiserver (`validation.go`, `schema/validation.go`): a schema is
structural when every specified field has a type, logical junctors only add value validations,
metadata is restricted to name/generateName, defaults are valid and pruned, and the
`x-kubernetes-*` extensions are used as documented. `check_crd` also compiles every CEL rule.
"""

from __future__ import annotations

from typing import Any

from pinery.schema import cel
from pinery.schema.errors import FieldError
from pinery.schema.prune import prune
from pinery.schema.validate import validate

# Every key of apiextensions.k8s.io/v1 JSONSchemaProps.
KNOWN_KEYS = {
    "id", "$schema", "$ref", "description", "type", "format", "title", "default", "maximum",
    "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern",
    "maxItems", "minItems", "uniqueItems", "multipleOf", "enum", "maxProperties",
    "minProperties", "required", "items", "allOf", "oneOf", "anyOf", "not", "properties",
    "additionalProperties", "patternProperties", "dependencies", "additionalItems",
    "definitions", "externalDocs", "example", "nullable",
    "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string", "x-kubernetes-list-map-keys", "x-kubernetes-list-type",
    "x-kubernetes-map-type", "x-kubernetes-validations",
}
# Keys that v1 CRDs forbid outright.
FORBIDDEN_KEYS = {"id", "$schema", "$ref", "patternProperties", "dependencies", "additionalItems", "definitions"}
JUNCTORS = ("allOf", "anyOf", "oneOf", "not")
# Keys that may not appear inside a junctor.
FORBIDDEN_IN_JUNCTORS = {
    "type", "description", "default", "additionalProperties", "nullable",
    "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string", "x-kubernetes-list-type", "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type", "x-kubernetes-validations",
}
TYPES = {"object", "array", "string", "integer", "number", "boolean"}
INT_OR_STRING = [{"type": "integer"}, {"type": "string"}]
RULE_REASONS = {"FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate"}
SCALARS = {"string", "integer", "number", "boolean"}


def check_crd(crd: dict[str, Any]) -> list[FieldError]:
    """Structural problems of every version schema of a CustomResourceDefinition."""
    problems = []
    for i, version in enumerate(crd.get("spec", {}).get("versions", [])):
        schema = version.get("schema", {}).get("openAPIV3Schema")
        base = f"spec.versions[{i}].schema.openAPIV3Schema"
        if schema is None:
            problems.append(FieldError(base, "Required value"))
            continue
        problems.extend(p.under(base) for p in check_schema(schema))
    return problems


def check_schema(schema: dict[str, Any]) -> list[FieldError]:
    """Structural problems of one openAPIV3Schema; paths are relative to it."""
    out: list[FieldError] = []
    if schema.get("type") != "object":
        out.append(FieldError("type", "must be object at the root"))
    if "default" in schema:
        out.append(FieldError("default", "must not be set at the root"))
    meta = schema.get("properties", {}).get("metadata")
    if meta is not None:
        _check_metadata(meta, out)
    _walk(schema, "", out, in_junctor=False, uncorrelatable=False)
    return out


def _at(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _walk(node: Any, path: str, out: list[FieldError], *, in_junctor: bool, uncorrelatable: bool) -> None:
    if not isinstance(node, dict):
        out.append(FieldError(path, "must be a schema object"))
        return

    for key in node:
        if key not in KNOWN_KEYS:
            out.append(FieldError(_at(path, key), "unknown field in a JSONSchemaProps"))
        elif key in FORBIDDEN_KEYS:
            out.append(FieldError(_at(path, key), "Forbidden: must not be used in apiextensions.k8s.io/v1"))
    if node.get("uniqueItems") is True:
        out.append(FieldError(_at(path, "uniqueItems"), "Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"))
    if "items" in node and not isinstance(node["items"], dict):
        out.append(FieldError(_at(path, "items"), "Forbidden: items must be a schema object, not a list"))
    if "type" in node and node["type"] not in TYPES:
        out.append(FieldError(_at(path, "type"), f"Unsupported value: {node['type']!r}"))

    int_or_string = node.get("x-kubernetes-int-or-string") is True
    preserve = node.get("x-kubernetes-preserve-unknown-fields")
    if preserve is not None and preserve is not True:
        out.append(FieldError(_at(path, "x-kubernetes-preserve-unknown-fields"), "must be true or undefined"))

    if in_junctor:
        for key in FORBIDDEN_IN_JUNCTORS & node.keys():
            if key == "type" and node == {"type": node["type"]} and node["type"] in ("integer", "string"):
                continue  # the int-or-string pattern: anyOf [{type: integer}, {type: string}]
            out.append(FieldError(_at(path, key), "Forbidden: must not be used inside allOf, anyOf, oneOf or not"))
    else:
        if path and "type" not in node and not int_or_string and not preserve:
            out.append(FieldError(_at(path, "type"), "Required value: must not be empty for specified object fields"))

    if int_or_string:
        if "type" in node:
            out.append(FieldError(_at(path, "type"), "Forbidden: must be empty with x-kubernetes-int-or-string"))
        if "anyOf" in node and node["anyOf"] != INT_OR_STRING:
            out.append(FieldError(_at(path, "anyOf"), "Invalid value: with x-kubernetes-int-or-string anyOf must be [{type: integer}, {type: string}]"))

    if "properties" in node and "additionalProperties" in node:
        out.append(FieldError(_at(path, "additionalProperties"), "Forbidden: additionalProperties and properties are mutually exclusive"))
    if node.get("additionalProperties") is False:
        out.append(FieldError(_at(path, "additionalProperties"), "Forbidden: additionalProperties: false is not allowed; unknown fields are pruned"))

    _check_enum(node, path, out)
    _check_list_type(node, path, out)
    if "x-kubernetes-map-type" in node:
        if node["x-kubernetes-map-type"] not in ("granular", "atomic"):
            out.append(FieldError(_at(path, "x-kubernetes-map-type"), "Unsupported value"))
        if node.get("type") != "object":
            out.append(FieldError(_at(path, "x-kubernetes-map-type"), "must only be used with type object"))
    _check_rules(node, path, out, uncorrelatable)
    if "default" in node and not in_junctor:
        _check_default(node, path, out)

    for junctor in JUNCTORS:
        if junctor not in node:
            continue
        branches = [node[junctor]] if junctor == "not" else node[junctor]
        if not isinstance(branches, list):
            out.append(FieldError(_at(path, junctor), "must be a list of schemas"))
            continue
        for i, branch in enumerate(branches):
            sub = _at(path, junctor) if junctor == "not" else f"{_at(path, junctor)}[{i}]"
            _check_specified_outside(node, branch, sub, out)
            _walk(branch, sub, out, in_junctor=True, uncorrelatable=uncorrelatable)

    for name, sub in (node.get("properties") or {}).items():
        _walk(sub, _at(path, f"properties[{name}]"), out, in_junctor=in_junctor, uncorrelatable=uncorrelatable)
    if isinstance(node.get("additionalProperties"), dict):
        _walk(node["additionalProperties"], _at(path, "additionalProperties"), out, in_junctor=in_junctor, uncorrelatable=uncorrelatable)
    if isinstance(node.get("items"), dict):
        correlatable = node.get("x-kubernetes-list-type") in ("map", "set")
        _walk(node["items"], _at(path, "items"), out, in_junctor=in_junctor, uncorrelatable=uncorrelatable or not correlatable)


def _check_specified_outside(node: dict, branch: Any, path: str, out: list[FieldError]) -> None:
    """Fields and items named inside a junctor must also be specified outside it."""
    if not isinstance(branch, dict):
        return
    outside = node.get("properties") or {}
    for name in branch.get("properties") or {}:
        if name not in outside:
            out.append(FieldError(f"{path}.properties[{name}]", "Required value: must be specified outside of the logical junctor as well"))
    if "items" in branch and "items" not in node:
        out.append(FieldError(f"{path}.items", "Required value: must be specified outside of the logical junctor as well"))


def _check_metadata(meta: dict, out: list[FieldError]) -> None:
    base = "properties[metadata]"
    allowed = {"type", "properties", "description"}
    for key in meta.keys() - allowed:
        out.append(FieldError(f"{base}.{key}", "Forbidden: must not be specified; only metadata.name and metadata.generateName can be restricted"))
    if meta.get("type") not in (None, "object"):
        out.append(FieldError(f"{base}.type", "must be object"))
    for name, sub in (meta.get("properties") or {}).items():
        if name not in ("name", "generateName"):
            out.append(FieldError(f"{base}.properties[{name}]", "Forbidden: only metadata.name and metadata.generateName can be restricted"))
            continue
        if sub.get("type") not in (None, "string"):
            out.append(FieldError(f"{base}.properties[{name}].type", "must be string"))
        for key in sub.keys() - {"type", "pattern", "maxLength", "minLength", "description", "format", "enum"}:
            out.append(FieldError(f"{base}.properties[{name}].{key}", "Forbidden: only value validations are allowed on metadata"))


def _check_enum(node: dict, path: str, out: list[FieldError]) -> None:
    kind = node.get("type")
    for value in node.get("enum") or []:
        if kind and validate({"type": kind}, value):
            out.append(FieldError(_at(path, "enum"), f"Invalid value: {value!r} is not of type {kind}"))


def _check_list_type(node: dict, path: str, out: list[FieldError]) -> None:
    list_type = node.get("x-kubernetes-list-type")
    keys = node.get("x-kubernetes-list-map-keys")
    if list_type is None:
        if keys is not None:
            out.append(FieldError(_at(path, "x-kubernetes-list-map-keys"), "Forbidden: requires x-kubernetes-list-type: map"))
        return
    where = _at(path, "x-kubernetes-list-type")
    if list_type not in ("atomic", "set", "map"):
        out.append(FieldError(where, f"Unsupported value: {list_type!r}"))
        return
    if node.get("type") != "array":
        out.append(FieldError(where, "must only be used with type array"))
        return
    items = node.get("items") or {}
    if list_type == "set" and items.get("type") not in SCALARS:
        out.append(FieldError(where, "set lists need scalar items"))
    if list_type == "map":
        if not keys:
            out.append(FieldError(_at(path, "x-kubernetes-list-map-keys"), "Required value: map lists need keys"))
            return
        if items.get("type") != "object":
            out.append(FieldError(where, "map lists need object items"))
            return
        props = items.get("properties") or {}
        for key in keys:
            sub = props.get(key)
            if sub is None:
                out.append(FieldError(_at(path, "x-kubernetes-list-map-keys"), f"key {key!r} is not a property of the items"))
            elif sub.get("type") not in SCALARS:
                out.append(FieldError(_at(path, "x-kubernetes-list-map-keys"), f"key {key!r} must be a scalar"))
            elif key not in items.get("required", []) and "default" not in sub:
                out.append(FieldError(_at(path, "x-kubernetes-list-map-keys"), f"key {key!r} must be required or have a default"))


def _check_rules(node: dict, path: str, out: list[FieldError], uncorrelatable: bool) -> None:
    for i, rule in enumerate(node.get("x-kubernetes-validations") or []):
        where = f"{_at(path, 'x-kubernetes-validations')}[{i}]"
        expr = rule.get("rule")
        if not expr:
            out.append(FieldError(f"{where}.rule", "Required value"))
            continue
        try:
            cel.compile_rule(expr)
        except cel.CelCompileError as exc:
            out.append(FieldError(f"{where}.rule", f"Invalid value: {exc}"))
        if cel.is_transition_rule(expr) and uncorrelatable:
            out.append(FieldError(f"{where}.rule", "Forbidden: oldSelf cannot be used on the uncorrelatable portion of the schema within atomic lists"))
        message = rule.get("message", "")
        if "messageExpression" not in rule and not message.strip():
            out.append(FieldError(f"{where}.message", "Required value: a message is needed"))
        if "\n" in message:
            out.append(FieldError(f"{where}.message", "must not contain line breaks"))
        if "reason" in rule and rule["reason"] not in RULE_REASONS:
            out.append(FieldError(f"{where}.reason", f"Unsupported value: {rule['reason']!r}"))
        if "fieldPath" in rule and not _resolves(node, rule["fieldPath"]):
            out.append(FieldError(f"{where}.fieldPath", f"Invalid value: {rule['fieldPath']!r} does not name a field of this schema"))


def _resolves(node: dict, field_path: str) -> bool:
    if not field_path.startswith("."):
        return False
    for part in field_path[1:].split("."):
        props = node.get("properties") or {}
        if part not in props:
            return False
        node = props[part]
    return True


def _check_default(node: dict, path: str, out: list[FieldError]) -> None:
    default = node["default"]
    where = _at(path, "default")
    for err in validate(node, default, rules=False):
        out.append(FieldError(where, f"Invalid value: default does not validate: {err}"))
    pruned, unknown = prune(node, default)
    if unknown or pruned != default:
        out.append(FieldError(where, f"Invalid value: default must be pruned (unknown fields: {', '.join(unknown)})"))
