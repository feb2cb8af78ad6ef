"""Timed state machines (pure): a resource's state plus the steps scheduled after it.

A schedule is a list of `[state, at]` pairs in wall-clock seconds, so that state read back
after a restart keeps moving as if the emulator had never stopped. A state of None means the
resource is gone (a finished deletion).
"""

from __future__ import annotations

Schedule = list[list]  # [[state | None, at], ...], ascending `at`

# Index states in which Pinecone keeps serving reads and writes.
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
