"""The per-job gauges the operator exports for an FSDPJob, from the status it writes.

Pure: `job_gauges(status, spec)` is what `pinery.metrics` publishes under
`pinery_fsdpjob_<key>{namespace, fsdpjob}`. Progress values appear only once the trainer reported
them (an absent gauge, not a 0, for a job that has not logged a loss yet).
"""

from __future__ import annotations

from typing import Any

from pinery.api.fsdpjob import FSDPJobSpec

# Condition reason of a restart (Restarting) or failure (Failed) for a gang that stopped
# making progress.
STALLED = "Stalled"
# status.progress key -> gauge key.
PROGRESS_GAUGES = {
    "step": "step",
    "loss": "loss",
    "tokensPerSecond": "tokens_per_second",
    "lastCheckpointStep": "last_checkpoint_step",
}
# The CRD defaults spec.maxRestarts; a job read before that (or in a unit test) has the model's.
DEFAULT_MAX_RESTARTS = FSDPJobSpec.model_fields["max_restarts"].default


def stalled(status: dict[str, Any]) -> bool:
    """The gang is being restarted, or was failed, because it stalled."""
    return any(
        c.get("type") in ("Restarting", "Failed") and c.get("status") == "True" and c.get("reason") == STALLED
        for c in status.get("conditions") or []
    )


def job_gauges(status: dict[str, Any] | None, spec: dict[str, Any] | None) -> dict[str, float]:
    status, spec = status or {}, spec or {}
    progress = status.get("progress") or {}
    out = {key: float(progress[field]) for field, key in PROGRESS_GAUGES.items() if progress.get(field) is not None}
    out["status_restarts"] = float(status.get("restarts") or 0)
    out["disruptions"] = float(status.get("disruptions") or 0)
    out["max_restarts"] = float(spec.get("maxRestarts", DEFAULT_MAX_RESTARTS))
    out["stalled"] = 1.0 if stalled(status) else 0.0
    out["finished"] = 1.0 if status.get("phase") in ("Succeeded", "Failed") else 0.0
    return out
