"""Kueue admission of an FSDPJob: the Workload pinery writes for it, and what Kueue's answers
mean for the job. Pure: dicts in, dicts and dataclasses out.

pinery is Kueue's external integration for the kind (Kueue's configuration names it in
`integrations.externalFrameworks: ["FSDPJob.v1alpha1.pinery.dev"]`), so it plays the part
Kueue's `pkg/controller/jobframework` plays for the built-in kinds. Every rule below names the
upstream function it follows (kubernetes-sigs/kueue ff69552e79):

- `workload` is `ConstructWorkload` + `NewWorkload` + `PrepareWorkloadPriority`
  (`jobframework/reconciler.go`, `jobframework/utils.go`), named as
  `GenerateWorkloadNameWithExtra` (`jobframework/workload_names.go`).
- `admission` is `getPodSetsInfoFromStatus` + `podset.FromAssignment` + `PodSetInfo.Merge` +
  `podset.Merge` (`pkg/podset/podset.go`): a conflict is permanent (`podset.IsPermanent`), and
  Kueue finishes such a Workload with reason `FailedToStart` (ReconcileGenericJob step 7).
- `pods_ready` is `generatePodsReadyCondition`; `requeue_patch` is ReconcileGenericJob step 6
  (`SetRequeuedCondition`, `UnsetQuotaReservationWithCondition`, `SyncAdmittedCondition` in
  `pkg/workload/workload.go` and `admissionchecks.go`); `finished_patch` is
  `workloadfinish.Finish` (`pkg/workload/finish/finish.go`).

Partial admission. Kueue admits fewer pods than a pod set's `count` only when the pod set has a
`minCount` (its PartialAdmission feature, Beta and on by default), and a job then runs with the
admitted count (`RunWithPodSetsInfo`; Kueue's own test "suspended job with partial admission and
admitted workload is unsuspended" runs a Job of parallelism 10, minCount 5, with the 8 it was
admitted). pinery gives `minCount` only to elastic jobs (`elastic.minNodes`: torchrun's c10d
rendezvous trains with any number of nodes from minNodes up), so only an elastic job can be
partially admitted, and it then runs `count` nodes, ranks 0 to count-1, for that attempt. A
fixed-size gang's pod set has no minCount: Kueue admits all of it or nothing.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Mapping, Optional, Sequence

from pinery.api.base import GROUP, controller_reference
from pinery.api.conditions import ConditionStatus, get_condition, now_rfc3339, set_condition
from pinery.api.fsdpjob import FSDPJobSpec
from pinery.fsdpjob.naming import KIND, LABEL_ATTEMPT, LABEL_RANK
from pinery.fsdpjob.placement import Placement

API_GROUP = "kueue.x-k8s.io"
API_VERSION = f"{API_GROUP}/v1beta2"
# pkg/controller/constants/constants.go
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"  # QueueLabel
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"  # WorkloadPriorityClassLabel
JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"  # JobUIDLabel
# pkg/constants/constants.go: what Kueue adds to the pods of an admitted pod set.
POD_SET_LABEL = "kueue.x-k8s.io/podset"  # PodSetLabel
LOCAL_QUEUE_LABEL = "kueue.x-k8s.io/local-queue-name"  # LocalQueueLabel (AssignQueueLabelsForPods, Beta, on)
CLUSTER_QUEUE_LABEL = "kueue.x-k8s.io/cluster-queue-name"  # ClusterQueueLabel
# apis/kueue/v1beta2/constants.go ResourceInUseFinalizerName. The job side adds it
# (jobframework `NewWorkload`) and removes it once the Workload is finished or deleted
# (ReconcileGenericJob, `workload.RemoveFinalizer`); Kueue's workload controller removes it only
# from orphans (`isOrphanedWorkload`, `FinalizeOrphanedWorkload`).
FINALIZER = "kueue.x-k8s.io/resource-in-use"
POD_SET = "node"

# apis/kueue/v1beta2/workload_types.go
ADMITTED, QUOTA_RESERVED, EVICTED, PREEMPTED = "Admitted", "QuotaReserved", "Evicted", "Preempted"
REQUEUED, FINISHED, PODS_READY = "Requeued", "Finished", "PodsReady"
# ReconcileGenericJob step 6: Requeued is True only after these evictions.
REQUEUED_AFTER = ("Preempted", "NodeFailures")
FAILED_TO_START = "FailedToStart"  # jobframework FailedToStartFinishedReason

# jobframework/workload_names.go: hashLength, longMaxWorkloadNameLength (ShortWorkloadNames is
# an Alpha gate, off by default).
_HASH_LENGTH = 5
_MAX_NAME = 253
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def queue_name(job: Mapping[str, Any]) -> Optional[str]:
    """The LocalQueue the job is queued in (its `kueue.x-k8s.io/queue-name` label), or None:
    a job without the label is not Kueue's (`QueueNameForObject`)."""
    labels = (job.get("metadata") or {}).get("labels") or {}
    name = labels.get(QUEUE_LABEL)
    return str(name) if name else None


