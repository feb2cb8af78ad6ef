"""When a finished FSDPJob is settled: nothing is left for the operator to do or to wait for, so
its daemon stops and no task is kept for it until its spec changes (docs/fsdpjob.md, "Finished
jobs").

A pass that finds the job so writes `status.settledGeneration`, the generation it settled at.
The daemon's Kopf filter (`daemon_wanted`) turns false on the event of that write, and Kopf stops
the daemon as one whose filter no longer matches (kopf/_core/engines/daemons.py, `match_daemons`,
reason FILTERS_MISMATCH). Unlike a daemon that returns on its own (`_runner` puts those in
`forever_stopped`), such a daemon is spawned again when the filter matches again: a new
generation, as a spec edit makes (ttlSecondsAfterFinished set after the end, say). After a
restart Kopf spawns no daemon for a settled job at all. No job carries a finalizer
(pinery.kopf_daemons), so deleting one waits for nothing.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

from pinery.fsdpjob.observe import PodView

FINISHED = ("Succeeded", "Failed")


def daemon_wanted(status: Optional[dict[str, Any]], meta: dict[str, Any]) -> bool:
    """The daemon's filter: False only for a job settled at its current generation."""
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
