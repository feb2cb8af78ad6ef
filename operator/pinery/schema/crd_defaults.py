"""Defaults in a CRD schema must validate and be pruned.

apiextensions-apiserver `pkg/apiserver/schema/defaulting/validation.go` ValidateDefaults: along
properties and items (never additionalProperties, where defaults are forbidden), each default
must survive pruning unchanged ("must not have unknown fields") and validate against the schema
it sits in, CEL rules included. Defaults inside TypeMeta/ObjectMeta of an embedded resource
(validated there as metadata) are not checked here; defaults in the root metadata are
forbidden by the per-node rules anyway.
"""

from __future__ import annotations

from typing import Any

from pinery.schema import field
from pinery.schema.errors import FieldError
from pinery.schema.field import GoRepr
from pinery.schema.gorepr import json_value
from pinery.schema.prune import prune
from pinery.schema.value_validation import validate


def _bad_value(value: Any) -> Any:
    return GoRepr(json_value(value)) if isinstance(value, (dict, list)) else value


def validate_defaults(schema: dict[str, Any], path: str, require_pruned: bool) -> list[FieldError]:
    return _walk(schema, path, True, False, require_pruned)


def _walk(node: Any, path: str, root: bool, inside_meta: bool, require_pruned: bool) -> list[FieldError]:
    if not isinstance(node, dict):
        return []
    embedded = root or bool(node.get("x-kubernetes-embedded-resource"))
    if node.get("x-kubernetes-embedded-resource"):
        inside_meta = False
    out: list[FieldError] = []
    if "default" in node and node["default"] is not None and not inside_meta:
        default = node["default"]
        where = f"{path}.default"
        if require_pruned:
            pruned, _ = prune(node, default, root=embedded)
            if pruned != default:
                out.append(field.invalid(where, _bad_value(default), "must not have unknown fields"))
        out += validate(node, default, where)
    items = node.get("items")
    if isinstance(items, dict):
        out += _walk(items, f"{path}.items", False, inside_meta, require_pruned)
    props = node.get("properties") or {}
    for name in sorted(props):
        sub_meta = inside_meta or (embedded and name in ("metadata", "apiVersion", "kind"))
        out += _walk(props[name], f"{path}.properties[{name}]", False, sub_meta, require_pruned)
    return out
