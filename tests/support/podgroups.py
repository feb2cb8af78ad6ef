"""The two gang schedulers, played by the test: their upstream PodGroup CRDs in the local control
plane, and a driver that schedules a group's pods and writes its status as each project does.

What it emulates, each rule from its source (the commits docs/scheduling-design.md names):

- scheduler-plugins coscheduling (`Coscheduling`):
  - the PodGroup controller's `PodGroupReconciler.Reconcile` (pkg/controllers/podgroup_controller.go):
    a new group becomes Pending; Pending becomes Scheduling once `minMember` pods carry the
    label; then the pod counts (`getCurrentPodStats`: Running, Succeeded, Failed by pod phase)
    give Pending (fewer pods than minMember), Scheduling, Running, Failed or Finished; a
    Finished or Failed group is never reconciled again. Written through `/status`, which the
    CRD has.
  - the scheduler plugin's gate (pkg/coscheduling/core/core.go `PreFilter`, `Permit`): no member
    is bound while fewer than `minMember` pods carry the label (PreFilter's message "pre-filter
    pod <pod> cannot find enough sibling pods, current pods number: <n>, minMember of group:
    <m>"), nor while `minResources` does not fit the cluster (`CheckClusterResource`, "resource
    gap: ..."); otherwise every member is bound at once (Permit waits for minMember assigned).
- Volcano (`Volcano`):
  - enqueue (pkg/scheduler/actions/enqueue/enqueue.go): a Pending group becomes Inqueue when it
    has no minResources or they fit (`JobEnqueueable`; here: the free capacity);
  - allocate and the gang plugin (pkg/scheduler/plugins/gang/gang.go `OnSessionClose`): an Inqueue
    group's members are bound when all fit; a group that is not ready gets the condition
    Unschedulable True, reason NotEnoughResources, message "<k>/<n> tasks in gang
    unschedulable: pod group is not ready, ..." (`JobInfo.FitError`);
  - the phase (pkg/scheduler/framework/session.go `jobStatus`, `getPodGroupPhase`): Running once
    minMember members are scheduled, Completed when every scheduled one has completed, else
    Pending unless already Inqueue. The CRD has no status subresource: the whole object is
    written.

Capacity is one number per resource for the whole cluster (`free`), less what bound pods of
every group request; pods' phases are written by the test's kubelet (tests/support/fsdpjob.py).
Not emulated: nodes and their fit one by one, the coscheduling backoff and permit timeouts
(`scheduleTimeoutSeconds`), Volcano queues' capacity and reclaim, preemption, and anything
these projects write to other objects. Neither scheduler was run.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Callable

import yaml

from tests.support.fsdpjob import NODE
from tests.support.kueue import CRDS, MERGE, now, parse_quantity, pod_requests
from tests.support.waiting import wait_for

API = {
    "coscheduling": ("scheduling.x-k8s.io", "v1alpha1", ("scheduler-plugins", "scheduling.x-k8s.io_podgroups.yaml")),
    "volcano": ("scheduling.volcano.sh", "v1beta1", ("volcano", "scheduling.volcano.sh_podgroups.yaml")),
}
COSCHEDULING_LABEL = "scheduling.x-k8s.io/pod-group"
VOLCANO_ANNOTATION = "scheduling.k8s.io/group-name"


def install_pod_group_crds(plane, timeout: float = 10.0) -> None:
    """Create both projects' PodGroup CRDs as published (../shared/kube-crds) and wait until served."""
    from tests.conftest import shared_path

    for group, version, (folder, file) in API.values():
        crd = yaml.safe_load(shared_path("kube-crds", folder, file).read_text())
        response = plane.http("POST", CRDS, json=crd)
        assert response.status_code in (201, 409), (file, response.text[:2000])

        def served(group: str = group, version: str = version) -> bool:
            listing = plane.http("GET", f"/apis/{group}/{version}")
            return listing.ok and "podgroups" in {r["name"] for r in listing.json()["resources"]}

        wait_for(served, timeout=timeout, what=f"{group} PodGroups served")


