"""JSON merge patch (RFC 7386) and JSON patch (RFC 6902), with the API server's answers.

A JSON patch that does not apply (a failed `test`, a missing path) is 422, never 500: Kopf's
optimistic locking relies on a failed `test` of `/metadata/resourceVersion` being 422.
The strategic merge patch is in `strategic`, server-side apply in `apply`.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from pinery.local.apiserver.errors import ApiError, bad_request, unprocessable

MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"
APPLY_CBOR = "application/apply-patch+cbor"
PATCH_TYPES = (JSON_PATCH, MERGE, STRATEGIC, APPLY)


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, null removes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise unprocessable(f'JSON Pointer "{path}" must start with "/"')
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _missing(op: str, path: str) -> ApiError:
    return unprocessable(f"{op} operation does not apply: doc is missing path: \"{path}\": missing value")


def _walk(doc: Any, parts: list[str], op: str, path: str) -> Any:
    """The node at `parts`, or 422 when a step is missing."""
    node = doc
    for part in parts:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise _missing(op, path)
    return node


def _parent(doc: Any, parts: list[str], op: str, path: str) -> tuple[Any, str]:
    return _walk(doc, parts[:-1], op, path), parts[-1]


def _get(doc: Any, path: str, op: str) -> Any:
    return _walk(doc, _pointer(path), op, path)


def _add(doc: Any, path: str, value: Any, op: str = "add") -> Any:
    parts = _pointer(path)
    if not parts:
        return value
    parent, key = _parent(doc, parts, op, path)
    if isinstance(parent, dict):
        parent[key] = value
    elif isinstance(parent, list):
        if key == "-":
            parent.append(value)
        elif key.isdigit() and int(key) <= len(parent):
            parent.insert(int(key), value)
        else:
            raise unprocessable(f"add operation does not apply: doc is missing path: \"{path}\": invalid index")
    else:
        raise _missing(op, path)
    return doc


def _remove(doc: Any, path: str, op: str = "remove") -> Any:
    parts = _pointer(path)
    if not parts:
        raise unprocessable(f"{op} operation does not apply: cannot remove the whole document")
    parent, key = _parent(doc, parts, op, path)
    if isinstance(parent, dict) and key in parent:
        return parent.pop(key)
    if isinstance(parent, list) and key.isdigit() and int(key) < len(parent):
        return parent.pop(int(key))
    raise _missing(op, path)


def json_patch(target: Any, ops: Any) -> Any:
    """Apply RFC 6902 operations to a copy of target."""
    if not isinstance(ops, list):
        raise bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    doc = copy.deepcopy(target)
    for op in ops:
        if not isinstance(op, dict) or "op" not in op:
            raise bad_request(f"the server rejected our request due to an error in our request: invalid patch operation {json.dumps(op)}")
        kind, path = op["op"], op.get("path", "")
        if not isinstance(path, str):
            raise bad_request("the server rejected our request due to an error in our request: path must be a string")
        if kind in ("add", "replace", "test") and "value" not in op:
            raise bad_request(f"the server rejected our request due to an error in our request: {kind} operation missing value")
        if kind == "add":
            doc = _add(doc, path, copy.deepcopy(op["value"]))
        elif kind == "remove":
            _remove(doc, path)
        elif kind == "replace":
            _get(doc, path, "replace")
            parts = _pointer(path)
            if not parts:
                doc = copy.deepcopy(op["value"])
            else:
                parent, key = _parent(doc, parts, "replace", path)
                parent[int(key) if isinstance(parent, list) else key] = copy.deepcopy(op["value"])
        elif kind == "move":
            value = _get(doc, op.get("from", ""), "move")
            _remove(doc, op.get("from", ""), "move")
            doc = _add(doc, path, value, "move")
        elif kind == "copy":
            value = copy.deepcopy(_get(doc, op.get("from", ""), "copy"))
            doc = _add(doc, path, value, "copy")
        elif kind == "test":
            try:
                found = _get(doc, path, "test")
            except ApiError:
                found = None
            if found != op["value"]:
                raise unprocessable(f"testing value {path} failed: test failed")
        else:
            raise bad_request(f"the server rejected our request due to an error in our request: unexpected kind of operation: {kind}")
    return doc
