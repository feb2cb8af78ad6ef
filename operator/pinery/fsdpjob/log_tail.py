"""The end of a failed rank's log that the job keeps (`status.failures[].logTail`). Pure.

The pods of a failed attempt are deleted by the gang restart, and their logs with them. What the
job keeps instead follows the kubelet's `FallbackToLogsOnError` (kubernetes
pkg/kubelet/kuberuntime/kuberuntime_container.go, `getTerminationMessage` with
`kubecontainer.MaxContainerTerminationMessageLogLines` = 80 and
`MaxContainerTerminationMessageLogLength` = 2048 bytes), with three differences:

- torchrun's own failure report (the agent's `failed (exitcode: ...)` line, its traceback of
  ChildFailedError and the `==== ... FAILED` summary) is dropped first: under torchrun it is what
  the last 2 KiB hold, and it says less than the worker's own error above it (the operator already
  reads the worker's exit code from it, observe.py);
- the cut is at a line boundary (the kubelet cuts inside a line);
- values shaped like credentials are masked: the tail is copied into the job's status, which more
  people can read than the pod's log.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Mapping, Optional, Sequence

from pinery.fsdpjob.observe import PodView

MAX_LINES = 80
MAX_BYTES = 2048
# Failed attempts whose tail the status keeps, newest last: 3 x 2 KiB stays a few KiB.
MAX_KEPT = 3
MASK = "***"

# torchrun's agent, when a worker fails (torch/distributed/elastic/multiprocessing/api.py).
_AGENT_FAILED = re.compile(r"torch/distributed/elastic/multiprocessing/api\.py:\d+\] failed \(exitcode")
# Other lines torchrun's agent logs (glog format: `W1202 18:27:34.351000 11224 torch/distributed/...`).
_AGENT_LINE = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ torch/distributed/")
_SUMMARY_RULE = re.compile(r"^={20,}\s*$")
_CHILD_FAILED = "ChildFailedError"

# Credentials by shape, and `name=value` / `name: value` where the name says it holds one.
_SECRET_SHAPES = re.compile(
    r"pcsk_[A-Za-z0-9_]{8,}"            # Pinecone API keys
    r"|pclocal-[A-Za-z0-9-]{4,}"        # local mode's Pinecone keys
    r"|hf_[A-Za-z0-9]{20,}"             # Hugging Face tokens
    r"|gh[pousr]_[A-Za-z0-9]{20,}"      # GitHub tokens
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"       # AWS access key ids
    r"|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"  # JWTs (service-account tokens)
)
_SECRET_ASSIGNMENT = re.compile(
    r"(?i)(?P<name>[A-Za-z0-9_.-]*(?:api[_-]?key|token|secret|password|passwd|credential)[A-Za-z0-9_]*)"
    r"(?P<sep>['\"]?\s*[:=]\s*['\"]?)(?P<value>[^\s'\",;]{4,})"
)
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}")


def drop_launcher_report(lines: Sequence[str]) -> list[str]:
    """`lines` without torchrun's failure report at the end (kept as is when there is none)."""
    out = list(lines)
    cut = next((i for i in range(len(out) - 1, -1, -1) if _AGENT_FAILED.search(out[i])), None)
    if cut is None:
        # No agent line (a launcher that logs elsewhere): the report starts at ChildFailedError's
        # traceback, or at the summary's first rule.
        child = next((i for i in range(len(out) - 1, -1, -1) if _CHILD_FAILED in out[i]), None)
        if child is not None:
            tb = next((i for i in range(child, -1, -1) if out[i].startswith("Traceback (most recent call last)")), child)
            cut = tb
        else:
            rule = next((i for i, line in enumerate(out) if _SUMMARY_RULE.match(line) and i + 1 < len(out) and "FAILED" in out[i + 1]), None)
            cut = rule
    if cut is not None:
        out = out[:cut]
    while out and (not out[-1].strip() or _AGENT_LINE.match(out[-1])):
        out.pop()
    return out


def mask_secrets(line: str) -> str:
    """`line` with values shaped like credentials replaced by `***`."""
    line = _SECRET_SHAPES.sub(MASK, line)
    line = _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", line)
    return _SECRET_ASSIGNMENT.sub(lambda m: f"{m.group('name')}{m.group('sep')}{MASK}", line)


