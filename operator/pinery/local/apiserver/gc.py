"""Garbage collection by ownerReferences, and namespace deletion.

As the kube-controller-manager's garbage collector does:
- background: once an owner is gone, a dependent none of whose owners remain is deleted; a
  dependent that still has a live owner only loses the references to the gone ones;
- foreground: an owner marked with the `foregroundDeletion` finalizer has its dependents deleted
  (in foreground too), and loses the finalizer once no dependent with `blockOwnerDeletion`
  remains;
- orphan: an owner marked with the `orphan` finalizer has its references removed from every
  dependent, then loses the finalizer;
- a dependent created with owners that do not exist is deleted.
The namespace controller deletes everything in a terminating namespace (objects with
finalizers wait for them) and, when nothing is left, removes the `kubernetes` finalizer, which
removes the namespace.

Work is queued from watch events and done on the event loop by `Controllers`, through the same
`Api` calls clients use.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from pinery.local.apiserver import errors
from pinery.local.apiserver.objectmeta import finalizers, is_deleting
from pinery.local.apiserver.operations import (
    FOREGROUND,
    KUBE_CONTROLLER_MANAGER,
    NAMESPACE_KEY,
    ORPHAN,
    Api,
    DeleteOptions,
    WriteOptions,
)
from pinery.local.apiserver.store import ObjectKey
from pinery.local.apiserver.watch_cache import WatchEvent

log = logging.getLogger(__name__)


def owner_refs(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return list((obj.get("metadata") or {}).get("ownerReferences") or [])


def gc_work(event: WatchEvent) -> list[tuple]:
    """What the garbage collector must look at after a change."""
    obj, m = event.obj, event.obj.get("metadata") or {}
    uid = m.get("uid")
    work: list[tuple] = []
    if event.type == "DELETED":
        if uid:
            work.append(("dependents", uid))
        work += [("owner", ref["uid"]) for ref in owner_refs(obj) if ref.get("uid")]
        return work
    refs = owner_refs(obj)
    old_refs = owner_refs(event.old) if event.old else None
    if refs and refs != old_refs:
        work.append(("check", event.key, m.get("namespace") or "", m["name"]))
    fins = finalizers(obj)
    if is_deleting(obj) and (ORPHAN in fins or FOREGROUND in fins) and uid:
        work.append(("owner", uid))
    return work


class GarbageCollector:
    def __init__(self, api: Api) -> None:
        self.api = api
        self.store = api.store

    def _rtype(self, key: tuple[str, str]):
        return self.api.registry.for_storage(key)

    def _classify(self, obj: dict[str, Any]) -> tuple[list[dict], list[dict], list[dict]]:
        """(solid, dangling, waiting-for-dependents) owner references of an object."""
        solid, dangling, waiting = [], [], []
        ns = (obj.get("metadata") or {}).get("namespace") or ""
        for ref in owner_refs(obj):
            found = self.store.by_uid(ref.get("uid", ""))
            if found is None:
                dangling.append(ref)
                continue
            (_, owner_ns, _), owner = found
            if owner_ns and owner_ns != ns:
                dangling.append(ref)  # a namespaced owner must be in the dependent's namespace
            elif is_deleting(owner) and FOREGROUND in finalizers(owner):
                waiting.append(ref)
            else:
                solid.append(ref)
        return solid, dangling, waiting

    def attempt_delete(self, where: ObjectKey, obj: dict[str, Any]) -> None:
        if not owner_refs(obj):
            return
        rtype = self._rtype(where[0])
        if rtype is None:
            return
        solid, dangling, waiting = self._classify(obj)
        if solid:
            if dangling or waiting:
                drop = {r["uid"] for r in dangling + waiting}
                self._set_refs(rtype, obj, [r for r in owner_refs(obj) if r.get("uid") not in drop])
            return
        if is_deleting(obj):
            return
        policy = "Foreground" if waiting else "Background"
        m = obj["metadata"]
        try:
            self.api.delete(rtype, m.get("namespace") or "", m["name"], DeleteOptions(propagation=policy, uid=m.get("uid")))
        except errors.ApiError as exc:
            if exc.code not in (404, 409):
                raise

    def _set_refs(self, rtype, obj: dict[str, Any], refs: list[dict[str, Any]]) -> None:
        new = copy.deepcopy(obj)
        if refs:
            new["metadata"]["ownerReferences"] = refs
        else:
            new["metadata"].pop("ownerReferences", None)
        try:
            self.api.write_update(rtype, obj, new, WriteOptions(field_manager=KUBE_CONTROLLER_MANAGER))
        except errors.ApiError as exc:
            if exc.code not in (404, 409):
                raise

    def process_dependents(self, owner_uid: str) -> None:
        for where, dependent in self.store.dependents(owner_uid):
            self.attempt_delete(where, dependent)

    def process_owner(self, owner_uid: str) -> None:
        """An owner being deleted in foreground or with orphaning, or a dependent of one gone."""
        found = self.store.by_uid(owner_uid)
        if found is None:
            self.process_dependents(owner_uid)
            return
        (key, _, _), owner = found
        fins = finalizers(owner)
        if not is_deleting(owner):
            return
        rtype = self._rtype(key)
        if rtype is None:
            return
        dependents = self.store.dependents(owner_uid)
        if ORPHAN in fins:
            for where, dependent in dependents:
                dependent_type = self._rtype(where[0])
                if dependent_type is not None:
                    kept = [r for r in owner_refs(dependent) if r.get("uid") != owner_uid]
                    self._set_refs(dependent_type, dependent, kept)
            self._drop_finalizer(rtype, owner_uid, ORPHAN)
        elif FOREGROUND in fins:
            for where, dependent in dependents:
                self.attempt_delete(where, dependent)
            blocking = [
                d for _, d in self.store.dependents(owner_uid)
                if any(r.get("uid") == owner_uid and r.get("blockOwnerDeletion") for r in owner_refs(d))
            ]
            if not blocking:
                self._drop_finalizer(rtype, owner_uid, FOREGROUND)

    def _drop_finalizer(self, rtype, uid: str, finalizer: str) -> None:
        found = self.store.by_uid(uid)
        if found is None:
            return
        _, owner = found
        new = copy.deepcopy(owner)
        new["metadata"]["finalizers"] = [f for f in finalizers(owner) if f != finalizer]
        if not new["metadata"]["finalizers"]:
            del new["metadata"]["finalizers"]
        try:
            self.api.write_update(rtype, owner, new, WriteOptions(field_manager=KUBE_CONTROLLER_MANAGER))
        except errors.ApiError as exc:
            if exc.code not in (404, 409):
                raise


class NamespaceController:
    def __init__(self, api: Api) -> None:
        self.api = api
        self.store = api.store

    def sweep(self, name: str) -> None:
        ns = self.store.get(NAMESPACE_KEY, "", name)
        if ns is None or not is_deleting(ns):
            return
        left = 0
        for key in self.store.keys():
            rtype = self.api.registry.for_storage(key)
            if rtype is None or not rtype.namespaced or self.store.count(key, name) == 0:
                continue
            for obj in list(self.store.iterate(key, name)):
                if is_deleting(obj):
                    continue
                try:
                    self.api.delete(rtype, name, obj["metadata"]["name"], DeleteOptions(propagation="Background"))
                except errors.ApiError as exc:
                    if exc.code != 404:
                        raise
            left += self.store.count(key, name)
        if left == 0:
            kept = [f for f in (ns.get("spec") or {}).get("finalizers") or [] if f != "kubernetes"]
            self.api.finalize_namespace(name, {"spec": {"finalizers": kept}}, WriteOptions(field_manager=KUBE_CONTROLLER_MANAGER))
