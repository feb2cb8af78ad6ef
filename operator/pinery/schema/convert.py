"""Turn a pydantic JSON schema into a Kubernetes structural schema.

pydantic writes JSON Schema 2020-12 with `$defs`/`$ref`, `anyOf [X, null]` for optional fields,
`additionalProperties: false` for `extra="forbid"` and numeric `exclusiveMinimum`; the API server
wants OpenAPI v3.0 in its structural subset. Anything this converter does not understand is an
error, so that a new kind of field cannot slip into a CRD half-translated.
"""

from __future__ import annotations

import copy
from typing import Any

from pinery.schema.markers import IMMUTABLE
from pinery.schema.value_validation import json_type

# Keys a converted node may carry (value validations and Kubernetes extensions).
ALLOWED_KEYS = {
    "type",
    "description",
    "properties",
    "required",
    "items",
    "additionalProperties",
    "enum",
    "default",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "format",
    "nullable",
    "anyOf",
    "x-kubernetes-int-or-string",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
}
_DROPPED_KEYS = {"title", "examples", "$defs"}
_FORMATS = {"date-time", "date", "int32", "int64", "byte", "uuid"}


class SchemaConversionError(ValueError):
    """The model uses a construct that has no structural-schema form."""


def to_structural(schema: dict[str, Any], *, require_descriptions: bool = True) -> dict[str, Any]:
    """Convert a complete pydantic JSON schema (with its `$defs`) to a structural schema."""
    defs = schema.get("$defs", {})
    return _convert(schema, defs, "", require_descriptions, is_field=False)


def _convert(
    node: dict[str, Any], defs: dict[str, Any], path: str, req_desc: bool, is_field: bool = True
) -> dict[str, Any]:
    """Convert one node; `is_field` is False for the root, array items and map values."""
    node = _fold_pattern_properties(_resolve(node, defs, path), path)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED_KEYS or key == IMMUTABLE:
            continue
        if key == "default":
            if value is not None:
                out["default"] = copy.deepcopy(value)
        elif key == "const":
            out["enum"] = [value]
        elif key in ("exclusiveMinimum", "exclusiveMaximum") and not isinstance(value, bool):
            # JSON Schema 2020 (a number) -> OpenAPI 3.0 (a bound plus a flag)
            out["minimum" if key == "exclusiveMinimum" else "maximum"] = value
            out[key] = True
        elif key == "properties":
            out["properties"] = {
                name: _convert(sub, defs, _join(path, name), req_desc) for name, sub in value.items()
            }
        elif key == "items":
            if not isinstance(value, dict):
                raise SchemaConversionError(f"{path}: tuple-typed arrays are not supported")
            out["items"] = _convert(value, defs, path + "[*]", req_desc, is_field=False)
        elif key == "additionalProperties":
            if value is False:
                continue  # extra="forbid": the API server prunes unknown fields instead
            if value is True:
                out["x-kubernetes-preserve-unknown-fields"] = True
            else:
                out["additionalProperties"] = _convert(
                    value, defs, path + "[*]", req_desc, is_field=False
                )
        elif key == "propertyNames":
            out.setdefault("x-kubernetes-validations", []).append(_key_rule(value, path))
        elif key == "format":
            if value in _FORMATS:
                out["format"] = value
        elif key == "x-kubernetes-validations":
            order = ("rule", "messageExpression", "message", "fieldPath", "reason")
            rules = [{k: rule[k] for k in order if k in rule} for rule in value]
            out.setdefault("x-kubernetes-validations", []).extend(rules)
        elif key == "anyOf":
            if not node.get("x-kubernetes-int-or-string"):
                raise SchemaConversionError(f"{path}: unions other than Optional[...] and int-or-string are not supported")
            out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
        elif key in ALLOWED_KEYS:
            out[key] = copy.deepcopy(value)
        else:
            raise SchemaConversionError(f"{path}: unsupported schema keyword {key!r}")

    if "properties" in out:
        rules = _immutability_rules(node, out)
        if rules:
            out.setdefault("x-kubernetes-validations", []).extend(rules)
        if "required" in out:
            out["required"] = [r for r in out["required"] if r in out["properties"]]
            if not out["required"]:
                del out["required"]
    if "enum" in out and "type" not in out:
        out["type"] = _type_of(out["enum"][0], path)
    if req_desc and is_field and not out.get("description"):
        raise SchemaConversionError(f"{path}: every field needs a description")
    return ordered(out)


