"""Pod status as a kubelet writes it, from the state of the local processes (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ContainerRun:
    """What the runner knows about one container."""

    name: str
    image: str = ""
    state: str = "waiting"  # waiting | running | terminated
    reason: str = "ContainerCreating"
    message: str = ""
    exit_code: int | None = None
    started_at: str | None = None
    finished_at: str | None = None
    restarts: int = 0
    last: dict | None = None  # lastState.terminated of the previous run
    pid: int | None = None

    def finish(self, code: int, at: str, message: str = "") -> None:
        self.state, self.exit_code, self.finished_at = "terminated", code, at
        self.reason, self.message = exit_reason(code), message

    def fail_to_start(self, at: str, message: str) -> None:
        """The process could not be started (containerd's StartError, exit code 128)."""
        self.started_at = self.finished_at = at
        self.state, self.exit_code, self.reason, self.message, self.pid = "terminated", 128, "StartError", message, None

    def back_off(self, message: str = "") -> None:
        """Between a failed run and the next one: the kubelet's CrashLoopBackOff (the message
        is waiting.crash_loop_message's)."""
        self.last = self.terminated()
        self.restarts += 1
        self.state, self.reason, self.exit_code = "waiting", "CrashLoopBackOff", None
        self.message = message or f"back-off restarting failed container={self.name}"

    def terminated(self) -> dict:
        return {
            "exitCode": self.exit_code,
            "reason": self.reason,
            "message": self.message or None,
            "startedAt": self.started_at,
            "finishedAt": self.finished_at,
            "containerID": f"local://{self.pid}" if self.pid else None,
        }

    def to_status(self, ready: bool) -> dict:
        if self.state == "running":
            state = {"running": {"startedAt": self.started_at}}
        elif self.state == "terminated":
            state = {"terminated": {k: v for k, v in self.terminated().items() if v is not None}}
        else:
            state = {"waiting": {"reason": self.reason, **({"message": self.message} if self.message else {})}}
        status = {
            "name": self.name,
            "image": self.image,
            "imageID": "",
            "state": state,
            "lastState": {"terminated": {k: v for k, v in self.last.items() if v is not None}} if self.last else {},
            "ready": ready,
            "restartCount": self.restarts,
            "started": self.state == "running",
        }
        if self.pid:
            status["containerID"] = f"local://{self.pid}"
        return status


@dataclass
class PodRun:
    init: list[ContainerRun] = field(default_factory=list)
    main: list[ContainerRun] = field(default_factory=list)
    pod_ip: str = ""
    start_time: str | None = None
    # Set when the pod failed before or outside its containers (config errors, node loss).
    failure: tuple[str, str] | None = None


def phase_of(run: PodRun, restart_policy: str) -> str:
    """Pending, Running, Succeeded or Failed, by the kubelet's rules."""
    if run.failure is not None:
        return "Failed"
    for c in run.init:
        if c.state == "terminated" and c.exit_code != 0 and restart_policy == "Never":
            return "Failed"
        if c.state != "terminated" or c.exit_code != 0:
            return "Pending"
    if not run.main or all(c.state == "waiting" for c in run.main) and not any(c.restarts for c in run.main):
        return "Pending"
    if all(c.state == "terminated" for c in run.main):
        if all(c.exit_code == 0 for c in run.main):
            return "Succeeded" if restart_policy != "Always" else "Running"
        return "Failed" if restart_policy == "Never" else "Running"
    return "Running"


def pod_status(run: PodRun, restart_policy: str, now: str, previous: list | None = None) -> dict:
    """The whole `status` of a pod; conditions keep the transition times of `previous` ones
    whose status did not change."""
    phase = phase_of(run, restart_policy)
    initialized = all(c.state == "terminated" and c.exit_code == 0 for c in run.init)
    ready = phase == "Running" and all(c.state == "running" for c in run.main)
    status: dict[str, Any] = {
        "phase": phase,
        "hostIP": "127.0.0.1",
        "hostIPs": [{"ip": "127.0.0.1"}],
        "podIP": run.pod_ip,
        "podIPs": [{"ip": run.pod_ip}] if run.pod_ip else [],
        "startTime": run.start_time,
        "conditions": [
            _condition("PodScheduled", True, now),
            _condition("Initialized", initialized, now, None if initialized else "ContainersNotInitialized"),
            _condition("ContainersReady", ready, now, None if ready else "ContainersNotReady"),
            _condition("Ready", ready, now, None if ready else "ContainersNotReady"),
        ],
        "initContainerStatuses": [c.to_status(c.state == "terminated" and c.exit_code == 0) for c in run.init],
        "containerStatuses": [c.to_status(c.state == "running") for c in run.main],
    }
    before = {c.get("type"): c for c in previous or []}
    for cond in status["conditions"]:
        old = before.get(cond["type"])
        if old is not None and old.get("status") == cond["status"] and old.get("lastTransitionTime"):
            cond["lastTransitionTime"] = old["lastTransitionTime"]
    if run.failure is not None:
        status["reason"], status["message"] = run.failure
    if not status["initContainerStatuses"]:
        del status["initContainerStatuses"]
    return status


def _condition(type_: str, ok: bool, now: str, reason: str | None = None) -> dict:
    cond = {"type": type_, "status": "True" if ok else "False", "lastProbeTime": None, "lastTransitionTime": now}
    if reason:
        cond["reason"] = reason
    return cond


def exit_reason(code: int) -> str:
    """The kubelet's reason for a terminated container."""
    return "Completed" if code == 0 else "Error"


# The kubelet keeps at most this much of a termination message or of the log fallback.
MESSAGE_BYTES = 4096
FALLBACK_LINES, FALLBACK_BYTES = 80, 2048


def termination_message(written: str, log_tail: bytes, policy: str, exit_code: int) -> str:
    """What the kubelet reports as the message of a terminated container: the file the
    container wrote at its terminationMessagePath, else, with `FallbackToLogsOnError` and a
    failure, the end of its log (80 lines, 2 KiB)."""
    if written.strip():
        return written[:MESSAGE_BYTES]
    if policy != "FallbackToLogsOnError" or exit_code == 0:
        return ""
    tail = b"".join(log_tail.splitlines(keepends=True)[-FALLBACK_LINES:])[-FALLBACK_BYTES:]
    return tail.decode("utf-8", errors="replace")
