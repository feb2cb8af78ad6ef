"""The FSDPJob reconcile decision: from the job and its observed pods to a Plan. Pure.

Restart protocol (crash-safe at every line). The restart budget lives in `status.restarts`, and
each node's current attempt in `status.nodes[i].attempt`; a pod carries its attempt in the
`pinery.dev/attempt` label. When a failure calls for a restart, the plan writes the new count and
the new attempt numbers in its status patch, which the handler applies *before* deleting any
pod. From then on the failed pods belong to an older attempt: they are stale, they are deleted
and never counted again, and no pod of the new attempt is created until the old ones are gone.
Replaying a plan, or planning again after a crash at any step, therefore yields the same count
and no second set of pods. A pod's attempt label also witnesses a count already written, so
a status that lost its count (restored without status, say) is repaired upwards, never reset.

Gang scheduling (spec.gang, gang.py) adds one object per attempt, the PodGroup `<job>-<attempt>`,
under the same protocol: it is created only once the old attempt's pods are gone, the attempt's
pods only once the group has been read back (so no pod is ever scheduled outside its gang), and
the old attempts' groups are deleted once no pod of theirs is left. Its name is deterministic, so
a replayed creation meets AlreadyExists and reads the one that is there.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any, Iterable, Literal, Mapping, Optional, Sequence

from pydantic import ValidationError

from pinery.api.conditions import ConditionStatus, get_condition, now_rfc3339, parse_time, set_condition
from pinery.api.fsdpjob import FSDPJobSpec, GangScheduler
from pinery.fsdpjob import disruption_policy, failure_policy, gang, kueue, log_tail, node_avoidance, rendezvous, stall_policy, success_policy
from pinery.fsdpjob.accepted_spec import effective_spec, synced_condition
from pinery.fsdpjob.children import build_config_map, build_pod, build_rendezvous_pod, build_service
from pinery.fsdpjob.deadlines import active_deadline_left, startup_left, stuck_terminating, ttl_left
from pinery.fsdpjob.failure_policy import Failure, node_list
from pinery.fsdpjob.naming import JobRef, pod_group_name, pod_name, rendezvous_pod_name
from pinery.fsdpjob.nodes import NodeState, known_failure, observed_before
from pinery.fsdpjob.observe import PodView, view_pod
from pinery.fsdpjob.placement import NO_PLACEMENT, Placement
from pinery.fsdpjob.plan import Event, ObjectDeletion, ObjectPatch, Plan, PodDeletion, merge_patch
from pinery.fsdpjob.timing import DEFAULT_TIMING, JobTiming
from pinery.settings import OperatorSettings

__all__ = ["CONDITION_ORDER", "Failure", "MAX_MESSAGE", "phase_of", "plan"]

# Longest condition message written (the API allows 32768 characters).
MAX_MESSAGE = 4096

CONDITION_ORDER = ("Created", "Queued", "Running", "Restarting", "Succeeded", "Failed", "Suspended", "Synced")

EventType = Literal["Normal", "Warning"]


def phase_of(conditions: list[dict[str, Any]]) -> str:
    """status.phase, derived from the conditions (the conditions are the contract)."""
    for type_ in ("Succeeded", "Failed", "Suspended", "Queued", "Restarting", "Running"):
        cond = get_condition(conditions, type_)
        if cond and cond.get("status") == "True":
            return type_
    return "Pending"


def plan(
    job: dict[str, Any],
    pods: Sequence[dict[str, Any]],
    now: datetime,
    *,
    service: Optional[dict[str, Any]] = None,
    config_map: Optional[dict[str, Any]] = None,
    settings: Optional[OperatorSettings] = None,
    refused: Optional[Mapping[str, str]] = None,
    timing: JobTiming = DEFAULT_TIMING,
    workload: Optional[dict[str, Any]] = None,
    flavors: Optional[Mapping[str, dict[str, Any]]] = None,
    kueue_served: bool = True,
    priority: Optional[tuple[kueue.PriorityRef, Optional[int]]] = None,
    pod_groups: Optional[Sequence[dict[str, Any]]] = (),
    failure_logs: Optional[Mapping[str, str]] = None,
    cluster_nodes: Optional[Sequence[dict[str, Any]]] = None,
) -> Plan:
    """Decide one reconcile pass of an FSDPJob.

    `job` is the FSDPJob as read from the API (metadata with uid and generation, spec, status);
    `pods` every pod labelled with the job's name; `service` and `config_map` the job's
    Service and trainer ConfigMap when they exist. `refused` holds the creations the API server
    refused in the previous pass (quota, admission), as `Kind/name` -> its message: they are
    tried again, and reported in the conditions, the nodes and one Warning Event each.

    Kueue (a job labelled `kueue.x-k8s.io/queue-name`, see kueue.py): `workload` is the job's
    Workload as read (None when there is none), `flavors` the ResourceFlavors its admission
    assigns, by name; `kueue_served` False when the API server serves no Workloads; `priority`
    the class `kueue.priority_ref` names and its value (None: not found).
    `pod_groups` holds the job's PodGroups (spec.gang), or None when the API server has no
    PodGroup API of the job's scheduler (the list answered 404).
    `failure_logs` holds the log tails the handler read of failed pods (`log_tail.logs_to_read`),
    by pod name: a failure keeps the end of its log in `status.failures`.
    `cluster_nodes` holds the cluster's Nodes when the job avoids some (node_avoidance.mode), or
    None when they were not listed (not needed, or not allowed).
    """
    draft = _Draft(job, pods, now, refused or {})
    draft.failure_logs = dict(failure_logs or {})
    if draft.meta.get("deletionTimestamp"):
        return Plan(status=draft.old)  # the garbage collector removes the children
    try:
        current = FSDPJobSpec.model_validate(job.get("spec") or {})
    except ValidationError as exc:
        return draft.invalid(exc)
    spec, changed = effective_spec(current, service)
    queue = _Queue(workload, flavors or {}, kueue_served, priority) if kueue.under_kueue(job) else None
    return _Pass(draft, spec, changed, service, config_map, settings or OperatorSettings(), timing, queue, pod_groups,
                 cluster_nodes).run()


class _Queue:
    """What a pass knows of the job's Kueue Workload (kueue.py)."""

    def __init__(self, workload: Optional[dict[str, Any]], flavors: Mapping[str, dict[str, Any]], served: bool,
                 priority: Optional[tuple[kueue.PriorityRef, Optional[int]]]):
        self.wl, self.flavors, self.served, self.priority = workload, flavors, served, priority
        self.writes = kueue.Writes()