# Canonical key order, so that generated YAML reads type, description, default first.
_KEY_ORDER = [
    "type", "format", "description", "default", "enum", "nullable",
    "minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum",
    "minLength", "maxLength", "pattern", "minItems", "maxItems", "minProperties", "maxProperties",
    "anyOf", "x-kubernetes-int-or-string", "x-kubernetes-preserve-unknown-fields",
    "required", "properties", "items", "additionalProperties",
    "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type",
    "x-kubernetes-validations",
]


def ordered(node: dict[str, Any]) -> dict[str, Any]:
    """The node with its keys in canonical order (unknown keys last, as they came)."""
    rank = {k: i for i, k in enumerate(_KEY_ORDER)}
    return dict(sorted(node.items(), key=lambda kv: rank.get(kv[0], len(rank))))


def _resolve(node: dict[str, Any], defs: dict[str, Any], path: str) -> dict[str, Any]:
    """Inline `$ref` and collapse `anyOf [X, null]`; keys beside them override X's."""
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        if name not in defs:
            raise SchemaConversionError(f"{path}: unresolved reference {node['$ref']}")
        target = _resolve(defs[name], defs, path)
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        return {**target, **siblings}
    if "anyOf" in node and not node.get("x-kubernetes-int-or-string"):
        members = [m for m in node["anyOf"] if m != {"type": "null"}]
        if len(members) == 1 and len(members) < len(node["anyOf"]):
            inner = _resolve(members[0], defs, path)
            siblings = {k: v for k, v in node.items() if k != "anyOf"}
            return {**inner, **siblings}
    return node


def _fold_pattern_properties(node: dict[str, Any], path: str) -> dict[str, Any]:
    """pydantic writes constrained map keys as patternProperties: fold into propertyNames."""
    if "patternProperties" not in node:
        return node
    (pattern, values), *more = node["patternProperties"].items()
    if more:
        raise SchemaConversionError(f"{path}: several key patterns are not supported")
    folded = {k: v for k, v in node.items() if k != "patternProperties"}
    folded["additionalProperties"] = values
    folded["propertyNames"] = {**node.get("propertyNames", {}), "pattern": pattern}
    return folded


def _immutability_rules(node: dict[str, Any], out: dict[str, Any]) -> list[dict[str, str]]:
    """CEL transition rules for the properties marked immutable (see pinery.schema.markers)."""
    rules = []
    always_present = set(out.get("required", []))
    for name, sub in node.get("properties", {}).items():
        mode = sub.get(IMMUTABLE)
        if mode is None:
            continue
        if "default" in out["properties"][name]:
            always_present.add(name)
        if mode == "presence":
            rule = f"has(self.{name}) == has(oldSelf.{name})"
            message = f"{name} cannot be added or removed after creation"
        elif name in always_present:
            rule = f"self.{name} == oldSelf.{name}"
            message = f"{name} is immutable"
        else:
            rule = (
                f"has(self.{name}) == has(oldSelf.{name}) && "
                f"(!has(self.{name}) || self.{name} == oldSelf.{name})"
            )
            message = f"{name} is immutable"
        rules.append({"rule": rule, "message": message, "fieldPath": f".{name}"})
    return rules


def _key_rule(names: dict[str, Any], path: str) -> dict[str, str]:
    """A CEL rule for map keys (structural schemas have no propertyNames)."""
    unknown = set(names) - {"pattern", "minLength", "maxLength", "type"}
    if unknown or not names.keys() - {"type"}:
        raise SchemaConversionError(f"{path}: unsupported key constraints {sorted(names)}")
    checks = []
    if "pattern" in names:
        checks.append(f"k.matches(r'{names['pattern']}')")
    if "minLength" in names:
        checks.append(f"size(k) >= {names['minLength']}")
    if "maxLength" in names:
        checks.append(f"size(k) <= {names['maxLength']}")
    size = f"{names.get('minLength', 0)}-{names['maxLength']}" if "maxLength" in names else ""
    what = " ".join(
        part
        for part in (
            f"must have {size} characters" if size else "",
            f"must match {names['pattern']}" if "pattern" in names else "",
        )
        if part
    )
    return {"rule": f"self.all(k, {' && '.join(checks)})", "message": f"keys {what}"}


def _type_of(value: Any, path: str) -> str:
    kind = json_type(value)
    if kind in ("boolean", "integer", "number", "string"):
        return kind
    raise SchemaConversionError(f"{path}: enum of unsupported type {type(value).__name__}")


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name
