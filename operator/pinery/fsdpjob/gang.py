"""Gang scheduling: the PodGroup of an attempt, what its pods carry, what its phase means. Pure.

Two schedulers, two PodGroup APIs (read at the commits docs/scheduling-design.md names):

- coscheduling, kubernetes-sigs/scheduler-plugins `apis/scheduling/v1alpha1/types.go`
  (`PodGroupSpec`: minMember, minResources, scheduleTimeoutSeconds; `PodGroupLabel`). Its
  `PodGroupManager.PreFilter` (pkg/coscheduling/core/core.go) rejects a member while fewer than
  `minMember` pods carry the label, and checks that the cluster holds `minResources` plus
  `pods: minMember` (`CheckClusterResource`); `Permit` holds each member until `minMember` are
  assigned, and denies a pod whose group does not exist (`PodGroupNotFound`).
- volcano, volcano-sh/volcano `staging/src/volcano.sh/apis/pkg/apis/scheduling/v1beta1/types.go`
  (`PodGroupSpec`: minMember, queue, priorityClassName, minResources), the pod annotation
  `KubeGroupNameAnnotationKey` (labels.go) that `getJobID` (pkg/scheduler/api/job_info.go) reads.
  Without it Volcano's PodGroup controller would make a group of one per pod (`processNextReq`,
  `createNormalPodPGIfNotExist`).

One group per attempt, `<job>-<attempt>` (naming.pod_group_name): scheduler-plugins'
`PodGroupReconciler.Reconcile` returns at once for a Finished or Failed group, so a restarted gang
under its old group would never be evaluated again. For an elastic job the attempt of the group
is that of the gang (the lowest attempt of its nodes): a replaced node joins the running group.
"""

from __future__ import annotations

from decimal import ROUND_CEILING, Decimal
from typing import Any, Mapping, Optional

from pinery.api.base import controller_reference
from pinery.api.fsdpjob import DEFAULT_SCHEDULER_NAMES, FSDPJobSpec, GangScheduler
from pinery.fsdpjob.naming import KIND, LABEL_JOB, LABEL_MANAGED_BY, WAIT_RESOURCES, JobRef, node_waits, pod_group_name
from pinery.fsdpjob.nproc import quantity_value
from pinery.fsdpjob.placement import Placement

__all__ = [
    "API_VERSIONS", "CRD_NAMES", "KIND_KEYS", "explain", "format_quantity", "group_attempt", "group_status",
    "min_member", "min_resources", "placement", "pod_group", "waits_in_queue",
]

API_VERSIONS: dict[str, str] = {"coscheduling": "scheduling.x-k8s.io/v1alpha1", "volcano": "scheduling.volcano.sh/v1beta1"}
# The CRD that serves each: the one thing a cluster must have before a gang job can start.
CRD_NAMES: dict[str, str] = {"coscheduling": "podgroups.scheduling.x-k8s.io", "volcano": "podgroups.scheduling.volcano.sh"}
# The gateways.kube KINDS keys (`Kind.group`: both groups define a PodGroup).
KIND_KEYS: dict[str, str] = {"coscheduling": "PodGroup.scheduling.x-k8s.io", "volcano": "PodGroup.scheduling.volcano.sh"}
# What pods carry to be members (scheduler-plugins `PodGroupLabel`; Volcano `KubeGroupNameAnnotationKey`).
COSCHEDULING_LABEL = "scheduling.x-k8s.io/pod-group"
VOLCANO_ANNOTATION = "scheduling.k8s.io/group-name"

