"""pinery's API: pydantic models for VectorIndex and FSDPJob, the single source of truth.

The CRDs in crds/ are generated from these models (`pinery crds`).
"""

from pinery.api.backups import VECTOR_INDEX_BACKUP, VECTOR_INDEX_BACKUP_SCHEDULE
from pinery.api.base import API_VERSION, GROUP, VERSION
from pinery.api.fsdpjob import FSDP_JOB, FSDPJobSpec, FSDPJobStatus
from pinery.api.resource import ResourceInfo
from pinery.api.vectorindex import VECTOR_INDEX, VectorIndexSpec, VectorIndexStatus

RESOURCES: tuple[ResourceInfo, ...] = (VECTOR_INDEX, FSDP_JOB, VECTOR_INDEX_BACKUP, VECTOR_INDEX_BACKUP_SCHEDULE)


def resource_for_kind(kind: str) -> ResourceInfo | None:
    """The pinery resource of this kind, or None."""
    for res in RESOURCES:
        if res.kind == kind:
            return res
    return None


__all__ = [
    "API_VERSION",
    "FSDP_JOB",
    "FSDPJobSpec",
    "FSDPJobStatus",
    "GROUP",
    "RESOURCES",
    "ResourceInfo",
    "VECTOR_INDEX",
    "VECTOR_INDEX_BACKUP",
    "VECTOR_INDEX_BACKUP_SCHEDULE",
    "VERSION",
    "VectorIndexSpec",
    "VectorIndexStatus",
    "resource_for_kind",
]
