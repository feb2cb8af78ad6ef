"""The pure core of the FSDPJob operator: children builders, the lifecycle decision, progress.

Handlers read the job, its pods, Service and ConfigMap, call `plan(...)` and apply the Plan;
`pinery render` prints `build_children(...)`.
"""

from pinery.fsdpjob.children import build_children, build_config_map, build_pod, build_service
from pinery.fsdpjob.lifecycle import phase_of, plan
from pinery.fsdpjob.naming import JobRef
from pinery.fsdpjob.plan import Event, Plan, PodDeletion
from pinery.fsdpjob.progress import progress_from_logs

__all__ = [
    "Event",
    "JobRef",
    "Plan",
    "PodDeletion",
    "build_children",
    "build_config_map",
    "build_pod",
    "build_service",
    "phase_of",
    "plan",
    "progress_from_logs",
]
