"""How server-side apply sees each field: struct or granular map, and a list's type.

Upstream reads these from the OpenAPI schema (structured-merge-diff schema.Map/List with
ElementRelationship atomic, associative or separable): `x-kubernetes-list-type`
(atomic, set, map), `x-kubernetes-list-map-keys`, `x-kubernetes-map-type` (atomic or
granular). Custom resources carry them in their structural schema; a field the schema does
not describe (x-kubernetes-preserve-unknown-fields) is deduced: maps granular, lists atomic
(typed/deduced). Built-ins are not served with full schemas here, so their lists come from the
strategic merge keys strategic.py uses (the same patchMergeKey upstream's OpenAPI publishes as
list-map-keys), with ports keyed by port and protocol as upstream's list-map-keys say; every
other built-in list is atomic, and the string maps below are granular maps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pinery.local.apiserver.strategic import MERGED_SCALAR_LISTS, _merge_key

Names = tuple[str, ...]  # field names from the root; list items add no name

# Lists whose upstream list-map-keys have more than the strategic merge key, with the
# defaults the keys take when omitted (protocol defaults to TCP).
_MULTI_KEYS = {
    ("Service", "spec.ports"): ("port", "protocol"),
    ("Pod", "spec.containers.ports"): ("containerPort", "protocol"),
    ("Pod", "spec.initContainers.ports"): ("containerPort", "protocol"),
}
KEY_DEFAULTS = {"protocol": "TCP"}
# Built-in fields that are maps of strings (each key owned on its own), not structs.
_STRING_MAPS = {"labels", "annotations", "nodeSelector", "limits", "requests", "capacity", "allocatable"}
_KIND_STRING_MAPS = {
    "ConfigMap": {"data", "binaryData"},
    "Secret": {"data", "stringData"},
    "Service": {"spec.selector"},
}


@dataclass(frozen=True)
class ListType:
    kind: str  # "atomic", "set" or "map"
    keys: tuple[str, ...] = ()


ATOMIC = ListType("atomic")


class Shape:
    """The apply-relevant shape of one kind: built-in tables, or a CRD's structural schema."""

    def __init__(self, kind: str, schema: dict[str, Any] | None = None) -> None:
        self.kind = kind
        self.schema = schema

    # Custom resources: walk the structural schema.
    def _node(self, names: Names) -> dict[str, Any] | None:
        node = self.schema
        for name in names:
            if node is None:
                return None
            while node.get("type") == "array" and "items" in node:
                node = node["items"]
            props = node.get("properties") or {}
            if name in props:
                node = props[name]
            elif isinstance(node.get("additionalProperties"), dict):
                node = node["additionalProperties"]
            else:
                return None
        return node

    def _value_node(self, names: Names) -> dict[str, Any] | None:
        """The schema of a map value at `names` (inside a list's items when it is a list)."""
        node = self._node(names)
        while node is not None and node.get("type") == "array" and "items" in node:
            node = node["items"]
        return node

    def _metadata(self, names: Names) -> bool:
        return bool(names) and names[0] == "metadata"

    def list_type(self, names: Names) -> ListType:
        dotted = ".".join(names)
        if self.schema is None or self._metadata(names):
            if dotted in MERGED_SCALAR_LISTS:
                return ListType("set")
            multi = _MULTI_KEYS.get((self._table_kind(), dotted))
            if multi:
                return ListType("map", multi)
            merge_key = _merge_key(self._table_kind(), dotted)
            return ListType("map", (merge_key,)) if merge_key else ATOMIC
        node = self._node(names)
        if not node:
            return ATOMIC
        list_type = node.get("x-kubernetes-list-type", "atomic")
        if list_type == "map":
            return ListType("map", tuple(node.get("x-kubernetes-list-map-keys") or ()))
        return ListType(list_type) if list_type == "set" else ATOMIC

    def _table_kind(self) -> str:
        return self.kind if self.schema is None else ""

    def is_struct(self, names: Names) -> bool:
        """A map whose fields are declared (its own path is not a member when it has fields)."""
        if not names:
            return True
        if self.schema is None or self._metadata(names):
            return names[-1] not in _STRING_MAPS and ".".join(names) not in _KIND_STRING_MAPS.get(self.kind, set())
        node = self._value_node(names)
        return bool(node and node.get("properties"))

    def map_atomic(self, names: Names) -> bool:
        if self.schema is None or self._metadata(names) or not names:
            return False
        node = self._value_node(names)
        return bool(node and node.get("x-kubernetes-map-type") == "atomic")
