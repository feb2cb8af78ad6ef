"""What must hold once the chaos is over: pure checks of one snapshot of the world against what
each lifecycle expects. Each broken rule is one line naming the object and what is wrong.

- every VectorIndex that should live is Ready and Synced at its current generation, and its
  index matches the spec (tags, protection, replicas, pod type); every deleted one is gone;
- the emulator holds exactly the indexes of live VectorIndexes plus those kept on deletion;
  no index was created twice; no index that policy, protection or ownership keeps was deleted;
- every FSDPJob that should live ended as its script dictates, with exactly the restarts its
  failures caused; every pod and Service belongs to a live job; no pod process outlives its pod;
- the API key appears nowhere in the logs, Events and statuses;
- every VectorIndexBackup that lives is Ready, and Pinecone holds exactly one backup named
  after it (`<name>-<uid[:8]>`) with the records it had; one deleted with deletionPolicy Delete
  left no backup, one deleted with Retain left exactly one; Pinecone holds no backup that no
  object accounts for, and no index was backed up more often than objects asked for it;
- an index restored from a backup has exactly the backup's records, and exactly one restore job
  made it;
- a VectorIndexBackupSchedule made at most one VectorIndexBackup per scheduled minute, and its
  retention holds: exactly the newest `keepLast` of them are kept, each with its backup in
  Pinecone, and no backup of its index outlived the object retention dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pinery.vectorindex.ownership import ownership_tags

VI, JOB = "VectorIndex", "FSDPJob"
BACKUP, SCHEDULE = "VectorIndexBackup", "VectorIndexBackupSchedule"
LABEL_JOB = "pinery.dev/job-name"
LABEL_SCHEDULE = "pinery.dev/backup-schedule"
SCHEDULED_AT = "pinery.dev/scheduled-at"


@dataclass
class Expect:
    """How one lifecycle must end."""

    kind: str
    name: str
    live: bool = True
    # VectorIndex: the index, and on deletion whether it must stay (True), be gone (False) or
    # either (None: the lifecycle could not know, e.g. deleted before the operator acted).
    index: str | None = None
    kept: bool | None = None
    tags: dict[str, str] = field(default_factory=dict)
    protection: bool = False
    replicas: int | None = None
    pod_type: str | None = None
    reason: str | None = None  # a live object that must stay refused (e.g. NotOwned)
    # FSDPJob
    phase: str | None = None
    restarts: int | None = None
    num_nodes: int = 2
    # The attempts the finished job's nodes may show (all the same one); None: `restarts` (each
    # restart starts one attempt). A resume starts one more.
    attempts: tuple[int, ...] | None = None
    # VectorIndex: the records its index must hold; VectorIndexBackup: the records of its backup.
    records: int | None = None
    restored: bool = False  # VectorIndex made from a backup: exactly one restore job made its index
    # VectorIndexBackup: its backup's name in Pinecone. On deletion `kept` says whether that
    # backup must stay (Retain), be gone (Delete) or either (None).
    backup: str | None = None
    # VectorIndexBackupSchedule: its retention, and the uids of the backups seen per scheduled minute.
    keep_last: int | None = None
    scheduled: dict[str, set[str]] = field(default_factory=dict)


def pinecone_backup_name(name: str, uid: str) -> str:
    """The name a VectorIndexBackup's backup has in Pinecone: its object's name and uid, unique to the object."""
    return f"{name}-{uid[:8]}"


@dataclass
class World:
    """One snapshot: the API objects of the namespace, the emulator's indexes and request log,
    the pod processes still alive, and where the API key was found."""

    namespace: str
    cluster_name: str
    vectorindexes: dict[str, dict]
    jobs: dict[str, dict]
    pods: list[dict]
    services: list[dict]
    indexes: dict[str, dict]
    requests: list[dict]
    stray_processes: list[int] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)
    backups: dict[str, dict] = field(default_factory=dict)  # VectorIndexBackups by name
    schedules: dict[str, dict] = field(default_factory=dict)  # VectorIndexBackupSchedules by name
    pinecone_backups: list[dict] = field(default_factory=list)  # the project's backups (2026-07 BackupModel)
    restore_jobs: list[dict] = field(default_factory=list)  # the project's restore jobs (RestoreJobModel)
    records: dict[str, int | None] = field(default_factory=dict)  # records of the indexes counted, by index


def _condition(obj: dict, kind: str) -> dict:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == kind), {})


def _succeeded(entry: dict) -> bool:
    return 200 <= entry["status"] < 300


def vectorindex_violations(world: World, expect: Expect) -> list[str]:
    name, obj = expect.name, world.vectorindexes.get(expect.name)
    where = f"VectorIndex {name}"
    if not expect.live:
        out = [f"{where}: still exists after deletion (finalizers {obj['metadata'].get('finalizers')})"] if obj else []
        index = world.indexes.get(expect.index or name)
        if expect.kept is False and index is not None:
            out.append(f"{where}: index {expect.index} was to be deleted and still exists")
        return out
    if obj is None:
        return [f"{where}: missing"]
    status, meta = obj.get("status") or {}, obj["metadata"]
    ready, synced = _condition(obj, "Ready"), _condition(obj, "Synced")
    if expect.reason is not None:
        if ready.get("reason") != expect.reason:
            return [f"{where}: Ready reason is {ready.get('reason')!r}, expected {expect.reason!r}"]
        return []
    out = []
    if (ready.get("status"), synced.get("status")) != ("True", "True"):
        out.append(f"{where}: not converged: Ready={ready.get('status')} ({ready.get('reason')}), "
                   f"Synced={synced.get('status')} ({synced.get('reason')}: {synced.get('message')})")
    if status.get("observedGeneration") != meta.get("generation"):
        out.append(f"{where}: observedGeneration {status.get('observedGeneration')} != generation {meta.get('generation')}")
    index = world.indexes.get(expect.index or name)
    if index is None:
        return out + [f"{where}: its index {expect.index} does not exist"]
    want_tags = {**expect.tags, **ownership_tags(world.cluster_name, world.namespace, name)}
    if (index.get("tags") or {}) != want_tags:
        out.append(f"{where}: index tags {index.get('tags')} != {want_tags}")
    protection = "enabled" if expect.protection else "disabled"
    if index.get("deletion_protection") != protection:
        out.append(f"{where}: index deletion protection {index.get('deletion_protection')} != {protection}")
    pod = index.get("deployment") or {}  # a 2026-07 IndexModel (pinery.vectorindex.observed)
    if expect.replicas is not None and pod.get("replicas") != expect.replicas:
        out.append(f"{where}: index replicas {pod.get('replicas')} != {expect.replicas}")
    if expect.pod_type is not None and pod.get("pod_type") != expect.pod_type:
        out.append(f"{where}: index pod type {pod.get('pod_type')} != {expect.pod_type}")
    if expect.records is not None and world.records.get(expect.index or name) != expect.records:
        out.append(f"{where}: index holds {world.records.get(expect.index or name)} records, expected {expect.records}")
    return out


def job_violations(world: World, expect: Expect) -> list[str]:
    name, job = expect.name, world.jobs.get(expect.name)
    where = f"FSDPJob {name}"
    pods = [p for p in world.pods if (p["metadata"].get("labels") or {}).get(LABEL_JOB) == name]
    if not expect.live:
        out = [f"{where}: still exists after deletion"] if job else []
        return out + [f"{where}: pod {p['metadata']['name']} outlived the job" for p in pods]
    if job is None:
        return [f"{where}: missing"]
    status = job.get("status") or {}
    out = []
    if status.get("restarts") != expect.restarts:
        out.append(f"{where}: restarts {status.get('restarts')}, expected exactly {expect.restarts}")
    if status.get("phase") != expect.phase:
        return [f"{where}: phase {status.get('phase')}, expected {expect.phase}", *out]
    running = [p["metadata"]["name"] for p in pods if (p.get("status") or {}).get("phase") in ("Pending", "Running")]
    if running and status.get("phase") in ("Succeeded", "Failed"):
        out.append(f"{where}: {status.get('phase')} but pods still run: {running}")
    if expect.phase == "Succeeded":
        nodes = status.get("nodes") or []
        allowed = expect.attempts if expect.attempts is not None else (expect.restarts,)
        attempts = sorted({n.get("attempt") for n in nodes})
        if len(nodes) != expect.num_nodes or len(attempts) != 1 or attempts[0] not in allowed:
            out.append(f"{where}: nodes {[(n.get('index'), n.get('attempt'), n.get('exitCode')) for n in nodes]} "
                       f"do not all show one attempt of {list(allowed)}")
        labels = sorted((p["metadata"].get("labels") or {}).get("pinery.dev/attempt", "?") for p in pods)
        if len(set(labels)) != 1 or len(labels) != expect.num_nodes or labels[0] not in {str(a) for a in allowed}:
            out.append(f"{where}: pods' attempts {labels}, expected {expect.num_nodes} of one attempt of {list(allowed)}")
    return out


def orphan_violations(world: World) -> list[str]:
    """Pods and Services of FSDPJobs must be owned by a live job (by uid)."""
    live = {j["metadata"]["uid"] for j in world.jobs.values()}
    out = []
    for obj in [*world.pods, *world.services]:
        meta = obj["metadata"]
        if LABEL_JOB not in (meta.get("labels") or {}):
            continue
        owners = {o.get("uid") for o in meta.get("ownerReferences") or [] if o.get("kind") == JOB}
        if not owners & live:
            out.append(f"{obj.get('kind', 'object')} {meta['name']}: orphan (owners {sorted(owners)} are gone)")
    return out


def index_violations(world: World, expects: list[Expect]) -> list[str]:
    """Exactly the expected indexes exist; none was created twice; none that must stay was deleted."""
    expected = {e.index or e.name for e in expects if e.kind == VI and (e.live or e.kept)}
    maybe = {e.index or e.name for e in expects if e.kind == VI and not e.live and e.kept is None}
    out = [f"index {name}: exists, but no VectorIndex should have it (a double or an orphan)"
           for name in sorted(set(world.indexes) - expected - maybe)]
    created: dict[str, int] = {}
    deleted: set[str] = set()
    for entry in world.requests:
        if entry["operation"] == "create_index" and _succeeded(entry):
            created[entry["index"]] = created.get(entry["index"], 0) + 1
        if entry["operation"] == "delete_index" and _succeeded(entry):
            deleted.add(entry["index"])
    out += [f"index {name}: created {count} times" for name, count in sorted(created.items()) if count > 1]
    for e in expects:
        name = e.index or e.name
        if e.kind != VI or not (e.live or e.kept):
            continue
        if name in deleted:
            out.append(f"index {name}: deleted, but {'its VectorIndex lives' if e.live else 'policy, protection or ownership keeps it'}")
        elif not e.live and name in created and name not in world.indexes:
            out.append(f"index {name}: was created, must be kept, and is gone")
    return out


def _phase_and_reason(obj: dict) -> str:
    ready = _condition(obj, "Ready")
    return f"{(obj.get('status') or {}).get('phase')} ({ready.get('reason')}: {ready.get('message')})"


def _named(world: World, backup: str) -> list[dict]:
    return [b for b in world.pinecone_backups if b.get("name") == backup]


def backup_violations(world: World, expect: Expect) -> list[str]:
    """One VectorIndexBackup: exactly one backup named after it while it lives, then what its
    deletion policy says."""
    where, obj = f"VectorIndexBackup {expect.name}", world.backups.get(expect.name)
    found = _named(world, expect.backup or "")
    out = [f"{where}: Pinecone holds {len(found)} backups named {expect.backup} (a duplicate)"] if len(found) > 1 else []
    if not expect.live:
        if obj is not None:
            out.append(f"{where}: still exists after deletion (finalizers {obj['metadata'].get('finalizers')})")
        if expect.kept is False and found:
            out.append(f"{where}: its backup {expect.backup} was to be deleted with it (Delete) and still exists")
        if expect.kept is True and not found:
            out.append(f"{where}: its backup {expect.backup} was to be retained (Retain) and is gone")
        return out
    if obj is None:
        return out + [f"{where}: missing"]
    status = obj.get("status") or {}
    if status.get("phase") != "Ready":
        return out + [f"{where}: not Ready: {_phase_and_reason(obj)}"]
    if not found:
        return out + [f"{where}: its backup {expect.backup} ({status.get('backupId')}) is not in Pinecone"]
    if found[0].get("backup_id") != status.get("backupId"):
        out.append(f"{where}: status.backupId {status.get('backupId')} is not its backup's id {found[0].get('backup_id')}")
    if expect.records is not None and (found[0].get("record_count"), status.get("recordCount")) != (expect.records, expect.records):
        out.append(f"{where}: backup holds {found[0].get('record_count')} records (status says {status.get('recordCount')}), "
                   f"expected {expect.records}")
    return out


def _minute(obj: dict) -> str:
    """The scheduled minute a schedule's backup was made for (RFC 3339, so it sorts by time)."""
    return (obj["metadata"].get("annotations") or {}).get(SCHEDULED_AT, "?")


