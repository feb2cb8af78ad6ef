"""What `pinery logs` reads and how it prints it: pure, so that the command only does I/O.

It follows `kubectl logs` (kubernetes/kubectl pkg/cmd/logs/logs.go): lines of concurrent
streams never mix inside a line (`DefaultConsumeRequest` buffers up to the newline), each line
is prefixed with its source (`--prefix`, here `[node-i] `), and `--since` takes a Go duration
rounded to the second (`ToLogOptions`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from pinery.fsdpjob.naming import LABEL_ATTEMPT, LABEL_RANK, TRAINER_CONTAINER, pod_name


def prefix(rank: int) -> str:
    return f"[node-{rank}] "


class LineSplitter:
    """Bytes as they arrive, as whole lines (without their newline); the unfinished rest waits
    for the next chunk, and `close` gives it at the end of the stream."""

    def __init__(self) -> None:
        self._rest = b""

    def feed(self, chunk: bytes) -> list[str]:
        data = self._rest + chunk
        *lines, self._rest = data.split(b"\n")
        return [line.decode("utf-8", errors="replace").removesuffix("\r") for line in lines]

    def close(self) -> list[str]:
        rest, self._rest = self._rest, b""
        return [rest.decode("utf-8", errors="replace").removesuffix("\r")] if rest else []


_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float:
    """Seconds in a Go duration (`time.ParseDuration`: `90s`, `5m`, `1h30m`, `0`); ValueError
    otherwise."""
    text = text.strip()
    if text in ("0", "+0"):
        return 0.0
    pos, total = 0, 0.0
    for match in _DURATION.finditer(text):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    if pos != len(text) or not text:
        raise ValueError(f"invalid duration {text!r} (use a number and a unit: 30s, 5m, 1h30m)")
    return total


def since_seconds(text: str) -> Optional[int]:
    """`--since` as PodLogOptions.sinceSeconds: rounded to the second, None for 0 (all logs)."""
    seconds = round(parse_duration(text))
    return seconds or None


def _int_label(pod: Mapping[str, Any], key: str) -> Optional[int]:
    try:
        return int(((pod.get("metadata") or {}).get("labels") or {})[key])
    except (KeyError, TypeError, ValueError):
        return None


def current_attempts(job: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]) -> dict[int, int]:
    """Each node's current attempt: `status.nodes[i].attempt`, or a newer one its pod carries."""
    status = job.get("status") or {}
    n = int((job.get("spec") or {}).get("numNodes") or 0)
    out = {i: 0 for i in range(n)}
    for node in status.get("nodes") or []:
        if isinstance(node, dict) and isinstance(node.get("index"), int):
            out[node["index"]] = int(node.get("attempt") or 0)
    for pod in pods:
        rank, attempt = _int_label(pod, LABEL_RANK), _int_label(pod, LABEL_ATTEMPT)
        if rank is not None and attempt is not None:
            out[rank] = max(out.get(rank, 0), attempt)
    return out


@dataclass(frozen=True)
class Selection:
    """The nodes to read, each with the attempt wanted, and the pods of that attempt that exist."""

    attempts: dict[int, int]  # rank -> the attempt to read
    pods: dict[int, dict[str, Any]]  # rank -> its pod of that attempt, where it exists
    newest: int  # the newest attempt of any node


def select(job: Mapping[str, Any], pods: Sequence[Mapping[str, Any]], nodes: Optional[Sequence[int]],
           attempt: Optional[int]) -> Selection:
    """`--node` (all nodes when None) and `--attempt` (each node's current one when None). An
    elastic job's nodes may be in different attempts; a given attempt reads the nodes that had one."""
    current = current_attempts(job, pods)
    ranks = sorted(current) if nodes is None else sorted(set(nodes))
    if attempt is None:
        wanted = {r: current.get(r, 0) for r in ranks}
    else:
        wanted = {r: attempt for r in ranks if attempt <= current.get(r, 0)}
    found: dict[int, dict[str, Any]] = {}
    for pod in pods:
        rank = _int_label(pod, LABEL_RANK)
        if rank in wanted and _int_label(pod, LABEL_ATTEMPT) == wanted[rank]:
            found[rank] = dict(pod)
    return Selection(wanted, found, max(current.values(), default=0))


@dataclass(frozen=True)
class NodeLog:
    """Whether a node's log can be read now: `ready` (its container has started), else why not,
    and whether waiting can help (`final`: the pod finished without starting, or it is gone)."""

    ready: bool
    why: str = ""
    final: bool = False


def node_log(pod: Optional[Mapping[str, Any]], rank: int, job_name: str, job_over: bool) -> NodeLog:
    name = pod_name(job_name, rank)
    if pod is None:
        if job_over:
            return NodeLog(False, f"no pod {name}: the job is over", final=True)
        return NodeLog(False, f"no pod {name} yet")
    status = pod.get("status") or {}
    phase = status.get("phase") or "Pending"
    trainer = next((cs for cs in status.get("containerStatuses") or [] if cs.get("name") == TRAINER_CONTAINER), None)
    state = (trainer or {}).get("state") or {}
    if "running" in state or "terminated" in state or ((trainer or {}).get("lastState") or {}).get("terminated"):
        return NodeLog(True)
    if phase in ("Succeeded", "Failed", "Unknown"):
        return NodeLog(False, f"pod {name} is {phase} and its {TRAINER_CONTAINER} container never started", final=True)
    if trainer is None and phase == "Running":  # a server that reports no container statuses: try
        return NodeLog(True)
    scheduled: Mapping[str, Any] = next((c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"), {})
    init = next((cs for cs in status.get("initContainerStatuses") or [] if "running" in (cs.get("state") or {})), None)
    if scheduled.get("status") == "False":
        reason = scheduled.get("reason") or "Unschedulable"
    elif init is not None:
        reason = f"init container {init.get('name')} is running"
    else:
        reason = (state.get("waiting") or {}).get("reason") or ""
    return NodeLog(False, f"pod {name} is {phase}" + (f" ({reason})" if reason else ""))


def job_over(job: Mapping[str, Any]) -> bool:
    conditions = (job.get("status") or {}).get("conditions") or []
    return any(isinstance(c, dict) and c.get("type") in ("Succeeded", "Failed") and c.get("status") == "True" for c in conditions)


def kept_lines(record: Mapping[str, Any]) -> list[str]:
    """A kept failure (`status.failures[]`) as the lines `pinery logs` prints for it."""
    tail = str(record.get("logTail") or "")
    return tail.split("\n") if tail else []
