"""Pruning and defaulting, as the API server applies them to custom resources.

Order (as in the API server): nulls of non-nullable fields are dropped, unknown fields are
pruned (and reported, for `fieldValidation=Strict`), then defaults fill in absent fields.
"""

from __future__ import annotations

import copy
from typing import Any

from pinery.schema.errors import join_path

# Root properties the API server handles itself (ObjectMeta is never pruned by the schema).
_ROOT_PASSTHROUGH = ("apiVersion", "kind", "metadata")


def prune(schema: dict[str, Any], value: Any, path: str = "", *, root: bool = False) -> tuple[Any, list[str]]:
    """Return (pruned copy of value, paths of the unknown fields that were dropped)."""
    unknown: list[str] = []
    pruned = _prune(schema, copy.deepcopy(value), path, unknown, root)
    return pruned, unknown


def _prune(schema: dict[str, Any], value: Any, path: str, unknown: list[str], root: bool) -> Any:
    if isinstance(value, dict):
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        keep_unknown = schema.get("x-kubernetes-preserve-unknown-fields", False)
        out = {}
        for key, item in value.items():
            sub_path = join_path(path, key)
            if root and key in _ROOT_PASSTHROUGH:
                out[key] = item
                continue
            if props is not None and key in props:
                sub = props[key]
            elif isinstance(extra, dict):
                sub = extra
            elif extra is True or keep_unknown:
                out[key] = item
                continue
            else:
                unknown.append(sub_path)
                continue
            if item is None and not sub.get("nullable"):
                continue  # the API server drops nulls before defaulting
            out[key] = _prune(sub, item, sub_path, unknown, False)
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_prune(schema["items"], item, join_path(path, i), unknown, False) for i, item in enumerate(value)]
    return value


def apply_defaults(schema: dict[str, Any], value: Any) -> Any:
    """Return a copy of value with the schema's defaults filled in where fields are absent."""
    return _default(schema, copy.deepcopy(value))


def _default(schema: dict[str, Any], value: Any) -> Any:
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key, sub in props.items():
            if key not in value and "default" in sub:
                value[key] = copy.deepcopy(sub["default"])
            if key in value:
                value[key] = _default(sub, value[key])
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for key in value:
                if key not in props:
                    value[key] = _default(extra, value[key])
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        value = [_default(schema["items"], item) for item in value]
    return value