def clip(lines: Sequence[str], max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES) -> list[str]:
    """The last lines that fit in `max_lines` lines and `max_bytes` bytes (UTF-8, a newline
    after each). A last line too long by itself keeps its end, after `...`."""
    out: list[str] = []
    size = 0
    for line in reversed(lines[-max_lines:] if max_lines > 0 else []):
        cost = len(line.encode()) + 1
        if size + cost > max_bytes:
            if not out:
                room = max(max_bytes - 4, 0)
                out.append("..." + line.encode()[-room:].decode(errors="ignore") if room else "")
            break
        out.append(line)
        size += cost
    out.reverse()
    return out


def failure_tail(text: Optional[str]) -> str:
    """What the job keeps of a failed rank's log (or termination message): its last lines,
    torchrun's report dropped, masked, clipped as the kubelet clips (80 lines, 2 KiB)."""
    lines = (text or "").replace("\r\n", "\n").split("\n")
    lines = drop_launcher_report(lines)
    return "\n".join(clip([mask_secrets(line.rstrip("\r")) for line in lines]))


def last_lines(tail: str, count: int = 3, max_chars: int = 400) -> str:
    """The last `count` non-blank lines of a kept tail on one line (` | ` between them), for
    an Event or a condition message; clipped from the front to `max_chars`."""
    lines = [line.strip() for line in tail.split("\n") if line.strip()][-count:]
    text = " | ".join(lines)
    return text if len(text) <= max_chars else "..." + text[-(max_chars - 3):]


@dataclass(frozen=True)
class FailureRecord:
    """One failed attempt, as `status.failures` keeps it."""

    attempt: int
    node: int
    pod: str
    reason: str
    exit_code: Optional[int]
    time: str
    log_tail: str = ""

    def to_status(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"attempt": self.attempt, "node": self.node, "pod": self.pod, "reason": self.reason,
                                 "exitCode": self.exit_code, "time": self.time, "logTail": self.log_tail or None}
        return {k: v for k, v in entry.items() if v is not None}


def keep(records: Sequence[dict[str, Any]], new: Sequence[FailureRecord], limit: int = MAX_KEPT) -> list[dict[str, Any]]:
    """`status.failures` with `new` added: one entry per (attempt, node), a replayed pass adds
    nothing, the newest `limit` kept (oldest first)."""
    out = [dict(r) for r in records if isinstance(r, dict)]
    seen = {(r.get("attempt"), r.get("node")) for r in out}
    for record in new:
        if (record.attempt, record.node) not in seen:
            out.append(record.to_status())
            seen.add((record.attempt, record.node))
    return out[-limit:]


def kept_for(records: Sequence[dict[str, Any]], attempt: int) -> list[dict[str, Any]]:
    """The kept failures of `attempt`, by node."""
    return sorted((r for r in records if isinstance(r, dict) and r.get("attempt") == attempt), key=lambda r: r.get("node") or 0)


# Failed pods whose log a pass reads at most: the first to fail is the one recorded.
MAX_READS = 3
# Lines of a failed pod's log the handler reads: the kept tail, and torchrun's report after it.
READ_LINES = 200


def logs_to_read(status: Mapping[str, Any], pods: Sequence[PodView]) -> list[str]:
    """The failed pods whose log tail the next pass needs: failed in the attempt their node is
    in, not yet in `status.failures`, while the job is not over (the earliest few)."""
    conditions = status.get("conditions") or []
    if any(isinstance(c, dict) and c.get("type") in ("Failed", "Succeeded") and c.get("status") == "True" for c in conditions):
        return []
    attempts = {n.get("index"): n.get("attempt", 0) for n in status.get("nodes") or [] if isinstance(n, dict)}
    kept = {(r.get("attempt"), r.get("node")) for r in status.get("failures") or [] if isinstance(r, dict)}
    failed = [p for p in pods if p.failed and p.rank is not None and p.attempt >= attempts.get(p.rank, 0)
              and (p.attempt, p.rank) not in kept]
    failed.sort(key=lambda p: (p.finished_at is None, p.finished_at or datetime.min.replace(tzinfo=timezone.utc), p.rank or 0))
    return [p.name for p in failed[:MAX_READS]]
