"""Kueue, played by the test: the upstream CRDs in the local control plane, and a driver that
writes a Workload's status through the status subresource as Kueue's controllers do.

What it emulates (kubernetes-sigs/kueue ff69552e79), each write in the shape of its source:

- admission (`Kueue.admit`): `status.admission` = {clusterQueue, podSetAssignments: [{name,
  flavors, count, resourceUsage}]} and condition QuotaReserved True reason QuotaReserved,
  message "Quota reserved in ClusterQueue <cq>", resetting Evicted and Preempted to False with
  "Previously: ..." (`workload.SetQuotaReservation`, `resetActiveCondition`); then Admitted True
  reason Admitted, message "The workload is admitted" once every admission check is Ready
  (`workload.SyncAdmittedCondition`); admission checks in `status.admissionChecks` with their
  `podSetUpdates` (`Kueue.check`);
- eviction (`Kueue.evict`): Evicted True with a reason (Preempted, PodsReadyTimeout,
  ClusterQueueStopped, LocalQueueStopped, Deactivated, ...) and message
  (`workload.SetEvictedCondition`), and for preemption Preempted True too (the preemptor's
  `SetPreemptedCondition`); a Workload made inactive (spec.active false) is evicted with
  reason Deactivated, message "The workload is deactivated" (`workload_controller.go`);
- `QuotaScheduler`, a tiny quota-aware scheduler for one ClusterQueue, following Kueue's
  documented semantics for the simplest setup (no cohort, no borrowing, no preemption): the
  Workloads of the ClusterQueue's LocalQueues are considered in creation order (FIFO); one is
  admitted when its requests (pod set count x the pod template's container requests, per
  resource the ClusterQueue covers) fit in the nominalQuota of its first flavor minus the usage
  of the Workloads holding a quota reservation; a finished Workload (Finished True) or one whose
  reservation was released (QuotaReserved False) no longer uses quota. StrictFIFO stops at the
  first Workload that does not fit; BestEffortFIFO (the default) tries the next ones.

What it does not: Kueue's webhooks (defaulting and validation beyond the CRD's schema and CEL
rules), cohorts, borrowing and lending, preemption decisions, fair sharing, partial admission
search, topology-aware scheduling, waitForPodsReady timeouts, requeue backoff
(`requeueState`), MultiKueue, and anything Kueue's controllers write to other objects. Real
Kueue was not run.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any, Callable, Iterable

import yaml

from tests.support.waiting import wait_for

GROUP = "kueue.x-k8s.io"
VERSION = "v1beta2"
CRD_FILES = ("workloads", "resourceflavors", "clusterqueues", "localqueues", "workloadpriorityclasses", "admissionchecks")
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
MERGE = {"Content-Type": "application/merge-patch+json"}


def now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def install_kueue_crds(plane, timeout: float = 10.0) -> None:
    """Create Kueue's CRDs as its project publishes them (../shared/kube-crds/kueue) and wait
    until v1beta2 serves them."""
    from tests.conftest import shared_path

    folder = shared_path("kube-crds", "kueue")
    plurals = []
    for name in CRD_FILES:
        crd = yaml.safe_load((folder / f"kueue.x-k8s.io_{name}.yaml").read_text())
        response = plane.http("POST", CRDS, json=crd)
        assert response.status_code in (201, 409), (name, response.text[:2000])
        plurals.append(crd["spec"]["names"]["plural"])

    def served() -> bool:
        listing = plane.http("GET", f"/apis/{GROUP}/{VERSION}")
        return listing.ok and set(plurals) <= {r["name"] for r in listing.json()["resources"]}

    wait_for(served, timeout=timeout, what="Kueue's CRDs served")


def path(plural: str, ns: str | None = None, name: str = "", sub: str = "") -> str:
    base = f"/apis/{GROUP}/{VERSION}" + (f"/namespaces/{ns}" if ns else "") + f"/{plural}"
    return base + (f"/{name}" if name else "") + (f"/{sub}" if sub else "")


def condition(obj: dict | None, type_: str) -> dict:
    return next((c for c in ((obj or {}).get("status") or {}).get("conditions") or [] if c["type"] == type_), {})


def _set(conditions: list[dict], type_: str, status: str, reason: str, message: str, generation: int | None) -> list[dict]:
    """apimeta.SetStatusCondition: lastTransitionTime moves only with the status."""
    old = next((c for c in conditions if c["type"] == type_), None)
    new = {"type": type_, "status": status, "reason": reason, "message": message,
           "lastTransitionTime": old["lastTransitionTime"] if old and old["status"] == status else now()}
    if generation is not None:
        new["observedGeneration"] = generation
    return [c for c in conditions if c["type"] != type_] + [new]


def parse_quantity(value: Any) -> Decimal:
    """A Kubernetes quantity (the forms tests use: plain, m, k/M/G, Ki/Mi/Gi)."""
    text = str(value)
    factors = {"m": Decimal("0.001"), "k": Decimal(10**3), "M": Decimal(10**6), "G": Decimal(10**9),
               "Ki": Decimal(2**10), "Mi": Decimal(2**20), "Gi": Decimal(2**30)}
    for suffix in ("Ki", "Mi", "Gi", "m", "k", "M", "G"):
        if text.endswith(suffix):
            return Decimal(text[: -len(suffix)]) * factors[suffix]
    return Decimal(text)


def pod_requests(template: dict) -> dict[str, Decimal]:
    """Requests of one pod of a pod set: the sum over containers, at least each init container
    (the scheduler's effective request)."""
    spec = template.get("spec") or {}
    total: dict[str, Decimal] = {}
    for c in spec.get("containers") or []:
        for r, q in ((c.get("resources") or {}).get("requests") or {}).items():
            total[r] = total.get(r, Decimal(0)) + parse_quantity(q)
    for c in spec.get("initContainers") or []:
        for r, q in ((c.get("resources") or {}).get("requests") or {}).items():
            total[r] = max(total.get(r, Decimal(0)), parse_quantity(q))
    return total


def _fmt(q: Decimal) -> str:
    if q == q.to_integral_value():
        return str(int(q))
    return f"{int(q * 1000)}m"


class Kueue:
    """Kueue's controllers on the Workloads of one namespace, one write per call."""

    def __init__(self, plane, namespace: str):
        self.plane, self.namespace = plane, namespace

    # objects

    def create(self, plural: str, body: dict, namespaced: bool = False) -> dict:
        body = {"apiVersion": f"{GROUP}/{VERSION}", **body}
        response = self.plane.http("POST", path(plural, self.namespace if namespaced else None), json=body)
        assert response.status_code in (201, 409), response.text[:2000]
        return response.json()

    def flavor(self, name: str, node_labels: dict | None = None, tolerations: list | None = None) -> dict:
        spec: dict[str, Any] = {}
        if node_labels:
            spec["nodeLabels"] = node_labels
        if tolerations:
            spec["tolerations"] = tolerations
        return self.create("resourceflavors", {"kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec})

    def cluster_queue(self, name: str, flavor: str, quota: dict[str, str], strategy: str = "BestEffortFIFO") -> dict:
        group = {"coveredResources": sorted(quota), "flavors": [
            {"name": flavor, "resources": [{"name": r, "nominalQuota": q} for r, q in sorted(quota.items())]}]}
        return self.create("clusterqueues", {"kind": "ClusterQueue", "metadata": {"name": name},
                                             "spec": {"namespaceSelector": {}, "queueingStrategy": strategy, "resourceGroups": [group]}})

    def local_queue(self, name: str, cluster_queue: str) -> dict:
        return self.create("localqueues", {"kind": "LocalQueue", "metadata": {"name": name, "namespace": self.namespace},
                                           "spec": {"clusterQueue": cluster_queue}}, namespaced=True)

    # reading Workloads

    def workloads(self) -> list[dict]:
        response = self.plane.http("GET", path("workloads", self.namespace))
        response.raise_for_status()
        return sorted(response.json()["items"], key=lambda w: (w["metadata"]["creationTimestamp"], int(w["metadata"]["resourceVersion"])))

    def workload(self, job: str) -> dict | None:
        """The Workload whose controller is FSDPJob `job`."""
        for wl in self.workloads():
            if any(o.get("kind") == "FSDPJob" and o.get("name") == job for o in wl["metadata"].get("ownerReferences") or []):
                return wl
        return None

    def wait(self, job: str, check: Callable[[dict], Any], timeout: float = 60.0, what: str = "") -> dict:
        def current():
            wl = self.workload(job)
            return wl if wl is not None and check(wl) else None

        return wait_for(current, timeout=timeout, interval=0.05, what=what or f"the Workload of {job}: {check}")

    # writing status, as Kueue does

    def patch_status(self, wl: dict, status: dict) -> dict:
        body = {"metadata": {"resourceVersion": wl["metadata"]["resourceVersion"]}, "status": status}
        response = self.plane.http("PATCH", path("workloads", self.namespace, wl["metadata"]["name"], "status"), json=body, headers=MERGE)
        assert response.status_code == 200, response.text[:2000]
        return response.json()

    def _retrying(self, job: str, change: Callable[[dict], dict | None]) -> dict:
        """Apply `change` (Workload -> status patch) on a fresh read until no concurrent write
        gets in between (Kueue retries on conflicts the same way)."""
        for _ in range(50):
            wl = self.workload(job)
            assert wl is not None, f"{job} has no Workload"
            status = change(wl)
            if status is None:
                return wl
            body = {"metadata": {"resourceVersion": wl["metadata"]["resourceVersion"]}, "status": status}
            response = self.plane.http("PATCH", path("workloads", self.namespace, wl["metadata"]["name"], "status"), json=body, headers=MERGE)
            if response.status_code == 409:
                time.sleep(0.02)
                continue
            assert response.status_code == 200, response.text[:2000]
            return response.json()
        raise AssertionError(f"could not write the Workload of {job}: conflicts")

    def admit(self, job: str, cluster_queue: str = "cq", flavors: dict[str, str] | None = None, count: int | None = None,
              checks: Iterable[dict] = ()) -> dict:
        """Reserve quota and, when every admission check is Ready, admit."""
        checks = list(checks)

        def change(wl: dict) -> dict:
            pod_set = wl["spec"]["podSets"][0]
            n = count if count is not None else pod_set["count"]
            per_pod = pod_requests(pod_set["template"])
            assignment: dict[str, Any] = {"name": pod_set["name"], "count": n,
                                          "flavors": flavors if flavors is not None else {r: "default" for r in per_pod},
                                          "resourceUsage": {r: _fmt(q * n) for r, q in per_pod.items()}}
            generation = wl["metadata"].get("generation")
            conds = list((wl.get("status") or {}).get("conditions") or [])
            conds = _set(conds, "QuotaReserved", "True", "QuotaReserved", f"Quota reserved in ClusterQueue {cluster_queue}", generation)
            for type_ in ("Evicted", "Preempted"):
                old = condition(wl, type_)
                if old.get("status") == "True":
                    conds = _set(conds, type_, "False", "QuotaReserved", f"Previously: {old.get('message', '')}", generation)
            status: dict[str, Any] = {"admission": {"clusterQueue": cluster_queue, "podSetAssignments": [assignment]}}
            if checks:
                status["admissionChecks"] = [{"lastTransitionTime": now(), "message": "", **c} for c in checks]
            if all(c.get("state") == "Ready" for c in checks):
                conds = _set(conds, "Admitted", "True", "Admitted", "The workload is admitted", generation)
            else:
                conds = _set(conds, "Admitted", "False", "UnsatisfiedAdmissionChecks", "The workload has not all checks ready", generation)
            status["conditions"] = conds
            return status

        return self._retrying(job, change)

    def check(self, job: str, name: str, state: str, pod_set_updates: list[dict] | None = None, message: str = "") -> dict:
        """An admission check controller's verdict; Admitted follows once all are Ready."""
        def change(wl: dict) -> dict:
            checks = [c for c in (wl.get("status") or {}).get("admissionChecks") or [] if c["name"] != name]
            entry: dict[str, Any] = {"name": name, "state": state, "message": message, "lastTransitionTime": now()}
            if pod_set_updates:
                entry["podSetUpdates"] = pod_set_updates
            checks.append(entry)
            conds = list((wl.get("status") or {}).get("conditions") or [])
            generation = wl["metadata"].get("generation")
            if condition(wl, "QuotaReserved").get("status") == "True" and all(c["state"] == "Ready" for c in checks):
                conds = _set(conds, "Admitted", "True", "Admitted", "The workload is admitted", generation)
            return {"admissionChecks": checks, "conditions": conds}

        return self._retrying(job, change)

    def evict(self, job: str, reason: str = "Preempted", message: str = "Preempted to accommodate a workload (UID: 1) in ClusterQueue cq") -> dict:
        def change(wl: dict) -> dict:
            generation = wl["metadata"].get("generation")
            conds = _set(list((wl.get("status") or {}).get("conditions") or []), "Evicted", "True", reason, message, generation)
            if reason == "Preempted":
                conds = _set(conds, "Preempted", "True", "InClusterQueue", message, generation)
            return {"conditions": conds}

        return self._retrying(job, change)

    def deactivated(self, job: str) -> dict:
        """Kueue's workload controller on a Workload whose spec.active became false."""
        return self.evict(job, "Deactivated", "The workload is deactivated")


def requested(wl: dict) -> dict[str, Decimal]:
    pod_set = wl["spec"]["podSets"][0]
    return {r: q * pod_set["count"] for r, q in pod_requests(pod_set["template"]).items()}


class QuotaScheduler:
    """Kueue's scheduler for one ClusterQueue and its LocalQueues in one namespace (see the
    module docstring), run in a thread: `with QuotaScheduler(kueue, "cq") as s: ...`."""

    def __init__(self, kueue: Kueue, cluster_queue: str, interval: float = 0.05):
        self.kueue, self.cluster_queue, self.interval = kueue, cluster_queue, interval
        self.admitted: list[str] = []  # job names, in the order they were admitted
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self.error: BaseException | None = None

    def __enter__(self) -> "QuotaScheduler":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(5)
        if self.error is not None and exc[0] is None:
            raise self.error

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.step()
            except BaseException as exc:  # reported at the end of the test
                self.error = exc
                return
            time.sleep(self.interval)

    def step(self) -> None:
        plane, k = self.kueue.plane, self.kueue
        cq = plane.http("GET", path("clusterqueues", name=self.cluster_queue)).json()
        group = cq["spec"]["resourceGroups"][0]
        flavor = group["flavors"][0]
        quota = {r["name"]: parse_quantity(r["nominalQuota"]) for r in flavor["resources"]}
        strict = cq["spec"].get("queueingStrategy") == "StrictFIFO"
        queues = {q["metadata"]["name"] for q in plane.http("GET", path("localqueues", k.namespace)).json()["items"]
                  if q["spec"].get("clusterQueue") == self.cluster_queue}
        mine = [w for w in k.workloads() if w["spec"].get("queueName") in queues]
        used = {r: Decimal(0) for r in quota}
        for w in mine:
            if condition(w, "QuotaReserved").get("status") == "True" and condition(w, "Finished").get("status") != "True":
                for r, q in requested(w).items():
                    if r in used:
                        used[r] += q
        for w in mine:
            pending = (condition(w, "QuotaReserved").get("status") != "True" and condition(w, "Finished").get("status") != "True"
                       and w["spec"].get("active", True) is not False)
            if not pending:
                continue
            need = {r: q for r, q in requested(w).items() if r in quota}
            if all(used[r] + q <= quota[r] for r, q in need.items()):
                job = next(o["name"] for o in w["metadata"]["ownerReferences"] if o.get("controller"))
                k.admit(job, self.cluster_queue, flavors={r: flavor["name"] for r in need})
                self.admitted.append(job)
                for r, q in need.items():
                    used[r] += q
            elif strict:
                return
