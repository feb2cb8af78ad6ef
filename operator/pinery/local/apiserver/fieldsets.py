"""Typed operations on objects for server-side apply: field set, compare, merge, remove.

Each follows structured-merge-diff's typed package over a Shape (fieldschema.py):
- `field_set` is TypedValue.ToFieldSet (typed/tofieldset.go): scalars, atomic lists and maps,
  and list items are members; a map entry is a member when it is null or empty, or when its
  map is a granular map rather than a struct.
- `compare` is TypedValue.Compare (typed/compare.go): leaves differing are Modified, a node
  present on one side only is Added or Removed together with what is under it.
- `merge` is TypedValue.Merge (typed/merge.go): the applied value wins for leaves and atomic
  values, maps merge by key, associative lists and sets by item. Simplified: the merged list
  keeps the live order and appends new items (upstream interleaves to follow the applied order).
- `remove` is TypedValue.RemoveItems (typed/remove.go) for the paths given.
"""

from __future__ import annotations

import copy
from typing import Any

from pinery.local.apiserver import fieldpath as fp
from pinery.local.apiserver.fieldschema import KEY_DEFAULTS, ListType, Names, Shape

Path = fp.Path
_MISSING = object()


def element(list_type: ListType, item: Any, i: int) -> str:
    """The path element of a list item (listItemToPathElement)."""
    if list_type.kind == "map" and isinstance(item, dict):
        values = {}
        for k in list_type.keys:
            if k in item:
                values[k] = item[k]
            elif k in KEY_DEFAULTS:
                values[k] = KEY_DEFAULTS[k]
        if values:
            return fp.key(values)
    if list_type.kind == "set":
        return fp.value(item)
    return fp.index(i)


def _items(shape: Shape, names: Names, items: list[Any]) -> dict[str, Any]:
    list_type = shape.list_type(names)
    out: dict[str, Any] = {}
    for i, item in enumerate(items):
        out.setdefault(element(list_type, item, i), item)
    return out


def field_set(shape: Shape, obj: Any) -> set[Path]:
    out: set[Path] = set()
    _to_set(shape, obj, (), (), out)
    return out


def _to_set(shape: Shape, v: Any, path: Path, names: Names, out: set[Path]) -> None:
    if isinstance(v, dict):
        if shape.map_atomic(names):
            out.add(path)
            return
        struct = shape.is_struct(names)
        for k, child in v.items():
            sub, sub_names = path + (fp.field(k),), names + (k,)
            _to_set(shape, child, sub, sub_names, out)
            if child is None or child == {} or not struct:
                out.add(sub)
    elif isinstance(v, list):
        if shape.list_type(names).kind == "atomic":
            out.add(path)
            return
        for pe, item in _items(shape, names, v).items():
            _to_set(shape, item, path + (pe,), names, out)
            out.add(path + (pe,))
    else:
        out.add(path)


class Comparison:
    def __init__(self) -> None:
        self.added: set[Path] = set()
        self.removed: set[Path] = set()
        self.modified: set[Path] = set()


def compare(shape: Shape, lhs: Any, rhs: Any) -> Comparison:
    out = Comparison()
    _compare(shape, lhs, rhs, (), (), out)
    for s in (out.added, out.removed, out.modified):
        s.discard(())
    return out


def _compare(shape: Shape, lhs: Any, rhs: Any, path: Path, names: Names, out: Comparison) -> None:
    sample = rhs if lhs is _MISSING else lhs
    both = lhs is _MISSING or rhs is _MISSING or type(lhs) is type(rhs)
    if isinstance(sample, dict) and both and not shape.map_atomic(names) and (lhs or rhs):
        left = lhs if isinstance(lhs, dict) else {}
        right = rhs if isinstance(rhs, dict) else {}
        for k in list(left) + [k for k in right if k not in left]:
            _compare(shape, left.get(k, _MISSING), right.get(k, _MISSING), path + (fp.field(k),), names + (k,), out)
    elif isinstance(sample, list) and both and shape.list_type(names).kind != "atomic" and (lhs or rhs):
        left = _items(shape, names, lhs) if isinstance(lhs, list) else {}
        right = _items(shape, names, rhs) if isinstance(rhs, list) else {}
        for pe in list(left) + [pe for pe in right if pe not in left]:
            _compare(shape, left.get(pe, _MISSING), right.get(pe, _MISSING), path + (pe,), names, out)
    elif lhs is not _MISSING and rhs is not _MISSING and lhs != rhs:
        out.modified.add(path)
    if lhs is _MISSING:
        out.added.add(path)
    elif rhs is _MISSING:
        out.removed.add(path)


def merge(shape: Shape, lhs: Any, rhs: Any, names: Names = ()) -> Any:
    if isinstance(lhs, dict) and isinstance(rhs, dict) and not shape.map_atomic(names):
        out = dict(lhs)
        for k, v in rhs.items():
            out[k] = merge(shape, lhs[k], v, names + (k,)) if k in lhs else copy.deepcopy(v)
        return out
    if isinstance(lhs, list) and isinstance(rhs, list) and shape.list_type(names).kind != "atomic":
        left, right = _items(shape, names, lhs), _items(shape, names, rhs)
        merged = [merge(shape, item, right[pe], names) if pe in right else item for pe, item in left.items()]
        return merged + [copy.deepcopy(item) for pe, item in right.items() if pe not in left]
    return copy.deepcopy(rhs)


def remove(shape: Shape, obj: Any, path: Path, names: Names = ()) -> None:
    """Remove what `path` names from `obj`, in place."""
    if not path:
        return
    head, rest = path[0], path[1:]
    if isinstance(obj, dict) and head.startswith("f:"):
        name = head[2:]
        if name not in obj:
            return
        if rest:
            remove(shape, obj[name], rest, names + (name,))
        else:
            del obj[name]
    elif isinstance(obj, list):
        list_type = shape.list_type(names)
        for i, item in enumerate(obj):
            if element(list_type, item, i) == head:
                if rest:
                    remove(shape, item, rest, names)
                else:
                    del obj[i]
                return