def under_kueue(job: Mapping[str, Any]) -> bool:
    """Whether the job's pods wait for a Workload: it carries the queue-name label, or it did
    once (its status has the Queued condition), so its Workload still decides (`queue_change`)."""
    conditions = ((job.get("status") or {}).get("conditions")) or []
    return queue_name(job) is not None or get_condition(list(conditions), "Queued") is not None


def workload_name(job_name: str, job_uid: str) -> str:
    """`GenerateWorkloadNameWithExtra(name, uid, FSDPJob GVK, "")`: `fsdpjob-<name>` cut to fit,
    `-`, and 5 hex digits of the sha1 of kind, group, name and uid (newline separated)."""
    prefix = f"{KIND.lower()}-{job_name}"[: _MAX_NAME - 1 - _HASH_LENGTH]
    digest = hashlib.sha1("\n".join((KIND, GROUP, job_name, job_uid)).encode()).hexdigest()
    return f"{prefix}-{digest[:_HASH_LENGTH]}"


def generated_name(kind: str, group: str, name: str, uid: str, extra: str = "") -> str:
    """The same rule for any kind (checked against Kueue's own test vectors)."""
    prefix = f"{kind.lower()}-{name}"[: _MAX_NAME - 1 - _HASH_LENGTH]
    parts = [kind, group, name, uid] + ([extra] if extra else [])
    return f"{prefix}-{hashlib.sha1(chr(10).join(parts).encode()).hexdigest()[:_HASH_LENGTH]}"


# --- the Workload ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PriorityRef:
    """What `ExtractPriority` names: the WorkloadPriorityClass of the job's
    `kueue.x-k8s.io/priority-class` label, else the PriorityClass of the pod template."""

    kind: str  # WorkloadPriorityClass or PriorityClass
    name: str

    @property
    def group(self) -> str:
        return API_GROUP if self.kind == "WorkloadPriorityClass" else "scheduling.k8s.io"


def priority_ref(job: Mapping[str, Any]) -> Optional[PriorityRef]:
    """`ExtractPriority`: the label wins over the pod template's priorityClassName; None when
    neither is set (Kueue then takes the cluster's globalDefault PriorityClass, else 0; pinery
    leaves the priority out, which Kueue reads as 0: `priority.Priority`)."""
    labels = (job.get("metadata") or {}).get("labels") or {}
    if labels.get(PRIORITY_CLASS_LABEL):
        return PriorityRef("WorkloadPriorityClass", str(labels[PRIORITY_CLASS_LABEL]))
    template = ((job.get("spec") or {}).get("podTemplate") or {})
    if template.get("priorityClassName"):
        return PriorityRef("PriorityClass", str(template["priorityClassName"]))
    return None


def pod_set_template(pod: Mapping[str, Any]) -> dict[str, Any]:
    """The pod set's template: rank 0's pod without what differs per rank or attempt (its
    hostname, its rank and attempt labels, the environment that carries them). Kueue reads
    the requests, node selector, affinity, tolerations and priority class from it."""
    meta = pod.get("metadata") or {}
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k not in (LABEL_RANK, LABEL_ATTEMPT)}
    spec = {k: v for k, v in (pod.get("spec") or {}).items() if k not in ("hostname",)}
    spec["containers"] = [{k: v for k, v in c.items() if k != "env"} for c in spec.get("containers") or []]
    if spec.get("initContainers"):
        spec["initContainers"] = [{k: v for k, v in c.items() if k != "env"} for c in spec["initContainers"]]
    template_meta: dict[str, Any] = {"labels": labels}
    if meta.get("annotations"):
        template_meta["annotations"] = dict(meta["annotations"])
    return {"metadata": template_meta, "spec": spec}