def _scheduled(world: World, expect: Expect) -> dict[str, set[str]]:
    """The uids seen per scheduled minute: those the lifecycle saw and those alive now."""
    seen = {minute: set(uids) for minute, uids in expect.scheduled.items()}
    for obj in _schedule_backups(world, expect.name):
        seen.setdefault(_minute(obj), set()).add(obj["metadata"]["uid"])
    return seen


def _schedule_backups(world: World, schedule: str) -> list[dict]:
    return [o for o in world.backups.values() if (o["metadata"].get("labels") or {}).get(LABEL_SCHEDULE) == schedule]


def schedule_violations(world: World, expect: Expect) -> list[str]:
    """One VectorIndexBackupSchedule: at most one backup per scheduled minute; its retention
    keeps exactly the newest `keep_last`, Ready, each with its backup in Pinecone (none lost that
    it keeps), and its index has no other backup (none kept that it drops)."""
    where = f"VectorIndexBackupSchedule {expect.name}"
    if expect.name not in world.schedules:
        return [f"{where}: missing"]
    seen = _scheduled(world, expect)
    out = [f"{where}: {len(uids)} VectorIndexBackups for the minute {minute} (uids {sorted(uids)})"
           for minute, uids in sorted(seen.items()) if len(uids) > 1]
    live = sorted(_schedule_backups(world, expect.name), key=_minute)
    newest = sorted(seen)[-(expect.keep_last or len(seen)):] if seen else []
    if [_minute(o) for o in live] != newest:
        out.append(f"{where}: keeps the backups of {[_minute(o) for o in live]}, retention (keepLast {expect.keep_last}) "
                   f"keeps those of {newest}")
    names = set()
    for obj in live:
        name, status = obj["metadata"]["name"], obj.get("status") or {}
        in_pinecone = pinecone_backup_name(name, obj["metadata"]["uid"])
        names.add(in_pinecone)
        if status.get("phase") != "Ready":
            out.append(f"{where}: its VectorIndexBackup {name} is not Ready: {_phase_and_reason(obj)}")
        elif not any(b.get("backup_id") == status.get("backupId") for b in _named(world, in_pinecone)):
            out.append(f"{where}: the backup of {name}, which retention keeps, is not in Pinecone (lost)")
    dropped = sorted(b.get("name") for b in world.pinecone_backups
                     if b.get("source_index_name") == expect.index and b.get("name") not in names)
    if dropped:
        out.append(f"{where}: Pinecone still holds backups of {expect.index} that no kept VectorIndexBackup has: {dropped}")
    return out


