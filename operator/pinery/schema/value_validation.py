"""Validate a value against a structural schema, with the API server's messages.

Covers what CRDs use: types (int-or-string, nullable), enums, numeric and size bounds,
patterns, required fields, list types (set, map), `anyOf`/`allOf`/`oneOf`/`not` value
validations and `x-kubernetes-validations` CEL rules (transition rules when `old` is given).
Unknown fields are not errors here: pruning (pinery.schema.prune) deals with them.

On updates (`old` given), a value equal to its old counterpart is not validated again: that is
the API server's validation ratcheting (on by default since Kubernetes 1.30), under which an
update is never refused for parts it did not change.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import lru_cache
from typing import Any, Callable, Protocol

from pinery.schema import cel
from pinery.schema.errors import FieldError, join_path

_MISSING = object()

_Fail = Callable[[str], None]


class Regex(Protocol):
    """What a compiled schema pattern offers (google-re2 ships no type information)."""

    def search(self, text: str) -> object | None: ...


def validate(
    schema: dict[str, Any],
    value: Any,
    path: str = "",
    *,
    old: Any = _MISSING,
    rules: bool = True,
) -> list[FieldError]:
    """All problems of `value` under `schema`; `old` is the previous value on updates."""
    errors: list[FieldError] = []
    _validate(schema, value, path, old, rules, errors)
    return errors


def _show(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), default=str)


def json_type(value: Any) -> str:
    """The JSON type of a decoded value, in the API server's words: kube-openapi
    `pkg/validation/validate/type.go` `schemaInfoForType` names what it got `string`, `integer`,
    `number`, `boolean`, `array`, `object` (and `null`), never the decoder's own type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    return "object"


def _type_ok(kind: str, value: Any) -> bool:
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    return True


@lru_cache(maxsize=1024)
def schema_regex(pattern: str) -> Regex:
    """A schema `pattern` read as the API server reads it: RE2, where `$` ends the text (Python's
    `$` also matches before a final newline, which would let `"name\\n"` through)."""
    import re2

    compiled: Regex = re2.compile(pattern)
    return compiled


def _validate(schema: dict[str, Any], value: Any, path: str, old: Any, rules: bool, errors: list[FieldError]) -> None:
    if old is not _MISSING and old is not None and value == old:
        return  # ratcheting: unchanged values stay valid
    def fail(message: str) -> None:
        errors.append(FieldError(path, message))

    if value is None:
        if not schema.get("nullable"):
            fail(f"Invalid value: \"null\": {path or 'value'} in body must be of type {schema.get('type', 'object')}: \"null\"")
        return

    if schema.get("x-kubernetes-int-or-string"):
        if not (isinstance(value, str) or _type_ok("integer", value)):
            fail(f"Invalid value: {_show(value)}: {path or 'value'} in body must be of type integer-or-string")
            return
    elif "type" in schema and not _type_ok(schema["type"], value):
        # apiextensions-apiserver validation.go kubeOpenAPIResultToFieldErrors: a type error is
        # field.TypeInvalid with kube-openapi's InvalidType value, the type it got, not the value.
        got = _show(json_type(value))
        fail(f"Invalid value: {got}: {path or 'value'} in body must be of type {schema['type']}: {got}")
        return

    if "enum" in schema and value not in schema["enum"]:
        supported = ", ".join(_show(v) for v in schema["enum"])
        fail(f"Unsupported value: {_show(value)}: supported values: {supported}")

    if isinstance(value, (int, float)) and not isinstance(value, bool):
        _check_number(schema, value, path, fail)
    if isinstance(value, str):
        _check_string(schema, value, path, fail)

    if isinstance(value, list):
        _check_list(schema, value, path, old, rules, errors, fail)
    if isinstance(value, dict):
        _check_object(schema, value, path, old, rules, errors, fail)

    _check_junctors(schema, value, path, fail)
    if rules:
        _check_rules(schema, value, path, old, errors)


def _check_number(schema: dict[str, Any], value: float, path: str, fail: _Fail) -> None:
    name = path or "value"
    if "minimum" in schema:
        low = schema["minimum"]
        if schema.get("exclusiveMinimum") and value <= low:
            fail(f"Invalid value: {_show(value)}: {name} in body should be greater than {low}")
        elif value < low:
            fail(f"Invalid value: {_show(value)}: {name} in body should be greater than or equal to {low}")
    if "maximum" in schema:
        high = schema["maximum"]
        if schema.get("exclusiveMaximum") and value >= high:
            fail(f"Invalid value: {_show(value)}: {name} in body should be less than {high}")
        elif value > high:
            fail(f"Invalid value: {_show(value)}: {name} in body should be less than or equal to {high}")


def _check_string(schema: dict[str, Any], value: str, path: str, fail: _Fail) -> None:
    name = path or "value"
    if "minLength" in schema and len(value) < schema["minLength"]:
        fail(f"Invalid value: {_show(value)}: {name} in body should be at least {schema['minLength']} chars long")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        fail(f"Too long: may not be more than {schema['maxLength']} bytes")
    if "pattern" in schema and not schema_regex(schema["pattern"]).search(value):
        fail(f"Invalid value: {_show(value)}: {name} in body should match '{schema['pattern']}'")
    if schema.get("format") == "date-time":
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            fail(f"Invalid value: {_show(value)}: {name} in body must be of type date-time")


