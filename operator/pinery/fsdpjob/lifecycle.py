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
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from typing import Mapping, Optional, Sequence

from pydantic import ValidationError

from pinery.api.conditions import get_condition, now_rfc3339, parse_time, set_condition
from pinery.api.fsdpjob import FSDPJobSpec
from pinery.api.immutability import changed_immutable_fields, mutable_fields
from pinery.fsdpjob.children import build_config_map, build_pod, build_service
from pinery.fsdpjob.naming import ANNOTATION_SPEC, JobRef, pod_name
from pinery.fsdpjob.observe import PodView, view_pod
from pinery.fsdpjob.plan import Event, Plan, PodDeletion, merge_patch
from pinery.settings import OperatorSettings
from pinery_trainer.exit_codes import NON_RETRYABLE

# A pod still there this long after its deletion deadline is on a node that stopped answering.
FORCE_DELETE_AFTER = timedelta(seconds=60)
# How long after rank 0 exited the nodes still waiting to join it are given to report that they
# did join (a node that reached rank 0 just before it exited may not have said so yet).
RANK0_EXIT_GRACE = timedelta(seconds=10)
# How often to look again while waiting for pods to go away.
WAIT_POLL_SECONDS = 5.0
# How often to look again while training runs (progress is read from the logs).
PROGRESS_SECONDS = 30.0

# Longest condition message written (the API allows 32768 characters).
MAX_MESSAGE = 4096

CONDITION_ORDER = ("Created", "Running", "Restarting", "Succeeded", "Failed", "Suspended", "Synced")


def phase_of(conditions: list[dict]) -> str:
    """status.phase, derived from the conditions (the conditions are the contract)."""
    for type_ in ("Succeeded", "Failed", "Suspended", "Restarting", "Running"):
        cond = get_condition(conditions, type_)
        if cond and cond.get("status") == "True":
            return type_
    return "Pending"


@dataclass(frozen=True)
class Failure:
    """A node that stopped for good in its current attempt."""

    rank: int
    pod: str
    reason: str
    exit_code: Optional[int]
    detail: str
    at: datetime

    def describe(self) -> str:
        code = f"exit code {self.exit_code}" if self.exit_code is not None else "no exit code"
        text = f"node {self.rank} (pod {self.pod}) failed: {code} ({self.reason})"
        return f"{text}: {self.detail}" if self.detail else text


def plan(
    job: dict,
    pods: Sequence[dict],
    now: datetime,
    *,
    service: Optional[dict] = None,
    config_map: Optional[dict] = None,
    settings: Optional[OperatorSettings] = None,
    refused: Optional[Mapping[str, str]] = None,
) -> Plan:
    """Decide one reconcile pass of an FSDPJob.

    `job` is the FSDPJob as read from the API (metadata with uid and generation, spec, status);
    `pods` every pod labelled with the job's name; `service` and `config_map` the job's
    Service and trainer ConfigMap when they exist. `refused` holds the creations the API server
    refused in the previous pass (quota, admission), as `Kind/name` -> its message: they are
    tried again, and reported in the conditions, the nodes and one Warning Event each.
    """
    return _Planner(job, pods, now, service, config_map, settings or OperatorSettings(), refused or {}).run()


