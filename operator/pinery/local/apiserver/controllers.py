"""The controllers a cluster runs beside its API server, reduced to what clients can observe:

- CRDs: serve the versions of each CRD (discovery, routes), report `NamesAccepted` and
  `Established`, keep the `customresourcecleanup.apiextensions.k8s.io` finalizer, and on
  deletion delete every custom resource (each waits for its own finalizers) before the CRD goes;
- service accounts: a `default` ServiceAccount in every namespace;
- ClusterRole aggregation: a ClusterRole with an aggregationRule holds the rules of the
  ClusterRoles its selectors match (rbac_aggregation), re-computed on every ClusterRole event;
- garbage collection and namespace deletion (`gc`).

Watch events queue work items (deduplicated); one task works through them on the event loop.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
from typing import Any, Callable

from pinery.local.apiserver import errors, rbac_aggregation
from pinery.local.apiserver.apps_controllers import AppsControllers, apps_work
from pinery.local.apiserver.gc import GarbageCollector, NamespaceController, gc_work
from pinery.local.apiserver.objectmeta import is_deleting, now
from pinery.local.apiserver.operations import (
    CRD_KEY,
    KUBE_APISERVER,
    KUBE_CONTROLLER_MANAGER,
    NAMESPACE_KEY,
    Api,
    DeleteOptions,
    WriteOptions,
)
from pinery.local.apiserver.patch import APPLY
from pinery.local.apiserver.resources import types_from_crd
from pinery.local.apiserver.watch_cache import WatchEvent

log = logging.getLogger(__name__)
CRD_CLEANUP = "customresourcecleanup.apiextensions.k8s.io"
SERVICE_ACCOUNT_KEY = ("", "serviceaccounts")
CLUSTER_ROLE_KEY = ("rbac.authorization.k8s.io", "clusterroles")


def _condition(kind: str, reason: str, message: str) -> dict[str, Any]:
    return {"type": kind, "status": "True", "lastTransitionTime": now(), "reason": reason, "message": message}


def crd_status(crd: dict[str, Any], terminating: bool) -> dict[str, Any]:
    spec = crd.get("spec") or {}
    old = crd.get("status") or {}
    old_conditions = {c.get("type"): c for c in old.get("conditions") or []}
    wanted = [
        _condition("NamesAccepted", "NoConflicts", "no conflicts found"),
        _condition("Established", "InitialNamesAccepted", "the initial names have been accepted"),
    ]
    if terminating:
        wanted.append(_condition("Terminating", "InstanceDeletionInProgress", "CustomResource deletion is in progress"))
    conditions = []
    for cond in wanted:
        previous = old_conditions.get(cond["type"])
        conditions.append(previous if previous and previous.get("status") == cond["status"] and previous.get("reason") == cond["reason"] else cond)
    stored = list(old.get("storedVersions") or [])
    for version in spec.get("versions") or []:
        if version.get("storage") and version["name"] not in stored:
            stored.append(version["name"])
    return {"acceptedNames": dict(spec.get("names") or {}), "conditions": conditions, "storedVersions": stored}


class Controllers:
    def __init__(self, api: Api, on_types_changed: Callable[[], None] = lambda: None) -> None:
        self.api = api
        self.store = api.store
        self.gc = GarbageCollector(api)
        self.namespaces = NamespaceController(api)
        self.apps = AppsControllers(api)
        self.on_types_changed = on_types_changed
        self._queue: asyncio.Queue | None = None
        self._pending: set[tuple] = set()
        self._backlog: list[tuple] = []
        self._task: asyncio.Task | None = None
        self.store.hub.listeners.append(self.observe)

    # Queueing

    def enqueue(self, item: tuple) -> None:
        if item in self._pending:
            return
        self._pending.add(item)
        if self._queue is None:
            self._backlog.append(item)
        else:
            self._queue.put_nowait(item)

    def observe(self, event: WatchEvent) -> None:
        obj, m = event.obj, event.obj.get("metadata") or {}
        if event.key == CRD_KEY:
            self.enqueue(("crd", m["name"]))
        elif event.key == NAMESPACE_KEY:
            if event.type == "ADDED":
                self.enqueue(("serviceaccount", m["name"]))
            if event.type != "DELETED" and is_deleting(obj):
                self.enqueue(("namespace", m["name"]))
        elif event.key == SERVICE_ACCOUNT_KEY and event.type == "DELETED" and m.get("name") == "default":
            self.enqueue(("serviceaccount", m.get("namespace")))
        elif event.key == CLUSTER_ROLE_KEY:
            self.enqueue_aggregated_roles()
        for item in gc_work(event) + apps_work(event):
            self.enqueue(item)
        ns = m.get("namespace")
        if event.type == "DELETED" and ns:
            namespace = self.store.get(NAMESPACE_KEY, "", ns)
            if namespace is not None and is_deleting(namespace):
                self.enqueue(("namespace", ns))
        if event.type == "DELETED" and event.key != CRD_KEY:
            rtype = self.api.registry.for_storage(event.key)
            if rtype is not None and rtype.crd_name:
                crd = self.store.get(CRD_KEY, "", rtype.crd_name)
                if crd is not None and is_deleting(crd):
                    self.enqueue(("crd", rtype.crd_name))

    def resync(self) -> None:
        """Queue everything a restart must look at again."""
        for key, obj in self.store.snapshot():
            m = obj.get("metadata") or {}
            if key == CRD_KEY:
                self.enqueue(("crd", m["name"]))
            elif key == NAMESPACE_KEY:
                self.enqueue(("serviceaccount", m["name"]))
                if is_deleting(obj):
                    self.enqueue(("namespace", m["name"]))
            if m.get("ownerReferences"):
                self.enqueue(("check", key, m.get("namespace") or "", m["name"]))
            if is_deleting(obj) and m.get("uid"):
                self.enqueue(("owner", m["uid"]))
        for item in self.apps.resync():
            self.enqueue(item)
        self.enqueue_aggregated_roles()

    # Running

    def start(self) -> None:
        self._queue = asyncio.Queue()
        for item in self._backlog:
            self._queue.put_nowait(item)
        self._backlog.clear()
        self._task = asyncio.get_running_loop().create_task(self._run(), name="apiserver-controllers")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None

    async def _run(self) -> None:
        assert self._queue is not None
        while True:
            item = await self._queue.get()
            self._pending.discard(item)
            try:
                self.process(item)
            except errors.ApiError as exc:
                log.warning("controller work %r failed: %s", item, exc.message)
            except Exception:
                log.exception("controller work %r failed", item)
            await asyncio.sleep(0)  # a burst of work (a GC cascade) must not starve requests

    def drain(self) -> None:
        """Do all queued work now (synchronous callers and tests of the pure parts)."""
        while self._pending:
            if self._queue is not None and not self._queue.empty():
                item = self._queue.get_nowait()
            elif self._backlog:
                item = self._backlog.pop(0)
            else:
                break
            self._pending.discard(item)
            self.process(item)

    def process(self, item: tuple) -> None:
        kind = item[0]
        if kind == "crd":
            self.sync_crd(item[1])
        elif kind == "serviceaccount":
            self.ensure_service_account(item[1])
        elif kind == "namespace":
            self.namespaces.sweep(item[1])
        elif kind == "dependents":
            self.gc.process_dependents(item[1])
        elif kind == "owner":
            self.gc.process_owner(item[1])
        elif kind in ("deployment", "replicaset"):
            self.apps.process(item)
        elif kind == "clusterrole":
            self.aggregate_cluster_role(item[1])
        elif kind == "check":
            _, key, ns, name = item
            obj = self.store.get(key, ns, name)
            if obj is not None:
                self.gc.attempt_delete((key, ns, name), obj)

    # CRDs

    def sync_crd(self, name: str) -> None:
        registry = self.api.registry
        crd = self.store.get(CRD_KEY, "", name)
        crd_type = registry.lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        assert crd_type is not None
        if crd is None:
            if registry.crd_types(name):
                registry.set_crd(name, [])
                self.on_types_changed()
            return
        types = types_from_crd(crd)
        if types != registry.crd_types(name) or any(
            a.schema != b.schema or a.printer_columns != b.printer_columns for a, b in zip(types, registry.crd_types(name), strict=True)
        ):
            registry.set_crd(name, types)
            self.on_types_changed()
        terminating = is_deleting(crd)
        if terminating:
            remaining = self._delete_custom_resources(types)
            if remaining == 0:
                self._set_finalizers(crd_type, name, remove=CRD_CLEANUP)
        elif CRD_CLEANUP not in (crd["metadata"].get("finalizers") or []):
            self._set_finalizers(crd_type, name, add=CRD_CLEANUP)
        current = self.store.get(CRD_KEY, "", name)
        if current is None:
            return
        status = crd_status(current, terminating)
        if status != current.get("status"):
            new = copy.deepcopy(current)
            new["status"] = status
            self.api.write_update(crd_type, current, new, WriteOptions(field_manager=KUBE_APISERVER), subresource="status")

    def _delete_custom_resources(self, types) -> int:
        if not types:
            return 0
        key = types[0].storage_key
        for obj in list(self.store.iterate(key)):
            if is_deleting(obj):
                continue
            m = obj["metadata"]
            try:
                self.api.delete(types[0], m.get("namespace") or "", m["name"], DeleteOptions(propagation="Background"))
            except errors.ApiError as exc:
                if exc.code != 404:
                    raise
        return self.store.count(key)

    def _set_finalizers(self, crd_type, name: str, add: str | None = None, remove: str | None = None) -> None:
        current = self.store.get(CRD_KEY, "", name)
        if current is None:
            return
        new = copy.deepcopy(current)
        fins = [f for f in new["metadata"].get("finalizers") or [] if f != remove]
        if add and add not in fins:
            fins.append(add)
        new["metadata"]["finalizers"] = fins
        if not fins:
            del new["metadata"]["finalizers"]
        self.api.write_update(crd_type, current, new, WriteOptions(field_manager=KUBE_APISERVER))

    # Service accounts

    def ensure_service_account(self, namespace: str | None) -> None:
        if not namespace:
            return
        ns = self.store.get(NAMESPACE_KEY, "", namespace)
        if ns is None or is_deleting(ns) or self.store.get(SERVICE_ACCOUNT_KEY, namespace, "default") is not None:
            return
        rtype = self.api.registry.lookup("", "v1", "serviceaccounts")
        assert rtype is not None
        body = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": namespace}}
        try:
            self.api.create(rtype, namespace, body, WriteOptions(field_manager=KUBE_CONTROLLER_MANAGER))
        except errors.ApiError as exc:
            if exc.code not in (403, 409):
                raise

    # ClusterRole aggregation

    def enqueue_aggregated_roles(self) -> None:
        """Any ClusterRole event queues every aggregated ClusterRole (upstream's `enqueue`: the
        roles are few and which one selects which is not tracked)."""
        for role in self.store.iterate(CLUSTER_ROLE_KEY):
            if rbac_aggregation.is_aggregated(role):
                self.enqueue(("clusterrole", role["metadata"]["name"]))

    def aggregate_cluster_role(self, name: str) -> None:
        role = self.store.get(CLUSTER_ROLE_KEY, "", name)
        if role is None:
            return
        rules = rbac_aggregation.sync(role, list(self.store.iterate(CLUSTER_ROLE_KEY)))
        if rules is None:
            return
        rtype = self.api.registry.lookup("rbac.authorization.k8s.io", "v1", "clusterroles")
        assert rtype is not None
        opts = WriteOptions(field_manager=rbac_aggregation.FIELD_MANAGER, force=True)
        self.api.patch(rtype, "", name, APPLY, json.dumps(rbac_aggregation.apply_config(name, rules)).encode(), opts)
        current = self.store.get(CLUSTER_ROLE_KEY, "", name)
        if current is not None and rbac_aggregation.needs_write(current, rules):
            # Rules another manager owns stay through an apply that leaves them out: update them.
            new = copy.deepcopy(current)
            new["rules"] = rules
            self.api.write_update(rtype, current, new, WriteOptions(field_manager=rbac_aggregation.FIELD_MANAGER))