def workload(job: Mapping[str, Any], spec: FSDPJobSpec, pod: Mapping[str, Any],
             priority: Optional[tuple[PriorityRef, int]] = None) -> dict[str, Any]:
    """The Workload of the job (`ConstructWorkload`): `pod` is rank 0's pod as `build_pod`
    makes it; `priority` the class `priority_ref` named and its value, as read."""
    meta = job.get("metadata") or {}
    name, uid = str(meta["name"]), str(meta.get("uid") or "")
    labels: dict[str, str] = {}
    if uid and _LABEL_VALUE.match(uid) and len(uid) <= 63:
        labels[JOB_UID_LABEL] = uid  # ConstructWorkload: only when it is a valid label value
    pod_set: dict[str, Any] = {"name": POD_SET, "count": spec.num_nodes, "template": pod_set_template(pod)}
    if spec.elastic is not None and spec.elastic.min_nodes < spec.num_nodes:
        pod_set["minCount"] = spec.elastic.min_nodes
    wl_spec: dict[str, Any] = {
        "queueName": queue_name(job) or "",
        "podSets": [pod_set],
        # JobWithCustomWorkloadActivation: a suspended job's Workload is inactive.
        "active": not spec.suspend,
    }
    if priority is not None:
        ref, value = priority
        wl_spec["priorityClassRef"] = {"group": ref.group, "kind": ref.kind, "name": ref.name}
        wl_spec["priority"] = value
    return {
        "apiVersion": API_VERSION,
        "kind": "Workload",
        "metadata": {
            "name": workload_name(name, uid),
            "namespace": meta.get("namespace") or "default",
            "labels": labels,
            "finalizers": [FINALIZER],
            "ownerReferences": [controller_reference(KIND, name, uid)],
        },
        "spec": wl_spec,
    }


# --- the queue name after the Workload exists ----------------------------------------------


@dataclass(frozen=True)
class QueueChange:
    """What a queue-name label that differs from the Workload's spec.queueName comes to: the
    spec patch that moves the Workload, or why it is not moved (`held`, for the job to say)."""

    patch: Optional[dict[str, Any]] = None
    held: Optional[str] = None


def queue_change(wl: Mapping[str, Any], label: Optional[str]) -> QueueChange:
    """The job's queue-name label against its Workload, as Kueue's job reconciler treats it
    (kubernetes-sigs/kueue `pkg/controller/jobframework/reconciler.go`, `ReconcileGenericJob`
    step 7: while the job is suspended and its Workload not admitted, a `QueueName(job)` that
    differs from `wl.Spec.QueueName` is written to the Workload, "Job changed queues, updating
    workload"). The Workload CRD refuses the write while QuotaReserved is True ("queueName is
    immutable while workload quota reserved"), and Kueue's webhook refuses the label change
    while the job runs (`jobframework/validation.go` `validateUpdateForQueueName`); pinery has
    no webhook for it, so a Workload holding quota (waiting for admission checks, admitted,
    running, or evicted with its pods still stopping) keeps its queue, and the job says so.

    One deviation: upstream's step 6 returns early while the Workload's Evicted condition is
    True, which Kueue keeps until the next reservation, so a requeued job there keeps its old
    queue; pinery moves it once the quota is released, as the CRD allows.

    Removing the label does not take a job out of its Workload: Kueue ignores a job without the
    label (`ReconcileGenericJob`, "queue-name label is not set, ignoring the job"), leaving it
    suspended and its Workload where it was, and the webhook forbids the removal while it runs.
    pinery keeps the job under its Workload and says how to leave Kueue."""
    meta = wl.get("metadata") or {}
    current = (wl.get("spec") or {}).get("queueName") or ""
    if label == current or meta.get("deletionTimestamp") or is_finished(wl):
        return QueueChange()
    name = meta.get("name")
    if not label:
        return QueueChange(held=f"the {QUEUE_LABEL} label was removed, but the job stays under its Workload {name} in LocalQueue "
                                f"{current} (Kueue leaves such a job as it is); restore the label, or delete and recreate the job "
                                "without it to run outside Kueue")
    if has_quota_reservation(wl):
        cq = ((wl.get("status") or {}).get("admission") or {}).get("clusterQueue")
        return QueueChange(held=f"the {QUEUE_LABEL} label names LocalQueue {label}, but the Workload {name} holds quota of "
                                f"LocalQueue {current}" + (f" (ClusterQueue {cq})" if cq else "") + ": Kueue does not move a "
                                "Workload with a quota reservation; the label takes effect if the job is requeued")
    return QueueChange(patch={"metadata": {"resourceVersion": meta.get("resourceVersion")}, "spec": {"queueName": label}})