def backup_index_violations(world: World, expects: list[Expect]) -> list[str]:
    """Across all backups: none in Pinecone that no object accounts for (a duplicate under
    another name, an orphan of a deleted object), and no index backed up more often than there
    were objects (or scheduled minutes) to back it up."""
    accounted = {e.backup for e in expects if e.kind == BACKUP and (e.live or e.kept is not False)}
    scheduled = {e.index for e in expects if e.kind == SCHEDULE}  # schedule_violations looks at those
    allowed: dict[str, int] = {}
    for e in expects:
        if e.kind == BACKUP:
            allowed[e.index or ""] = allowed.get(e.index or "", 0) + 1
        elif e.kind == SCHEDULE:
            allowed[e.index or ""] = allowed.get(e.index or "", 0) + len(_scheduled(world, e))
    out = [f"backup {b.get('name')} ({b.get('backup_id')}) of index {b.get('source_index_name')}: exists, but no "
           "VectorIndexBackup should have it (a duplicate or an orphan)"
           for b in world.pinecone_backups if b.get("name") not in accounted and b.get("source_index_name") not in scheduled]
    made: dict[str, int] = {}
    for entry in world.requests:
        if entry["operation"] == "create_backup" and _succeeded(entry):
            made[entry["index"]] = made.get(entry["index"], 0) + 1
    out += [f"index {index}: backed up {count} times for {allowed.get(index, 0)} VectorIndexBackups (a duplicate backup)"
            for index, count in sorted(made.items()) if count > allowed.get(index, 0)]
    return out


