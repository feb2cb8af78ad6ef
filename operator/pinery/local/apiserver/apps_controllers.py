"""The Deployment and ReplicaSet controllers, reduced to what clients observe.

ReplicaSet (kubernetes `pkg/controller/replicaset/replica_set.go`, `manageReplicas` and
`calculateStatus`): keeps `spec.replicas` active pods it controls (generateName `<rs>-`, the
template's labels and annotations, a controller ownerReference), deleting the least useful
first (not ready before ready, newest first: a reduced `getPodsToDelete`), and reports
replicas, fullyLabeledReplicas, readyReplicas, availableReplicas and observedGeneration.

Deployment (`pkg/controller/deployment/sync.go`, `rolling.go`, `recreate.go`, `progress.go`):
one ReplicaSet per pod template, named `<deployment>-<pod-template-hash>`; the new one gets the
next `deployment.kubernetes.io/revision` (a rollback re-uses the old ReplicaSet and gives it the
next revision); RollingUpdate scales the new one up within maxSurge and the old ones down within
maxUnavailable (`reconcileNewReplicaSet`, `reconcileOldReplicaSets` with
`cleanupUnhealthyReplicas` and `scaleDownOldReplicaSetsForRollingUpdate`); Recreate scales the
old ones to zero and waits for their pods before scaling up; old ReplicaSets beyond
`revisionHistoryLimit` are deleted; status and the Available/Progressing conditions as upstream
computes them. Work items come from watch events of pods, ReplicaSets and Deployments.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from pinery.local.apiserver import apps_policy as policy
from pinery.local.apiserver import errors
from pinery.local.apiserver.objectmeta import is_deleting, now
from pinery.local.apiserver.operations import KUBE_CONTROLLER_MANAGER, Api, WriteOptions
from pinery.local.apiserver.watch_cache import WatchEvent

log = logging.getLogger(__name__)
DEPLOYMENTS = ("apps", "deployments")
REPLICASETS = ("apps", "replicasets")
PODS = ("", "pods")


def _controller_of(obj: dict[str, Any], kind: str) -> str | None:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller") and ref.get("kind") == kind and ref.get("apiVersion") == "apps/v1":
            return ref.get("name")
    return None


def _owned_by(obj: dict[str, Any], owner: dict[str, Any]) -> bool:
    uid = owner["metadata"].get("uid")
    return any(r.get("controller") and r.get("uid") == uid for r in (obj.get("metadata") or {}).get("ownerReferences") or [])


def _controller_ref(owner: dict[str, Any]) -> dict[str, Any]:
    m = owner["metadata"]
    return {"apiVersion": "apps/v1", "kind": owner["kind"], "name": m["name"], "uid": m["uid"],
            "controller": True, "blockOwnerDeletion": True}


def apps_work(event: WatchEvent) -> list[tuple]:
    """Work items an event causes: the object's own sync and its controller's."""
    m = event.obj.get("metadata") or {}
    ns, name = m.get("namespace") or "", m.get("name")
    if event.key == DEPLOYMENTS:
        return [("deployment", ns, name)]
    if event.key == REPLICASETS:
        out = [("replicaset", ns, name)]
        owner = _controller_of(event.obj, "Deployment")
        return out + ([("deployment", ns, owner)] if owner else [])
    if event.key == PODS:
        owner = _controller_of(event.obj, "ReplicaSet")
        return [("replicaset", ns, owner)] if owner else []
    return []


def pod_ready(pod: dict[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _active(pod: dict[str, Any]) -> bool:
    """controller.IsPodActive: not finished and not being deleted."""
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed") and not is_deleting(pod)


def _revision(rs: dict[str, Any]) -> int:
    try:
        return int(((rs.get("metadata") or {}).get("annotations") or {}).get(policy.REVISION, "0"))
    except ValueError:
        return 0


def _created(obj: dict[str, Any]) -> tuple[str, str]:
    m = obj.get("metadata") or {}
    return (m.get("creationTimestamp") or "", m.get("name") or "")


class AppsControllers:
    def __init__(self, api: Api) -> None:
        self.api = api
        self.store = api.store

    def _type(self, plural: str, group: str = "apps"):
        rtype = self.api.registry.lookup(group, "v1", plural)
        assert rtype is not None
        return rtype

    def process(self, item: tuple) -> None:
        kind, ns, name = item
        if kind == "replicaset":
            self.sync_replicaset(ns, name)
        elif kind == "deployment":
            self.sync_deployment(ns, name)

    def resync(self) -> list[tuple]:
        out = []
        for key, obj in self.store.snapshot():
            if key in (DEPLOYMENTS, REPLICASETS):
                m = obj["metadata"]
                out.append(("deployment" if key == DEPLOYMENTS else "replicaset", m.get("namespace") or "", m["name"]))
        return out

    # --- ReplicaSets ----------------------------------------------------------------------------

    def sync_replicaset(self, ns: str, name: str) -> None:
        rs = self.store.get(REPLICASETS, ns, name)
        if rs is None:
            return
        spec = rs.get("spec") or {}
        pods = [p for p in self.store.iterate(PODS) if (p["metadata"].get("namespace") == ns and _owned_by(p, rs))]
        active = [p for p in pods if _active(p)]
        if not is_deleting(rs):
            diff = len(active) - policy.replicas(rs)
            if diff < 0:
                for _ in range(-diff):
                    active.append(self._create_pod(rs))
            elif diff > 0:
                # Not ready before ready, then newest first (a reduced ActivePodsWithRanks).
                ranked = sorted(active, key=lambda p: _created(p)[0], reverse=True)
                ranked.sort(key=pod_ready)
                for pod in ranked[:diff]:
                    self._delete_pod(pod)
                active = ranked[diff:]
        selector_labels = (spec.get("template") or {}).get("metadata", {}).get("labels") or {}
        ready = [p for p in active if pod_ready(p)]
        status = {
            "replicas": len(active),
            "fullyLabeledReplicas": sum(1 for p in active if all((p["metadata"].get("labels") or {}).get(k) == v for k, v in selector_labels.items())),
            "readyReplicas": len(ready),
            "availableReplicas": len(ready),  # minReadySeconds is not waited for
            "observedGeneration": rs["metadata"].get("generation", 1),
        }
        self._write_status(self._type("replicasets"), ns, name, {k: v for k, v in status.items() if v or k in ("replicas", "observedGeneration")})

    def _create_pod(self, rs: dict[str, Any]) -> dict[str, Any]:
        template = copy.deepcopy((rs.get("spec") or {}).get("template") or {})
        meta = template.get("metadata") or {}
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "generateName": rs["metadata"]["name"] + "-",
                "namespace": rs["metadata"]["namespace"],
                "labels": meta.get("labels") or {},
                "ownerReferences": [_controller_ref(rs)],
                **({"annotations": meta["annotations"]} if meta.get("annotations") else {}),
            },
            "spec": template.get("spec") or {},
        }
        return self.api.create(self._type("pods", ""), rs["metadata"]["namespace"], pod, WriteOptions(field_manager=KUBE_CONTROLLER_MANAGER))

    def _delete_pod(self, pod: dict[str, Any]) -> None:
        from pinery.local.apiserver.operations import DeleteOptions

        try:
            self.api.delete(self._type("pods", ""), pod["metadata"]["namespace"], pod["metadata"]["name"], DeleteOptions())
        except errors.ApiError as exc:
            if exc.code != 404:
                raise

    def _write_status(self, rtype, ns: str, name: str, status: dict[str, Any]) -> None:
        current = self.store.get(rtype.storage_key, ns, name)
        if current is None or current.get("status") == status:
            return
        new = copy.deepcopy(current)
        new["status"] = status
        self.api.write_update(rtype, current, new, WriteOptions(field_manager=KUBE_CONTROLLER_MANAGER), subresource="status")

    # --- Deployments ----------------------------------------------------------------------------

    def sync_deployment(self, ns: str, name: str) -> None:
        d = self.store.get(DEPLOYMENTS, ns, name)
        if d is None or is_deleting(d):
            return
        spec = d.get("spec") or {}
        owned = sorted((rs for rs in self.store.iterate(REPLICASETS) if rs["metadata"].get("namespace") == ns and _owned_by(rs, d)), key=_created)
        new_rs = next((rs for rs in owned if policy.equal_ignore_hash((rs.get("spec") or {}).get("template") or {}, spec.get("template") or {})), None)
        old = [rs for rs in owned if rs is not new_rs]
        created = False
        if not spec.get("paused"):
            if new_rs is None:
                new_rs = self._create_new_rs(d, old)
                created = new_rs is not None
                if new_rs is None:
                    return  # a hash collision raised collisionCount; the status update re-queues
            else:
                new_rs = self._bump_revision(d, new_rs, old)
            self._set_deployment_revision(d, new_rs)
            if (spec.get("strategy") or {}).get("type") == "Recreate":
                self._recreate(d, new_rs, old)
            else:
                self._rolling(d, new_rs, old)
        d = self.store.get(DEPLOYMENTS, ns, name) or d
        fetched = [self.store.get(REPLICASETS, ns, rs["metadata"]["name"]) for rs in ([new_rs] if new_rs else []) + old]
        all_rs = [rs for rs in fetched if rs is not None]
        new_name = new_rs["metadata"]["name"] if new_rs else None
        new_rs = next((rs for rs in all_rs if new_name is not None and rs["metadata"]["name"] == new_name), None)
        status = self._deployment_status(d, new_rs, all_rs, created)
        if policy.deployment_complete(d, status):
            self._cleanup(d, [rs for rs in all_rs if rs is not new_rs])
        self._write_status(self._type("deployments"), ns, name, status)

    def _create_new_rs(self, d: dict[str, Any], old: list[dict[str, Any]]) -> dict[str, Any] | None:
        spec = d["spec"]
        collisions = (d.get("status") or {}).get("collisionCount")
        template = copy.deepcopy(spec.get("template") or {})
        hash_ = policy.template_hash(template, collisions)
        template.setdefault("metadata", {}).setdefault("labels", {})[policy.HASH_LABEL] = hash_
        selector = copy.deepcopy(spec.get("selector") or {})
        selector.setdefault("matchLabels", {})[policy.HASH_LABEL] = hash_
        revision = max((_revision(rs) for rs in old), default=0) + 1
        annotations = {k: v for k, v in ((d["metadata"].get("annotations") or {}).items())
                       if k not in (policy.REVISION, "kubectl.kubernetes.io/last-applied-configuration")}
        annotations.update({policy.REVISION: str(revision), policy.DESIRED_REPLICAS: str(policy.replicas(d)),
                            policy.MAX_REPLICAS: str(policy.replicas(d) + policy.max_surge(d))})
        rs: dict[str, Any] = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{d['metadata']['name']}-{hash_}",
                "namespace": d["metadata"]["namespace"],
                "labels": dict(template["metadata"]["labels"]),
                "annotations": annotations,
                "ownerReferences": [_controller_ref(d)],
            },
            "spec": {"replicas": 0, "minReadySeconds": spec.get("minReadySeconds", 0), "selector": selector, "template": template},
        }
        rs["spec"]["replicas"] = policy.new_rs_new_replicas(d, old + [rs], rs)
        try:
            return self.api.create(self._type("replicasets"), d["metadata"]["namespace"], rs, WriteOptions(field_manager=KUBE_CONTROLLER_MANAGER))
        except errors.ApiError as exc:
            if exc.code != 409:
                raise
        # The name is taken by a ReplicaSet of another template: count the collision (sync.go).
        status = copy.deepcopy(d.get("status") or {})
        status["collisionCount"] = int(collisions or 0) + 1
        self._write_status(self._type("deployments"), d["metadata"]["namespace"], d["metadata"]["name"], status)
        return None

    def _bump_revision(self, d: dict[str, Any], rs: dict[str, Any], old: list[dict[str, Any]]) -> dict[str, Any]:
        """A template seen before (rollback, undo) becomes the newest revision (SetNewReplicaSetAnnotations)."""
        wanted = max((_revision(o) for o in old), default=0) + 1
        current = _revision(rs)
        if current >= wanted:
            return rs
        new = copy.deepcopy(rs)
        annotations = new["metadata"].setdefault("annotations", {})
        history = [h for h in annotations.get(policy.REVISION_HISTORY, "").split(",") if h]
        if current:
            history.append(str(current))
        annotations[policy.REVISION_HISTORY] = ",".join(history)
        annotations[policy.REVISION] = str(wanted)
        return self.api.write_update(self._type("replicasets"), rs, new, WriteOptions(field_manager=KUBE_CONTROLLER_MANAGER))

    def _set_deployment_revision(self, d: dict[str, Any], rs: dict[str, Any]) -> None:
        revision = str(_revision(rs))
        if (d["metadata"].get("annotations") or {}).get(policy.REVISION) == revision:
            return
        new = copy.deepcopy(d)
        new["metadata"].setdefault("annotations", {})[policy.REVISION] = revision
        self.api.write_update(self._type("deployments"), d, new, WriteOptions(field_manager=KUBE_CONTROLLER_MANAGER))

    def _scale(self, rs: dict[str, Any], count: int, d: dict[str, Any]) -> dict[str, Any]:
        current = self.store.get(REPLICASETS, rs["metadata"]["namespace"], rs["metadata"]["name"]) or rs
        annotations = {policy.DESIRED_REPLICAS: str(policy.replicas(d)), policy.MAX_REPLICAS: str(policy.replicas(d) + policy.max_surge(d))}
        if policy.replicas(current) == count and all((current["metadata"].get("annotations") or {}).get(k) == v for k, v in annotations.items()):
            return current
        new = copy.deepcopy(current)
        new["spec"]["replicas"] = count
        new["metadata"].setdefault("annotations", {}).update(annotations)
        return self.api.write_update(self._type("replicasets"), current, new, WriteOptions(field_manager=KUBE_CONTROLLER_MANAGER))

    def _rolling(self, d: dict[str, Any], new_rs: dict[str, Any], old: list[dict[str, Any]]) -> None:
        desired = policy.replicas(d)
        # reconcileNewReplicaSet
        if policy.replicas(new_rs) > desired:
            new_rs = self._scale(new_rs, desired, d)
        elif policy.replicas(new_rs) < desired:
            wanted = policy.new_rs_new_replicas(d, old + [new_rs], new_rs)
            if wanted != policy.replicas(new_rs):
                self._scale(new_rs, wanted, d)
                return
        # reconcileOldReplicaSets
        old_pods = sum(policy.replicas(rs) for rs in old)
        if old_pods == 0:
            return
        all_pods = old_pods + policy.replicas(new_rs)
        min_available = desired - policy.max_unavailable(d)
        new_unavailable = policy.replicas(new_rs) - int((new_rs.get("status") or {}).get("availableReplicas", 0))
        max_scaled_down = all_pods - min_available - new_unavailable
        if max_scaled_down <= 0:
            return
        # cleanupUnhealthyReplicas: old ReplicaSets' unavailable pods go first.
        cleaned = 0
        for i, rs in enumerate(old):
            available = int((rs.get("status") or {}).get("availableReplicas", 0))
            if cleaned >= max_scaled_down or policy.replicas(rs) == available:
                continue
            down = min(max_scaled_down - cleaned, policy.replicas(rs) - available)
            old[i] = self._scale(rs, policy.replicas(rs) - down, d)
            cleaned += down
        # scaleDownOldReplicaSetsForRollingUpdate
        all_rs = old + [new_rs]
        available = sum(int((rs.get("status") or {}).get("availableReplicas", 0)) for rs in all_rs)
        if available <= min_available:
            return
        total = min(available - min_available, max_scaled_down - cleaned)
        done = 0
        for rs in old:
            if done >= total:
                break
            if policy.replicas(rs) == 0:
                continue
            down = min(policy.replicas(rs), total - done)
            self._scale(rs, policy.replicas(rs) - down, d)
            done += down

    def _recreate(self, d: dict[str, Any], new_rs: dict[str, Any], old: list[dict[str, Any]]) -> None:
        for rs in old:
            if policy.replicas(rs):
                self._scale(rs, 0, d)
        if any(int((rs.get("status") or {}).get("replicas", 0)) for rs in old):
            return  # wait for the old pods to go
        if policy.replicas(new_rs) != policy.replicas(d):
            self._scale(new_rs, policy.replicas(d), d)

    def _cleanup(self, d: dict[str, Any], old: list[dict[str, Any]]) -> None:
        """cleanupDeployment: keep revisionHistoryLimit empty old ReplicaSets, delete the oldest."""
        from pinery.local.apiserver.operations import DeleteOptions

        limit = int((d.get("spec") or {}).get("revisionHistoryLimit", 10))
        empty = sorted((rs for rs in old if policy.replicas(rs) == 0 and not (rs.get("status") or {}).get("replicas") and not is_deleting(rs)), key=_revision)
        for rs in empty[: max(len(empty) - limit, 0)]:
            try:
                self.api.delete(self._type("replicasets"), rs["metadata"]["namespace"], rs["metadata"]["name"], DeleteOptions())
            except errors.ApiError as exc:
                if exc.code != 404:
                    raise

    def _deployment_status(self, d: dict[str, Any], new_rs: dict[str, Any] | None, all_rs: list[dict[str, Any]], created: bool) -> dict[str, Any]:
        def total(field: str) -> int:
            return sum(int((rs.get("status") or {}).get(field, 0)) for rs in all_rs)

        desired = policy.replicas(d)
        old_status = d.get("status") or {}
        status: dict[str, Any] = {
            "observedGeneration": d["metadata"].get("generation", 1),
            "replicas": total("replicas"),
            "updatedReplicas": int(((new_rs or {}).get("status") or {}).get("replicas", 0)),
            "readyReplicas": total("readyReplicas"),
            "availableReplicas": total("availableReplicas"),
        }
        unavailable = sum(policy.replicas(rs) for rs in all_rs) - status["availableReplicas"]
        status["unavailableReplicas"] = max(unavailable, 0)
        if old_status.get("collisionCount") is not None:
            status["collisionCount"] = old_status["collisionCount"]
        conditions = {c["type"]: c for c in old_status.get("conditions") or []}
        if status["availableReplicas"] >= desired - policy.max_unavailable(d):
            available = ("True", policy.MIN_AVAILABLE, "Deployment has minimum availability.")
        else:
            available = ("False", policy.MIN_UNAVAILABLE, "Deployment does not have minimum availability.")
        progressing = None
        rs_name = (new_rs or {}).get("metadata", {}).get("name", "")
        if created:
            progressing = ("True", policy.NEW_RS_CREATED, f'Created new replica set "{rs_name}"')
        elif new_rs is not None and policy.deployment_complete(d, status):
            progressing = ("True", policy.NEW_RS_AVAILABLE, f'ReplicaSet "{rs_name}" has successfully progressed.')
        elif new_rs is not None and policy.deployment_progressing(d, status):
            progressing = ("True", policy.RS_UPDATED, f'ReplicaSet "{rs_name}" is progressing.')
        out = [self._condition(conditions.get("Available"), "Available", *available)]
        if progressing is not None:
            out.append(self._condition(conditions.get("Progressing"), "Progressing", *progressing))
        elif "Progressing" in conditions:
            out.append(conditions["Progressing"])
        status["conditions"] = out
        return {k: v for k, v in status.items() if v or k in ("observedGeneration", "replicas", "conditions")}

    @staticmethod
    def _condition(old: dict[str, Any] | None, kind: str, status: str, reason: str, message: str) -> dict[str, Any]:
        """SetDeploymentCondition: lastTransitionTime kept while the status stays; lastUpdateTime
        only moves when something about the condition changed."""
        if old and (old.get("status"), old.get("reason"), old.get("message")) == (status, reason, message):
            return old
        stamp = now()
        transition = old["lastTransitionTime"] if old and old.get("status") == status else stamp
        return {"type": kind, "status": status, "lastUpdateTime": stamp, "lastTransitionTime": transition, "reason": reason, "message": message}