def uninstall_pod_group_crds(plane) -> None:
    for group, _, _ in API.values():
        plane.http("DELETE", f"{CRDS}/podgroups.{group}")
        wait_for(lambda group=group: plane.http("GET", f"/apis/{group}").status_code == 404, timeout=10, what=f"{group} gone")


class _GangScheduler:
    scheduler: str

    def __init__(self, plane, namespace: str, free: dict[str, str] | None = None):
        self.plane, self.namespace = plane, namespace
        group, version, _ = API[self.scheduler]
        self.base = f"/apis/{group}/{version}/namespaces/{namespace}/podgroups"
        self.free = {k: parse_quantity(v) for k, v in (free or {"cpu": "64", "memory": "256Gi", "pods": "110"}).items()}

    # Reading

    def group(self, name: str) -> dict | None:
        response = self.plane.http("GET", f"{self.base}/{name}")
        return response.json() if response.status_code == 200 else None

    def groups(self) -> list[dict]:
        return sorted(self.plane.http("GET", self.base).json()["items"], key=lambda g: g["metadata"]["name"])

    def wait_group(self, name: str, check: Callable[[dict], Any] = lambda g: True, timeout: float = 60.0) -> dict:
        return wait_for(lambda: (g := self.group(name)) is not None and check(g) and g, timeout=timeout, what=f"PodGroup {name}")

    def members(self, name: str) -> list[dict]:
        pods = self.plane.http("GET", f"/api/v1/namespaces/{self.namespace}/pods").json()["items"]
        return sorted((p for p in pods if self.group_of(p) == name), key=lambda p: p["metadata"]["name"])

    def group_of(self, pod: dict) -> str | None:
        raise NotImplementedError

    def _room(self, group: dict) -> str | None:
        """What the cluster lacks for the group's minResources (and pods: minMember), or None."""
        spec = group.get("spec") or {}
        want = {k: parse_quantity(v) for k, v in (spec.get("minResources") or {}).items()}
        want["pods"] = want.get("pods", Decimal(0)) + Decimal(spec.get("minMember") or 1)
        used: dict[str, Decimal] = {}
        for pod in self.plane.http("GET", f"/api/v1/namespaces/{self.namespace}/pods").json()["items"]:
            if pod["spec"].get("nodeName") and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
                for k, v in {**pod_requests(pod), "pods": Decimal(1)}.items():
                    used[k] = used.get(k, Decimal(0)) + v
        gap = {k: v - (self.free.get(k, Decimal(0)) - used.get(k, Decimal(0))) for k, v in want.items()}
        short = {k: str(v) for k, v in gap.items() if v > 0}
        return f"resource gap: {short}" if short else None

    # Writing

    def bind(self, pod: dict) -> None:
        name = pod["metadata"]["name"]
        binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name}, "target": {"kind": "Node", "name": NODE}}
        response = self.plane.http("POST", f"/api/v1/namespaces/{self.namespace}/pods/{name}/binding", json=binding)
        assert response.status_code == 201, response.text

    def unschedulable(self, pod: dict, message: str) -> None:
        conditions = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message, "lastTransitionTime": now()}]
        self.plane.http("PATCH", f"/api/v1/namespaces/{self.namespace}/pods/{pod['metadata']['name']}/status",
                        json={"status": {"conditions": conditions}}, headers={"Content-Type": "application/strategic-merge-patch+json"})