class _Planner:
    def __init__(self, job, pods, now, service, config_map, settings, refused):
        self.job = job
        self.meta = job.get("metadata") or {}
        self.ref = JobRef.of(job)
        self.now = now.astimezone(timezone.utc)
        self.now_s = now_rfc3339(self.now)
        self.generation = self.meta.get("generation")
        self.old = copy.deepcopy(job.get("status") or {})
        self.conditions: list[dict] = list(self.old.get("conditions") or [])
        self.service, self.config_map, self.settings = service, config_map, settings
        self.refused = dict(refused)
        self.pods = [view_pod(p) for p in pods]
        self.creates: list[dict] = []
        self.deletions: dict[str, PodDeletion] = {}
        self.events: list[Event] = []
        self.requeue: list[float] = []
        self.delete_job = False
        self.start_time = self.old.get("startTime")
        self.completion_time = self.old.get("completionTime")

    # --- small helpers --------------------------------------------------------------------

    def cond(self, type_: str) -> Optional[dict]:
        return get_condition(self.conditions, type_)

    def is_true(self, type_: str) -> bool:
        c = self.cond(type_)
        return bool(c) and c.get("status") == "True"

    def set(self, type_: str, status: str, reason: str, message: str = "", event: Optional[str] = None) -> None:
        """Set a condition; emit an Event of type `event` when its status or reason changes."""
        old = self.cond(type_)
        message = _clip(message)
        self.conditions = set_condition(self.conditions, type_, status, reason, message, self.generation, self.now_s)
        if event and (old is None or old.get("status") != status or old.get("reason") != reason):
            self.events.append(Event(event, reason, message or f"{type_} is {status}"))

    def emit(self, type_: str, reason: str, message: str) -> None:
        self.events.append(Event(type_, reason, message))

    def stop(self, views) -> None:
        for v in views:
            if not v.terminating and v.uid not in self.deletions:
                self.deletions[v.uid] = PodDeletion(v.name, v.uid)

    def after(self, seconds: float) -> None:
        self.requeue.append(max(seconds, 1.0))

    # --- entry ----------------------------------------------------------------------------

    def run(self) -> Plan:
        if self.meta.get("deletionTimestamp"):
            return Plan(status=self.old)  # the garbage collector removes the children
        try:
            current = FSDPJobSpec.model_validate(self.job.get("spec") or {})
        except ValidationError as exc:
            return self._invalid(exc)
        self.spec, self.changed = self._effective_spec(current)
        self.n = self.spec.num_nodes
        self.elastic = self.spec.elastic
        self.owned = [p for p in self.pods if p.controller_uid == self.ref.uid and p.rank is not None]
        self.foreign = [p for p in self.pods if p not in self.owned]
        self._load_nodes()
        self._force_stuck()
        if self.is_true("Succeeded") or self.is_true("Failed"):
            self._finished()
        elif self.spec.suspend:
            self._suspend()
        elif self.is_true("Suspended") and self.owned:
            self._wait_for_resume()
        else:
            self._active()
        return self._result()

    def _effective_spec(self, current: FSDPJobSpec) -> tuple[FSDPJobSpec, list[str]]:
        """The spec the children are built from: the immutable fields the job was created with
        (recorded on its Service), the mutable ones as they are now."""
        record = ((self.service or {}).get("metadata") or {}).get("annotations", {}).get(ANNOTATION_SPEC)
        if not record:
            return current, []
        try:
            accepted = json.loads(record)
            mutable = set(mutable_fields(FSDPJobSpec))
            now_api = current.to_api()
            changed = changed_immutable_fields(FSDPJobSpec, accepted, now_api)
            if not changed:
                return current, []
            merged = {k: v for k, v in accepted.items() if k not in mutable}
            merged.update({k: v for k, v in now_api.items() if k in mutable})
            return FSDPJobSpec.model_validate(merged), changed
        except (ValueError, TypeError):
            return current, []  # an unreadable record: the current spec is all there is

    def _invalid(self, exc: ValidationError) -> Plan:
        errors = "; ".join(
            f"spec.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" if e["loc"] else e["msg"] for e in exc.errors()[:5]
        )
        if not self.is_true("Failed"):
            self.set("Failed", "True", "InvalidSpec", errors, event="Warning")
            self.completion_time = self.completion_time or self.now_s
        uid = (self.meta or {}).get("uid")
        self.stop([p for p in self.pods if p.controller_uid == uid and not p.finished])
        status = dict(self.old)
        status.update(conditions=self._sorted(), phase=phase_of(self.conditions), observedGeneration=self.generation)
        if self.completion_time:
            status["completionTime"] = self.completion_time
        return self._plan(status)

    # --- observed state -------------------------------------------------------------------

    def _load_nodes(self) -> None:
        old_nodes = {n.get("index"): n for n in self.old.get("nodes") or [] if isinstance(n, dict)}
        self.old_nodes = old_nodes
        self.nodes = {}
        for i in range(self.n):
            node = {"index": i, "pod": pod_name(self.ref.name, i), "restarts": 0, "attempt": 0}
            node.update({k: v for k, v in (old_nodes.get(i) or {}).items() if v is not None})
            node["pod"] = pod_name(self.ref.name, i)
            self.nodes[i] = node
        witnessed = max([p.attempt for p in self.owned], default=0)
        self.restarts = max(int(self.old.get("restarts") or 0), witnessed)
        for p in self.owned:
            if p.rank < self.n:
                self.nodes[p.rank]["attempt"] = max(self.nodes[p.rank]["attempt"], p.attempt)
        if self.elastic is None:
            # One attempt for the whole gang.
            gang = max([self.restarts] + [n["attempt"] for n in self.nodes.values()])
            self.restarts = gang
            for node in self.nodes.values():
                node["attempt"] = gang
        self._classify()

    def _classify(self) -> None:
        self.current: dict[int, PodView] = {}
        self.stale: list[PodView] = []
        for p in self.owned:
            if p.rank < self.n and p.attempt == self.nodes[p.rank]["attempt"]:
                self.current[p.rank] = p
            else:
                self.stale.append(p)

    def _force_stuck(self) -> None:
        for p in self.owned:
            if not (p.terminating and p.deletion_timestamp):
                continue
            due = p.deletion_timestamp + FORCE_DELETE_AFTER
            if self.now >= due:
                self.deletions[p.uid] = PodDeletion(p.name, p.uid, force=True)
            else:
                self.after((due - self.now).total_seconds())

    def _observe_nodes(self) -> None:
        """Copy what the current pods show into status.nodes."""
        for i, node in self.nodes.items():
            p = self.current.get(i)
            if p is None:
                if not self._known_failure(i):
                    node.pop("phase", None)
                    node.pop("exitCode", None)
                    node.pop("reason", None)
                continue
            node["phase"] = p.phase
            node["exitCode"] = p.exit_code
            node["reason"] = p.reason
            if p.terminating and not p.finished:
                node["reason"] = p.reason or "Terminating"

    def _observed_before(self, i: int) -> bool:
        """Status shows this node's current pod was seen, so its absence means it was deleted."""
        old = self.old_nodes.get(i) or {}
        return old.get("phase") is not None and old.get("attempt", 0) == self.nodes[i]["attempt"]

    def _known_failure(self, i: int) -> bool:
        """An elastic node whose failure was recorded without replacing it (no budget left)."""
        old = self.old_nodes.get(i) or {}
        return old.get("phase") == "Failed" and old.get("attempt", 0) == self.nodes[i]["attempt"]

    def _name_taken(self, i: int) -> bool:
        name = pod_name(self.ref.name, i)
        return any(p.name == name for p in self.pods)

    # --- terminal, suspended --------------------------------------------------------------

    def _finished(self) -> None:
        # Surviving pods are stopped; finished ones stay for their logs.
        self.stop([p for p in self.owned if not p.finished])
        ttl = self.spec.ttl_seconds_after_finished
        done = parse_time(self.completion_time)
        if ttl is not None and done is not None:
            left = (done + timedelta(seconds=ttl) - self.now).total_seconds()
            if left <= 0:
                self.delete_job = True
                self.emit("Normal", "Deleting", f"deleting the job {ttl}s after it finished (ttlSecondsAfterFinished)")
            else:
                self.after(left)
        if self.deletions:
            self.after(WAIT_POLL_SECONDS)

    def _suspend(self) -> None:
        self.stop(self.owned)
        remaining = len(self.owned)
        message = f"waiting for {remaining} pods to stop" if remaining else "pods removed; status and restart count are kept"
        self.set("Suspended", "True", "Suspended", message, event="Normal")
        self._settle_running("Suspended", "the job is suspended")
        for node in self.nodes.values():
            for key in ("phase", "exitCode"):
                node.pop(key, None)
            node["reason"] = "Suspended"
        if remaining:
            self.after(WAIT_POLL_SECONDS)

    def _wait_for_resume(self) -> None:
        # Pods from before the suspension must be gone before new ones start, or their
        # deletion would look like a failure of the resumed job.
        self.stop(self.owned)
        self.set("Suspended", "True", "Resuming", f"waiting for {len(self.owned)} pods from before the suspension to stop")
        self.after(WAIT_POLL_SECONDS)

    def _settle_running(self, reason: str, message: str) -> None:
        if self.cond("Running"):
            self.set("Running", "False", reason, message)
        if self.is_true("Restarting"):
            self.set("Restarting", "False", reason, message)

    # --- the active job -------------------------------------------------------------------

    def _active(self) -> None:
        if self.is_true("Suspended"):
            self.set("Suspended", "False", "Resumed", "the job was resumed", event="Normal")
        self._ensure_shared_children()
        self._synced()
        self._observe_nodes()
        self._report_created()
        if self._deadline_exceeded():
            return
        self.stop(self.stale)
        failures, new = self._failures()
        if any(self._non_retryable(f) for f in new):
            first = next(f for f in sorted(new, key=_order) if self._non_retryable(f))
            self._report(new)
            self._fail("NonRetryableExitCode", f"{first.describe()}; exit code {first.exit_code} is not retried")
            return
        if new:
            self._report(new)
            if self._gang_broken(failures):
                self._gang_restart(failures)
            else:
                self._replace_nodes(new)
            if self.is_true("Failed"):
                return
        self._start_missing()
        self._report_refusals()
        self._evaluate()

    def _ensure_shared_children(self) -> None:
        if self.service is None:
            self.creates.append(build_service(self.ref, self.spec))
        if self.config_map is None:
            cm = build_config_map(self.ref, self.spec)
            if cm is not None:
                self.creates.append(cm)

    def _refusal(self, obj: dict) -> Optional[str]:
        """The API server's answer when it refused to create `obj` in the previous pass."""
        return self.refused.get(f"{obj['kind']}/{obj['metadata']['name']}")

    def _report_created(self) -> None:
        """Created turns True once the Service and every node's pod exist; pods that appear
        later (a restart, a replacement, a resume) get a PodsCreated Event. Both follow what
        was observed, so a creation the API server refused is never reported as done."""
        fresh = [i for i, p in sorted(self.current.items()) if not self._observed_before(i)]
        if self.is_true("Created"):
            if fresh:
                names = ", ".join(pod_name(self.ref.name, i) for i in fresh)
                self.emit("Normal", "PodsCreated", f"created pods {names} (attempt {max(self.nodes[i]['attempt'] for i in fresh)})")
            return
        shared = self.service is not None and (self.config_map is not None or self.spec.command is not None)
        if shared and all(i in self.current or self._known_failure(i) for i in range(self.n)):
            names = ", ".join(pod_name(self.ref.name, i) for i in sorted(self.current))
            self.set("Created", "True", "PodsCreated", f"created the headless Service and {len(self.current)} pods")
            self.emit("Normal", "Created", f"created pods {names}")

    def _synced(self) -> None:
        if self.changed:
            fields = ", ".join(f"spec.{f}" for f in self.changed)
            self.set(
                "Synced", "False", "ImmutableFieldChanged",
                f"{fields} changed after the job was created and cannot change in place: the pods keep "
                "running the spec the job was created with; delete and recreate the job to change it",
                event="Warning",
            )
        else:
            self.set("Synced", "True", "SpecApplied", "the pods run the job's spec")

    def _deadline_exceeded(self) -> bool:
        deadline = self.spec.active_deadline_seconds
        start = parse_time(self.start_time)
        if deadline is None or start is None:
            return False
        resumed = self.cond("Suspended")
        if resumed and resumed.get("status") == "False":
            start = max(start, parse_time(resumed.get("lastTransitionTime")) or start)
        left = (start + timedelta(seconds=deadline) - self.now).total_seconds()
        if left > 0:
            self.after(left)
            return False
        self._fail("DeadlineExceeded", f"the job ran longer than activeDeadlineSeconds ({deadline}s)")
        return True

    def _failures(self) -> tuple[list[Failure], list[Failure]]:
        """(every node failed in its current attempt, those not yet acted upon)."""
        all_: list[Failure] = []
        for i in range(self.n):
            p = self.current.get(i)
            name = pod_name(self.ref.name, i)
            if p is None:
                old = self.old_nodes.get(i) or {}
                if self._known_failure(i):
                    f = Failure(i, name, old.get("reason") or "Error", old.get("exitCode"), "", self.now)
                elif self._observed_before(i) and not self._name_taken(i):
                    f = Failure(i, name, "PodDeleted", None, "the pod disappeared", self.now)
                else:
                    continue
            elif p.failed:
                f = Failure(i, name, p.reason or "Error", p.exit_code, p.detail, p.finished_at or self.now)
            elif p.terminating:
                reason = p.reason if p.reason not in (None, "Terminating") else "PodDeleted"
                f = Failure(i, name, reason, None, p.detail or "the pod was deleted by someone other than pinery", self.now)
            else:
                continue
            all_.append(f)
        all_ = self._rank0_alone(all_)
        return all_, [f for f in all_ if not self._known_failure(f.rank)]

    def _stranded(self, failed: set[int]) -> list[int]:
        """Nodes of the current attempt that have not joined rank 0 and have not failed: no
        pod yet, or a pod before or in its wait for rank 0."""
        out = []
        for i in range(1, self.n):
            p = self.current.get(i)
            if i not in failed and not self._known_failure(i) and (p is None or not p.joined):
                out.append(i)
        return out

    def _rank0_alone(self, failures: list[Failure]) -> list[Failure]:
        """`failures`, counting it against rank 0 that it exited while other nodes still
        waited to join it. They never can (their wait is for rank 0's port, and rank 0 is not
        restarted alone), so the job did not run on all nodes. A rank 0 that failed is a
        failure anyway: its message now says who never joined. One that exited 0 becomes a
        failure, RANK0_EXIT_GRACE after it finished (a node that reached rank 0 just before
        may not have said so yet); elastic jobs only when they cannot succeed without those
        nodes."""
        rank0 = self.current.get(0)
        if rank0 is None or not rank0.finished:
            return failures
        stranded = self._stranded({f.rank for f in failures})
        if not stranded:
            return failures
        never = self._never_joined(stranded)
        own = next((f for f in failures if f.rank == 0), None)
        if own is not None:
            detail = f"{own.detail}; {never}" if own.detail else never
            return [replace(f, detail=detail) if f is own else f for f in failures]
        if self.elastic is not None:
            others = [p for i, p in self.current.items() if i not in stranded]
            if any(p.running for p in others) or sum(1 for p in others if p.succeeded) >= self.elastic.min_nodes:
                return failures  # still training, or a success: the elastic rules decide
        finished = rank0.finished_at or self.now
        left = (finished + RANK0_EXIT_GRACE - self.now).total_seconds()
        if left > 0:
            self.after(left)
            return failures
        self.nodes[0]["reason"] = "ExitedBeforeNodesJoined"
        detail = f"rank 0 exited before the other nodes joined: {never}"
        return [Failure(0, rank0.name, "ExitedBeforeNodesJoined", rank0.exit_code, detail, finished), *failures]

    def _never_joined(self, stranded: list[int]) -> str:
        """`node 2 never joined (WaitingForRank0)`; with several reasons, grouped by reason."""
        why: dict[str, list[int]] = {}
        for i in stranded:
            p = self.current.get(i)
            reason = (p.reason if p is not None else None) or self.nodes[i].get("reason") or "Pending"
            why.setdefault(reason, []).append(i)
        if len(why) == 1:
            return f"{_node_list(stranded)} never joined ({next(iter(why))})"
        return f"{_node_list(stranded)} never joined (" + "; ".join(f"{_node_list(r)}: {w}" for w, r in why.items()) + ")"

    def _non_retryable(self, f: Failure) -> bool:
        codes = set(self.spec.non_retryable_exit_codes or ())
        if self.spec.command is None:
            codes.update(NON_RETRYABLE)
        return f.exit_code is not None and f.exit_code in codes

    def _report(self, new: list[Failure]) -> None:
        for f in sorted(new, key=_order):
            self.emit("Warning", "NodeFailed", f.describe())

    def _gang_broken(self, failures: list[Failure]) -> bool:
        if self.elastic is None:
            return True
        if any(f.rank == 0 for f in failures):
            return True  # rank 0 hosts the rendezvous store: the others cannot go on without it
        return self.n - len(failures) < self.elastic.min_nodes

    def _gang_restart(self, failures: list[Failure]) -> None:
        first = sorted(failures, key=_order)[0]
        limit = self.spec.max_restarts
        if self.restarts >= limit:
            self._fail("RestartLimitExceeded", f"{first.describe()}; no restarts left ({self.restarts} of {limit} used)")
            return
        self.restarts += 1
        for node in self.nodes.values():
            node.update(attempt=self.restarts, restarts=node["restarts"] + 1, reason="Restarting")
            node.pop("phase", None)
            node.pop("exitCode", None)
        self.stop(self.current.values())
        self._classify()
        message = f"{first.describe()}; restarting all {self.n} nodes (restart {self.restarts} of {limit})"
        self.set("Restarting", "True", "GangRestart", message)
        self.emit("Warning", "GangRestart", message)
        self.set("Running", "False", "Restarting", "the gang is restarting")

    def _replace_nodes(self, new: list[Failure]) -> None:
        """Elastic: the others train on; each failed node gets a new pod that rejoins."""
        limit = self.spec.max_restarts
        for f in sorted(new, key=lambda f: f.rank):
            node = self.nodes[f.rank]
            if self.restarts >= limit:
                node.update(phase="Failed", exitCode=f.exit_code, reason=f.reason)
                self.emit("Warning", "NodeNotReplaced", f"{f.describe()}; no restarts left ({limit} of {limit} used): training goes on without it")
                continue
            self.restarts += 1
            node.update(attempt=self.restarts, restarts=node["restarts"] + 1, reason="Replacing")
            node.pop("phase", None)
            node.pop("exitCode", None)
            if f.rank in self.current:
                self.stop([self.current[f.rank]])
            self.emit("Warning", "NodeReplaced", f"{f.describe()}; replacing its pod (restart {self.restarts} of {limit})")
        self._classify()

    def _fail(self, reason: str, message: str) -> None:
        self.set("Failed", "True", reason, message, event="Warning")
        self._settle_running(reason, message)
        self.completion_time = self.completion_time or self.now_s
        self.creates = [o for o in self.creates if o["kind"] != "Pod"]
        self.stop([p for p in self.owned if not p.finished])
        for i, p in self.current.items():
            if not p.finished:
                self.nodes[i]["reason"] = "Stopped"

    def _start_missing(self) -> None:
        missing = [i for i in range(self.n) if i not in self.current and not self._known_failure(i)]
        blocked = [i for i in missing if self._name_taken(i)]
        if self.elastic is None and (self.stale or any(p.terminating for p in self.current.values())):
            # A gang starts together: the old pods must be gone first.
            self.after(WAIT_POLL_SECONDS)
            for i in missing:
                self.nodes[i]["reason"] = "WaitingForOldPods"
            return
        if blocked:
            self.after(WAIT_POLL_SECONDS)
            for i in blocked:
                self.nodes[i]["reason"] = "WaitingForOldPod"
        create = [i for i in missing if i not in blocked]
        if not create:
            return
        # The start counts from the first attempt to create, refused or not, so the startup
        # timeout also ends a job whose pods the API server keeps refusing.
        self.start_time = self.start_time or self.now_s
        for i in create:
            pod = build_pod(self.ref, self.spec, i, self.nodes[i]["attempt"], self.settings)
            self.creates.append(pod)
            refusal = self._refusal(pod)
            self.nodes[i]["reason"] = "FailedCreate" if refusal else "Creating"
            if refusal and (self.old_nodes.get(i) or {}).get("reason") != "FailedCreate":
                self.emit("Warning", "FailedCreate", f"node {i}: the API server refused to create pod {pod['metadata']['name']}: {refusal}")

    def _report_refusals(self) -> None:
        """Until the job is Created, refused creations are its Created condition (the Pod ones
        have their own Warning per node, the Service and ConfigMap get this one)."""
        refused = [(o, r) for o in self.creates if (r := self._refusal(o))]
        if refused and not self.is_true("Created"):
            message = "; ".join(f"{o['kind']} {o['metadata']['name']}: {r}" for o, r in refused)
            event = "Warning" if any(o["kind"] != "Pod" for o, _ in refused) else None
            self.set("Created", "False", "FailedCreate", f"the API server refused to create {message}", event=event)

    def _evaluate(self) -> None:
        """Running, Succeeded and the startup deadline, from the current pods."""
        pods = self.current
        if self.elastic is None:
            succeeded = len(pods) == self.n and all(p.succeeded and p.exit_code in (0, None) for p in pods.values())
            started = len(pods) == self.n and all(p.started and not p.failed for p in pods.values())
            running_nodes = sum(1 for p in pods.values() if p.running)
        else:
            alive = [p for p in pods.values() if not p.failed]
            done = [p for p in alive if p.succeeded]
            running_nodes = sum(1 for p in alive if p.running)
            succeeded = running_nodes == 0 and len(done) >= self.elastic.min_nodes
            started = sum(1 for p in alive if p.running or p.succeeded) >= self.elastic.min_nodes
        if succeeded:
            self.stop([p for p in pods.values() if not p.finished])
            self.set("Succeeded", "True", "AllNodesSucceeded", self._success_message(), event="Normal")
            self._settle_running("Succeeded", "the job finished")
            self.completion_time = self.completion_time or self.now_s
            return
        if started:
            message = f"{running_nodes} of {self.n} nodes running"
            self.set("Running", "True", "NodesRunning", message, event="Normal")
            if self.is_true("Restarting"):
                self.set("Restarting", "False", "Restarted", f"all nodes running again after restart {self.restarts}", event="Normal")
            self.after(PROGRESS_SECONDS)
            return
        waiting = self._waiting_message()
        running = self.cond("Running") or {}
        if self.elastic is not None and (running.get("status") == "True" or running.get("reason") == "WaitingForNodes"):
            # Elastic training was under way: torchrun waits for enough nodes itself, and
            # fails (and so restarts the gang) when they do not come.
            self.set("Running", "False", "WaitingForNodes", f"fewer than {self.elastic.min_nodes} nodes running: {waiting}", event="Warning")
            self.after(WAIT_POLL_SECONDS)
            return
        if any(self._refusal(o) for o in self.creates):
            self.set("Running", "False", "FailedCreate", waiting)
            self._startup_deadline(waiting)
        elif self.is_true("Created") or self.creates or self.current:
            if not self.is_true("Restarting"):
                self.set("Running", "False", "PodsPending", waiting)
            self._startup_deadline(waiting)

    def _success_message(self) -> str:
        if self.elastic is None:
            return f"all {self.n} nodes exited 0"
        done = sorted(i for i, p in self.current.items() if p.succeeded)
        return f"{len(done)} of {self.n} nodes exited 0 (elastic, at least {self.elastic.min_nodes} needed)"

    def _waiting_message(self) -> str:
        """Each waiting node and why; nodes waiting for the same reason share one entry."""
        waiting: dict[str, list[int]] = {}
        for i in range(self.n):
            p = self.current.get(i)
            if p is None or not p.started:
                reason = (p.reason if p else None) or self.nodes[i].get("reason") or "Pending"
                detail = f": {p.detail}" if p is not None and p.detail else ""
                refusal = self.refused.get(f"Pod/{pod_name(self.ref.name, i)}") if p is None else None
                if refusal:
                    detail = f": {refusal}"
                waiting.setdefault(f"{reason}{detail}", []).append(i)
        parts = [f"{_node_list(ranks)}: {why}" for why, ranks in waiting.items()]
        return "; ".join(parts) or "waiting for the pods to start"

    def _startup_deadline(self, waiting: str) -> None:
        starts = [parse_time(self.start_time)]
        for type_, status in (("Restarting", "True"), ("Suspended", "False")):
            c = self.cond(type_)
            if c and c.get("status") == status:
                starts.append(parse_time(c.get("lastTransitionTime")))
        starts = [s for s in starts if s is not None]
        if not starts:
            return
        limit = self.spec.startup_timeout_seconds
        left = (max(starts) + timedelta(seconds=limit) - self.now).total_seconds()
        if left > 0:
            self.after(left)
            return
        self._fail("StartupTimeout", f"the pods were not all running within startupTimeoutSeconds ({limit}s): {waiting}")

    # --- result ---------------------------------------------------------------------------

    def _sorted(self) -> list[dict]:
        rank = {t: i for i, t in enumerate(CONDITION_ORDER)}
        return sorted(self.conditions, key=lambda c: rank.get(c.get("type"), len(rank)))

    def _result(self) -> Plan:
        status = dict(self.old)
        conditions = self._sorted()
        nodes = [{k: v for k, v in self.nodes[i].items() if v is not None} for i in range(self.n)]
        status.update(conditions=conditions, phase=phase_of(conditions), restarts=self.restarts, nodes=nodes, observedGeneration=self.generation)
        for key, value in (("startTime", self.start_time), ("completionTime", self.completion_time)):
            if value:
                status[key] = value
        if self.generation is None:
            status.pop("observedGeneration")
        return self._plan(status)

    def _plan(self, status: dict) -> Plan:
        return Plan(
            status=status,
            status_patch=merge_patch(self.old, status),
            create=tuple(self.creates),
            delete_pods=tuple(self.deletions.values()),
            delete_job=self.delete_job,
            events=tuple(self.events),
            requeue_after=min(self.requeue) if self.requeue else None,
        )


def _order(f: Failure) -> tuple:
    return (f.at, f.rank)


def _node_list(ranks: list[int]) -> str:
    """`node 3`, or `nodes 0-2, 5` for several (sorted ranks)."""
    if len(ranks) == 1:
        return f"node {ranks[0]}"
    spans: list[list[int]] = []
    for r in ranks:
        if spans and r == spans[-1][1] + 1:
            spans[-1][1] = r
        else:
            spans.append([r, r])
    return "nodes " + ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def _clip(message: str) -> str:
    """Condition messages stay well inside the API's 32 KiB (many nodes, long server answers)."""
    if len(message) <= MAX_MESSAGE:
        return message
    return message[: MAX_MESSAGE - 40] + f"... ({len(message) - MAX_MESSAGE + 40} more characters)"