class _Draft:
    """What a pass writes, collected: conditions, Events, pod deletions and creations, requeue
    times. Everything a pass decides goes through here, so that `_plan` is the only output."""

    def __init__(self, job: dict[str, Any], pods: Sequence[dict[str, Any]], now: datetime, refused: Mapping[str, str]):
        self.job = job
        self.meta: dict[str, Any] = job.get("metadata") or {}
        self.now = now.astimezone(timezone.utc)
        self.now_s = now_rfc3339(self.now)
        self.generation = self.meta.get("generation")
        self.old: dict[str, Any] = copy.deepcopy(job.get("status") or {})
        self.conditions: list[dict[str, Any]] = list(self.old.get("conditions") or [])
        self.refused = dict(refused)
        self.failure_logs: dict[str, str] = {}
        self.pods = [view_pod(p) for p in pods]
        self.creates: list[dict[str, Any]] = []
        self.deletions: dict[str, PodDeletion] = {}
        self.patches: list[ObjectPatch] = []  # of other objects (the Workload)
        self.object_deletions: list[ObjectDeletion] = []  # children other than pods
        self.events: list[Event] = []
        self.requeue: list[float] = []
        self.delete_job = False
        self.start_time: Optional[str] = self.old.get("startTime")
        self.completion_time: Optional[str] = self.old.get("completionTime")

    def cond(self, type_: str) -> Optional[dict[str, Any]]:
        return get_condition(self.conditions, type_)

    def is_true(self, type_: str) -> bool:
        c = self.cond(type_)
        return c is not None and c.get("status") == "True"

    def set(self, type_: str, status: ConditionStatus, reason: str, message: str = "", event: Optional[EventType] = None) -> None:
        """Set a condition; emit an Event of type `event` when its status or reason changes."""
        old = self.cond(type_)
        message = _clip(message)
        self.conditions = set_condition(self.conditions, type_, status, reason, message, self.generation, self.now_s)
        if event and (old is None or old.get("status") != status or old.get("reason") != reason):
            self.events.append(Event(event, reason, message or f"{type_} is {status}"))

    def emit(self, type_: EventType, reason: str, message: str) -> None:
        self.events.append(Event(type_, reason, message))

    def stop(self, views: Iterable[PodView]) -> None:
        for v in views:
            if not v.terminating and v.uid not in self.deletions:
                self.deletions[v.uid] = PodDeletion(v.name, v.uid)

    def after(self, seconds: Optional[float]) -> None:
        if seconds is not None:
            self.requeue.append(max(seconds, 1.0))

    def invalid(self, exc: ValidationError) -> Plan:
        """A spec the CRD let through that the models refuse: Failed, and its pods stopped."""
        errors = "; ".join(
            f"spec.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" if e["loc"] else e["msg"] for e in exc.errors()[:5]
        )
        if not self.is_true("Failed"):
            self.set("Failed", "True", "InvalidSpec", errors, event="Warning")
            self.completion_time = self.completion_time or self.now_s
        uid = (self.meta or {}).get("uid")
        self.stop([p for p in self.pods if p.controller_uid == uid and not p.finished])
        status = dict(self.old)
        status.update(conditions=self.sorted(), phase=phase_of(self.conditions), observedGeneration=self.generation)
        if self.completion_time:
            status["completionTime"] = self.completion_time
        return self.plan(status)

    def sorted(self) -> list[dict[str, Any]]:
        rank = {t: i for i, t in enumerate(CONDITION_ORDER)}
        return sorted(self.conditions, key=lambda c: rank.get(str(c.get("type")), len(rank)))

    def plan(self, status: dict[str, Any]) -> Plan:
        return Plan(
            status=status,
            status_patch=merge_patch(self.old, status),
            create=tuple(self.creates),
            patches=tuple(self.patches),
            delete_pods=tuple(self.deletions.values()),
            delete_objects=tuple(self.object_deletions),
            delete_job=self.delete_job,
            events=tuple(self.events),
            requeue_after=min(self.requeue) if self.requeue else None,
        )


