"""What an observed pod says about its node: pure readings of Pod objects, no decisions."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Optional

from pinery.api.conditions import parse_time
from pinery.fsdpjob.naming import LABEL_ATTEMPT, LABEL_RANK, RENDEZVOUS_WAIT_CONTAINER, TRAINER_CONTAINER, WAIT_CONTAINER

# torchrun's failure summary ends the log; the kubelet keeps that tail as the termination
# message (FallbackToLogsOnError). Its root cause names the worker's own exit code.
_ROOT_CAUSE = re.compile(r"Root Cause \(first observed failure\):(?P<body>.*)", re.S)
_EXITCODE = re.compile(r"^\s*exitcode\s*:\s*(-?\d+)", re.M)
_RANK = re.compile(r"^\s*rank\s*:\s*(\d+)", re.M)


@dataclass(frozen=True)
class _Wait:
    """What a node's init container waits for, in its reasons and messages."""

    waiting: str  # the node's reason while it waits
    unreachable: str  # its reason when the wait gave up
    target: str


# Static nodes other than rank 0 wait for rank 0; elastic nodes for the job's rendezvous store.
_WAITS = {
    WAIT_CONTAINER: _Wait("WaitingForRank0", "Rank0Unreachable", "rank 0"),
    RENDEZVOUS_WAIT_CONTAINER: _Wait("WaitingForRendezvous", "RendezvousUnreachable", "the rendezvous store"),
}


@dataclass(frozen=True)
class WorkerFailure:
    """The first failed worker process of a torchrun agent, from its failure summary."""

    rank: Optional[int]
    exit_code: int


def torchrun_root_cause(message: Optional[str]) -> Optional[WorkerFailure]:
    """The root cause of torchrun's failure summary, with signals as 128 + signal number."""
    match = _ROOT_CAUSE.search(message or "")
    if not match:
        return None
    body = match.group("body")
    code = _EXITCODE.search(body)
    if not code:
        return None
    exit_code = int(code.group(1))
    if exit_code < 0:
        exit_code = 128 - exit_code  # torchrun reports a worker killed by signal N as -N
    rank = _RANK.search(body)
    return WorkerFailure(int(rank.group(1)) if rank else None, exit_code)


@dataclass(frozen=True)
class PodView:
    """One pod of an FSDPJob, as far as the lifecycle decisions are concerned."""

    name: str
    uid: str
    rank: Optional[int]
    attempt: int
    controller_uid: Optional[str]
    phase: str
    terminating: bool
    deletion_timestamp: Optional[datetime]
    created_at: Optional[datetime]
    # The training container is running or has run.
    started: bool
    # Past the wait for rank 0: the wait container exited 0 (it reached rank 0), or the
    # training container has started. Always so for a pod without that wait (rank 0).
    joined: bool
    # The exit code of the training: the worker's own code when torchrun reported one.
    exit_code: Optional[int]
    container_exit_code: Optional[int]
    reason: Optional[str]
    detail: str
    finished_at: Optional[datetime]
    # Kubernetes marked the pod's end a disruption (DisruptionTarget True), whatever the reason.
    disrupted: bool = False
    # When it did: the condition's lastTransitionTime, written as the disruption begins.
    disrupted_at: Optional[datetime] = None
    # The Kubernetes node the pod is bound to (spec.nodeName).
    node_name: Optional[str] = None
    # The training container's termination message: the end of its log after a failure
    # (FallbackToLogsOnError), unless it wrote one itself.
    message: str = ""
    # An elastic node's rendezvous run (PET_RDZV_ID, rendezvous.py); None for static nodes.
    rendezvous_id: Optional[str] = None

    @property
    def failed(self) -> bool:
        return self.phase in ("Failed", "Unknown")

    @property
    def succeeded(self) -> bool:
        return self.phase == "Succeeded"

    @property
    def running(self) -> bool:
        return self.phase == "Running" and not self.terminating

    @property
    def finished(self) -> bool:
        return self.failed or self.succeeded


def _container_status(statuses: Optional[list[dict[str, Any]]], name: str) -> dict[str, Any]:
    for status in statuses or []:
        if status.get("name") == name:
            return status
    return {}


def _condition(pod_status: dict[str, Any], type_: str) -> dict[str, Any]:
    conditions: list[dict[str, Any]] = pod_status.get("conditions") or []
    for cond in conditions:
        if cond.get("type") == type_:
            return cond
    return {}


def _int_label(labels: dict[str, Any], key: str) -> Optional[int]:
    try:
        return int(labels[key])
    except (KeyError, TypeError, ValueError):
        return None


def _controller_uid(meta: dict[str, Any]) -> Optional[str]:
    refs: list[dict[str, Any]] = meta.get("ownerReferences") or []
    for ref in refs:
        if ref.get("controller"):
            uid: Optional[str] = ref.get("uid")
            return uid
    return None


def _wait_of(pod: dict[str, Any]) -> Optional[str]:
    """The init container a node waits in (children.py): rank 0's static peers wait for it,
    elastic nodes for the rendezvous store; None for static rank 0."""
    for c in (pod.get("spec") or {}).get("initContainers") or []:
        if c.get("name") in _WAITS:
            return str(c["name"])
    return None


