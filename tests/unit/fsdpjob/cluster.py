"""An in-memory namespace that applies Plans step by step, and a kubelet the tests drive by hand.

It stands in for the API server only so that the pure `plan` can be exercised over many passes
(including passes cut short, as when the operator dies mid-way); the decisions under test are
all in `plan`.
"""

from __future__ import annotations

import copy
import itertools
from datetime import datetime, timedelta, timezone

from pinery.api.conditions import now_rfc3339
from pinery.fsdpjob import plan as make_plan
from pinery.fsdpjob.naming import config_map_name, pod_name, rendezvous_pod_name
from pinery.settings import OperatorSettings

T0 = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
SETTINGS = OperatorSettings(operator_image="op:test", trainer_image="trainer:test")
UID = "job-uid-1"


def job_object(spec: dict, name: str = "train", status: dict | None = None, generation: int = 1) -> dict:
    job = {
        "apiVersion": "pinery.dev/v1alpha1",
        "kind": "FSDPJob",
        "metadata": {"name": name, "namespace": "ml", "uid": UID, "generation": generation},
        "spec": spec,
    }
    if status is not None:
        job["status"] = status
    return job


class Crash(Exception):
    """The operator died between two steps of a plan."""


class Cluster:
    def __init__(self, job: dict, now: datetime = T0):
        self.job = copy.deepcopy(job)
        self.objects: dict[tuple[str, str], dict] = {}
        self.events: list = []
        self.job_deleted = False
        self.now = now
        self._uids = itertools.count(1)
        self.created_pods = 0
        # False: the API server serves no PodGroup API (its CRD is not installed).
        self.pod_group_api = True
        # What the handler read of failed pods' logs (log_tail.logs_to_read), by pod name.
        self.failure_logs: dict[str, str] = {}
        # The cluster's Nodes as the operator lists them (None: not allowed to).
        self.cluster_nodes: list[dict] | None = None

    # --- the API side ---------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.job["metadata"]["name"]

    @property
    def status(self) -> dict:
        return self.job.get("status") or {}

    def pods(self) -> list[dict]:
        return [copy.deepcopy(o) for (k, _), o in sorted(self.objects.items()) if k == "Pod"]

    def pod(self, rank: int) -> dict:
        return self.objects[("Pod", pod_name(self.name, rank))]

    def plan(self):
        return make_plan(
            copy.deepcopy(self.job),
            self.pods(),
            self.now,
            service=copy.deepcopy(self.objects.get(("Service", self.name))),
            config_map=copy.deepcopy(self.objects.get(("ConfigMap", config_map_name(self.name)))),
            settings=SETTINGS,
            pod_groups=self.pod_groups() if self.pod_group_api else None,
            failure_logs=dict(self.failure_logs),
            cluster_nodes=copy.deepcopy(self.cluster_nodes),
        )

    def pod_groups(self) -> list[dict]:
        return [copy.deepcopy(o) for (k, _), o in sorted(self.objects.items()) if k == "PodGroup"]

    def apply(self, plan, crash_after: int | None = None) -> None:
        for i, (action, payload) in enumerate(plan.steps()):
            if crash_after is not None and i >= crash_after:
                raise Crash(f"died before step {i}: {action}")
            getattr(self, f"_{action}")(payload)

    def reconcile(self):
        p = self.plan()
        self.apply(p)
        return p

    def _patch_status(self, patch: dict) -> None:
        status = dict(self.job.get("status") or {})
        for key, value in copy.deepcopy(patch).items():
            if value is None:
                status.pop(key, None)
            else:
                status[key] = value
        self.job["status"] = status

    def _delete_pod(self, deletion) -> None:
        pod = self.objects.get(("Pod", deletion.name))
        if pod is None or pod["metadata"]["uid"] != deletion.uid:
            return  # 404 or a failed uid precondition: nothing to do
        if deletion.force:
            del self.objects[("Pod", deletion.name)]
        else:
            pod["metadata"].setdefault("deletionTimestamp", now_rfc3339(self.now + timedelta(seconds=30)))

    def _create(self, obj: dict) -> None:
        key = (obj["kind"], obj["metadata"]["name"])
        if key in self.objects:
            return  # 409 AlreadyExists
        obj = copy.deepcopy(obj)
        obj["metadata"]["uid"] = f"uid-{next(self._uids)}"
        obj["metadata"]["creationTimestamp"] = now_rfc3339(self.now)
        if obj["kind"] == "Pod":
            obj["status"] = {"phase": "Pending"}
            self.created_pods += 1
        self.objects[key] = obj

    def _delete_object(self, deletion) -> None:
        kind = deletion.kind.partition(".")[0]  # a `Kind.group` key
        obj = self.objects.get((kind, deletion.name))
        if obj is not None and (deletion.uid is None or obj["metadata"]["uid"] == deletion.uid):
            del self.objects[(kind, deletion.name)]

    def _event(self, event) -> None:
        self.events.append(event)

    def _delete_job(self, _) -> None:
        self.job_deleted = True

    # --- the kubelet and the clock --------------------------------------------------------

    def tick(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)

    def finish_deletions(self) -> None:
        """Terminating pods go away."""
        for key, obj in list(self.objects.items()):
            if obj["metadata"].get("deletionTimestamp"):
                del self.objects[key]

    def bind(self, nodes: dict[int, str]) -> None:
        """The scheduler places pods: rank -> Kubernetes node."""
        for rank, node in nodes.items():
            self.pod(rank)["spec"]["nodeName"] = node

    def set_pod_status(self, rank: int, status: dict) -> None:
        self.pod(rank)["status"] = status

    def run(self, *ranks: int) -> None:
        for rank in ranks or self._ranks():
            self.set_pod_status(rank, running())

    def succeed(self, *ranks: int) -> None:
        for rank in ranks or self._ranks():
            self.set_pod_status(rank, exited(0, self.now))

    def fail(self, rank: int, code: int = 1, reason: str = "Error", message: str | None = None) -> None:
        self.set_pod_status(rank, exited(code, self.now, reason, message))

    def node_pods(self) -> list[dict]:
        """The training nodes' pods (an elastic job's rendezvous store is none)."""
        return [o for (k, _), o in sorted(self.objects.items()) if k == "Pod" and "pinery.dev/node-rank" in o["metadata"]["labels"]]

    def store(self) -> dict | None:
        """An elastic job's rendezvous store pod, when it exists."""
        return self.objects.get(("Pod", rendezvous_pod_name(self.name)))

    def _ranks(self) -> list[int]:
        return sorted(int(o["metadata"]["labels"]["pinery.dev/node-rank"]) for o in self.node_pods())

    def attempts(self) -> dict[int, int]:
        return {int(o["metadata"]["labels"]["pinery.dev/node-rank"]): int(o["metadata"]["labels"]["pinery.dev/attempt"]) for o in self.node_pods()}

    def condition(self, type_: str) -> dict:
        return next((c for c in self.status.get("conditions", []) if c["type"] == type_), {})


