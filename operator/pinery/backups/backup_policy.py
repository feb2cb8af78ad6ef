"""What one VectorIndexBackup does next: the pure decision (the handler calls Pinecone).

A backup is made once. Pinecone's create-backup call is not idempotent (two calls make two
backups), so the operator guards it as it guards index creation: `status.createSentAt` is
written before the call, and a pass that finds it set without a `backupId` (the operator died
between the call and the status write, or the answer was lost) looks for the backup by its
name (the object's name and uid, unique to the object) before it asks again, and asks again
only once a backup sent that long ago would have been listed (`Timing.create_landing`).

A backup that was Ready and is gone from Pinecone is not made again: it was a snapshot of its
moment, and a new one would silently be another. The object then says BackupNotFound.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pinery.api.conditions import parse_time
from pinery.vectorindex.schedule import DEFAULT_TIMING, Timing
from pinery.vectorindex.status import Cond

Action = Literal["create", "wait", "none", "refuse"]

# Pinecone's backup states: "Initializing, Ready, Failed" (2025-10 spec BackupModel.status);
# "Initializing, Ready, or InitializationFailed" (the 10.x SDK's BackupModel.status).
READY = "Ready"
FAILED = ("Failed", "InitializationFailed")
# Pinecone backs up serverless and BYOC indexes (the 10.x SDK's Backups.create docstring; the
# 2025-10 emulator refuses pod-based ones, as docs/local-mode.md says).
BACKED_UP_DEPLOYMENTS = ("serverless", "byoc")


@dataclass(frozen=True)
class BackupStep:
    action: Action
    ready: Cond
    # Seconds until the next look; None: nothing more to wait for (the daemon ends).
    requeue: float | None = None
    # Status facts to write (backupId, state, recordCount, ...).
    facts: dict[str, Any] = field(default_factory=dict)


def backup_name(object_name: str, uid: str) -> str:
    """The name of the object's backup in Pinecone: unique to this object (the uid), so that a
    pass that lost the answer to its create finds its own backup and no other."""
    return f"{object_name}-{uid[:8]}"


def facts(backup: dict[str, Any]) -> dict[str, Any]:
    """Status fields from a Pinecone backup (2026-07 BackupModel: the 10.x SDK's
    pinecone/models/backups/model.py; dimension and metric are read from its schema's dense
    field, as 2026-07 carries no top-level dimension)."""
    dense = next((f for f in ((backup.get("schema") or {}).get("fields") or {}).values()
                  if isinstance(f, dict) and f.get("type") == "dense_vector"), None)
    sparse_only = dense is None and any(isinstance(f, dict) and f.get("type") == "sparse_vector"
                                        for f in ((backup.get("schema") or {}).get("fields") or {}).values())
    return {
        "backupId": backup.get("backup_id"),
        "backupName": backup.get("name"),
        "indexName": backup.get("source_index_name"),
        "state": backup.get("status"),
        "recordCount": backup.get("record_count"),
        "namespaceCount": backup.get("namespace_count"),
        "sizeBytes": backup.get("size_bytes"),
        "dimension": backup.get("dimension") or (dense or {}).get("dimension"),
        "metric": backup.get("metric") or (dense or {}).get("metric") or ("dotproduct" if sparse_only else None),
        "createdAt": backup.get("created_at"),
    }


def decide_backup(*, backup: dict[str, Any] | None, known_id: str | None, create_sent_at: str | None,
                  index: dict[str, Any] | None, index_kind: str | None, index_name: str, now: float,
                  polls: int = 0, timing: Timing = DEFAULT_TIMING) -> BackupStep:
    """The next step for one backup.

    `backup` is Pinecone's backup: described by `known_id` (status.backupId) or, without one,
    found by name when a create was sent (None when absent). `index`/`index_kind` describe
    the source index, read only before a create."""
    if backup is not None:
        return _follow(backup, polls, timing)
    if known_id:
        msg = (f"backup {known_id} of index {index_name} no longer exists in Pinecone; it is not made again "
               "(a new backup would be of another moment): delete this object, or create another")
        return BackupStep("refuse", ("False", "BackupNotFound", msg))
    if create_sent_at is not None:
        sent = parse_time(create_sent_at)
        if sent is not None and now < sent.timestamp() + timing.create_landing:
            msg = f"looking for the backup of index {index_name} asked for at {create_sent_at}"
            return BackupStep("wait", ("False", "Creating", msg), requeue=timing.poll(polls))
    if index is None:
        msg = f"index {index_name} does not exist in Pinecone (yet); retrying"
        return BackupStep("wait", ("False", "IndexNotFound", msg), requeue=timing.retry(polls))
    if index_kind not in BACKED_UP_DEPLOYMENTS:
        kind = {"pod": "pod-based"}.get(index_kind or "", index_kind or "of an unknown kind")
        msg = f"index {index_name} is {kind}; Pinecone backs up serverless and BYOC indexes only"
        return BackupStep("refuse", ("False", "NotSupported", msg))
    return BackupStep("create", ("False", "Creating", f"backing up index {index_name}"), requeue=timing.poll(0))


def _follow(backup: dict[str, Any], polls: int, timing: Timing) -> BackupStep:
    state, found = backup.get("status"), facts(backup)
    what = f"backup {found['backupId']} of index {found['indexName']}"
    if state == READY:
        return BackupStep("none", ("True", "BackupReady", f"{what} is ready ({found['recordCount']} records)"), facts=found)
    if state in FAILED:
        return BackupStep("refuse", ("False", "BackupFailed", f"Pinecone could not make {what}"), facts=found)
    return BackupStep("wait", ("False", "Creating", f"{what} is {state}"), requeue=timing.poll(polls), facts=found)
