"""The emulator's state: indexes, collections, backups and restore jobs per project.

Records are plain dataclasses persisted as one JSON document (`state.json`); vector data lives
in one .npz per index, collection or backup (`data/<key>.npz`). Every file is replaced
atomically, so a crash leaves the previous version, never a torn one.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from pinery.local.pinecone import persist, transitions
from pinery.local.pinecone.vectors import IndexData

log = logging.getLogger(__name__)

STATE_VERSION = 1


@dataclass
class IndexRecord:
    id: str
    project: str
    name: str
    metric: str
    vector_type: str
    spec: dict[str, Any]  # {"serverless"|"pod"|"byoc": {...}} as the response shows it, less read_capacity status
    dimension: int | None = None
    deletion_protection: str = "disabled"
    tags: dict[str, str] | None = None
    embed: dict[str, Any] | None = None
    state: str | None = "Initializing"
    schedule: list = field(default_factory=list)
    created_at: float = 0.0
    # API 2026-07 (v2026_07.py): the typed schema an index was created with (None before 2026-07),
    # its encryption key and the backup it was restored from.
    typed_schema: dict[str, Any] | None = None
    cmek_id: str | None = None
    source_backup_id: str | None = None
    # Dedicated read capacity (transitions.py): the spec's `read_capacity` is what was asked for;
    # while a change is under way, `read_capacity_applied` is what is still in effect (None: the
    # spec's) and `read_capacity_state` is `Scaling` or `Migrating` until its schedule says `Ready`.
    read_capacity_state: str = transitions.READ_CAPACITY_READY
    read_capacity_schedule: list = field(default_factory=list)
    read_capacity_applied: dict[str, Any] | None = None

    @property
    def kind(self) -> str:
        return next(iter(self.spec))

    @property
    def read_capacity(self) -> dict[str, Any] | None:
        """The read capacity asked for (None for pod indexes)."""
        return self.spec[self.kind].get("read_capacity") if self.kind != "pod" else None

    @property
    def read_capacity_in_effect(self) -> dict[str, Any] | None:
        return self.read_capacity_applied or self.read_capacity

    @property
    def status_state(self) -> str | None:
        """`status.state` as the IndexModel reports it: `Disabled` once 0 dedicated replicas are in effect."""
        return transitions.index_state(self.state, self.read_capacity_in_effect)


@dataclass
class CollectionRecord:
    project: str
    name: str
    source: str
    environment: str
    dimension: int | None
    vector_count: int
    size: int
    data_key: str
    state: str | None = "Initializing"
    schedule: list = field(default_factory=list)


@dataclass
class BackupRecord:
    """A backup: a snapshot of every namespace of its source index as it was when the backup was
    made (its vectors are `data/<data_key>.npz`), and what a restore needs to rebuild the index."""

    backup_id: str
    project: str
    source_index_name: str
    source_index_id: str
    cloud: str
    region: str
    dimension: int | None
    metric: str
    vector_type: str
    record_count: int
    namespace_count: int
    size_bytes: int
    created_at: str
    data_key: str
    name: str | None = None
    description: str | None = None
    tags: dict[str, str] | None = None
    schema: dict[str, Any] | None = None
    state: str | None = "Initializing"
    schedule: list = field(default_factory=list)
    typed_schema: dict[str, Any] | None = None  # the source index's 2026-07 schema, if it had one
    source_kind: str = "serverless"  # or "byoc": the kind of index a restore makes
    environment: str | None = None  # a BYOC source's environment
    embed: dict[str, Any] | None = None  # a source index's integrated embedding
    source_index_deleted_at: float | None = None  # when the source index went away


@dataclass
class RestoreJobRecord:
    """A restore of a backup into a new index: `Pending`, then `InProgress` from `started`, then
    `Completed` (or `Failed`) at `finishes`, when the index gets the backup's records and turns
    `Ready` (Store.refresh). `percent_complete` is how far it had got the last time the clock moved."""

    restore_job_id: str
    project: str
    backup_id: str
    target_index_name: str
    target_index_id: str
    created_at: str
    started: float
    finishes: float
    state: str | None = "Pending"
    schedule: list = field(default_factory=list)
    percent_complete: float = 0.0


@dataclass
class ImportRecord:
    """A bulk import into one index (imports.py runs it; the status moves as it goes)."""

    id: str
    project: str
    index_id: str
    index_name: str
    uri: str
    path: str  # the local directory the uri names
    error_mode: str  # "abort" or "continue"
    created_at: str
    starts: float  # when it leaves Pending
    status: str = "Pending"
    finished_at: str | None = None
    percent_complete: float = 0.0
    records_imported: int = 0
    error: str | None = None
    done_files: list = field(default_factory=list)  # files fully imported, so a restart resumes after them
    namespaces: dict = field(default_factory=dict)  # namespace -> its files, fixed when it starts


def _load(cls, raw: dict[str, Any]):
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in raw.items() if k in names})


class Store:
    """All records plus the vector data, with persistence when a state directory is given."""

    def __init__(self, state_dir: Path | None) -> None:
        self.state_dir = Path(state_dir) if state_dir else None
        self.indexes: dict[tuple[str, str], IndexRecord] = {}
        self.collections: dict[tuple[str, str], CollectionRecord] = {}
        self.backups: dict[str, BackupRecord] = {}
        self.restore_jobs: dict[str, RestoreJobRecord] = {}
        self.imports: dict[str, ImportRecord] = {}
        self.data: dict[str, IndexData] = {}
        self.dirty: set[str] = set()
        self.removed: set[str] = set()
        if self.state_dir is not None:
            self._read()

    # -- persistence ---------------------------------------------------------------------------
    @property
    def _state_file(self) -> Path:
        assert self.state_dir is not None
        return self.state_dir / "state.json"

    def _data_file(self, key: str) -> Path:
        assert self.state_dir is not None
        return self.state_dir / "data" / f"{key}.npz"

    def _read(self) -> None:
        if not self._state_file.exists():
            return
        doc = persist.read_json(self._state_file)
        for raw in doc.get("indexes", []):
            rec = _load(IndexRecord, raw)
            self.indexes[(rec.project, rec.name)] = rec
        for raw in doc.get("collections", []):
            col = _load(CollectionRecord, raw)
            self.collections[(col.project, col.name)] = col
        for raw in doc.get("backups", []):
            bkp = _load(BackupRecord, raw)
            self.backups[bkp.backup_id] = bkp
        for raw in doc.get("restore_jobs", []):
            job = _load(RestoreJobRecord, raw)
            self.restore_jobs[job.restore_job_id] = job
        for raw in doc.get("imports", []):
            imp = _load(ImportRecord, raw)
            self.imports[imp.id] = imp
        keys = [r.id for r in self.indexes.values()] + [c.data_key for c in self.collections.values()] + [
            b.data_key for b in self.backups.values()]
        for key in keys:
            path = self._data_file(key)
            if path.exists():
                self.data[key] = persist.read_index_data(path)

    def save(self) -> None:
        """Write the records (small; done after every control-plane change)."""
        if self.state_dir is None:
            return
        persist.write_json(self._state_file, {
            "version": STATE_VERSION,
            "indexes": [asdict(r) for r in self.indexes.values()],
            "collections": [asdict(c) for c in self.collections.values()],
            "backups": [asdict(b) for b in self.backups.values()],
            "restore_jobs": [asdict(j) for j in self.restore_jobs.values()],
            "imports": [asdict(i) for i in self.imports.values()],
        })

    def take_dirty(self) -> tuple[dict[str, IndexData], set[str]]:
        """Snapshots of changed vector data and keys of removed data, for a flush."""
        changed = {key: self.data[key].clone() for key in self.dirty if key in self.data}
        removed = set(self.removed)
        self.dirty.clear()
        self.removed.clear()
        return changed, removed

    def write_data(self, changed: dict[str, IndexData], removed: set[str]) -> None:
        """Write snapshots taken by take_dirty (safe to run in a worker thread)."""
        if self.state_dir is None:
            return
        for key, data in changed.items():
            persist.write_index_data(self._data_file(key), data)
        for key in removed:
            self._data_file(key).unlink(missing_ok=True)

    def mark(self, key: str) -> None:
        self.dirty.add(key)

    def drop_data(self, key: str) -> None:
        self.data.pop(key, None)
        self.dirty.discard(key)
        self.removed.add(key)

    # -- time ----------------------------------------------------------------------------------
    def refresh(self, now: float | None = None) -> bool:
        """Move every timed state machine to `now`; True when anything changed."""
        now = time.time() if now is None else now
        changed = False
        for key, rec in list(self.indexes.items()):
            capacity, rec.read_capacity_schedule[:] = transitions.settle(
                rec.read_capacity_state, rec.read_capacity_schedule, now)
            if capacity != rec.read_capacity_state:
                changed = True
                rec.read_capacity_state = capacity or transitions.READ_CAPACITY_READY
                if rec.read_capacity_state == transitions.READ_CAPACITY_READY:
                    rec.read_capacity_applied = None  # the change is in effect
            state, rec.schedule[:] = transitions.settle(rec.state, rec.schedule, now)
            if state != rec.state:
                changed = True
                rec.state = state
                if state is None:
                    del self.indexes[key]
                    self.drop_data(rec.id)
                    self._index_gone(rec.id, now)
        for key, col in list(self.collections.items()):
            state, col.schedule[:] = transitions.settle(col.state, col.schedule, now)
            if state != col.state:
                changed, col.state = True, state
                if state is None:
                    del self.collections[key]
                    self.drop_data(col.data_key)
        for bkp in self.backups.values():
            state, bkp.schedule[:] = transitions.settle(bkp.state, bkp.schedule, now)
            if state != bkp.state:
                changed, bkp.state = True, state
        for job in self.restore_jobs.values():
            state, job.schedule[:] = transitions.settle(job.state, job.schedule, now)
            if state != job.state:
                changed, job.state = True, state
                if state in transitions.RESTORE_FINISHED:
                    self._restore_finished(job)
            if job.state == "InProgress":
                job.percent_complete = max(job.percent_complete, transitions.progress(job.started, job.finishes, now))
        return changed

    def index_by_id(self, index_id: str) -> IndexRecord | None:
        return next((r for r in self.indexes.values() if r.id == index_id), None)

    def _restore_finished(self, job: RestoreJobRecord) -> None:
        """A restore is over: its index gets exactly the backup's records and turns `Ready`, or
        `InitializationFailed` with the job `Failed` (an index deleted meanwhile is left alone)."""
        rec = self.index_by_id(job.target_index_id)
        if rec is None or rec.state != "Initializing":
            return
        bkp = self.backups.get(job.backup_id)
        snapshot = self.data.get(bkp.data_key) if bkp is not None else None
        if job.state == "Completed" and snapshot is not None:
            self.data[rec.id] = snapshot.clone()
            self.mark(rec.id)
            job.percent_complete = 100.0
            rec.state = "Ready"
        else:
            job.state = "Failed"
            rec.state = "InitializationFailed"

    def _index_gone(self, index_id: str, now: float) -> None:
        """An index finished deleting: its backups record when (2026-07 `source_index_deleted_at`),
        and a restore into it that was still running fails (so it no longer holds its backup)."""
        for bkp in self.backups.values():
            if bkp.source_index_id == index_id and bkp.source_index_deleted_at is None:
                bkp.source_index_deleted_at = now
        for job in self.restore_jobs.values():
            if job.target_index_id == index_id and job.state not in transitions.RESTORE_FINISHED:
                job.state, job.schedule[:] = "Failed", []

    def project_indexes(self, project: str) -> list[IndexRecord]:
        return sorted((r for (p, _), r in self.indexes.items() if p == project), key=lambda r: r.created_at)