class Coscheduling(_GangScheduler):
    scheduler = "coscheduling"

    def group_of(self, pod: dict) -> str | None:
        return (pod["metadata"].get("labels") or {}).get(COSCHEDULING_LABEL)

    def reconcile(self, name: str) -> dict | None:
        """One `PodGroupReconciler.Reconcile` of the group; its new status (None: nothing to do)."""
        group = self.group(name)
        if group is None:
            return None
        status = dict(group.get("status") or {})
        phase = status.get("phase") or ""
        if phase in ("Finished", "Failed"):
            return status
        pods = self.members(name)
        minimum = int(group["spec"].get("minMember") or 1)
        if phase == "":
            status["phase"] = "Pending"
        elif phase == "Pending":
            if len(pods) >= minimum:
                status["phase"] = "Scheduling"
        else:
            phases = [(p.get("status") or {}).get("phase") for p in pods]
            running, succeeded, failed = (phases.count(x) for x in ("Running", "Succeeded", "Failed"))
            status.update(running=running, succeeded=succeeded, failed=failed)
            if len(pods) < minimum:
                status["phase"] = "Pending"
            else:
                status["phase"] = "Running" if succeeded + running >= minimum else "Scheduling"
                if failed and failed + running + succeeded >= minimum:
                    status["phase"] = "Failed"
                if succeeded >= minimum:
                    status["phase"] = "Finished"
        response = self.plane.http("PATCH", f"{self.base}/{name}/status", json={"status": status}, headers=MERGE)
        assert response.status_code == 200, response.text
        return status

    def schedule(self, name: str) -> bool:
        """PreFilter and Permit for the group's unbound members: all bound, or none (True: bound)."""
        group = self.group(name)
        if group is None:
            return False
        pods = [p for p in self.members(name) if not p["metadata"].get("deletionTimestamp")]
        waiting = [p for p in pods if not p["spec"].get("nodeName")]
        if not waiting:
            return False
        minimum = int(group["spec"].get("minMember") or 1)
        gap = None if len(pods) < minimum else self._room(group)
        if len(pods) < minimum or gap:
            for pod in waiting:
                why = gap or (f"pre-filter pod {pod['metadata']['name']} cannot find enough sibling pods, "
                              f"current pods number: {len(pods)}, minMember of group: {minimum}")
                self.unschedulable(pod, why)
            return False
        for pod in waiting:
            self.bind(pod)
        return True


class Volcano(_GangScheduler):
    scheduler = "volcano"

    def group_of(self, pod: dict) -> str | None:
        return (pod["metadata"].get("annotations") or {}).get(VOLCANO_ANNOTATION)

    def session(self, name: str) -> dict | None:
        """One scheduling session for the group: enqueue, allocate, the gang plugin's condition and
        the phase; the group's new status."""
        group = self.group(name)
        if group is None:
            return None
        status = dict(group.get("status") or {})
        minimum = int(group["spec"].get("minMember") or 1)
        gap = self._room(group)
        if status.get("phase") in (None, "", "Pending") and not gap:
            status["phase"] = "Inqueue"
        pods = [p for p in self.members(name) if not p["metadata"].get("deletionTimestamp")]
        waiting = [p for p in pods if not p["spec"].get("nodeName")]
        if status.get("phase") == "Inqueue" and len(pods) >= minimum and not gap:
            for pod in waiting:
                self.bind(pod)
            waiting = []
        scheduled = len(pods) - len(waiting)
        if scheduled < minimum:
            message = (f"{minimum - scheduled}/{len(pods)} tasks in gang unschedulable: pod group is not ready, "
                       f"{len(waiting)} Pending, {minimum} minAvailable; Pending: {len(waiting)} Unschedulable")
            if gap:
                message += f". Origin reason is: {gap}"
            status["conditions"] = [{"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources",
                                     "message": message, "lastTransitionTime": now(), "transitionID": "test-session"}]
        else:
            status["conditions"] = [{"type": "Scheduled", "status": "True", "reason": "tasks in gang are ready to be scheduled",
                                     "lastTransitionTime": now(), "transitionID": "test-session"}]
        phases = [(p.get("status") or {}).get("phase") for p in pods]
        completed = phases.count("Succeeded") + phases.count("Failed")
        if scheduled >= minimum:
            status["phase"] = "Completed" if scheduled == completed else "Running"
        elif status.get("phase") != "Inqueue":
            status["phase"] = "Pending"
        status.update(running=phases.count("Running"), succeeded=phases.count("Succeeded"), failed=phases.count("Failed"))
        response = self.plane.http("PATCH", f"{self.base}/{name}", json={"status": status}, headers=MERGE)
        assert response.status_code == 200, response.text
        return status