def restore_violations(world: World, expects: list[Expect]) -> list[str]:
    """Each live restored index was made by exactly one restore job, which completed."""
    out = []
    for e in expects:
        if e.kind != VI or not e.restored or not e.live:
            continue
        jobs = [j for j in world.restore_jobs if j.get("target_index_name") == (e.index or e.name)]
        if len(jobs) != 1:
            out.append(f"VectorIndex {e.name}: {len(jobs)} restore jobs made its index, expected exactly 1")
        elif jobs[0].get("status") != "Completed":
            out.append(f"VectorIndex {e.name}: its restore job {jobs[0].get('restore_job_id')} is {jobs[0].get('status')}")
    return out


def violations(world: World, expects: list[Expect]) -> list[str]:
    checks = {VI: vectorindex_violations, JOB: job_violations, BACKUP: backup_violations, SCHEDULE: schedule_violations}
    out: list[str] = []
    for expect in expects:
        out += checks[expect.kind](world, expect)
    out += index_violations(world, expects)
    out += backup_index_violations(world, expects)
    out += restore_violations(world, expects)
    out += orphan_violations(world)
    if world.stray_processes:
        out.append(f"pod processes outlived their pods: {world.stray_processes}")
    out += [f"the API key appears in {where}" for where in world.leaks]
    return out


