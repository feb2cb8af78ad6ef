"""The operator's own check of immutable fields (the CRD's CEL rules are the first line).

CEL transition rules need Kubernetes 1.25 or later and can be bypassed by a CRD installed by
hand; the operator therefore compares a stored spec with the current one itself, reading the
same `x-pinery-immutable` markers that the CRD generator turns into CEL.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pydantic import BaseModel

from pinery.schema.convert import to_structural
from pinery.schema.errors import join_path
from pinery.schema.markers import IMMUTABLE
from pinery.schema.prune import apply_defaults

_MISSING = object()


@lru_cache(maxsize=None)
def _schemas(model: type[BaseModel]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(pydantic JSON schema with the markers, structural schema for defaulting)."""
    schema = model.model_json_schema(mode="validation", by_alias=True)
    return schema, to_structural(schema)


def changed_immutable_fields(model: type[BaseModel], old_spec: dict[str, Any], new_spec: dict[str, Any]) -> list[str]:
    """Paths (relative to the spec, camelCase, e.g. `numNodes`, `pod.environment`) of the
    immutable fields whose value differs between two specs in their API form.

    Both specs are defaulted first, as the API server stores them, so an omitted field and its
    default are the same value.
    """
    schema, structural = _schemas(model)
    old = apply_defaults(structural, old_spec or {})
    new = apply_defaults(structural, new_spec or {})
    return _walk(schema, schema.get("$defs", {}), old, new, "")


def mutable_fields(model: type[BaseModel]) -> tuple[str, ...]:
    """Top-level spec fields (API names) without an immutability marker."""
    schema, _ = _schemas(model)
    return tuple(name for name, sub in schema.get("properties", {}).items() if IMMUTABLE not in sub)


def _resolve(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """Follow `$ref`s and unwrap `Optional[X]` (anyOf X/null), keeping the outer markers."""
    while True:
        if "$ref" in node:
            target = defs[node["$ref"].rsplit("/", 1)[-1]]
            node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
            continue
        options = [o for o in node.get("anyOf", []) if o.get("type") != "null"]
        if len(options) == 1 and "anyOf" in node:
            node = {**options[0], **{k: v for k, v in node.items() if k != "anyOf"}}
            continue
        return node


def _walk(schema: dict[str, Any], defs: dict[str, Any], old: Any, new: Any, path: str) -> list[str]:
    changed: list[str] = []
    props = _resolve(schema, defs).get("properties", {})
    old = old if isinstance(old, dict) else {}
    new = new if isinstance(new, dict) else {}
    for name, sub in props.items():
        sub = _resolve(sub, defs)
        here = join_path(path, name)
        before, after = old.get(name, _MISSING), new.get(name, _MISSING)
        mode = sub.get(IMMUTABLE)
        if mode == "value":
            if before != after:
                changed.append(here)
            continue
        if mode == "presence" and (before is _MISSING) != (after is _MISSING):
            changed.append(here)
            continue
        if "properties" in sub and isinstance(before, dict) and isinstance(after, dict):
            changed.extend(_walk(sub, defs, before, after, here))
    return changed
