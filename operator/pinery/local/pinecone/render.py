"""Response bodies of the control plane, shaped as the 2025-10 spec's models (pure)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pinery.local.pinecone import transitions
from pinery.local.pinecone.state import BackupRecord, CollectionRecord, IndexRecord, RestoreJobRecord


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def index_host(base_url: str, project: str, name: str) -> str:
    """The data-plane host of an index: a path under the emulator's own URL (see docs/local-mode.md)."""
    return f"{base_url}/index/{project}/{name}"


def read_capacity(raw: dict[str, Any], state: str = transitions.READ_CAPACITY_READY,
                  in_effect: dict[str, Any] | None = None) -> dict[str, Any]:
    """`ReadCapacityOnDemandSpecResponse`/`ReadCapacityDedicatedSpecResponse` (2025-10 spec): `mode`
    and `dedicated` as asked for (`raw`), `status` of what is in effect (`in_effect`, default `raw`):
    `current_replicas`/`current_shards` keep the old counts while `state` is `Scaling` or
    `Migrating` (transitions.py), and are absent while on-demand capacity is in effect."""
    out: dict[str, Any] = {"mode": raw["mode"], "status": {"state": state}}
    if raw["mode"] == "Dedicated":
        out["dedicated"] = raw["dedicated"]
    counts = transitions.manual_counts(in_effect or raw)
    if counts is not None:
        out["status"].update(current_replicas=counts[0], current_shards=counts[1])
    return out


def index_read_capacity(rec: IndexRecord) -> dict[str, Any] | None:
    """The read capacity of an index as its IndexModel shows it (None for pod indexes)."""
    raw = rec.read_capacity
    if raw is None:
        return None
    return read_capacity(raw, rec.read_capacity_state, rec.read_capacity_in_effect)


def index_status(rec: IndexRecord) -> dict[str, Any]:
    """`IndexModel.status`: `Disabled` (0 dedicated replicas in effect) is not ready (transitions.py)."""
    state = rec.status_state
    return {"ready": transitions.ready(state), "state": state}


def index(rec: IndexRecord, base_url: str) -> dict[str, Any]:
    kind, inner = next(iter(rec.spec.items()))
    spec = dict(inner)
    if "read_capacity" in spec:
        spec["read_capacity"] = index_read_capacity(rec)
    body: dict[str, Any] = {
        "name": rec.name,
        "metric": rec.metric,
        "host": index_host(base_url, rec.project, rec.name),
        "deletion_protection": rec.deletion_protection,
        "spec": {kind: spec},
        "status": index_status(rec),
        "vector_type": rec.vector_type,
    }
    if rec.dimension is not None:
        body["dimension"] = rec.dimension
    if rec.tags:
        body["tags"] = dict(rec.tags)
    if rec.embed:
        body["embed"] = dict(rec.embed)
    return body


def collection(col: CollectionRecord) -> dict[str, Any]:
    body: dict[str, Any] = {"name": col.name, "status": col.state, "environment": col.environment,
                            "size": col.size, "vector_count": col.vector_count}
    if col.dimension is not None:
        body["dimension"] = col.dimension
    return body


def backup(bkp: BackupRecord) -> dict[str, Any]:
    body: dict[str, Any] = {
        "backup_id": bkp.backup_id, "source_index_name": bkp.source_index_name,
        "source_index_id": bkp.source_index_id, "status": bkp.state, "cloud": bkp.cloud,
        "region": bkp.region, "metric": bkp.metric, "record_count": bkp.record_count,
        "namespace_count": bkp.namespace_count, "size_bytes": bkp.size_bytes, "created_at": bkp.created_at,
    }
    for key in ("name", "description", "dimension", "tags", "schema"):
        value = getattr(bkp, key)
        if value is not None:
            body[key] = value
    return body


def restore_job(job: RestoreJobRecord) -> dict[str, Any]:
    """The 2025-10 RestoreJobModel: `percent_complete` 0 while `Pending`, growing while
    `InProgress` (transitions.progress), 100 once `Completed`; `completed_at` once finished."""
    percent = 100.0 if job.state == "Completed" else job.percent_complete
    body: dict[str, Any] = {
        "restore_job_id": job.restore_job_id, "backup_id": job.backup_id,
        "target_index_name": job.target_index_name, "target_index_id": job.target_index_id,
        "status": job.state, "created_at": job.created_at, "percent_complete": percent,
    }
    if job.state in transitions.RESTORE_FINISHED:
        body["completed_at"] = iso(job.finishes)
    return body


def page(items: list[Any], limit: int, token: str | None, key: str = "data") -> dict[str, Any]:
    """One page of a listing; the token is the offset of the next page."""
    try:
        start = int(token) if token else 0
    except ValueError:
        start = 0
    body: dict[str, Any] = {key: items[start:start + limit]}
    if start + limit < len(items):
        body["pagination"] = {"next": str(start + limit)}
    return body
