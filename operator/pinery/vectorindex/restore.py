"""A VectorIndex made from a backup (spec.restoreFrom): does the backup fit the spec, what to
send, and how far the restore is (pure).

The index's shape comes from the backup. What the spec says of it must agree: the vector type
always (it has a default, dense), the dimension and metric when the spec sets them, the
deployment's cloud and region, embed and the declared fields as adoption compares them. A
backup in the 2026-07 shape carries the index's `schema` (the 10.x SDK's
pinecone/models/backups/model.py BackupModel), which `observed` reads like an index's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pinery.api.vectorindex import VectorIndexSpec
from pinery.vectorindex import adoption, observed
from pinery.vectorindex.desired import desired_tags, protection
from pinery.vectorindex.status import Cond

# Pinecone's restore job states: the 10.x SDK's RestoreJobModel has Pending (running too: "there
# is no in-progress value"), Completed, Failed and Cancelled, and percent_complete only once
# Completed; the 2025-10 spec's has a percentage while the job runs.
COMPLETED = "Completed"
ENDED_BADLY = ("Failed", "Cancelled")


@dataclass(frozen=True)
class RestoreView:
    """What the handler found for a restore: the backup's id and Pinecone's backup (None when
    Pinecone has none), or why it cannot be known yet (`waiting`)."""

    backup_id: str | None = None
    backup: dict[str, Any] | None = None
    waiting: Cond | None = None


def differences(spec: VectorIndexSpec, backup: dict[str, Any]) -> list[str]:
    """Where the spec contradicts the backup, `field: spec wants X, backup has Y`."""
    as_index = {"schema": backup.get("schema") or {}, "deployment": {"deployment_type": "managed",
                "cloud": backup.get("cloud"), "region": backup.get("region")}}
    if not (as_index["schema"].get("fields")) and backup.get("dimension") is not None:
        # A 2025-10-shaped backup: dimension and metric at the top level.
        as_index["schema"] = {"fields": {observed.DENSE_FIELD: {"type": "dense_vector", "dimension": backup["dimension"],
                                                                "metric": backup.get("metric")}}}
    diffs = adoption.immutable_differences(spec, as_index)
    return [d.replace(", index has ", ", backup has ") for d in diffs]


def request(spec: VectorIndexSpec, owner_tags: dict[str, str]) -> dict[str, Any]:
    """The tags and deletion protection of the create-index-from-backup call (the 2025-10 spec's
    CreateIndexFromBackupRequest; without tags Pinecone copies the backup's, which would carry
    another object's ownership)."""
    return {"tags": desired_tags(spec, owner_tags), "deletion_protection": protection(spec.deletion_protection)}


def report(backup_id: str | None, job: dict[str, Any] | None) -> dict[str, Any] | None:
    """status.restore from the restore job."""
    if job is None:
        return {"backupId": backup_id} if backup_id else None
    out = {"backupId": job.get("backup_id") or backup_id, "restoreJobId": job.get("restore_job_id"),
           "state": job.get("status"), "percentComplete": job.get("percent_complete")}
    return {k: v for k, v in out.items() if v is not None}


def in_progress(job: dict[str, Any] | None) -> bool:
    return job is not None and job.get("status") != COMPLETED and job.get("status") not in ENDED_BADLY


def progress_message(index_name: str, job: dict[str, Any]) -> str:
    done = job.get("percent_complete")
    share = f", {done:.0f}% done" if isinstance(done, (int, float)) else ""
    return f"restoring index {index_name} from backup {job.get('backup_id')} (restore job {job.get('status')}{share})"
