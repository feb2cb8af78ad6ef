"""When a finished FSDPJob is settled: nothing is left for the operator to do or to wait for, so
its passes end and it keeps no entry in the operator's pass queue until its spec changes
(docs/fsdpjob.md, "Finished jobs").

A pass that finds the job so writes `status.settledGeneration`, the generation it settled at.
The event of that write shows `daemon_wanted` false, and the FSDPJob event handler ends the
job's passes (pinery.handlers.fsdpjob); a new generation, as a spec edit makes
(ttlSecondsAfterFinished set after the end, say), shows it true again and brings them back.
After a restart a settled job gets no passes at all. No job carries a finalizer, so deleting
one waits for nothing.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

from pinery.fsdpjob.observe import PodView

FINISHED = ("Succeeded", "Failed")


def daemon_wanted(status: Optional[dict[str, Any]], meta: dict[str, Any]) -> bool:
    """Whether the job wants passes: False only for a job settled at its current generation."""
    status = status or {}
    settled_at = status.get("settledGeneration")
    return not (status.get("phase") in FINISHED and settled_at is not None and settled_at == (meta.get("generation") or 0))


def at_rest(phase: Optional[str], idle: bool, requeue_after: Optional[float], refused: bool, pods: Iterable[PodView]) -> bool:
    """A pass's plan leaves the job settled: finished; nothing written, created or refused;
    nothing to wait for (no requeue: no ttlSecondsAfterFinished running, no Workload write
    pending); and no pod that could still change, that is every pod left has finished and is not
    being deleted (a pod stopping is waited for by its events, which a settled job no longer
    hears)."""
    if phase not in FINISHED or not idle or refused or requeue_after is not None:
        return False
    return all(p.finished and not p.terminating for p in pods)