def summary(expects: list[Expect]) -> dict[str, Any]:
    """Lifecycles by kind and ending, for the result."""
    counts: dict[str, int] = {}
    for e in expects:
        if e.kind == VI:
            end = "live" if e.live else {True: "deleted, index kept", False: "deleted with its index", None: "deleted"}[e.kept]
            end += ", restored from a backup" if e.restored else ""
        elif e.kind == BACKUP:
            end = "live" if e.live else {True: "deleted, backup retained", False: "deleted with its backup", None: "deleted"}[e.kept]
        elif e.kind == SCHEDULE:
            end = "live"
        else:
            end = e.phase if e.live else "deleted"
        key = f"{e.kind}: {end}"
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


def backup_summary(world: World, expects: list[Expect]) -> dict[str, Any]:
    """Backups and restores of the run, for the result: objects by how they ended, what Pinecone
    was asked to make and holds at the end, and the restored indexes with their records."""
    backups = [e for e in expects if e.kind == BACKUP]
    scheduled = {e.name: _scheduled(world, e) for e in expects if e.kind == SCHEDULE}
    restored = [e for e in expects if e.kind == VI and e.restored]
    made = sum(1 for entry in world.requests if entry["operation"] == "create_backup" and _succeeded(entry))
    return {
        "backups": {
            "objects": len(backups),
            "kept": sum(1 for e in backups if e.live),
            "deletedWithBackup": sum(1 for e in backups if not e.live and e.kept is False),
            "deletedBackupRetained": sum(1 for e in backups if not e.live and e.kept is True),
            "scheduled": sum(len(minutes) for minutes in scheduled.values()),
            "scheduledKept": sum(len(_schedule_backups(world, name)) for name in scheduled),
            "madeInPinecone": made,
            "inPineconeAtEnd": len(world.pinecone_backups),
        },
        "restores": {
            "indexes": len(restored),
            "records": sum(e.records or 0 for e in restored),
            "restoreJobs": len(world.restore_jobs),
        },
    }
