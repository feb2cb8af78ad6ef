"""Server-side apply (`application/apply-patch+yaml`), approximated.

The applied configuration is merged into the live object with strategic-merge semantics (lists
with merge keys merge by key, other lists are replaced). Each field manager's applied fields are
recorded in `metadata.managedFields` (operation Apply, FieldsV1), so a field that a manager
applied before and leaves out now is removed, unless another manager's apply still sets it.
Not emulated: conflicts between managers (no 409 without `force`), ownership of fields set by
plain updates, and list-type annotations of CRD schemas (CRD lists are atomic here).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from pinery.local.apiserver.objectmeta import now
from pinery.local.apiserver.strategic import _merge_key, strategic_merge

Path = tuple[str, ...]
_IDENTITY = {("f:apiVersion",), ("f:kind",), ("f:metadata", "f:name"), ("f:metadata", "f:namespace")}


def field_set(kind: str, value: Any, path: Path = (), dotted: str = "") -> set[Path]:
    """The paths a configuration sets: maps by field, keyed list items by their merge key."""
    out: set[Path] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            sub = path + (f"f:{key}",)
            sub_dotted = f"{dotted}.{key}" if dotted else key
            if isinstance(item, dict) and item:
                out |= field_set(kind, item, sub, sub_dotted)
            elif isinstance(item, list) and _merge_key(kind, sub_dotted):
                merge_key = _merge_key(kind, sub_dotted)
                for element in item:
                    if isinstance(element, dict) and merge_key in element:
                        element_path = sub + ("k:" + json.dumps({merge_key: element[merge_key]}, separators=(",", ":")),)
                        out.add(element_path)
                        out |= field_set(kind, element, element_path, sub_dotted)
            else:
                out.add(sub)
    return out - _IDENTITY


def to_fields_v1(paths: set[Path]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for path in sorted(paths):
        node = tree
        for part in path:
            node = node.setdefault(part, {})
    # A list element that is set and has fields of its own is marked with ".".
    for path in paths:
        if path[-1].startswith("k:"):
            node = tree
            for part in path:
                node = node[part]
            if node:
                node["."] = {}
    return tree


def from_fields_v1(tree: dict[str, Any], path: Path = ()) -> set[Path]:
    out: set[Path] = set()
    for key, sub in tree.items():
        if key == ".":
            out.add(path)
            continue
        if isinstance(sub, dict) and any(k != "." for k in sub):
            out |= from_fields_v1(sub, path + (key,))
            if key.startswith("k:"):
                out.add(path + (key,))
        else:
            out.add(path + (key,))
    return out


def _remove(obj: Any, path: Path) -> None:
    node = obj
    for part in path[:-1]:
        node = _step(node, part)
        if node is None:
            return
    last = path[-1]
    if isinstance(node, dict) and last.startswith("f:"):
        node.pop(last[2:], None)
    elif isinstance(node, list) and last.startswith("k:"):
        wanted = json.loads(last[2:])
        node[:] = [e for e in node if not (isinstance(e, dict) and all(e.get(k) == v for k, v in wanted.items()))]


def _step(node: Any, part: str) -> Any:
    if isinstance(node, dict) and part.startswith("f:"):
        return node.get(part[2:])
    if isinstance(node, list) and part.startswith("k:"):
        wanted = json.loads(part[2:])
        return next((e for e in node if isinstance(e, dict) and all(e.get(k) == v for k, v in wanted.items())), None)
    return None


def apply_config(kind: str, live: dict[str, Any], config: dict[str, Any], manager: str, api_version: str) -> dict[str, Any]:
    """The object after `manager` applies `config` to `live` (both as the API shows them)."""
    live = copy.deepcopy(live)
    entries = list((live.get("metadata") or {}).get("managedFields") or [])
    mine = next((e for e in entries if e.get("manager") == manager and e.get("operation") == "Apply"), None)
    others: set[Path] = set()
    for entry in entries:
        if entry is not mine and entry.get("operation") == "Apply":
            others |= from_fields_v1(entry.get("fieldsV1") or {})
    previous = from_fields_v1(mine.get("fieldsV1") or {}) if mine else set()
    applied = field_set(kind, config)
    config = copy.deepcopy(config)
    config.get("metadata", {}).pop("managedFields", None)
    merged = strategic_merge(kind, live, config)
    for path in sorted(previous - applied - others, key=len, reverse=True):
        if not any(p[: len(path)] == path for p in applied):
            _remove(merged, path)
    entry = {
        "manager": manager,
        "operation": "Apply",
        "apiVersion": api_version,
        "time": now(),
        "fieldsType": "FieldsV1",
        "fieldsV1": to_fields_v1(applied),
    }
    kept = [e for e in entries if e is not mine]
    merged.setdefault("metadata", {})["managedFields"] = kept + [entry]
    return merged