def _rendezvous_id(pod: dict[str, Any]) -> Optional[str]:
    for c in (pod.get("spec") or {}).get("containers") or []:
        if c.get("name") == TRAINER_CONTAINER:
            for var in c.get("env") or []:
                if var.get("name") == "PET_RDZV_ID" and var.get("value"):
                    return str(var["value"])
    return None


def view_pod(pod: dict[str, Any]) -> PodView:
    meta = pod.get("metadata") or {}
    status = pod.get("status") or {}
    labels = meta.get("labels") or {}
    phase = status.get("phase") or "Pending"
    trainer = _container_status(status.get("containerStatuses"), TRAINER_CONTAINER)
    wait_name = _wait_of(pod)
    wait = _WAITS[wait_name or WAIT_CONTAINER]
    waiter = _container_status(status.get("initContainerStatuses"), wait_name or WAIT_CONTAINER)
    state = trainer.get("state") or {}
    terminated = state.get("terminated") or (trainer.get("lastState") or {}).get("terminated") or {}
    container_code = terminated.get("exitCode")
    exit_code = container_code
    reason: Optional[str] = None
    detail = ""

    root = torchrun_root_cause(terminated.get("message")) if container_code not in (None, 0) else None
    if root is not None:
        exit_code = root.exit_code
        worker = f"worker rank {root.rank}" if root.rank is not None else "a worker"
        detail = f"torchrun exited with {container_code} because {worker} exited with {root.exit_code}"
    disruption = _condition(status, "DisruptionTarget")
    scheduled = _condition(status, "PodScheduled")
    waiter_done = (waiter.get("state") or {}).get("terminated") or {}

    # Kubernetes' word that the pod's end is a disruption: the condition, and the pod ended or ending.
    disrupted = disruption.get("status") == "True" and (phase in ("Failed", "Unknown") or bool(meta.get("deletionTimestamp")))
    if disrupted:
        # Kubernetes' own word that the pod was disrupted, not failed (disruption_policy):
        # it outranks status.reason, which a kubelet eviction also sets (Evicted).
        reason = disruption.get("reason") or "Disrupted"
        detail = status.get("message") or disruption.get("message") or detail
    elif status.get("reason") in ("Evicted", "NodeLost", "Shutdown", "Terminated", "NodeShutdown", "UnexpectedAdmissionError", "OutOfcpu", "OutOfmemory"):
        reason = status["reason"]
        detail = status.get("message") or detail
    elif phase == "Unknown":
        reason, detail = "NodeLost", "the pod's node stopped reporting"
    elif phase == "Failed" and waiter_done.get("exitCode") not in (None, 0) and not terminated:
        reason = wait.unreachable
        detail = f"{wait_name} exited with {waiter_done.get('exitCode')}: {wait.target} did not accept connections in time"
    elif phase in ("Failed", "Succeeded"):
        reason = terminated.get("reason") or ("Completed" if phase == "Succeeded" else "Error")
    elif meta.get("deletionTimestamp"):
        reason = "Terminating"
    elif phase == "Pending":
        # While the wait container runs, the training container waits too (PodInitializing;
        # ContainerCreating in local mode): the wait is the reason worth showing.
        waiter_waiting = (waiter.get("state") or {}).get("waiting") or {}
        trainer_waiting = (trainer.get("state") or {}).get("waiting") or {}
        if scheduled.get("status") == "False":
            reason = scheduled.get("reason") or "Unschedulable"
            detail = scheduled.get("message") or ""
        elif waiter_waiting.get("reason"):
            reason = waiter_waiting["reason"]
            detail = waiter_waiting.get("message") or ""
        elif "running" in (waiter.get("state") or {}):
            reason = wait.waiting
        elif trainer_waiting.get("reason"):
            reason = trainer_waiting["reason"]
            detail = trainer_waiting.get("message") or ""
    started = "running" in state or bool(terminated) or phase in ("Running", "Succeeded")
    return PodView(
        name=meta.get("name", ""),
        uid=meta.get("uid", ""),
        rank=_int_label(labels, LABEL_RANK),
        attempt=_int_label(labels, LABEL_ATTEMPT) or 0,
        controller_uid=_controller_uid(meta),
        phase=phase,
        terminating=bool(meta.get("deletionTimestamp")),
        deletion_timestamp=parse_time(meta.get("deletionTimestamp")),
        created_at=parse_time(meta.get("creationTimestamp")),
        started=started,
        joined=started or wait_name is None or waiter_done.get("exitCode") == 0,
        exit_code=exit_code,
        container_exit_code=container_code,
        reason=reason,
        detail=detail,
        finished_at=parse_time(terminated.get("finishedAt")),
        disrupted=disrupted,
        disrupted_at=parse_time(disruption.get("lastTransitionTime")) if disrupted else None,
        node_name=(pod.get("spec") or {}).get("nodeName") or None,
        message=terminated.get("message") or "",
        rendezvous_id=_rendezvous_id(pod),
    )
