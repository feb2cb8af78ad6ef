"""Timed state machines (pure): a resource's state plus the steps scheduled after it.

A schedule is a list of `[state, at]` pairs in wall-clock seconds, so that state read back
after a restart keeps moving as if the emulator had never stopped. A state of None means the
resource is gone (a finished deletion).
"""

from __future__ import annotations

from typing import Any

Schedule = list[list]  # [[state | None, at], ...], ascending `at`

# Index states in which Pinecone keeps serving reads and writes (`status.ready`). `Disabled` (0
# dedicated read replicas, `index_state` below) is not one of them: the spec describes `ready` as
# "Whether the index is ready for use", and replicas 0 "disables the index".
SERVING = frozenset({"Ready", "ScalingUp", "ScalingDown", "ScalingUpPodSize", "ScalingDownPodSize"})


def settle(state: str | None, schedule: Schedule, now: float) -> tuple[str | None, Schedule]:
    """The state at `now` and the steps still ahead."""
    ahead = list(schedule)
    while ahead and ahead[0][1] <= now:
        state = ahead.pop(0)[0]
    return state, ahead


def after(now: float, *steps: tuple[str | None, float]) -> Schedule:
    """A schedule from (state, delay-from-now) pairs; delays accumulate."""
    schedule, at = [], now
    for state, delay in steps:
        at += max(delay, 0.0)
        schedule.append([state, at])
    return schedule


def creation(now: float, delay: float, fail: bool) -> tuple[str, Schedule]:
    return "Initializing", after(now, ("InitializationFailed" if fail else "Ready", delay))


def termination(now: float, delay: float) -> tuple[str, Schedule]:
    return "Terminating", after(now, (None, delay))


POD_SIZES = ("x1", "x2", "x4", "x8")


def pod_size(pod_type: str) -> tuple[str, int] | None:
    """('p1', 1) for 'p1.x2'; None when the pod type is not FAMILY.xN."""
    family, _, size = pod_type.partition(".")
    if family not in ("s1", "p1", "p2") or size not in POD_SIZES:
        return None
    return family, POD_SIZES.index(size)


def scaling_state(old_replicas: int, new_replicas: int, old_type: str, new_type: str) -> str | None:
    """The transitional state a pod configure change goes through, or None for no change."""
    if old_type != new_type:
        old, new = pod_size(old_type), pod_size(new_type)
        return "ScalingUpPodSize" if old and new and new[1] > old[1] else "ScalingDownPodSize"
    if new_replicas > old_replicas:
        return "ScalingUp"
    if new_replicas < old_replicas:
        return "ScalingDown"
    return None


def ready(state: str | None) -> bool:
    return state in SERVING


# -- dedicated read capacity (serverless and BYOC indexes) --------------------------------------
# The 2025-10 spec (db_control_2025-10.oas.yaml `ReadCapacityStatus.state`): "`Ready` is the state
# most of the time", "`Scaling` if the number of replicas or shards has been recently updated by
# calling the configure index endpoint", "`Migrating` if the index is being migrated to a new
# `node_type`", "`Error` if there is an error with the read capacity configuration" (with
# `error_message`; the emulator never reports it). The spec says nothing of a change of mode
# (OnDemand <-> Dedicated); the emulator reports it as `Migrating` too (docs/local-mode.md).
# `current_replicas`/`current_shards` describe the capacity in effect, so they keep their old
# values until the change is over; the 10.x SDK's ReadCapacityStatus says the same of 2026-07
# (pinecone/models/indexes/read_capacity.py: "an index can be ready while its read tier is still
# scaling into place").
READ_CAPACITY_READY = "Ready"


def read_capacity_change(current: dict[str, Any] | None, desired: dict[str, Any] | None) -> str | None:
    """The read-capacity state a change from `current` (in effect) to `desired` goes through, or
    None for no change. A new node type is a migration even when the counts change with it."""
    if current is None or desired is None:
        return None
    if current.get("mode") != desired.get("mode"):
        return "Migrating"
    if desired.get("mode") != "Dedicated":
        return None
    old, new = current.get("dedicated") or {}, desired.get("dedicated") or {}
    if old.get("node_type") != new.get("node_type"):
        return "Migrating"
    return "Scaling" if old != new else None


def read_capacity_configure(current: dict[str, Any] | None, desired: dict[str, Any] | None, now: float,
                            delay: float) -> tuple[str, Schedule]:
    """The read-capacity state and schedule once configure asks for `desired` while `current` is
    in effect: the transitional state, then `Ready` after `delay` (at once for no change)."""
    change = read_capacity_change(current, desired)
    if change is None:
        return READ_CAPACITY_READY, []
    return change, after(now, (READ_CAPACITY_READY, delay))


def manual_counts(read_capacity: dict[str, Any] | None) -> tuple[int, int] | None:
    """(replicas, shards) of dedicated read capacity; None for on-demand (no fixed counts)."""
    if not read_capacity or read_capacity.get("mode") != "Dedicated":
        return None
    manual = (read_capacity.get("dedicated") or {}).get("manual") or {}
    return manual.get("replicas", 1), manual.get("shards", 1)


def disabled(read_capacity: dict[str, Any] | None) -> bool:
    """Dedicated read capacity with 0 replicas: the 2025-10 spec's `ScalingConfigManual.replicas`,
    "Setting replicas to 0 disables the index but can be used to reduce costs while usage is
    paused"; the 10.x SDK's ScalingConfigManual: "`0` is legal and stops the index serving reads
    entirely"."""
    counts = manual_counts(read_capacity)
    return counts is not None and counts[0] == 0


def index_state(state: str | None, read_capacity_in_effect: dict[str, Any] | None) -> str | None:
    """The `IndexModel.status.state` an index reports: `Disabled` (in the spec's list of index
    states) while its lifecycle state is `Ready` and 0 dedicated replicas are in effect; the
    lifecycle state otherwise (an index still `Initializing` or `Terminating` says so)."""
    if state == "Ready" and disabled(read_capacity_in_effect):
        return "Disabled"
    return state


# -- restore jobs (backups.py) -------------------------------------------------------------------
# A restore job is `Pending`, then `InProgress` for the second half of the restore delay, then
# `Completed` (or `Failed`). The 2025-10 spec's RestoreJobModel has `percent_complete`, "The
# progress made by the restore job out of 100" (0 to 100, example 42.2); it grows while the job
# is `InProgress`. `InProgress` is the status vocabulary of the 2025-10 data spec's ImportModel
# ("Pending, InProgress, Failed, Completed, Cancelled"); the control spec names no restore job
# statuses, so it is the emulator's choice. 2026-07 shows no in-progress value (v2026_07.restore_job).
RESTORE_FINISHED = frozenset({"Completed", "Failed"})


def restore(now: float, delay: float, fail: bool) -> Schedule:
    """The steps of a restore job created at `now` that takes `delay` seconds."""
    return after(now, ("InProgress", delay / 2), ("Failed" if fail else "Completed", delay / 2))


def progress(start: float, end: float, now: float) -> float:
    """Percent of the way from `start` to `end` at `now`, to one decimal: 0 before `start`, at
    most 99.9 (100 is for a finished job only)."""
    if now <= start:
        return 0.0
    if end <= start:
        return 99.9
    return round(min(99.9, 100.0 * (now - start) / (end - start)), 1)
