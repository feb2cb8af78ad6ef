"""The object store: every object by storage key, namespace and name, and the global
resourceVersion counter.

Single-threaded by design: all reads and writes happen on the server's event loop, so there
are no locks. Indexes keep the hot paths proportional to what they return, not to the store:
objects per namespace, labels (for equality selectors), uids (ownerReference lookups) and
dependents per owner uid (garbage collection). Stored objects are never mutated; a change
stores a new dict and publishes a `WatchEvent`.
"""

from __future__ import annotations

import bisect
import copy
from typing import Any, Iterable, Iterator

from pinery.local.apiserver.selectors import FieldSelector, LabelSelector
from pinery.local.apiserver.watch_cache import StorageKey, WatchEvent, WatchHub

ObjectKey = tuple[StorageKey, str, str]  # (storage key, namespace or "", name)


def meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}


def object_key(key: StorageKey, obj: dict[str, Any]) -> ObjectKey:
    m = meta(obj)
    return key, m.get("namespace") or "", m["name"]


class Store:
    def __init__(self, resource_version: int = 0, history: int = 10_000) -> None:
        self.rv = resource_version
        self._objects: dict[StorageKey, dict[str, dict[str, dict[str, Any]]]] = {}
        self._labels: dict[StorageKey, dict[tuple[str, str], set[tuple[str, str]]]] = {}
        self._uids: dict[str, ObjectKey] = {}
        self._dependents: dict[str, set[ObjectKey]] = {}
        self._sorted_names: dict[tuple[StorageKey, str], list[str]] = {}
        self.hub = WatchHub(resource_version, history)

    # Reads

    def get(self, key: StorageKey, namespace: str, name: str) -> dict[str, Any] | None:
        return self._objects.get(key, {}).get(namespace or "", {}).get(name)

    def by_uid(self, uid: str) -> tuple[ObjectKey, dict[str, Any]] | None:
        where = self._uids.get(uid)
        if where is None:
            return None
        obj = self.get(*where)
        return (where, obj) if obj is not None else None

    def dependents(self, owner_uid: str) -> list[tuple[ObjectKey, dict[str, Any]]]:
        out = []
        for where in sorted(self._dependents.get(owner_uid, ())):
            obj = self.get(*where)
            if obj is not None:
                out.append((where, obj))
        return out

    def keys(self) -> list[StorageKey]:
        return list(self._objects)

    def namespaces_of(self, key: StorageKey) -> list[str]:
        return sorted(ns for ns, objs in self._objects.get(key, {}).items() if objs)

    def count(self, key: StorageKey, namespace: str | None = None) -> int:
        by_ns = self._objects.get(key, {})
        if namespace is not None:
            return len(by_ns.get(namespace, {}))
        return sum(len(v) for v in by_ns.values())

    def _names(self, key: StorageKey, namespace: str) -> list[str]:
        cached = self._sorted_names.get((key, namespace))
        if cached is None:
            cached = sorted(self._objects.get(key, {}).get(namespace, {}))
            self._sorted_names[(key, namespace)] = cached
        return cached

    def iterate(
        self,
        key: StorageKey,
        namespace: str | None = None,
        labels: LabelSelector | None = None,
        fields: FieldSelector | None = None,
        kind: str = "",
        after: tuple[str, str] | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Matching objects in (namespace, name) order, optionally after a (namespace, name)."""
        by_ns = self._objects.get(key, {})
        if fields:
            pinned_ns = fields.namespace()
            if pinned_ns is not None:
                if namespace is not None and namespace != pinned_ns:
                    return
                namespace = pinned_ns
        namespaces = [namespace] if namespace is not None else sorted(by_ns)
        candidates = self._label_candidates(key, labels)
        pinned_name = fields.name() if fields else None
        for ns in namespaces:
            if after is not None and ns < after[0]:
                continue
            objs = by_ns.get(ns)
            if not objs:
                continue
            if pinned_name is not None:
                names = [pinned_name] if pinned_name in objs else []
            elif candidates is not None:
                names = sorted(n for c_ns, n in candidates if c_ns == ns)
            else:
                names = self._names(key, ns)
            for name in names:
                if after is not None and (ns, name) <= after:
                    continue
                obj = objs.get(name)
                if obj is None:
                    continue
                m = meta(obj)
                if labels and not labels.matches(m.get("labels")):
                    continue
                if fields and not fields.matches(obj, kind):
                    continue
                yield obj

    def _label_candidates(self, key: StorageKey, labels: LabelSelector | None) -> set[tuple[str, str]] | None:
        if not labels:
            return None
        index = self._labels.get(key, {})
        best: set[tuple[str, str]] | None = None
        for label, values in labels.equalities():
            found: set[tuple[str, str]] = set()
            for value in values:
                found |= index.get((label, value), set())
            if best is None or len(found) < len(best):
                best = found
        return best

    # Writes

    def next_rv(self) -> int:
        self.rv += 1
        return self.rv

    def commit(self, event_type: str, key: StorageKey, obj: dict[str, Any], old: dict[str, Any] | None = None) -> WatchEvent:
        """Store (ADDED, MODIFIED) or remove (DELETED) an object that already carries its new
        resourceVersion, update the indexes and publish the event."""
        rv = int(meta(obj)["resourceVersion"])
        ns = meta(obj).get("namespace") or ""
        name = meta(obj)["name"]
        by_ns = self._objects.setdefault(key, {})
        objs = by_ns.setdefault(ns, {})
        previous = objs.get(name)
        names = self._sorted_names.get((key, ns))
        if event_type == "DELETED":
            objs.pop(name, None)
            if names is not None and previous is not None:
                names.pop(bisect.bisect_left(names, name))
            self._unindex(key, ns, name, previous)
        else:
            if previous is None and names is not None:
                bisect.insort(names, name)
            self._unindex(key, ns, name, previous)
            objs[name] = obj
            self._index(key, ns, name, obj)
        event = WatchEvent(event_type, rv, key, obj, previous if event_type == "MODIFIED" else None)
        self.hub.publish(event)
        return event

    def _index(self, key: StorageKey, ns: str, name: str, obj: dict[str, Any]) -> None:
        m = meta(obj)
        labels = self._labels.setdefault(key, {})
        for label, value in (m.get("labels") or {}).items():
            labels.setdefault((label, value), set()).add((ns, name))
        if m.get("uid"):
            self._uids[m["uid"]] = (key, ns, name)
        for ref in m.get("ownerReferences") or ():
            if ref.get("uid"):
                self._dependents.setdefault(ref["uid"], set()).add((key, ns, name))

    def _unindex(self, key: StorageKey, ns: str, name: str, obj: dict[str, Any] | None) -> None:
        if obj is None:
            return
        m = meta(obj)
        labels = self._labels.get(key, {})
        for label, value in (m.get("labels") or {}).items():
            members = labels.get((label, value))
            if members is not None:
                members.discard((ns, name))
                if not members:
                    del labels[(label, value)]
        if m.get("uid") and self._uids.get(m["uid"]) == (key, ns, name):
            del self._uids[m["uid"]]
        for ref in m.get("ownerReferences") or ():
            dependents = self._dependents.get(ref.get("uid", ""))
            if dependents is not None:
                dependents.discard((key, ns, name))
                if not dependents:
                    del self._dependents[ref["uid"]]

    def load(self, objects: Iterable[tuple[StorageKey, dict[str, Any]]]) -> None:
        """Fill the store from a snapshot, without events."""
        for key, obj in objects:
            m = meta(obj)
            ns, name = m.get("namespace") or "", m["name"]
            self._objects.setdefault(key, {}).setdefault(ns, {})[name] = obj
            self._index(key, ns, name, obj)
        self._sorted_names.clear()

    def snapshot(self) -> list[tuple[StorageKey, dict[str, Any]]]:
        """Every object (shared references: stored objects are never mutated)."""
        return [(key, obj) for key, by_ns in self._objects.items() for objs in by_ns.values() for obj in objs.values()]


def clone(obj: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(obj)