# --- reading the Workload -------------------------------------------------------------------


def _conditions(wl: Optional[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return list(((wl or {}).get("status") or {}).get("conditions") or [])


def condition(wl: Optional[Mapping[str, Any]], type_: str) -> Optional[dict[str, Any]]:
    return get_condition(_conditions(wl), type_)


def is_true(wl: Optional[Mapping[str, Any]], type_: str) -> bool:
    c = get_condition(_conditions(wl), type_)
    return c is not None and c.get("status") == "True"


def is_admitted(wl: Optional[Mapping[str, Any]]) -> bool:
    """`workload.IsAdmitted`: condition Admitted True."""
    return is_true(wl, ADMITTED)


def has_quota_reservation(wl: Optional[Mapping[str, Any]]) -> bool:
    """`workload.HasQuotaReservation`: condition QuotaReserved True."""
    return is_true(wl, QUOTA_RESERVED)


def is_finished(wl: Optional[Mapping[str, Any]]) -> bool:
    """`workloadfinish.IsFinished`: condition Finished True."""
    return is_true(wl, FINISHED)


def is_active(wl: Mapping[str, Any]) -> bool:
    """`workload.IsActive`: spec.active, true when absent."""
    return (wl.get("spec") or {}).get("active", True) is not False


@dataclass(frozen=True)
class Eviction:
    reason: str
    message: str


def eviction(wl: Optional[Mapping[str, Any]]) -> Optional[Eviction]:
    """Condition Evicted True (ReconcileGenericJob step 6), with its reason (Preempted,
    PodsReadyTimeout, ClusterQueueStopped, LocalQueueStopped, Deactivated, AdmissionCheck,
    NodeFailures, ...) and message."""
    c = get_condition(_conditions(wl), EVICTED)
    if c is None or c.get("status") != "True":
        return None
    return Eviction(str(c.get("reason") or ""), str(c.get("message") or ""))


@dataclass(frozen=True)
class Admission:
    """An admission as the pods of an attempt get it."""

    workload: str
    cluster_queue: str
    count: Optional[int]
    flavors: Mapping[str, str]
    placement: Placement

    def to_status(self) -> dict[str, Any]:
        """`status.admission` (AdmissionStatus) in API form."""
        out: dict[str, Any] = {"workload": self.workload, "clusterQueue": self.cluster_queue}
        if self.flavors:
            out["flavors"] = dict(self.flavors)
        if self.count is not None:
            out["count"] = self.count
        p = self.placement
        for key, value in (("nodeSelector", dict(p.node_selector)), ("tolerations", [dict(t) for t in p.tolerations]),
                           ("labels", dict(p.labels)), ("annotations", dict(p.annotations))):
            if value:
                out[key] = value
        return out


def recorded(status_admission: Optional[Mapping[str, Any]]) -> Optional[Admission]:
    """The admission `status.admission` recorded: the current attempt's pods are built from it."""
    if not status_admission:
        return None
    a = status_admission
    placement = Placement(
        labels=dict(a.get("labels") or {}), annotations=dict(a.get("annotations") or {}),
        node_selector=dict(a.get("nodeSelector") or {}), tolerations=tuple(dict(t) for t in a.get("tolerations") or []),
    )
    count = a.get("count")
    return Admission(str(a.get("workload") or ""), str(a.get("clusterQueue") or ""),
                     int(count) if count is not None else None, dict(a.get("flavors") or {}), placement)


@dataclass(frozen=True)
class AdmissionResult:
    """What an admitted Workload means: an admission; or a permanent conflict (the message as
    Kueue words it); or flavors still to be read (Kueue's `FromAssignment` errors and retries)."""

    admission: Optional[Admission] = None
    conflict: Optional[str] = None
    missing_flavors: tuple[str, ...] = ()


def assigned_flavors(wl: Mapping[str, Any]) -> list[str]:
    """Names of the ResourceFlavors the admission of pod set `node` assigns, in order."""
    psa = _assignment(wl)
    names: list[str] = []
    for flavor in ((psa or {}).get("flavors") or {}).values():
        if flavor not in names:
            names.append(str(flavor))
    return names


def _assignment(wl: Mapping[str, Any]) -> Optional[Mapping[str, Any]]:
    adm = (wl.get("status") or {}).get("admission") or {}
    return next((a for a in adm.get("podSetAssignments") or [] if a.get("name") == POD_SET), None)


def _conflict(a: Mapping[str, str], b: Mapping[str, str]) -> Optional[str]:
    """`utilmaps.HaveConflict`, worded as Kueue words it."""
    for key, value in a.items():
        if key in b and b[key] != value:
            return f"conflict for key={key}, value1={value}, value2={b[key]}"
    return None


def _add_tolerations(into: list[dict[str, Any]], more: Sequence[Mapping[str, Any]]) -> None:
    for t in more:
        if dict(t) not in into:
            into.append(dict(t))


def admission(wl: Mapping[str, Any], flavors: Mapping[str, Mapping[str, Any]], pod: Mapping[str, Any]) -> Optional[AdmissionResult]:
    """The admission of an admitted Workload, or None while it is not admitted (`IsAdmitted`).

    `flavors` holds the ResourceFlavors read by name; `pod` is rank 0's pod as built without
    any admission (its labels, annotations and nodeSelector are the template Kueue merges into).
    """
    if not is_admitted(wl):
        return None
    status = wl.get("status") or {}
    psa = _assignment(wl) or {}
    missing = tuple(n for n in assigned_flavors(wl) if n not in flavors)
    if missing:
        return AdmissionResult(missing_flavors=missing)
    # podset.FromAssignment: every assigned flavor's nodeLabels (copied, later ones win) and
    # tolerations; the pod set label (getPodSetsInfoFromStatus), the queue labels.
    node_selector: dict[str, str] = {}
    tolerations: list[dict[str, Any]] = []
    for name in assigned_flavors(wl):
        fspec = flavors[name].get("spec") or {}
        node_selector.update({str(k): str(v) for k, v in (fspec.get("nodeLabels") or {}).items()})
        _add_tolerations(tolerations, fspec.get("tolerations") or [])
    cluster_queue = str((status.get("admission") or {}).get("clusterQueue") or "")
    labels = {POD_SET_LABEL: POD_SET}
    queue = (wl.get("spec") or {}).get("queueName")
    if queue:
        labels[LOCAL_QUEUE_LABEL] = str(queue)
    if _DNS1123_LABEL.match(cluster_queue) and len(cluster_queue) <= 63:
        labels[CLUSTER_QUEUE_LABEL] = cluster_queue
    annotations: dict[str, str] = {}
    # PodSetInfo.Merge of each admission check's update for this pod set (the first per check).
    for check in status.get("admissionChecks") or []:
        update = next((u for u in check.get("podSetUpdates") or [] if u.get("name") == POD_SET), None)
        if update is None:
            continue
        for what, mine in (("annotations", annotations), ("labels", labels), ("nodeSelector", node_selector)):
            clash = _conflict(mine, update.get(what) or {})
            if clash:
                return AdmissionResult(conflict=f'in admission check "{check.get("name")}": invalid admission check PodSetUpdate: conflict for {what}: {clash}')
        annotations.update(update.get("annotations") or {})
        labels.update(update.get("labels") or {})
        node_selector.update(update.get("nodeSelector") or {})
        _add_tolerations(tolerations, update.get("tolerations") or [])
    # podset.Merge into the job's template: the pod's own labels, annotations, nodeSelector.
    meta = pod.get("metadata") or {}
    for what, theirs, mine in (("annotations", meta.get("annotations") or {}, annotations),
                               ("labels", meta.get("labels") or {}, labels),
                               ("nodeSelector", (pod.get("spec") or {}).get("nodeSelector") or {}, node_selector)):
        clash = _conflict(theirs, mine)
        if clash:
            return AdmissionResult(conflict=f"invalid admission check PodSetUpdate: conflict for {what}: {clash}")
    count = psa.get("count")
    return AdmissionResult(admission=Admission(
        workload=str((wl.get("metadata") or {}).get("name") or ""),
        cluster_queue=cluster_queue,
        count=int(count) if count is not None else None,
        flavors={str(k): str(v) for k, v in (psa.get("flavors") or {}).items()},
        placement=Placement(labels=labels, annotations=annotations, node_selector=node_selector, tolerations=tuple(tolerations)),
    ))


def admitted_nodes(spec: FSDPJobSpec, adm: Optional[Admission]) -> int:
    """Nodes the attempt runs: the admitted count for an elastic job partially admitted (never
    below minNodes, never above numNodes), numNodes otherwise (see the module docstring)."""
    if adm is None or adm.count is None or spec.elastic is None:
        return spec.num_nodes
    return max(spec.elastic.min_nodes, min(adm.count, spec.num_nodes))


# --- what the job shows ---------------------------------------------------------------------


def queued_condition(wl: Mapping[str, Any]) -> tuple[ConditionStatus, str, str]:
    """(status, reason, message) of the job's Queued condition from its Workload."""
    queue = (wl.get("spec") or {}).get("queueName") or ""
    ev = eviction(wl)
    if ev is not None and has_quota_reservation(wl):
        return "True", ev.reason or "Evicted", f"evicted by Kueue: {ev.message}" if ev.message else "evicted by Kueue"
    if is_admitted(wl):
        cq = ((wl.get("status") or {}).get("admission") or {}).get("clusterQueue")
        return "False", "Admitted", f"Admitted by clusterQueue {cq}"  # Kueue's startJob Event message
    if not is_active(wl):
        return "True", "Inactive", "the Workload is not active (spec.active is false)"
    if has_quota_reservation(wl):
        checks = (wl.get("status") or {}).get("admissionChecks") or []
        waiting = [f"{c.get('name')} ({c.get('state') or 'Pending'}{': ' + c['message'] if c.get('message') else ''})"
                   for c in checks if c.get("state") != "Ready"]
        return "True", "WaitingForAdmissionChecks", "quota reserved; waiting for admission checks: " + (", ".join(waiting) or "none reported yet")
    reserved = get_condition(_conditions(wl), QUOTA_RESERVED)
    if reserved is not None and reserved.get("reason"):
        return "True", str(reserved["reason"]), str(reserved.get("message") or "")
    return "True", "Pending", f"waiting for Kueue to evaluate the Workload in LocalQueue {queue}"


# --- writes to the Workload's status --------------------------------------------------------


def _set(conditions: list[dict[str, Any]], type_: str, status: ConditionStatus, reason: str, message: str,
         generation: Optional[int], now: str) -> list[dict[str, Any]]:
    return set_condition(conditions, type_, status, reason, message[:32768], generation, now)


def _status_patch(wl: Mapping[str, Any], conditions: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """A merge patch of the status subresource: the whole conditions list (a merge patch
    replaces lists), with the Workload's resourceVersion as precondition, so a concurrent write
    by Kueue makes it fail (409) instead of being overwritten."""
    meta = wl.get("metadata") or {}
    return {"metadata": {"resourceVersion": meta.get("resourceVersion")}, "status": {"conditions": conditions, **extra}}


def _changes(wl: Mapping[str, Any], wanted: Sequence[tuple[str, ConditionStatus, str]]) -> bool:
    """Whether a condition of these (type, status, reason) differs (`HasConditionWithTypeAndReason`)."""
    conds = _conditions(wl)
    for type_, status, reason in wanted:
        c = get_condition(conds, type_)
        if c is None or c.get("status") != status or c.get("reason") != reason:
            return True
    return False


def pods_ready(wl: Mapping[str, Any], ready: bool) -> tuple[ConditionStatus, str, str]:
    """`generatePodsReadyCondition`: "ready" is the job's Running condition (every node runs;
    minNodes for an elastic job), as JobSet's PodsReady is every replicated job ready."""
    not_ready = "Not all pods are ready or succeeded"
    recovering = "At least one pod has failed, waiting for recovery"
    if not is_admitted(wl):
        return "False", "WaitForStart", not_ready
    current = get_condition(_conditions(wl), PODS_READY)
    if ready:
        recovered = current is not None and current.get("reason") in ("WaitForRecovery", "Recovered")
        return "True", "Recovered" if recovered else "Started", "All pods reached readiness and the workload is running"
    if current is None:
        return "False", "WaitForStart", not_ready
    if current.get("status") == "True" or current.get("reason") == "WaitForRecovery":
        return "False", "WaitForRecovery", recovering
    return "False", "WaitForStart", not_ready


def pods_ready_patch(wl: Mapping[str, Any], ready: bool, now: datetime) -> Optional[dict[str, Any]]:
    """The PodsReady write, or None when the Workload already says so (ReconcileGenericJob step 5)."""
    status, reason, message = pods_ready(wl, ready)
    if not _changes(wl, [(PODS_READY, status, reason)]):
        return None
    generation = (wl.get("metadata") or {}).get("generation")
    return _status_patch(wl, _set(_conditions(wl), PODS_READY, status, reason, message, generation, now_rfc3339(now)))


def requeue_patch(wl: Mapping[str, Any], ev: Eviction, now: datetime) -> Optional[dict[str, Any]]:
    """ReconcileGenericJob step 6, once no pod of the job is active: Requeued (True after
    Preempted and NodeFailures only), QuotaReserved False reason PendingEvaluation with the
    eviction's message, the admission cleared, and Admitted False NoReservation
    (`SyncAdmittedCondition`). None when it is already so, or the quota was released already."""
    if not has_quota_reservation(wl) and not (wl.get("status") or {}).get("admission"):
        return None
    generation = (wl.get("metadata") or {}).get("generation")
    at = now_rfc3339(now)
    conds = _conditions(wl)
    conds = _set(conds, REQUEUED, "True" if ev.reason in REQUEUED_AFTER else "False", ev.reason, ev.message, generation, at)
    conds = _set(conds, QUOTA_RESERVED, "False", "PendingEvaluation", ev.message, generation, at)
    if get_condition(conds, ADMITTED) is not None:
        conds = _set(conds, ADMITTED, "False", "NoReservation", "The workload has no reservation", generation, at)
    return _status_patch(wl, conds, admission=None)


def finished_patch(wl: Mapping[str, Any], reason: str, message: str, now: datetime) -> Optional[dict[str, Any]]:
    """`workloadfinish.Finish`: Finished True, reason Succeeded, Failed or FailedToStart;
    None when the Workload is finished already."""
    if is_finished(wl):
        return None
    generation = (wl.get("metadata") or {}).get("generation")
    return _status_patch(wl, _set(_conditions(wl), FINISHED, "True", reason, message, generation, now_rfc3339(now)))


def active_patch(wl: Mapping[str, Any], active: bool) -> Optional[dict[str, Any]]:
    """`JobWithCustomWorkloadActivation`: spec.active follows the job's suspend."""
    if is_active(wl) == active:
        return None
    return {"metadata": {"resourceVersion": (wl.get("metadata") or {}).get("resourceVersion")}, "spec": {"active": active}}


def finalizer_patch(wl: Mapping[str, Any]) -> Optional[dict[str, Any]]:
    """`workload.RemoveFinalizer`: the finalizers without Kueue's resource-in-use; None when
    it is not there. (A merge patch replaces the list: the resourceVersion guards it.)"""
    meta = wl.get("metadata") or {}
    finalizers = list(meta.get("finalizers") or [])
    if FINALIZER not in finalizers:
        return None
    return {"metadata": {"resourceVersion": meta.get("resourceVersion"), "finalizers": [f for f in finalizers if f != FINALIZER] or None}}


@dataclass
class Writes:
    """The Workload writes a pass wants, in the design's precedence; the pass makes the first
    (docs/scheduling-design.md, "What is written, in which order")."""

    items: list[tuple[str, dict[str, Any], Optional[str]]] = field(default_factory=list)

    ORDER = ("active", "queue", "pods_ready", "requeue", "finished", "finalizer")

    def want(self, what: str, patch: Optional[dict[str, Any]], subresource: Optional[str] = None) -> None:
        if patch is not None:
            self.items.append((what, patch, subresource))

    def first(self) -> Optional[tuple[str, dict[str, Any], Optional[str]]]:
        if not self.items:
            return None
        return min(self.items, key=lambda item: self.ORDER.index(item[0]))