def running() -> dict:
    return {"phase": "Running", "containerStatuses": [{"name": "trainer", "state": {"running": {"startedAt": "2026-01-01T12:00:00Z"}}}]}


def exited(code: int, when: datetime, reason: str | None = None, message: str | None = None) -> dict:
    terminated = {"exitCode": code, "reason": reason or ("Completed" if code == 0 else "Error"), "finishedAt": now_rfc3339(when)}
    if message:
        terminated["message"] = message
    return {"phase": "Succeeded" if code == 0 else "Failed", "containerStatuses": [{"name": "trainer", "state": {"terminated": terminated}}]}


def waiting(reason: str, message: str = "") -> dict:
    return {"phase": "Pending", "containerStatuses": [{"name": "trainer", "state": {"waiting": {"reason": reason, "message": message}}}]}


def waiting_for_rank0() -> dict:
    """A node > 0 whose init container still waits for rank 0's port (the trainer waits too)."""
    return {
        "phase": "Pending",
        "initContainerStatuses": [{"name": "wait-for-rank0", "state": {"running": {"startedAt": "2026-01-01T12:00:00Z"}}}],
        "containerStatuses": [{"name": "trainer", "state": {"waiting": {"reason": "PodInitializing"}}}],
    }


def reached_rank0() -> dict:
    """A node > 0 whose init container reached rank 0 and exited 0; its trainer is about to start."""
    return {
        "phase": "Pending",
        "initContainerStatuses": [{"name": "wait-for-rank0", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}],
        "containerStatuses": [{"name": "trainer", "state": {"waiting": {"reason": "PodInitializing"}}}],
    }