_SUFFIXES = (
    ("Ei", 1024**6), ("Pi", 1024**5), ("Ti", 1024**4), ("Gi", 1024**3), ("Mi", 1024**2), ("Ki", 1024),
    ("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3),
)


def min_member(spec: FSDPJobSpec) -> int:
    """numNodes; elastic: minNodes, the gang may start with that many."""
    return spec.elastic.min_nodes if spec.elastic is not None else spec.num_nodes


def _container_requests(resources: Optional[Mapping[str, Any]]) -> dict[str, Decimal]:
    """A container's requests, where a limit without a request stands for both (kubernetes
    pkg/apis/core/v1/defaults.go `SetDefaults_Pod`: requests default to limits)."""
    resources = resources or {}
    out = {name: quantity_value(q) for name, q in (resources.get("limits") or {}).items()}
    out.update({name: quantity_value(q) for name, q in (resources.get("requests") or {}).items()})
    return out


def _pod_requests(trainer: Mapping[str, Decimal], waits: bool) -> dict[str, Decimal]:
    """A pod's effective request as the scheduler counts it (kubernetes
    component-helpers/resource `PodRequests`): per resource, the larger of its containers' sum
    and its largest init container. Static rank 0 has no init container; every other node
    waits (for rank 0, or for an elastic job's rendezvous store)."""
    if not waits:
        return dict(trainer)
    wait = _container_requests(WAIT_RESOURCES)
    return {name: max(trainer.get(name, Decimal(0)), wait.get(name, Decimal(0))) for name in {*trainer, *wait}}


def min_resources(spec: FSDPJobSpec) -> dict[str, str]:
    """What the first `min_member` pods (ranks 0..m-1) request together, as valid quantities.

    Exactly what those pods ask for: an overestimate would keep a gang out of a cluster that can
    hold it (coscheduling's `CheckClusterResource` refuses the whole group)."""
    trainer = _container_requests(spec.resources.to_api() if spec.resources is not None else None)
    total: dict[str, Decimal] = {}
    for rank in range(min_member(spec)):
        for name, value in _pod_requests(trainer, node_waits(spec.elastic is not None, rank)).items():
            total[name] = total.get(name, Decimal(0)) + value
    return {name: format_quantity(value) for name, value in sorted(total.items()) if value > 0}


def format_quantity(value: Decimal) -> str:
    """A Kubernetes quantity for a non-negative amount: whole numbers in their shortest exact form
    (plain, or with a binary or decimal suffix that divides them), fractions in milli, micro or nano units (rounded up to a
    whole nano, the API's finest unit)."""
    if value < 0:
        raise ValueError(f"{value} is negative")
    if value == value.to_integral_value():
        _sign, digits, exponent = value.normalize().as_tuple()
        if isinstance(exponent, int) and exponent > 18:  # beyond E: mantissa and exponent, not 5000 digits
            return f"{''.join(map(str, digits))}e{exponent}"
        whole = int(value)
        forms = [str(whole)] + [f"{whole // factor}{suffix}" for suffix, factor in _SUFFIXES if whole >= factor and whole % factor == 0]
        return min(forms, key=len)  # the shortest: 64Gi, 2G, 16
    for suffix, exponent in (("m", 3), ("u", 6)):
        scaled = value.scaleb(exponent)
        if scaled == scaled.to_integral_value():
            return f"{int(scaled)}{suffix}"
    return f"{int(value.scaleb(9).to_integral_value(rounding=ROUND_CEILING))}n"


def pod_group(job: JobRef, spec: FSDPJobSpec, attempt: int) -> Optional[dict[str, Any]]:
    """The PodGroup of attempt `attempt`, or None for a job without spec.gang."""
    gang = spec.gang
    if gang is None:
        return None
    group_spec: dict[str, Any] = {"minMember": min_member(spec)}
    resources = min_resources(spec)
    if resources:
        group_spec["minResources"] = resources
    if gang.scheduler == "coscheduling":
        if gang.schedule_timeout_seconds is not None:
            group_spec["scheduleTimeoutSeconds"] = gang.schedule_timeout_seconds
    else:
        if gang.queue is not None:
            group_spec["queue"] = gang.queue
        # As Volcano's own controller copies the pod's (`buildPodGroupFromPod`).
        priority = (spec.pod_template.priority_class_name if spec.pod_template is not None else None)
        if priority:
            group_spec["priorityClassName"] = priority
    return {
        "apiVersion": API_VERSIONS[gang.scheduler],
        "kind": "PodGroup",
        "metadata": {
            "name": pod_group_name(job.name, attempt),
            "namespace": job.namespace,
            "labels": {LABEL_MANAGED_BY: "pinery", LABEL_JOB: job.name},
            "ownerReferences": [controller_reference(KIND, job.name, job.uid)],
        },
        "spec": group_spec,
    }


def placement(job: JobRef, spec: FSDPJobSpec, attempt: int) -> Placement:
    """What every pod of the attempt carries to be a member of its group, and its scheduler
    (podTemplate.schedulerName, else the scheduler's usual name: DEFAULT_SCHEDULER_NAMES)."""
    gang = spec.gang
    if gang is None:
        return Placement()
    group = pod_group_name(job.name, attempt)
    template_name = spec.pod_template.scheduler_name if spec.pod_template is not None else None
    scheduler_name = template_name or DEFAULT_SCHEDULER_NAMES[gang.scheduler]
    if gang.scheduler == "coscheduling":
        return Placement(labels={COSCHEDULING_LABEL: group}, scheduler_name=scheduler_name)
    return Placement(annotations={VOLCANO_ANNOTATION: group}, scheduler_name=scheduler_name)


def group_attempt(job: str, group: Mapping[str, Any]) -> Optional[int]:
    """The attempt a group of job `job` was made for, from its name; None for another name."""
    name = str((group.get("metadata") or {}).get("name") or "")
    prefix = f"{job}-"
    rest = name[len(prefix):] if name.startswith(prefix) else ""
    return int(rest) if rest.isdigit() and str(int(rest)) == rest else None


def _unschedulable(group: Mapping[str, Any]) -> Optional[str]:
    """Volcano's Unschedulable condition message, while the condition is True (the gang plugin
    writes it with reason NotEnoughResources, "<k>/<n> tasks in gang unschedulable: ...")."""
    for c in (group.get("status") or {}).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == "Unschedulable" and c.get("status") == "True":
            return str(c.get("message") or c.get("reason") or "") or None
    return None


def explain(group: Optional[Mapping[str, Any]], scheduler: GangScheduler) -> Optional[str]:
    """What a Pending job's Running condition says of its group (docs/scheduling-design.md), or
    None where the pods say more: Running, Finished/Completed, Failed, or no group (yet)."""
    if group is None:
        return None
    status = group.get("status") or {}
    phase = status.get("phase")
    spec = group.get("spec") or {}
    n = spec.get("minMember") or 1
    if phase == "Unknown":
        return "part of the gang is scheduled, the rest cannot be (PodGroup Unknown)"
    if scheduler == "coscheduling":
        if phase in (None, "", "Pending"):
            # No phase yet: the controller makes every new group Pending first (`Reconcile`).
            return f"gang of {n} waits for the scheduler (PodGroup Pending)"
        if phase == "Scheduling":
            # scheduler-plugins' PodGroupStatus counts running, succeeded and failed pods; it has no
            # count of scheduled ones.
            k = int(status.get("running") or 0) + int(status.get("succeeded") or 0)
            return f"{k} of {n} nodes running, the rest being scheduled (PodGroup Scheduling)"
        return None
    queue = spec.get("queue") or "default"
    if phase in (None, "", "Pending"):
        part = f"waiting in queue {queue} (PodGroup Pending)"
        reason = _unschedulable(group)
        return f"{part}: {reason}" if reason else part
    if phase == "Inqueue":
        return f"admitted by queue {queue}, pods being scheduled (PodGroup Inqueue)"
    return None


def waits_in_queue(group: Optional[Mapping[str, Any]], scheduler: GangScheduler) -> bool:
    """Whether the gang waits in its Volcano queue: phase Pending, which the scheduler keeps
    until its enqueue action lets the group in (Inqueue), and never writes again once it has
    (session.go `getPodGroupPhase`). Time there is queueing, not a slow start. A group with no
    phase yet was never seen by a scheduler: that counts as startup, so a missing scheduler
    still ends in StartupTimeout. coscheduling has no queue: its Pending only means fewer
    members than minMember exist (`Reconcile`)."""
    return scheduler == "volcano" and group is not None and (group.get("status") or {}).get("phase") == "Pending"


def group_status(name: str, scheduler: GangScheduler, group: Optional[Mapping[str, Any]],
                 previous: Optional[Mapping[str, Any]] = None, now: str = "") -> dict[str, Any]:
    """status.podGroup: the current group's name, its scheduler, and once it is observed its
    phase and what the scheduler says of it (Volcano's Unschedulable condition); with the
    last status (`previous`), enqueuedTime: `now` when the group is first seen out of its queue
    (waits_in_queue), kept while the group is the same."""
    out: dict[str, Any] = {"name": name, "scheduler": scheduler}
    same = previous is not None and previous.get("name") == name
    if same and previous and previous.get("enqueuedTime"):
        out["enqueuedTime"] = previous["enqueuedTime"]
    if group is not None:
        phase = (group.get("status") or {}).get("phase")
        if phase:
            out["phase"] = phase
        message = _unschedulable(group)
        if message:
            out["message"] = message
        was_queued = same and previous is not None and previous.get("phase") == "Pending"
        if scheduler == "volcano" and was_queued and phase and not waits_in_queue(group, scheduler) and "enqueuedTime" not in out:
            out["enqueuedTime"] = now
    return out
