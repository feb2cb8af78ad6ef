"""status.progress from the trainer's log lines, read by the operator (pods need no API access).

Rank 0 prints one JSON object per line: `{"event": "progress", "step": ..., "totalSteps": ...,
"loss": ..., "learningRate": ..., "tokensPerSecond": ..., "mfu": ..., "lastCheckpointStep": ...}`
every logging interval and `{"event": "checkpoint", "step": ...}` after each complete
checkpoint. Any command may print them. Everything else in the log is ignored: other output,
a line cut at the start or end of the fetched tail, a timestamp prefix (logs fetched with
`timestamps=true`), values of the wrong type.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Iterable, Optional

from pinery.api.conditions import now_rfc3339, parse_time


def _json_object(line: str) -> tuple[Optional[dict[str, Any]], Optional[datetime]]:
    """The JSON object on a log line and the line's timestamp prefix, if any."""
    start = line.find("{")
    if start < 0:
        return None, None
    stamp = None
    prefix = line[:start].strip()
    if prefix:
        try:
            stamp = parse_time(prefix)
        except ValueError:
            stamp = None
    try:
        obj = json.loads(line[start:])
    except ValueError:
        return None, None
    return (obj, stamp) if isinstance(obj, dict) else (None, None)


def _int(value: Any) -> Optional[int]:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and (not math.isfinite(value) or value != int(value)):
        return None
    return int(value) if value >= 0 else None


def _float(value: Any, minimum: Optional[float] = None) -> Optional[float]:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    if not math.isfinite(number) or (minimum is not None and number < minimum):
        return None  # NaN and infinities have no JSON form in the status
    return number


@dataclass(frozen=True)
class Point:
    """One progress line of the log."""

    step: int
    loss: Optional[float] = None
    tokens_per_second: Optional[float] = None
    when: Optional[datetime] = None


def progress_points(text: str | Iterable[str]) -> list[Point]:
    """Every progress line of the log text, in log order (the history that status.progress,
    which holds only the newest, does not keep)."""
    lines = text.splitlines() if isinstance(text, str) else list(text)
    points = []
    for line in lines:
        obj, stamp = _json_object(line)
        if obj is None or obj.get("event") != "progress":
            continue
        step = _int(obj.get("step"))
        if step is not None:
            points.append(Point(step, _float(obj.get("loss")), _float(obj.get("tokensPerSecond"), minimum=0.0), stamp))
    return points


def progress_from_logs(
    text: str | Iterable[str], now: datetime, previous: Optional[dict[str, Any]] = None
) -> Optional[dict[str, Any]]:
    """The new status.progress after reading this log text, or None when it says nothing new.

    `updatedAt` is the time of the newest progress line (its timestamp prefix, else `now`), so a
    trainer that stopped reporting shows an old `updatedAt` rather than a fresh one. `stepTime`
    is when the step last changed: the first line that reported the newest step, or the
    previous `stepTime` while the step is the one already recorded (a tail re-read, or a
    restarted gang that reports the same step again). Any change counts, a lower step too: a
    gang resumed from an older checkpoint is advancing, not stalled.
    """
    lines = text.splitlines() if isinstance(text, str) else list(text)
    progress: Optional[dict[str, Any]] = None
    checkpoint: Optional[tuple[int, str]] = None
    step_seen: Optional[int] = (previous or {}).get("step")
    step_time: Optional[str] = (previous or {}).get("stepTime")
    for line in lines:
        obj, stamp = _json_object(line)
        if obj is None:
            continue
        event = obj.get("event")
        step = _int(obj.get("step"))
        if step is None:
            continue
        when = now_rfc3339(stamp or now)
        if event == "progress":
            progress = {"step": step}
            for key in ("totalSteps", "lastCheckpointStep"):
                value = _int(obj.get(key))
                if value is not None:
                    progress[key] = value
            loss = _float(obj.get("loss"))
            if loss is not None:
                progress["loss"] = loss
            tps = _float(obj.get("tokensPerSecond"), minimum=0.0)
            if tps is not None:
                progress["tokensPerSecond"] = tps
            progress["updatedAt"] = when
            if step != step_seen or step_time is None:
                step_seen, step_time = step, when
            progress["stepTime"] = step_time
            checkpoint = None
        elif event == "checkpoint":
            checkpoint = (step, when)
    if progress is None and checkpoint is None:
        return None
    result = dict(progress if progress is not None else (previous or {}))
    if checkpoint is not None:
        # A checkpoint completed after the newest progress line.
        result["lastCheckpointStep"], result["updatedAt"] = checkpoint
    if result == (previous or {}):
        return None
    return result