def _check_list(
    schema: dict[str, Any], value: list[Any], path: str, old: Any, rules: bool, errors: list[FieldError], fail: _Fail
) -> None:
    name = path or "value"
    if "minItems" in schema and len(value) < schema["minItems"]:
        fail(f"Invalid value: {len(value)}: {name} in body should have at least {schema['minItems']} items")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        fail(f"Too many: {len(value)}: must have at most {schema['maxItems']} items")
    list_type = schema.get("x-kubernetes-list-type")
    if list_type == "set":
        seen: list[Any] = []
        for i, item in enumerate(value):
            if item in seen:
                errors.append(FieldError(join_path(path, i), f"Duplicate value: {_show(item)}"))
            seen.append(item)
    elif list_type == "map":
        keys = schema.get("x-kubernetes-list-map-keys", [])
        seen_keys: set[tuple[str, ...]] = set()
        for i, item in enumerate(value):
            if isinstance(item, dict):
                key = tuple(_show(item.get(k)) for k in keys)
                if key in seen_keys:
                    shown = ", ".join(f"{k}: {_show(item.get(k))}" for k in keys)
                    errors.append(FieldError(join_path(path, i), f"Duplicate value: map[{shown}]"))
                seen_keys.add(key)
    items = schema.get("items")
    if items is not None:
        old_items = _old_items(schema, old)
        for i, item in enumerate(value):
            _validate(items, item, join_path(path, i), old_items(item, i), rules, errors)


def _old_items(schema: dict[str, Any], old: Any) -> Callable[[Any, int], Any]:
    """Which old item corresponds to a new one: by map keys for list-type map, else none.

    Kubernetes correlates old and new list items only for map lists (and sets), so transition
    rules below other lists do not run.
    """
    if not isinstance(old, list) or schema.get("x-kubernetes-list-type") != "map":
        return lambda item, i: _MISSING
    keys = schema.get("x-kubernetes-list-map-keys", [])
    by_key = {tuple(_show(o.get(k)) for k in keys): o for o in old if isinstance(o, dict)}
    return lambda item, i: by_key.get(tuple(_show(item.get(k)) for k in keys), _MISSING) if isinstance(item, dict) else _MISSING


def _check_object(
    schema: dict[str, Any], value: dict[str, Any], path: str, old: Any, rules: bool, errors: list[FieldError], fail: _Fail
) -> None:
    name = path or "value"
    if "minProperties" in schema and len(value) < schema["minProperties"]:
        fail(f"Invalid value: {len(value)}: {name} in body should have at least {schema['minProperties']} properties")
    if "maxProperties" in schema and len(value) > schema["maxProperties"]:
        fail(f"Too many: {len(value)}: must have at most {schema['maxProperties']} items")
    for req in schema.get("required", []):
        if req not in value:
            errors.append(FieldError(join_path(path, req), "Required value"))
    props = schema.get("properties", {})
    extra = schema.get("additionalProperties")
    old_map = old if isinstance(old, dict) else {}
    for key, item in value.items():
        sub = props.get(key)
        if sub is not None:
            _validate(sub, item, join_path(path, key), old_map.get(key, _MISSING), rules, errors)
        elif isinstance(extra, dict):
            _validate(extra, item, join_path(path, f"[{key}]") if path else key, old_map.get(key, _MISSING), rules, errors)


def _check_junctors(schema: dict[str, Any], value: Any, path: str, fail: _Fail) -> None:
    """Value validations inside allOf/anyOf/oneOf/not (no rules, no type changes)."""
    int_or_string = [{"type": "integer"}, {"type": "string"}]
    if schema.get("x-kubernetes-int-or-string") and schema.get("anyOf") == int_or_string:
        return  # the type check above already did this
    for sub in schema.get("allOf", []):
        for err in validate(sub, value, path, rules=False):
            fail(err.message)
    if "anyOf" in schema and not any(not validate(s, value, path, rules=False) for s in schema["anyOf"]):
        fail(f"Invalid value: {_show(value)}: {path or 'value'} in body must match at least one schema in anyOf")
    if "oneOf" in schema:
        matches = sum(1 for s in schema["oneOf"] if not validate(s, value, path, rules=False))
        if matches != 1:
            fail(f"Invalid value: {_show(value)}: {path or 'value'} in body must match exactly one schema in oneOf")
    if "not" in schema and not validate(schema["not"], value, path, rules=False):
        fail(f"Invalid value: {_show(value)}: {path or 'value'} in body must not match the schema in not")


def _check_rules(schema: dict[str, Any], value: Any, path: str, old: Any, errors: list[FieldError]) -> None:
    for rule in schema.get("x-kubernetes-validations", []):
        expr = rule["rule"]
        transition = cel.is_transition_rule(expr)
        if transition and (old is _MISSING or old is None):
            continue
        holds = cel.evaluate(expr, value, old if transition else None)
        if not holds:
            field_path = rule.get("fieldPath", "")
            where = path + field_path if path else field_path.lstrip(".")
            message = rule.get("message") or f"failed rule: {expr}"
            errors.append(FieldError(where, f"Invalid value: {_rule_value(schema, value)}: {message}"))


def _rule_value(schema: dict[str, Any], value: Any) -> str:
    """What the API server shows as the value of a failed rule: the schema's type, not the value."""
    if "type" in schema:
        return _show(schema["type"])
    return '"object"' if isinstance(value, dict) else ('"array"' if isinstance(value, list) else _show(value))
