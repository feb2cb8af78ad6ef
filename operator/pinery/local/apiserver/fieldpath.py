"""Field paths and sets in the FieldsV1 encoding of `metadata.managedFields`.

Follows structured-merge-diff's fieldpath package: a path is a tuple of elements written as
FieldsV1 writes them (`f:name` a field, `k:{"name":"x"}` a keyed list item, `v:"a"` a set
item, `i:0` an item by index); a set of paths is encoded as a tree where `.` marks a node
that is itself a member as well as the parent of members (fieldpath/serialize.go,
serialize-pe.go). `path_string` renders a path as conflicts show it (fieldpath/element.go
PathElement.String: `.spec.containers[name="x"].image`).
"""

from __future__ import annotations

import json
from typing import Any, Iterable

Path = tuple[str, ...]


def field(name: str) -> str:
    return "f:" + name


def key(values: dict[str, Any]) -> str:
    # Keys are sorted by name, as upstream's KeyByFields sorts them.
    return "k:" + json.dumps(dict(sorted(values.items())), separators=(",", ":"))


def value(v: Any) -> str:
    return "v:" + json.dumps(v, separators=(",", ":"), sort_keys=True)


def index(i: int) -> str:
    return f"i:{i}"


def to_fields_v1(paths: Iterable[Path]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    paths = set(paths)
    for path in paths:
        node = tree
        for part in path:
            node = node.setdefault(part, {})
    for path in paths:
        node = tree
        for part in path:
            node = node[part]
        if node and "." not in node:
            node["."] = {}
    return _sorted(tree)


def _sorted(tree: dict[str, Any]) -> dict[str, Any]:
    return {k: _sorted(tree[k]) for k in sorted(tree, key=_order)}


def from_fields_v1(tree: dict[str, Any] | None, prefix: Path = ()) -> set[Path]:
    out: set[Path] = set()
    for part, sub in (tree or {}).items():
        if part == ".":
            out.add(prefix)
        elif isinstance(sub, dict) and sub:
            out |= from_fields_v1(sub, prefix + (part,))
        else:
            out.add(prefix + (part,))
    return out


_KIND_ORDER = {"f": 0, "k": 1, "v": 2, "i": 3}


def _order(part: str) -> tuple[int, str]:
    # PathElement.Less: field names, then keys, then values, then indexes.
    return (_KIND_ORDER.get(part[:1], -1), part)


def iterate(paths: Iterable[Path]) -> list[Path]:
    """Paths in Set.Iterate order: a level's members (sorted), then each child's, recursively."""
    paths = set(paths)
    out: list[Path] = []

    def walk(prefix: Path) -> None:
        depth = len(prefix)
        here = [p for p in paths if len(p) == depth + 1 and p[:depth] == prefix]
        out.extend(sorted(here, key=lambda p: _order(p[-1])))
        children = {p[depth] for p in paths if len(p) > depth + 1 and p[:depth] == prefix}
        for child in sorted(children, key=_order):
            walk(prefix + (child,))

    walk(())
    return out


def element_string(part: str) -> str:
    kind, raw = part[:1], part[2:]
    if kind == "f":
        return "." + raw
    if kind == "k":
        items = json.loads(raw)
        return "[" + ",".join(f"{k}={json.dumps(v)}" for k, v in items.items()) + "]"
    if kind == "v":
        return f"[={raw}]"
    return f"[{raw}]"


def path_string(path: Path) -> str:
    return "".join(element_string(p) for p in path)


def has_prefix(path: Path, prefix: Path) -> bool:
    return path[: len(prefix)] == prefix