class _Pass:
    """One pass over a job with a valid spec: the observed nodes, then the policies in the order
    they take precedence (finished, suspended, deadlines, failures, stalls, creation, success)."""

    def __init__(self, draft: _Draft, spec: FSDPJobSpec, changed: list[str], service: Optional[dict[str, Any]],
                 config_map: Optional[dict[str, Any]], settings: OperatorSettings, timing: JobTiming,
                 queue: Optional[_Queue] = None, pod_groups: Optional[Sequence[dict[str, Any]]] = (),
                 cluster_nodes: Optional[Sequence[dict[str, Any]]] = None):
        self.d = draft
        self.ref = JobRef.of(draft.job)
        self.spec, self.changed = spec, changed
        self.service, self.config_map, self.settings, self.timing = service, config_map, settings, timing
        # Kueue: the admission the current attempt's pods are built from (status.admission),
        # and the evictions that started a new attempt without spending maxRestarts.
        self.queue = queue
        self.admission = kueue.recorded(draft.old.get("admission")) if queue else None
        self.placement: Placement = self.admission.placement if self.admission else NO_PLACEMENT
        self.requeues = int(draft.old.get("requeues") or 0)
        self.n = kueue.admitted_nodes(spec, self.admission)
        self.elastic = spec.elastic
        self.owned = [p for p in draft.pods if p.controller_uid == self.ref.uid and p.rank is not None]
        # An elastic job's rendezvous store (rendezvous.py): the job's pod, but no node.
        store_name = rendezvous_pod_name(self.ref.name)
        self.store: Optional[PodView] = next(
            (p for p in draft.pods if p.controller_uid == self.ref.uid and p.rank is None and p.name == store_name), None)
        self.store_name_taken = any(p.name == store_name for p in draft.pods)
        self.old_nodes: dict[Any, Mapping[str, Any]] = {
            n.get("index"): n for n in draft.old.get("nodes") or [] if isinstance(n, dict)
        }
        self.nodes: dict[int, NodeState] = {
            i: NodeState.load(i, pod_name(self.ref.name, i), self.old_nodes.get(i)) for i in range(self.n)
        }
        # A pod's attempt label witnesses an attempt already written; a status that lost its
        # count takes it as the restart count, the most it can be (see the docstring).
        witnessed = max([p.attempt for p in self.owned], default=0)
        self.witnessed = witnessed
        self.restarts: int = int(draft.old["restarts"] or 0) if "restarts" in draft.old else witnessed
        self.disruptions: int = int(draft.old.get("disruptions") or 0)
        self.last_disruption: Optional[dict[str, Any]] = draft.old.get("lastDisruption")
        self.failures_kept: list[dict[str, Any]] = list(draft.old.get("failures") or [])
        self.next_attempt_after: Optional[str] = draft.old.get("nextAttemptAfter")
        # Failed-node avoidance (node_avoidance.py): the nodes new pods keep off, and how the
        # current attempt's pods were told to.
        self.avoided = node_avoidance.trimmed(spec.node_avoidance, draft.old.get("avoidedNodes") or [])
        self.avoidance_mode: Optional[str] = draft.old.get("avoidanceMode") if self.avoided else None
        self.cluster_nodes = cluster_nodes
        for p in self.owned:
            if p.rank is not None and p.rank < self.n:
                self.nodes[p.rank].attempt = max(self.nodes[p.rank].attempt, p.attempt)
        if self.elastic is None:
            # One attempt for the whole gang.
            gang = max([witnessed] + [node.attempt for node in self.nodes.values()])
            for node in self.nodes.values():
                node.attempt = gang
        self.current: dict[int, PodView] = {}
        self.stale: list[PodView] = []
        self._classify()
        # The job's own PodGroups by name (spec.gang); None: the API server has none.
        self.groups: Optional[dict[str, dict[str, Any]]] = None if pod_groups is None else {
            g["metadata"]["name"]: g for g in pod_groups if _controller_uid(g) == self.ref.uid
        }
        # Names held by groups of someone else (a deleted job's of the same name, before the
        # garbage collector is through): never created again, waited for.
        self.foreign_groups = {g["metadata"]["name"] for g in pod_groups or [] if _controller_uid(g) != self.ref.uid}
        self.gang_blocked: Optional[str] = None  # why no pod can be created (GangSchedulerMissing)

    # --- observed state -------------------------------------------------------------------

    def _classify(self) -> None:
        """Split the owned pods into the current attempt's, by rank, and stale ones."""
        self.current, self.stale = {}, []
        for p in self.owned:
            if p.rank is not None and p.rank < self.n and p.attempt == self.nodes[p.rank].attempt:
                self.current[p.rank] = p
            else:
                self.stale.append(p)

    def _observed_before(self, i: int) -> bool:
        return observed_before(self.old_nodes.get(i), self.nodes[i].attempt)

    def _known_failure(self, i: int) -> bool:
        return known_failure(self.old_nodes.get(i), self.nodes[i].attempt)

    def _name_taken(self, i: int) -> bool:
        name = pod_name(self.ref.name, i)
        return any(p.name == name for p in self.d.pods)

    def _observe_nodes(self) -> None:
        """Copy what the current pods show into status.nodes."""
        for i, node in self.nodes.items():
            p = self.current.get(i)
            if p is None:
                if not self._known_failure(i):
                    node.clear_outcome()
                    node.reason = None
                continue
            node.phase, node.exit_code, node.reason = p.phase, p.exit_code, p.reason
            node.node_name = p.node_name
            if p.terminating and not p.finished:
                node.reason = p.reason or "Terminating"

    # --- entry ----------------------------------------------------------------------------

    def run(self) -> Plan:
        d = self.d
        force, later = stuck_terminating(self.owned + self._store_pods(), d.now, self.timing.force_delete_after)
        for p in force:
            d.deletions[p.uid] = PodDeletion(p.name, p.uid, force=True)
        for left in later:
            d.after(left)
        if d.is_true("Succeeded") or d.is_true("Failed"):
            self._finished()
        elif self.spec.suspend:
            self._suspend()
        elif d.is_true("Suspended") and self.owned:
            self._wait_for_resume()
        else:
            self._active()
        if self.queue is not None:
            self._queue_writes()
        return self._result()

    # --- terminal, suspended --------------------------------------------------------------

    def _finished(self) -> None:
        d = self.d
        # Surviving pods are stopped; finished ones stay for their logs. The store has no more
        # rendezvous to keep.
        d.stop([p for p in self.owned if not p.finished])
        d.stop(self._store_pods())
        left = ttl_left(self.spec.ttl_seconds_after_finished, d.completion_time, d.now)
        if left is not None and left <= 0:
            d.delete_job = True
            d.emit("Normal", "Deleting", f"deleting the job {self.spec.ttl_seconds_after_finished}s after it finished (ttlSecondsAfterFinished)")
        else:
            d.after(left)
        if d.deletions:
            d.after(self.timing.wait_poll)
        self._queue_finished()

    def _suspend(self) -> None:
        d = self.d
        if self.current:
            # Resuming starts a new attempt, so that its logs, labels and PINERY_ATTEMPT are told
            # apart from those before the suspension (JobSet KEP-1282). Written with the pods'
            # deletion, as for a restart: from then on the old pods are stale.
            attempt = self._next_attempt()
            for node in self.nodes.values():
                node.attempt = attempt
            self._classify()
        d.stop(self.owned + self._store_pods())
        self._delete_groups(keep=None)  # with the pods: resuming starts the attempt's group afresh
        remaining = len(self.owned)
        message = f"waiting for {remaining} pods to stop" if remaining else "pods removed; status and restart count are kept"
        d.set("Suspended", "True", "Suspended", message, event="Normal")
        self._settle_running("Suspended", "the job is suspended")
        for node in self.nodes.values():
            node.clear_outcome()
            node.reason = "Suspended"
        if remaining:
            d.after(self.timing.wait_poll)
        self._queue_suspended()

    def _wait_for_resume(self) -> None:
        # Pods from before the suspension must be gone before new ones start, or their
        # deletion would look like a failure of the resumed job.
        self.d.stop(self.owned)
        self.d.set("Suspended", "True", "Resuming", f"waiting for {len(self.owned)} pods from before the suspension to stop")
        self.d.after(self.timing.wait_poll)

    def _settle_running(self, reason: str, message: str) -> None:
        if self.d.cond("Running"):
            self.d.set("Running", "False", reason, message)
        if self.d.is_true("Restarting"):
            self.d.set("Restarting", "False", reason, message)

    # --- Kueue (kueue.py; docs/scheduling-design.md, "The FSDPJob under Kueue") ------------

    def _queued(self) -> bool:
        """Whether Kueue holds the job's pods back in this pass: no pod (nor ConfigMap) until
        the Workload is admitted and its admission recorded in status.admission; the Service
        costs no quota. Mirrors ReconcileGenericJob: a missing Workload is created once no pod
        is active (`handleJobWithNoWorkload`); a deleted one, an eviction or a lost admission
        stops the pods (`stopJob`), and the quota is released only once none is active."""
        if self.queue is None:
            return False
        held = self._held_by_kueue()
        self._follow_queue_label()
        return held

    def _follow_queue_label(self) -> None:
        """A queue-name label changed after the Workload exists (kueue.queue_change): the
        Workload is moved, or the job says in its Queued condition, and once in a Warning, why not."""
        q, d = self.queue, self.d
        assert q is not None
        if q.wl is None:
            return
        change = kueue.queue_change(q.wl, kueue.queue_name(d.job))
        q.writes.want("queue", change.patch)
        told = d.cond("Queued")
        if change.held is None or told is None:
            return
        before = get_condition(list(d.old.get("conditions") or []), "Queued") or {}
        message = f"{told.get('message')}; {change.held}" if told.get("message") else change.held
        d.set("Queued", told["status"], str(told["reason"]), message)
        if change.held not in str(before.get("message") or ""):
            d.emit("Warning", "QueueNameNotApplied", change.held)

    def _held_by_kueue(self) -> bool:
        q = self.queue
        assert q is not None
        d = self.d
        name = kueue.workload_name(self.ref.name, self.ref.uid)
        queue = kueue.queue_name(d.job)
        wl = q.wl
        if queue is None and (wl is None or (wl.get("metadata") or {}).get("deletionTimestamp")):
            # The label was removed and the Workload is gone: the job has left Kueue.
            if wl is not None:
                q.writes.want("finalizer", kueue.finalizer_patch(wl))
            self.admission, self.placement = None, NO_PLACEMENT
            d.set("Queued", "False", "NotQueued", f"not queued: the job has no {kueue.QUEUE_LABEL} label and no Workload")
            return False
        if self.service is None:
            d.creates.append(build_service(self.ref, self.spec))
        if not q.served:
            self._hold("KueueNotInstalled", f"the job is labelled {kueue.QUEUE_LABEL}={queue}, but the API server serves no "
                       f"{kueue.API_VERSION} Workloads: install Kueue, or remove the label", event="Warning")
            d.after(self.timing.idle)
            return True
        if wl is None or (wl.get("metadata") or {}).get("deletionTimestamp"):
            self._lose_admission("WorkloadDeleted")
            if self._active_pods():
                self._hold("WorkloadDeleted", f"the Workload {name} was deleted; waiting for {len(self._active_pods())} pods to stop")
                d.after(self.timing.wait_poll)
                return True
            if wl is not None:  # being deleted: let it go (ReconcileGenericJob step 1.1)
                q.writes.want("finalizer", kueue.finalizer_patch(wl))
                self._hold("WorkloadDeleted", f"the Workload {name} is being deleted")
                return True
            return self._create_workload(name, queue)
        if kueue.is_finished(wl):
            finished = kueue.condition(wl, kueue.FINISHED) or {}
            self._fail("WorkloadFinished", f"Kueue declared the Workload {name} finished ({finished.get('reason')}): {finished.get('message') or ''}")
            return True
        q.writes.want("active", kueue.active_patch(wl, True))
        ev = kueue.eviction(wl)
        if ev is not None and (kueue.has_quota_reservation(wl) or self.admission is not None):
            status, reason, message = kueue.queued_condition(wl)
            told = d.cond("Queued") or {}
            self._lose_admission(reason)
            self._hold(reason, message)
            if told.get("status") != "True" or told.get("reason") != reason:
                d.emit("Normal", "Stopped", ev.message or f"evicted by Kueue ({reason})")
            self._settle_running(reason, message)
            if self._active_pods():
                d.after(self.timing.wait_poll)
            else:
                q.writes.want("requeue", kueue.requeue_patch(wl, ev, d.now), "status")
            return True
        if not kueue.is_admitted(wl):
            self._lose_admission("NotAdmitted")
            status, reason, message = kueue.queued_condition(wl)
            self._hold(reason, message)
            if self._active_pods():
                d.after(self.timing.wait_poll)
            return True
        cq = ((wl.get("status") or {}).get("admission") or {}).get("clusterQueue")
        admitted = f"Admitted by clusterQueue {cq}"
        if self.admission is not None and self.admission.workload == name:
            d.set("Queued", "False", "Admitted", admitted)
            return False
        result = kueue.admission(wl, q.flavors, self._template_pod())
        assert result is not None  # admitted
        if result.missing_flavors:
            self._hold("WaitingForResourceFlavors", f"admitted, but ResourceFlavor {', '.join(result.missing_flavors)} was not found")
            d.after(self.timing.wait_poll)
            return True
        if result.conflict is not None or result.admission is None:
            self._fail("AdmissionConflict", result.conflict or "no admission")
            return True
        # Recorded first: this attempt's pods are built from status.admission only, in the
        # next pass, so a crash between the status write and the pods cannot mix admissions.
        self.admission = result.admission
        self.placement = result.admission.placement
        d.set("Queued", "False", "Admitted", admitted)
        d.emit("Normal", "Started", admitted)
        for node in self.nodes.values():
            node.reason = "Admitted"
        return True

    def _create_workload(self, name: str, queue: Optional[str]) -> bool:
        q, d = self.queue, self.d
        assert q is not None
        priority = self._priority()
        if priority is False:
            assert q.priority is not None
            ref = q.priority[0]
            # ExtractPriority: Kueue creates no Workload, and warns (WorkloadPriorityClassNotFound).
            self._hold(f"{ref.kind}NotFound", f'{ref.kind} "{ref.name}" not found', event="Warning")
            d.after(self.timing.wait_poll)
            return True
        wl = kueue.workload(d.job, self.spec, self._template_pod(), priority or None)
        d.creates.append(wl)
        refusal = self._refusal(wl)
        if refusal:
            self._hold("FailedCreate", f"the API server refused to create Workload {name}: {refusal}", event="Warning")
            return True
        told = d.cond("Queued") or {}
        self._hold("Pending", f"waiting for Kueue to evaluate the Workload {name} in LocalQueue {queue}")
        if told.get("reason") != "Pending":
            d.emit("Normal", "CreatedWorkload", f"Created Workload: {self.ref.namespace}/{name}")
        return True

    def _priority(self) -> "tuple[kueue.PriorityRef, int] | None | Literal[False]":
        """The Workload's priority class and value; None without one; False when the class
        named does not exist."""
        q = self.queue
        if q is None or q.priority is None:
            return None
        ref, value = q.priority
        return False if value is None else (ref, value)

    def _hold(self, reason: str, message: str, event: Optional[EventType] = None) -> None:
        self.d.set("Queued", "True", reason, message, event=event)
        for i, node in self.nodes.items():
            if i not in self.current:
                node.reason = "Queued"

    def _active_pods(self) -> list[PodView]:
        """Pods still running or about to (Kueue's `IsActive`): the quota stays while any is."""
        return [p for p in self.owned if not p.finished]

    def _lose_admission(self, reason: str) -> None:
        """The admission is gone (evicted, not admitted, Workload deleted): every pod stops.
        When the attempt had one, or has pods, the next admission starts a new attempt, counted
        in status.requeues, not in restarts (written before any pod is deleted, as a restart:
        from then on the old pods are stale)."""
        if self.admission is not None or self.current:
            self.admission, self.placement = None, NO_PLACEMENT
            self.requeues += 1
            attempt = self._next_attempt()
            for node in self.nodes.values():
                node.attempt = attempt
                node.clear_outcome()
                node.reason = reason
            self._classify()
        self.d.stop(self.owned + self._store_pods())

    def _template_pod(self) -> dict[str, Any]:
        """Rank 0's pod without any admission: the Workload's template, and what an
        admission's labels and node selector must not contradict."""
        return build_pod(self.ref, self.spec, 0, 0, self.settings)

    def _queue_suspended(self) -> None:
        """`spec.suspend`: the Workload goes inactive (Kueue evicts it, reason Deactivated), and
        its quota is released once the pods are gone."""
        q = self.queue
        if q is None:
            return
        if q.wl is None:
            # 'when job is initially suspended, the Workload has active=false and it's not
            # admitted': the queue shows it, Kueue admits nothing.
            priority = self._priority()
            if q.served and kueue.queue_name(self.d.job) and not self._active_pods() and priority is not False:
                self.d.creates.append(kueue.workload(self.d.job, self.spec, self._template_pod(), priority or None))
            return
        q.writes.want("active", kueue.active_patch(q.wl, False))
        self._follow_queue_label()
        self.admission, self.placement = None, NO_PLACEMENT
        ev = kueue.eviction(q.wl)
        if ev is not None and not self._active_pods():
            q.writes.want("requeue", kueue.requeue_patch(q.wl, ev, self.d.now), "status")

    def _queue_finished(self) -> None:
        """The job finished: once no pod is active the Workload is Finished (Succeeded, Failed,
        or FailedToStart after an admission conflict), then its finalizer goes; the job's own
        deletion (ttl) waits for that, or the Workload would hang in deletion."""
        q, d = self.queue, self.d
        if q is None or q.wl is None:
            return
        wl = q.wl
        if not kueue.is_finished(wl):
            if self._active_pods():
                return
            failed = d.cond("Failed") or {}
            if d.is_true("Succeeded"):
                reason, message = "Succeeded", (d.cond("Succeeded") or {}).get("message") or "the job succeeded"
            else:
                reason = kueue.FAILED_TO_START if failed.get("reason") == "AdmissionConflict" else "Failed"
                message = failed.get("message") or "the job failed"
            q.writes.want("finished", kueue.finished_patch(wl, reason, message, d.now), "status")
        else:
            q.writes.want("finalizer", kueue.finalizer_patch(wl))
        if d.delete_job and kueue.FINALIZER in ((wl.get("metadata") or {}).get("finalizers") or []):
            d.delete_job = False
            d.events = [e for e in d.events if e.reason != "Deleting"]
            d.after(1.0)

    def _queue_writes(self) -> None:
        """At most one Workload write a pass, the first in the design's precedence; PodsReady
        follows the Running condition (`generatePodsReadyCondition`)."""
        q, d = self.queue, self.d
        assert q is not None
        wl = q.wl
        if wl is None or (wl.get("metadata") or {}).get("deletionTimestamp"):
            return
        if not (d.is_true("Succeeded") or d.is_true("Failed") or self.spec.suspend or kueue.is_finished(wl)):
            ready = d.is_true("Running") and self.admission is not None
            q.writes.want("pods_ready", kueue.pods_ready_patch(wl, ready, d.now), "status")
        first = q.writes.first()
        if first is not None:
            what, patch, subresource = first
            d.patches.append(ObjectPatch("Workload", str(wl["metadata"]["name"]), patch, subresource))
            if what == "queue":
                d.emit("Normal", "UpdatedWorkload", f"moved the Workload {wl['metadata']['name']} from LocalQueue "
                       f"{(wl.get('spec') or {}).get('queueName')} to {patch['spec']['queueName']}, as the job's {kueue.QUEUE_LABEL} label says")

    def _queue_status(self, status: dict[str, Any]) -> None:
        if self.admission is not None:
            status["admission"] = self.admission.to_status()
        else:
            status.pop("admission", None)
        if self.requeues:
            status["requeues"] = self.requeues

    # --- the active job -------------------------------------------------------------------

    def _active(self) -> None:
        d = self.d
        if d.is_true("Suspended"):
            d.set("Suspended", "False", "Resumed", "the job was resumed", event="Normal")
        if self._queued():
            return  # Kueue has not admitted the job (yet, or again): no pods
        self._ensure_shared_children()
        self._ensure_store()
        status, reason, message = synced_condition(self.changed)
        d.set("Synced", status, reason, message, event="Warning" if self.changed else None)
        self._observe_nodes()
        self._report_created()
        if self._deadline_exceeded():
            return
        d.stop(self.stale)
        failures, new = self._failures()
        store = self.store
        if store is not None and (store.finished or store.disrupted) and self._gang_live():
            # The store ended, or Kubernetes is taking it away (a drain, a preemption): every
            # agent loses its rendezvous, and their failures, now or later, are this restart's,
            # not failures of their own (rendezvous.store_lost).
            decision = rendezvous.store_lost(self.spec, self.n, self.restarts, self.disruptions, store)
        else:
            decision = disruption_policy.decide(self.spec, self.n, self.restarts, self.disruptions, failures, new)
        tails = {f.rank: self._log_tail(f) for f in decision.reported}
        for f in decision.reported:
            d.emit("Warning", "NodeDisrupted" if disruption_policy.is_disruption(f) else "NodeFailed", _quoting(f.describe(), tails[f.rank]))
        decision = self._keep_failures(decision, failures, tails)
        self._record_disruption(decision)
        if decision.action == "none":
            decision = self._stalled() or decision
        if decision.action in ("gang_restart", "replace"):
            self._avoid_nodes(decision)
        if decision.action == "fail":
            self._fail(decision.reason, decision.message)
            return
        if decision.action == "gang_restart":
            self._gang_restart(decision)
        elif decision.action == "replace":
            self._replace_nodes(decision)
        self._start_missing()
        self._collect_old_groups()
        self._report_refusals()
        self._evaluate()

    def _ensure_shared_children(self) -> None:
        if self.service is None:
            self.d.creates.append(build_service(self.ref, self.spec))
        if self.config_map is None:
            cm = build_config_map(self.ref, self.spec)
            if cm is not None:
                self.d.creates.append(cm)

    def _store_pods(self) -> list[PodView]:
        return [self.store] if self.store is not None else []

    def _ensure_store(self) -> None:
        """An elastic job's rendezvous store runs while the job does (rendezvous.store_step):
        one that ended is deleted and made again once gone; the gang it served restarts
        (`_active`, rendezvous.store_lost)."""
        if self.elastic is None:
            return
        d = self.d
        step = rendezvous.store_step(self.store, self.store_name_taken)
        if step == "create":
            store = build_rendezvous_pod(self.ref, self.spec, self.settings)
            assert store is not None  # elastic
            d.creates.append(store)
        elif step == "replace":
            assert self.store is not None
            if not self._gang_live():  # else the gang's restart tells of it
                d.emit("Warning", rendezvous.STORE_LOST, f"{rendezvous.describe_end(self.store)}; replacing it")
            d.stop([self.store])
            d.after(self.timing.wait_poll)
        elif step == "wait":
            d.after(self.timing.wait_poll)

    def _gang_live(self) -> bool:
        """Some node of the current attempt, made before the store ended, is past its wait for
        the store and has not ended: a gang that store served. Nodes still waiting just wait for
        the next store; pods made after the end (a restart already decided) are never counted
        against it, so a replayed pass restarts nothing twice."""
        assert self.store is not None
        ended = self.store.disrupted_at or self.store.finished_at
        return any(p.joined and not p.finished and not p.terminating
                   and (ended is None or p.created_at is None or p.created_at <= ended) for p in self.current.values())

    def _refusal(self, obj: dict[str, Any]) -> Optional[str]:
        """The API server's answer when it refused to create `obj` in the previous pass."""
        return self.d.refused.get(f"{obj['kind']}/{obj['metadata']['name']}")

    def _report_created(self) -> None:
        """Created turns True once the Service and every node's pod exist; pods that appear
        later (a restart, a replacement, a resume) get a PodsCreated Event. Both follow what
        was observed, so a creation the API server refused is never reported as done."""
        d = self.d
        fresh = [i for i, p in sorted(self.current.items()) if not self._observed_before(i)]
        if d.is_true("Created"):
            if fresh:
                names = ", ".join(pod_name(self.ref.name, i) for i in fresh)
                d.emit("Normal", "PodsCreated", f"created pods {names} (attempt {max(self.nodes[i].attempt for i in fresh)})")
            return
        shared = self.service is not None and (self.config_map is not None or self.spec.command is not None)
        if shared and all(i in self.current or self._known_failure(i) for i in range(self.n)):
            names = ", ".join(pod_name(self.ref.name, i) for i in sorted(self.current))
            d.set("Created", "True", "PodsCreated", f"created the headless Service and {len(self.current)} pods")
            d.emit("Normal", "Created", f"created pods {names}")

    def _deadline_exceeded(self) -> bool:
        deadline = self.spec.active_deadline_seconds
        left = active_deadline_left(deadline, self.d.start_time, self.d.cond("Suspended"), self.d.now, self.d.cond("Queued"))
        if left is None:
            return False
        if left > 0:
            self.d.after(left)
            return False
        self._fail("DeadlineExceeded", f"the job ran longer than activeDeadlineSeconds ({deadline}s)")
        return True

    def _failures(self) -> tuple[list[Failure], list[Failure]]:
        """(every node failed in its current attempt, those not yet acted upon)."""
        known = {i for i in range(self.n) if self._known_failure(i)}
        vanished = {i for i in range(self.n) if self._observed_before(i) and not self._name_taken(i)}
        names = [pod_name(self.ref.name, i) for i in range(self.n)]
        found = failure_policy.node_failures(self.n, self.current, names, self.old_nodes, known, vanished, self.d.now)
        check = failure_policy.rank0_alone(
            found, n=self.n, current=self.current, known_failed=known,
            node_reasons={i: node.reason for i, node in self.nodes.items()},
            elastic=self.elastic, now=self.d.now, grace=self.timing.rank0_exit_grace,
        )
        self.d.after(check.recheck_after)
        if check.exited_early:
            self.nodes[0].reason = "ExitedBeforeNodesJoined"
        return check.failures, [f for f in check.failures if f.rank not in known]

    def _stalled(self) -> Optional[failure_policy.FailureDecision]:
        """The progress watchdog (stall_policy): a running gang whose step stopped advancing is
        restarted as a failure, or fails the job without restarts left; else the pass comes
        back at the deadline (no pod event comes when a job hangs)."""
        d = self.d
        check = stall_policy.check(self.spec, d.cond("Running"), d.old.get("progress"), d.now)
        if not check.stalled:
            d.after(check.left)
            return None
        decision = failure_policy.restart_gang(self.spec, self.n, self.restarts, f"stalled: {check.message}", reason=stall_policy.REASON)
        if decision.action == "fail":
            d.emit("Warning", stall_policy.REASON, check.message)  # a restart tells it in its own Event
        return decision

    def _next_attempt(self) -> int:
        """A number no pod of the job carries yet: attempts are not restarts (a disruption or a
        Kueue eviction starts one without spending maxRestarts)."""
        return max([self.witnessed, *(node.attempt for node in self.nodes.values())]) + 1

    def _log_tail(self, f: Failure) -> str:
        """What is kept of the failed node's log: the tail the handler read, else the
        termination message of its pod."""
        text = self.d.failure_logs.get(f.pod)
        if text is None:
            p = self.current.get(f.rank)
            text = p.message if p is not None and p.name == f.pod else ""
        return log_tail.failure_tail(text)

    def _keep_failures(self, decision: failure_policy.FailureDecision, failures: list[Failure],
                       tails: Mapping[int, str]) -> failure_policy.FailureDecision:
        """Record the failed attempts in `status.failures` (written before any pod goes, so the
        tail outlives the pods), and quote the first failure's log in the Failed or Restarting
        message."""
        if decision.action == "none":
            return decision
        if decision.action == "replace":
            ended = [r.failure for r in decision.replacements]
        else:
            ended = list(decision.reported[:1])
        records = [log_tail.FailureRecord(self.nodes[f.rank].attempt, f.rank, f.pod, f.reason, f.exit_code, self.d.now_s,
                                          tails.get(f.rank, "")) for f in ended if f.rank in self.nodes]
        self.failures_kept = log_tail.keep(self.failures_kept, records)
        named = next((f for f in sorted(failures, key=failure_policy.first_to_fail) if decision.message.startswith(f.describe())), None)
        if named is not None and tails.get(named.rank):
            return replace(decision, message=_quoting(decision.message, tails[named.rank]))
        return decision

    def _record_disruption(self, decision: failure_policy.FailureDecision) -> None:
        f = decision.disrupted
        self.disruptions = decision.disruptions
        if f is not None:
            after = f"{node_list(sorted(c.rank for c in decision.collateral))} failed after it" if decision.collateral else ""
            message = "; ".join(m for m in (_clip(f.detail), after) if m)  # the ranks stay when the detail is clipped
            self.last_disruption = {"reason": f.reason, "message": message or None, "node": f.rank, "time": self.d.now_s}
            self.last_disruption = {k: v for k, v in self.last_disruption.items() if v is not None}

    def _avoid_nodes(self, decision: failure_policy.FailureDecision) -> None:
        """The nodes the failures acted on happened on, when they were not the job's own:
        recorded with the restart (before any pod goes), avoided by every later pod."""
        failures = [r.failure for r in decision.replacements if r.replaced] if decision.action == "replace" else list(decision.reported)
        attempts = {i: node.attempt for i, node in self.nodes.items()}
        update = node_avoidance.record(self.spec.node_avoidance, self.avoided, failures, n=self.n, attempts=attempts, now=self.d.now_s)
        self.avoided = update.avoided
        for entry in update.added:
            self.d.emit("Normal", "NodeAvoided", f"new pods avoid Kubernetes node {entry['nodeName']} ({entry['reason']}): {entry.get('message', '')}")

    def _avoidance_placement(self, placement: Placement) -> Placement:
        """What the pods created now carry to keep off the avoided nodes."""
        if not self.avoided:
            self.avoidance_mode = None
            return NO_PLACEMENT
        names = tuple(e["nodeName"] for e in self.avoided)
        template = self.spec.pod_template
        selector = {**((template.node_selector if template else None) or {}), **self.placement.node_selector, **placement.node_selector}
        mode = node_avoidance.mode(self.spec.node_avoidance, names, self.cluster_nodes, selector, self.n)
        self.avoidance_mode = mode
        return Placement(avoid_nodes=names, avoid_mode=mode)

    def _gang_restart(self, decision: failure_policy.FailureDecision) -> None:
        # The new attempt goes into the status patch, which is written before any pod is
        # deleted: the failed pods are stale from then on (see the restart protocol above).
        d = self.d
        self.restarts = decision.restarts
        attempt = self._next_attempt()
        for node in self.nodes.values():
            node.new_attempt(attempt, "Restarting")
        d.stop(self.current.values())
        self._classify()
        message = decision.message
        wait = disruption_policy.backoff(self.restarts + self.disruptions, self.spec.restart_backoff_seconds)
        if wait:
            self.next_attempt_after = now_rfc3339(d.now + timedelta(seconds=wait))
            message += f"; the next attempt starts at {self.next_attempt_after} ({wait:.0f}s backoff, restartBackoffSeconds)"
        reason = decision.reason or ("Disrupted" if decision.disrupted is not None else "GangRestart")
        d.set("Restarting", "True", reason, message)
        d.emit("Warning", reason, message)
        d.set("Running", "False", "Restarting", "the gang is restarting")

    def _replace_nodes(self, decision: failure_policy.FailureDecision) -> None:
        """Elastic: the others train on; each failed node gets a new pod that rejoins."""
        d = self.d
        for r in decision.replacements:
            f, node = r.failure, self.nodes[r.failure.rank]
            if not r.replaced:
                node.phase, node.exit_code, node.reason = "Failed", f.exit_code, f.reason
                d.emit("Warning", "NodeNotReplaced", r.message)
                continue
            node.new_attempt(self._next_attempt(), "Replacing")
            if f.rank in self.current:
                d.stop([self.current[f.rank]])
            d.emit("Warning", "NodeReplaced", r.message)
        self.restarts = decision.restarts
        self._classify()

    def _fail(self, reason: str, message: str) -> None:
        d = self.d
        d.set("Failed", "True", reason, message, event="Warning")
        self._settle_running(reason, message)
        d.completion_time = d.completion_time or d.now_s
        d.creates = [o for o in d.creates if o["kind"] not in ("Pod", "PodGroup")]
        d.stop([p for p in self.owned if not p.finished] + self._store_pods())
        for i, p in self.current.items():
            if not p.finished:
                self.nodes[i].reason = "Stopped"

    def _start_missing(self) -> None:
        d = self.d
        missing = [i for i in range(self.n) if i not in self.current and not self._known_failure(i)]
        blocked = [i for i in missing if self._name_taken(i)]
        if self.elastic is None and (self.stale or any(p.terminating for p in self.current.values())):
            # A gang starts together: the old pods must be gone first.
            d.after(self.timing.wait_poll)
            for i in missing:
                self.nodes[i].reason = "WaitingForOldPods"
            return
        if blocked:
            d.after(self.timing.wait_poll)
            for i in blocked:
                self.nodes[i].reason = "WaitingForOldPod"
        create = [i for i in missing if i not in blocked]
        placement = self._gang_placement()
        if not create:
            return
        due = parse_time(self.next_attempt_after)
        if due is not None and due > d.now:
            d.after((due - d.now).total_seconds())
            for i in create:
                self.nodes[i].reason = "BackingOff"
            return
        if placement is None:
            # The attempt's PodGroup is not there (yet): no pod may be scheduled outside it.
            d.after(self.timing.wait_poll)
            for i in create:
                self.nodes[i].reason = "GangSchedulerMissing" if self.gang_blocked else "WaitingForPodGroup"
            return
        # The start counts from the first attempt to create, refused or not, so the startup
        # timeout also ends a job whose pods the API server keeps refusing.
        d.start_time = d.start_time or d.now_s
        placement = placement + self._avoidance_placement(placement)
        for i in create:
            run_id = rendezvous.joining_run_id(self.ref.uid, self.nodes[i].attempt, self.current.values()) if self.elastic else None
            pod = build_pod(self.ref, self.spec, i, self.nodes[i].attempt, self.settings, self.placement + placement, run_id)
            d.creates.append(pod)
            refusal = self._refusal(pod)
            self.nodes[i].reason = "FailedCreate" if refusal else "Creating"
            if refusal and (self.old_nodes.get(i) or {}).get("reason") != "FailedCreate":
                d.emit("Warning", "FailedCreate", f"node {i}: the API server refused to create pod {pod['metadata']['name']}: {refusal}")

    def _report_refusals(self) -> None:
        """Until the job is Created, refused creations are its Created condition (the Pod ones
        have their own Warning per node, the Service and ConfigMap get this one)."""
        refused = [(o, r) for o in self.d.creates if (r := self._refusal(o))]
        if refused and not self.d.is_true("Created"):
            message = "; ".join(f"{o['kind']} {o['metadata']['name']}: {r}" for o, r in refused)
            event: Optional[EventType] = "Warning" if any(o["kind"] != "Pod" for o, _ in refused) else None
            self.d.set("Created", "False", "FailedCreate", f"the API server refused to create {message}", event=event)

    def _evaluate(self) -> None:
        """Running, Succeeded and the startup deadline, from the current pods."""
        d = self.d
        result = success_policy.outcome(self.n, self.elastic, self.current)
        if result.succeeded:
            d.stop([p for p in self.current.values() if not p.finished] + self._store_pods())
            d.set("Succeeded", "True", "AllNodesSucceeded", success_policy.success_message(self.n, self.elastic, self.current), event="Normal")
            self._settle_running("Succeeded", "the job finished")
            d.completion_time = d.completion_time or d.now_s
            return
        if result.started:
            d.set("Running", "True", "NodesRunning", f"{result.running_nodes} of {self.n} nodes running", event="Normal")
            if d.is_true("Restarting"):
                d.set("Restarting", "False", "Restarted", f"all nodes running again after restart {self.restarts}", event="Normal")
            d.after(self.timing.progress)
            return
        waiting = self._waiting_message()
        if self.gang_blocked:
            d.set("Running", "False", "GangSchedulerMissing", self.gang_blocked, event="Warning")
            return
        part = self._gang_explanation()
        if part:
            waiting = f"{part}; {waiting}"
        running = d.cond("Running") or {}
        if self.elastic is not None and (running.get("status") == "True" or running.get("reason") == "WaitingForNodes"):
            # Elastic training was under way: torchrun waits for enough nodes itself, and
            # fails (and so restarts the gang) when they do not come.
            d.set("Running", "False", "WaitingForNodes", f"fewer than {self.elastic.min_nodes} nodes running: {waiting}", event="Warning")
            d.after(self.timing.wait_poll)
            return
        if any(self._refusal(o) for o in d.creates):
            d.set("Running", "False", "FailedCreate", waiting)
            self._startup_deadline(waiting)
        elif d.is_true("Created") or d.creates or self.current:
            if not d.is_true("Restarting"):
                d.set("Running", "False", "PodsPending", waiting)
            self._startup_deadline(waiting)

    def _waiting_message(self) -> str:
        """Each waiting node and why; nodes waiting for the same reason share one entry."""
        waiting: dict[str, list[int]] = {}
        for i in range(self.n):
            p = self.current.get(i)
            if p is None or not p.started:
                reason = (p.reason if p else None) or self.nodes[i].reason or "Pending"
                detail = f": {p.detail}" if p is not None and p.detail else ""
                refusal = self.d.refused.get(f"Pod/{pod_name(self.ref.name, i)}") if p is None else None
                if refusal:
                    detail = f": {refusal}"
                waiting.setdefault(f"{reason}{detail}", []).append(i)
        parts = [f"{node_list(ranks)}: {why}" for why, ranks in waiting.items()]
        return "; ".join(parts) or "waiting for the pods to start"

    def _startup_deadline(self, waiting: str) -> None:
        if self.spec.gang is not None and gang.waits_in_queue(self._current_group(), self.spec.gang.scheduler):
            return  # queueing, not starting: the clock starts when the queue lets the gang in
        limit = self.spec.startup_timeout_seconds
        enqueued = self._pod_group_status().get("enqueuedTime") if self.spec.gang is not None else None
        left = startup_left(limit, self.d.start_time, self.d.conditions, self.d.now, later=[self.next_attempt_after, enqueued])
        if left is None:
            return
        if left > 0:
            self.d.after(left)
            return
        self._fail("StartupTimeout", f"the pods were not all running within startupTimeoutSeconds ({limit}s): {waiting}")

    # --- gang scheduling (gang.py) ---------------------------------------------------------

    def _group_attempt(self) -> int:
        """The attempt of the gang's current group: every node's, or for an elastic job the
        lowest (a replaced node joins the group the others run in)."""
        return min(node.attempt for node in self.nodes.values())

    def _current_group(self) -> Optional[dict[str, Any]]:
        if self.groups is None:
            return None
        return self.groups.get(pod_group_name(self.ref.name, self._group_attempt()))

    def _gang_placement(self) -> Optional[Placement]:
        """What the attempt's pods carry, once its PodGroup has been read back; None until then
        (the group is created in this pass when it is missing)."""
        scheduler = self.spec.gang.scheduler if self.spec.gang is not None else None
        if scheduler is None:
            return NO_PLACEMENT
        if self.groups is None:
            self._gang_missing(scheduler)
            return None
        attempt = self._group_attempt()
        group = self._current_group()
        if group is None:
            desired = gang.pod_group(self.ref, self.spec, attempt)
            if desired is not None and desired["metadata"]["name"] not in self.foreign_groups:
                self.d.creates.append(desired)
            return None
        if group["metadata"].get("deletionTimestamp"):
            return None  # deleted (a suspension, someone): created again once it is gone
        return gang.placement(self.ref, self.spec, attempt)

    def _gang_missing(self, scheduler: GangScheduler) -> None:
        installer = {"coscheduling": "scheduler-plugins (its PodGroup CRD, controller and coscheduling scheduler)", "volcano": "Volcano"}
        message = (
            f"spec.gang.scheduler is {scheduler}, but the API server has no PodGroup API "
            f"(CustomResourceDefinition {gang.CRD_NAMES[scheduler]}): install {installer[scheduler]} or remove spec.gang; "
            "the pods are created once it is there"
        )
        self.gang_blocked = message
        if not self.d.is_true("Created"):
            self.d.set("Created", "False", "GangSchedulerMissing", message)
        self.d.after(self.timing.wait_poll)

    def _gang_explanation(self) -> Optional[str]:
        """The group's state, for a job whose pods are not all running; while the scheduler
        still works on it, look again now and then (PodGroups are read, not watched)."""
        if self.spec.gang is None:
            return None
        part = gang.explain(self._current_group(), self.spec.gang.scheduler)
        if part:
            self.d.after(self.timing.gang_poll)
        return part

    def _pod_group_status(self) -> dict[str, Any]:
        assert self.spec.gang is not None
        name = pod_group_name(self.ref.name, self._group_attempt())
        return gang.group_status(name, self.spec.gang.scheduler, self._current_group(), self.d.old.get("podGroup"), self.d.now_s)

    def _collect_old_groups(self) -> None:
        """Delete the groups of older attempts once none of their pods is left."""
        attempt = self._group_attempt()
        if self.groups and not any(p.attempt < attempt for p in self.owned):
            self._delete_groups(keep=pod_group_name(self.ref.name, attempt))

    def _delete_groups(self, keep: Optional[str]) -> None:
        if self.spec.gang is None or not self.groups:
            return
        kind = gang.KIND_KEYS[self.spec.gang.scheduler]
        for name, group in sorted(self.groups.items()):
            meta = group["metadata"]
            if name != keep and not meta.get("deletionTimestamp"):
                self.d.object_deletions.append(ObjectDeletion(kind, name, meta.get("uid")))

    # --- result ---------------------------------------------------------------------------

    def _result(self) -> Plan:
        d = self.d
        status = dict(d.old)
        conditions = d.sorted()
        nodes = [self.nodes[i].to_status() for i in range(self.n)]
        status.update(conditions=conditions, phase=phase_of(conditions), restarts=self.restarts, nodes=nodes, observedGeneration=d.generation)
        if self.disruptions:
            status["disruptions"] = self.disruptions
        status.pop("avoidedNodes", None)
        status.pop("avoidanceMode", None)
        if self.avoided:
            status["avoidedNodes"] = self.avoided
        if self.avoided and self.avoidance_mode:
            status["avoidanceMode"] = self.avoidance_mode
        if self.queue is not None:
            self._queue_status(status)
        for key, value in (("startTime", d.start_time), ("completionTime", d.completion_time),
                           ("lastDisruption", self.last_disruption), ("nextAttemptAfter", self.next_attempt_after),
                           ("failures", self.failures_kept)):
            if value:
                status[key] = value
        if self.spec.gang is not None:
            if self.spec.suspend:
                status.pop("podGroup", None)
            else:
                status["podGroup"] = self._pod_group_status()
        if d.generation is None:
            status.pop("observedGeneration")
        return d.plan(status)


def _controller_uid(obj: Mapping[str, Any]) -> Optional[str]:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller"):
            return str(ref.get("uid"))
    return None


def _quoting(message: str, tail: str) -> str:
    """`message` with the last lines of a failed node's log (status.failures keeps more)."""
    return f"{message}; its log ends: {log_tail.last_lines(tail)}" if tail else message


def _clip(message: str) -> str:
    """Condition messages stay well inside the API's 32 KiB (many nodes, long server answers)."""
    if len(message) <= MAX_MESSAGE:
        return message
    return message[: MAX_MESSAGE - 40] + f"... ({len(message) - MAX_MESSAGE + 40} more characters)"
