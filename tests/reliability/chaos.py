"""Operator chaos: mixed VectorIndex and FSDPJob lifecycles while the operator process is
SIGKILLed and restarted at seeded random moments; afterwards the invariants of
`tests.reliability.invariants` must hold.

Each wave starts one of every lifecycle below, at staggered moments; the killer runs through
all waves. Backups and restores have lifecycles of their own (drawn from a stream of their own,
so that a seed drives the other lifecycles as it did before they came), and the full profile
adds one per-minute backup schedule that runs beside the waves. Lifecycles act as a user would (create, patch, delete through the API) and, by a
seeded coin, either wait for the operator to catch up or go on at once, so that changes land
in the middle of creations, scalings and restarts. FSDPJobs run a cheap script (no torch): a
given rank fails on its first attempts, and the work done survives in a volume, as a
checkpoint would.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import textwrap
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from pinery.gateways.pinecone import index_to_dict, struct_to_dict
from pinery.local.cluster import LocalCluster
from pinery.local.kubeclient import KubeClient
from pinery.local.pinecone import EmulatorAdmin
from pinery.vectorindex.schedule import DEFAULT_TIMING
from tests.reliability.harness import Api, Driver, OperatorKiller, operators_running, pod_processes, secret_leaks, wait_until
from tests.reliability.invariants import (
    BACKUP,
    JOB,
    LABEL_SCHEDULE,
    SCHEDULE,
    SCHEDULED_AT,
    VI,
    Expect,
    World,
    backup_summary,
    pinecone_backup_name,
    summary,
    violations,
)
from tests.support.ports import free_port

NAMESPACE = "chaos"
CLUSTER_NAME = "local"  # LocalCluster's PINERY_CLUSTER_NAME
SCRIPT_CONFIG_MAP = "chaos-job-script"
PROGRESS_CLAIM = "chaos-progress"


@dataclass(frozen=True)
class Profile:
    waves: int
    kill_interval: tuple[float, float]  # seconds between kills
    down: tuple[float, float]  # seconds the operator stays down
    step_timeout: float  # how long a lifecycle waits for the operator at one step
    converge_timeout: float  # how long everything may take to converge once the kills stop
    wait_share: float = 0.6  # the chance that a lifecycle waits for the operator after a change
    # Scheduled minutes the per-minute backup schedule runs for (0: no schedule): real minutes,
    # so only a profile that lasts that long anyway has one.
    scheduled_backups: int = 0


PROFILES = {
    "reduced": Profile(waves=3, kill_interval=(1.0, 4.0), down=(0.0, 1.0), step_timeout=45, converge_timeout=90),
    "full": Profile(waves=15, kill_interval=(0.5, 4.0), down=(0.0, 1.5), step_timeout=90, converge_timeout=180,
                    scheduled_backups=3),
}
# The backup schedule's retention: fewer than the backups it makes, so that it drops some.
SCHEDULE_KEEP_LAST = 2
# A backup whose create may have been sent but whose answer was lost is looked for by name for
# this long before the operator asks again (its Timing.create_landing): a kill at that moment
# makes the backup that much later, by design.
BACKUP_LANDING = DEFAULT_TIMING.create_landing

# Sleeps WORK_SECONDS in steps, keeping what it did in a volume (as a checkpoint would), so a
# resumed or restarted gang only does what is left. Rank FAIL_RANK exits FAIL_CODE on attempts
# below FAIL_ATTEMPTS. Rank 0 listens on the master port until every other node's init
# container has connected (they wait for it).
JOB_SCRIPT = textwrap.dedent("""
    import os, socket, sys, time
    from pathlib import Path

    rank, nodes = int(os.environ["NODE_RANK"]), int(os.environ["NNODES"])
    attempt = int(os.environ["PINERY_ATTEMPT"])
    if rank == 0:
        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("0.0.0.0", int(os.environ["MASTER_PORT"])))
        server.listen(16)
        server.settimeout(300)
        for _ in range(nodes - 1):
            server.accept()[0].close()
    if rank == int(os.environ["FAIL_RANK"]) and attempt < int(os.environ["FAIL_ATTEMPTS"]):
        print(f"rank {rank}: failing on attempt {attempt}", flush=True)
        sys.exit(int(os.environ["FAIL_CODE"]))
    progress = Path(os.environ["PROGRESS_DIR"]) / f"rank{rank}"
    progress.parent.mkdir(parents=True, exist_ok=True)
    done = float(progress.read_text() or 0) if progress.exists() else 0.0
    while done < float(os.environ["WORK_SECONDS"]):
        time.sleep(0.25)
        done += 0.25
        progress.write_text(str(done))
    print(f"rank {rank}: done on attempt {attempt}", flush=True)
""")


def vector_index(name: str, *, pod: bool = False, tags: dict | None = None, protection: bool = False,
                 policy: str = "Delete", adopt: bool = False) -> dict:
    spec: dict[str, Any] = {"dimension": 8, "metric": "cosine", "deletionPolicy": policy, "deletionProtection": protection}
    if pod:
        spec["pod"] = {"environment": "us-east1-gcp", "podType": "p1.x1", "replicas": 1}
    else:
        spec["serverless"] = {"cloud": "aws", "region": "us-east-1"}
    if tags:
        spec["tags"] = tags
    if adopt:
        spec["adoptExisting"] = True
    return {"apiVersion": "pinery.dev/v1alpha1", "kind": VI, "metadata": {"name": name}, "spec": spec}


def vector_index_backup(name: str, source: str, policy: str = "Delete") -> dict:
    return {"apiVersion": "pinery.dev/v1alpha1", "kind": BACKUP, "metadata": {"name": name},
            "spec": {"vectorIndexName": source, "deletionPolicy": policy}}


def restored_index(name: str, backup: str) -> dict:
    """A VectorIndex made from a VectorIndexBackup (its dimension and metric agree with the backup's)."""
    obj = vector_index(name)
    obj["spec"]["restoreFrom"] = {"backupName": backup}
    return obj


def backup_schedule(name: str, source: str, keep_last: int) -> dict:
    return {"apiVersion": "pinery.dev/v1alpha1", "kind": SCHEDULE, "metadata": {"name": name},
            "spec": {"vectorIndexName": source, "schedule": "* * * * *", "retention": {"keepLast": keep_last}}}


# Master ports handed out in this process. All pods of local mode share the machine's ports,
# so jobs alive at the same time need different ones; free_port() only says a port is free
# now. With two jobs on one port, one job's waiting node reaches the other's rank 0 and lets it
# go on, while its own rank 0 cannot bind.
_PORTS: set[int] = set()


def master_port() -> int:
    """A free port no other job of this process was given."""
    for _ in range(1000):
        port = free_port()
        if port not in _PORTS:
            _PORTS.add(port)
            return port
    raise RuntimeError("no master port left")


def fsdp_job(name: str, *, work: float, fail_attempts: int = 0, max_restarts: int = 0) -> dict:
    env = {"WORK_SECONDS": str(work), "PROGRESS_DIR": f"/progress/{name}", "FAIL_RANK": "1",
           "FAIL_ATTEMPTS": str(fail_attempts), "FAIL_CODE": "3"}
    return {
        "apiVersion": "pinery.dev/v1alpha1",
        "kind": JOB,
        "metadata": {"name": name},
        "spec": {
            "numNodes": 2,
            "nprocPerNode": 1,
            "masterPort": master_port(),
            "command": ["python", "/opt/job/work.py"],
            "env": [{"name": k, "value": v} for k, v in env.items()],
            "maxRestarts": max_restarts,
            "startupTimeoutSeconds": 300,
            "podTemplate": {
                "terminationGracePeriodSeconds": 2,
                "volumes": [
                    {"name": "script", "configMap": {"name": SCRIPT_CONFIG_MAP}},
                    {"name": "progress", "persistentVolumeClaim": {"claimName": PROGRESS_CLAIM}},
                ],
                "volumeMounts": [{"name": "script", "mountPath": "/opt/job"}, {"name": "progress", "mountPath": "/progress"}],
            },
        },
    }


@dataclass
class Context(Driver):
    """The driver, plus what only the chaos lifecycles need."""

    pinecone_url: str = ""
    api_key: str = ""
    wait_share: float = 0.6

    async def maybe_synced(self, name: str, rng: random.Random) -> None:
        """By a seeded coin: wait for the operator to catch up, or go on after a moment."""
        if rng.random() < self.wait_share:
            await self.synced(name)
        else:
            await asyncio.sleep(rng.uniform(0, 1.5))

    async def create_index_by_hand(self, name: str, tags: dict[str, str]) -> None:
        """An index made outside pinery (by Terraform, say), through the SDK."""
        def create() -> None:
            from pinecone import Pinecone, ServerlessSpec

            pc = Pinecone(api_key=self.api_key, host=self.pinecone_url)
            try:
                pc.create_index(name=name, dimension=8, metric="cosine", tags=tags,
                                spec=ServerlessSpec(cloud="aws", region="us-east-1"), timeout=-1)
            finally:
                pc.close()

        await asyncio.to_thread(create)

    async def upsert(self, name: str, first: int, vectors: list[list[float]]) -> bool:
        """Write records r<first>, r<first+1>, ... into the VectorIndex's index through the SDK,
        as an application would, until the index counts exactly first + len(vectors) records.
        Repeating a write is harmless (the same ids), so a failed one is simply tried again."""
        records = [(f"r{first + i}", values) for i, values in enumerate(vectors)]
        total = first + len(records)

        def write(host: str) -> bool:
            from pinecone import Pinecone, PineconeError

            pc = Pinecone(api_key=self.api_key, host=self.pinecone_url)
            try:
                with pc.index(host=host) as index:
                    index.upsert(vectors=records)
                    return index.describe_index_stats().total_vector_count == total
            except PineconeError:
                return False  # not ready yet, or a moment of trouble: the wait tries again
            finally:
                pc.close()

        async def check() -> bool:
            host = ((await self.api.get(VI, name) or {}).get("status") or {}).get("host")
            return bool(host) and await asyncio.to_thread(write, host)

        return await self._wait(check, f"VectorIndex {name}: {total} records not written", VI, name)

    async def backup_ready(self, name: str) -> bool:
        """Until the VectorIndexBackup is Ready; longer than a step, as a backup whose create
        was lost with a killed operator is asked for again only after BACKUP_LANDING."""
        async def check():
            obj = await self.api.get(BACKUP, name)
            return obj is not None and (obj.get("status") or {}).get("phase") == "Ready"

        return await self._wait(check, f"VectorIndexBackup {name}: not Ready", BACKUP, name, extra=BACKUP_LANDING)

    async def schedule_made(self, name: str, seen: dict[str, set[str]], backups: int) -> bool:
        """Until the schedule has made backups for `backups` scheduled minutes, noting the uid
        of every backup it made by its minute (two for one minute would be a duplicate)."""
        async def check():
            for obj in await self.api.list(BACKUP, f"{LABEL_SCHEDULE}={name}"):
                meta = obj["metadata"]
                seen.setdefault((meta.get("annotations") or {}).get(SCHEDULED_AT, "?"), set()).add(meta["uid"])
            return len(seen) >= backups

        # A minute goes by between two backups, and the first may be a minute away. Not one of
        # the waits for the operator (slowestWaits): this one waits for the clock.
        timeout = self.step_timeout + 60.0 * (backups + 1)
        if await wait_until(check, timeout):
            return True
        self.stall(f"VectorIndexBackupSchedule {name}: {len(seen)} of {backups} backups made within {timeout:.0f}s")
        return False

    async def schedule_suspended(self, name: str) -> bool:
        async def check():
            obj = await self.api.get(SCHEDULE, name)
            status = (obj or {}).get("status") or {}
            ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), {})
            return obj is not None and status.get("observedGeneration") == obj["metadata"].get("generation") \
                and ready.get("reason") == "Suspended"

        return await self._wait(check, f"VectorIndexBackupSchedule {name}: not Suspended", SCHEDULE, name)


def vectors(rng: random.Random, count: int) -> list[list[float]]:
    """`count` dense vectors of the chaos indexes' dimension, none all zeros."""
    return [[rng.uniform(0.1, 1.0) for _ in range(8)] for _ in range(count)]


# --- VectorIndex lifecycles ----------------------------------------------------------------
# Each returns how it must end. A delete right after turning protection off waits for the
# operator first: a delete that reaches an index still protected keeps it, by design.

async def tags_and_protection(ctx: Context, name: str, rng: random.Random) -> Expect:
    await ctx.api.create(vector_index(name, tags={"team": "a"}))
    await ctx.maybe_synced(name, rng)
    await ctx.patch_spec(VI, name, {"tags": {"team": "b", "tier": "gold"}})
    await ctx.maybe_synced(name, rng)
    await ctx.patch_spec(VI, name, {"deletionProtection": True})
    await ctx.maybe_synced(name, rng)
    await ctx.patch_spec(VI, name, {"deletionProtection": False})
    settled = await ctx.synced(name)
    await ctx.delete(VI, name)
    return Expect(VI, name, live=False, index=name, kept=False if settled else None)


async def pod_scaling(ctx: Context, name: str, rng: random.Random, keep: bool) -> Expect:
    await ctx.api.create(vector_index(name, pod=True))
    await ctx.maybe_synced(name, rng)
    await ctx.patch_spec(VI, name, {"pod": {"replicas": 2}})
    await ctx.maybe_synced(name, rng)
    await ctx.patch_spec(VI, name, {"pod": {"podType": "p1.x2"}})
    if keep:
        return Expect(VI, name, index=name, replicas=2, pod_type="p1.x2")
    await ctx.maybe_synced(name, rng)
    await ctx.delete(VI, name)
    return Expect(VI, name, live=False, index=name, kept=False)


async def retain_then_apply_again(ctx: Context, name: str, rng: random.Random) -> Expect:
    """Deleted with Retain, applied again (as GitOps does): the new object finds its index by
    the ownership tags; then deleted for good."""
    await ctx.api.create(vector_index(name, policy="Retain"))
    await ctx.maybe_synced(name, rng)
    await ctx.delete(VI, name)
    await ctx.api.create(vector_index(name, tags={"again": "yes"}))
    await ctx.maybe_synced(name, rng)
    taken_on = await ctx.delete(VI, name)
    # Created and deleted while the operator was away, the new object never managed the index.
    return Expect(VI, name, live=False, index=name, kept=not taken_on)


async def protect_then_delete(ctx: Context, name: str, rng: random.Random) -> Expect:
    """Protection turned on, then the object deleted, perhaps before the operator acted on it:
    the spec asked for protection, so the index must stay (if it was ever made)."""
    await ctx.api.create(vector_index(name))
    await ctx.maybe_synced(name, rng)
    await ctx.patch_spec(VI, name, {"deletionProtection": True})
    await asyncio.sleep(rng.uniform(0, 1.0))
    await ctx.delete(VI, name)
    return Expect(VI, name, live=False, index=name, kept=True)


async def not_owned(ctx: Context, name: str, rng: random.Random) -> Expect:
    """An index someone else made: refused (NotOwned), and left alone on deletion."""
    await ctx.create_index_by_hand(name, {"owner": "terraform"})
    await ctx.api.create(vector_index(name))
    if rng.random() < ctx.wait_share:
        await ctx.synced(name, reason="NotOwned")
    await ctx.delete(VI, name)
    return Expect(VI, name, live=False, index=name, kept=True)


async def quick_delete(ctx: Context, name: str, rng: random.Random) -> Expect:
    await ctx.api.create(vector_index(name, pod=rng.random() < 0.5))
    await asyncio.sleep(rng.uniform(0, 1.5))
    await ctx.delete(VI, name)
    return Expect(VI, name, live=False, index=name, kept=False)


async def live_serverless(ctx: Context, name: str, rng: random.Random) -> Expect:
    await ctx.api.create(vector_index(name, tags={"team": "search"}))
    await ctx.maybe_synced(name, rng)
    await ctx.patch_spec(VI, name, {"tags": {"team": "search", "env": "prod"}, "deletionProtection": True})
    return Expect(VI, name, index=name, tags={"team": "search", "env": "prod"}, protection=True)


async def adopt(ctx: Context, name: str, rng: random.Random) -> Expect:
    """An existing index taken over with adoptExisting: its foreign tags give way to the spec's."""
    await ctx.create_index_by_hand(name, {"owner": "terraform"})
    await ctx.api.create(vector_index(name, tags={"team": "adopted"}, adopt=True))
    return Expect(VI, name, index=name, tags={"team": "adopted"})


# --- backup and restore lifecycles -------------------------------------------------------------
# A backup is waited for before the records it should hold are changed, and a VectorIndex only
# once it is synced before records are written to it: the data plane serves a Ready index only.

async def backup_and_end(ctx: Context, name: str, source: str, records: int, rng: random.Random, ending: str) -> Expect:
    """One VectorIndexBackup of `source`, ending as `ending` says: "keep" (it lives), "delete"
    (deleted with its backup), "retain" (deleted, its backup kept: created with Retain or
    switched to it just before the deletion, by a seeded coin) or "quick" (deleted after a
    moment, perhaps before the operator made its backup: none may be left)."""
    retain_at_once = ending == "retain" and rng.random() < 0.5
    pause = rng.uniform(0, 1.5)
    made = await ctx.api.create(vector_index_backup(name, source, "Retain" if retain_at_once else "Delete"))
    expect = Expect(BACKUP, name, index=source, backup=pinecone_backup_name(name, made["metadata"]["uid"]), records=records)
    if ending == "quick":
        await asyncio.sleep(pause)
        await ctx.delete(BACKUP, name)
        return dataclasses.replace(expect, live=False, kept=False)
    ready = await ctx.backup_ready(name)
    if ending == "keep":
        return expect
    if ending == "retain" and not retain_at_once:
        await ctx.patch_spec(BACKUP, name, {"deletionPolicy": "Retain"})
    await asyncio.sleep(pause)
    await ctx.delete(BACKUP, name)
    # Retain keeps the backup only if one was made: without Ready seen, it may not have been.
    return dataclasses.replace(expect, live=False, kept=False if ending == "delete" else (True if ready else None))


async def backups_of_an_index(ctx: Context, name: str, rng: random.Random) -> list[Expect]:
    """An index with a few records, backed up by four VectorIndexBackups at once, one of each
    ending of `backup_and_end`; then, by a seeded coin, the index is deleted (its backups
    outlive it) or kept (with its records)."""
    records, endings = rng.randint(1, 5), ("keep", "delete", "retain", "quick")
    streams = [random.Random(rng.random()) for _ in endings]
    drop_index = rng.random() < 0.5
    await ctx.api.create(vector_index(name))
    await ctx.synced(name)
    await ctx.upsert(name, 0, vectors(rng, records))
    backups = await asyncio.gather(*(backup_and_end(ctx, f"{name}-{ending}", name, records, own, ending)
                                     for ending, own in zip(endings, streams, strict=True)))
    if drop_index:
        await ctx.delete(VI, name)
        return [Expect(VI, name, live=False, index=name, kept=False), *backups]
    return [Expect(VI, name, index=name, records=records), *backups]


async def restore_from_backup(ctx: Context, name: str, rng: random.Random) -> list[Expect]:
    """An index restored (spec.restoreFrom.backupName) from a backup of another index holds the
    backup's records, not those written after the backup. By seeded coins the restored
    VectorIndex is created before the backup is Ready (it waits for it), and the source index is
    deleted once the restore is done."""
    source, records, later = f"{name}-source", rng.randint(1, 5), rng.randint(1, 3)
    early, drop_source = rng.random() < 0.5, rng.random() < 0.5
    await ctx.api.create(vector_index(source))
    await ctx.synced(source)
    await ctx.upsert(source, 0, vectors(rng, records))
    made = await ctx.api.create(vector_index_backup(name, source))
    if early:
        await ctx.api.create(restored_index(name, name))
    if await ctx.backup_ready(name):
        await ctx.upsert(source, records, vectors(rng, later))  # after the backup: not restored
    else:
        later = 0  # the backup may not be made yet: nothing more may be written before it
    if not early:
        await ctx.api.create(restored_index(name, name))
    await ctx.synced(name)
    backup = Expect(BACKUP, name, index=source, backup=pinecone_backup_name(name, made["metadata"]["uid"]), records=records)
    restored = Expect(VI, name, index=name, records=records, restored=True)
    if drop_source:
        await ctx.delete(VI, source)
        return [Expect(VI, source, live=False, index=source, kept=False), backup, restored]
    return [Expect(VI, source, index=source, records=records + later), backup, restored]


async def scheduled_backups(ctx: Context, name: str, backups: int) -> list[Expect]:
    """A per-minute VectorIndexBackupSchedule with retention keepLast SCHEDULE_KEEP_LAST, left to
    run (and the operator to be killed) for `backups` scheduled minutes, then suspended, so that
    what it keeps can be checked once everything has converged."""
    seen: dict[str, set[str]] = {}
    ctx.say(f"{name}: start")
    await ctx.api.create(vector_index(name))
    await ctx.synced(name)
    await ctx.api.create(backup_schedule(name, name, SCHEDULE_KEEP_LAST))
    await ctx.schedule_made(name, seen, backups)
    await ctx.patch_spec(SCHEDULE, name, {"suspend": True})
    await ctx.schedule_suspended(name)
    await ctx.schedule_made(name, seen, 0)  # one more look: a backup made just before the suspension
    ctx.say(f"{name}: done, backups for {len(seen)} scheduled minutes made")
    return [Expect(VI, name, index=name), Expect(SCHEDULE, name, index=name, keep_last=SCHEDULE_KEEP_LAST, scheduled=seen)]


# --- FSDPJob lifecycles ----------------------------------------------------------------------

async def job_runs(ctx: Context, name: str, rng: random.Random, fail_attempts: int, max_restarts: int) -> Expect:
    await ctx.api.create(fsdp_job(name, work=rng.uniform(1, 3), fail_attempts=fail_attempts, max_restarts=max_restarts))
    failed = fail_attempts > max_restarts
    await ctx.job_phase(name, "Failed" if failed else "Succeeded")
    return Expect(JOB, name, phase="Failed" if failed else "Succeeded", restarts=min(fail_attempts, max_restarts))


async def suspend_and_resume(ctx: Context, name: str, rng: random.Random) -> Expect:
    await ctx.api.create(fsdp_job(name, work=8))
    # Suspended while running, or, when it was already done, the suspension must change nothing.
    await ctx.job_started(name)
    await asyncio.sleep(rng.uniform(0, 2))
    await ctx.patch_spec(JOB, name, {"suspend": True})
    await ctx.job_phase(name, "Suspended", "Succeeded")
    await asyncio.sleep(rng.uniform(0, 2))
    await ctx.patch_spec(JOB, name, {"suspend": False})
    await ctx.job_phase(name, "Succeeded")
    # Attempt 0 when it had already succeeded; 1 when the suspension stopped it (a resume is a new attempt).
    return Expect(JOB, name, phase="Succeeded", restarts=0, attempts=(0, 1))


async def delete_running(ctx: Context, name: str, rng: random.Random) -> Expect:
    await ctx.api.create(fsdp_job(name, work=120))
    await ctx.job_phase(name, "Running")
    await asyncio.sleep(rng.uniform(0, 2))
    await ctx.delete(JOB, name)
    return Expect(JOB, name, live=False)


Lifecycle = Callable[[Context, str, random.Random], Awaitable[Expect | list[Expect]]]
LIFECYCLES: dict[str, Lifecycle] = {
    "vi-tags": tags_and_protection,
    "vi-scale": lambda ctx, name, rng: pod_scaling(ctx, name, rng, keep=False),
    "vi-scale-keep": lambda ctx, name, rng: pod_scaling(ctx, name, rng, keep=True),
    "vi-retain": retain_then_apply_again,
    "vi-protect": protect_then_delete,
    "vi-notowned": not_owned,
    "vi-quick": quick_delete,
    "vi-live": live_serverless,
    "vi-adopt": adopt,
    "job-ok": lambda ctx, name, rng: job_runs(ctx, name, rng, fail_attempts=0, max_restarts=1),
    "job-flaky": lambda ctx, name, rng: job_runs(ctx, name, rng, fail_attempts=1, max_restarts=2),
    "job-twice": lambda ctx, name, rng: job_runs(ctx, name, rng, fail_attempts=2, max_restarts=3),
    "job-doomed": lambda ctx, name, rng: job_runs(ctx, name, rng, fail_attempts=9, max_restarts=1),
    "job-suspend": suspend_and_resume,
    "job-delete": delete_running,
}
# Drawn from a stream of their own (see run_chaos).
BACKUP_LIFECYCLES: dict[str, Lifecycle] = {
    "vi-backup": backups_of_an_index,
    "vi-restore": restore_from_backup,
}
SCHEDULE_NAME = "vi-schedule"


# --- the run -----------------------------------------------------------------------------

async def prepare(api: Api) -> None:
    await api.create_namespace()
    await api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": SCRIPT_CONFIG_MAP},
                      "data": {"work.py": JOB_SCRIPT}})
    await api.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": PROGRESS_CLAIM},
                      "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "1Gi"}}}})


class RequestLog:
    """The emulator's request log, read as it grows (it keeps only the latest entries)."""

    def __init__(self, admin: EmulatorAdmin):
        self.admin, self.entries = admin, []

    def read(self) -> list[dict]:
        since = self.entries[-1]["seq"] if self.entries else 0
        self.entries += self.admin.requests(since=since)
        return self.entries

    async def follow(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await asyncio.to_thread(self.read)
            try:
                await asyncio.wait_for(stop.wait(), 2.0)
            except asyncio.TimeoutError:
                pass


def _all_pages(list_page: Callable[..., Any]) -> list[dict]:
    """Every item of a paged SDK listing (one call returns one page)."""
    items: list[dict] = []
    token = None
    while True:
        page = list_page(limit=100) if token is None else list_page(pagination_token=token)
        items += [struct_to_dict(model) for model in page]
        token = page.pagination.next if page.pagination else None
        if not token:
            return items


def pinecone_view(cluster: LocalCluster, counted: set[str]) -> dict[str, Any]:
    """What Pinecone holds, through the SDK: indexes, backups, restore jobs, and the records of
    the indexes in `counted` (None for one that is absent or not serving)."""
    from pinecone import Pinecone, PineconeError

    pc = Pinecone(api_key=cluster.state.api_key, host=cluster.pinecone_url)
    try:
        indexes = {model.name: index_to_dict(model) for model in pc.list_indexes()}
        records: dict[str, int | None] = {}
        for name in sorted(counted):
            records[name] = None
            host = (indexes.get(name) or {}).get("host")
            try:
                if host:
                    with pc.index(host=host) as index:
                        records[name] = index.describe_index_stats().total_vector_count
            except PineconeError:
                pass  # not serving (yet): the records stay unknown
        return {"indexes": indexes, "records": records, "pinecone_backups": _all_pages(pc.backups.list),
                "restore_jobs": _all_pages(pc.restore_jobs.list)}
    finally:
        pc.close()


async def snapshot(cluster: LocalCluster, api: Api, log: RequestLog, expects: list[Expect]) -> World:
    vis, jobs = await api.list(VI), await api.list(JOB)
    backups, schedules = await api.list(BACKUP), await api.list(SCHEDULE)
    events = await api.list("Event")
    texts = {"the operator's log": (cluster.state_dir / "operator.log").read_text(errors="replace"),
             "Events": repr(events), "statuses": repr([o.get("status") for o in [*vis, *jobs, *backups, *schedules]])}
    counted = {e.index or e.name for e in expects if e.kind == VI and e.live and e.records is not None}
    return World(
        namespace=api.namespace,
        cluster_name=CLUSTER_NAME,
        vectorindexes={o["metadata"]["name"]: o for o in vis},
        jobs={o["metadata"]["name"]: o for o in jobs},
        pods=[{**p, "kind": "Pod"} for p in await api.list("Pod")],
        services=[{**s, "kind": "Service"} for s in await api.list("Service")],
        requests=await asyncio.to_thread(log.read),
        # every job has ended or gone once converged: no pod process may be left
        stray_processes=pod_processes(cluster),
        leaks=secret_leaks(cluster.state.api_key, texts),
        backups={o["metadata"]["name"]: o for o in backups},
        schedules={o["metadata"]["name"]: o for o in schedules},
        **await asyncio.to_thread(pinecone_view, cluster, counted),
    )


async def _lifecycle(ctx: Context, kind: str, wave: int, lifecycle: Lifecycle, own: random.Random) -> list[Expect]:
    """One lifecycle, started at a seeded moment of its wave; what its objects must end as."""
    await asyncio.sleep(own.uniform(0, 3))
    ctx.say(f"{kind}-{wave}: start")
    expect = await lifecycle(ctx, f"{kind}-{wave}", own)
    ctx.say(f"{kind}-{wave}: done")
    return expect if isinstance(expect, list) else [expect]


async def run_chaos(cluster: LocalCluster, profile: Profile, seed: int) -> dict[str, Any]:
    """Run the waves under the killer, then wait for convergence and check the invariants."""
    client = KubeClient.from_kubeconfig(cluster.kubeconfig)
    api = Api(client, NAMESPACE)
    admin = EmulatorAdmin(cluster.pinecone_url)
    log = RequestLog(admin)
    ctx = Context(api, profile.step_timeout, pinecone_url=cluster.pinecone_url, api_key=cluster.state.api_key,
                  wait_share=profile.wait_share)
    rng = random.Random(seed)
    killer = OperatorKiller(cluster, random.Random(rng.random()), profile.kill_interval, profile.down, say=ctx.say)
    # The backup lifecycles draw from a stream of their own, so that the draws of the other
    # lifecycles and of the killer are, for a seed, what they were before those came.
    backup_rng = random.Random(f"backups-{seed}")
    expects: list[Expect] = []
    lifecycles = 0
    started = time.monotonic()
    try:
        await prepare(api)
        stop = asyncio.Event()
        background = [asyncio.create_task(killer.run(stop)), asyncio.create_task(log.follow(stop))]
        schedule = None
        if profile.scheduled_backups:
            schedule = asyncio.create_task(scheduled_backups(ctx, SCHEDULE_NAME, profile.scheduled_backups))
            lifecycles += 1
        for wave in range(profile.waves):
            # each lifecycle its own stream: concurrency cannot shift draws
            tasks = [_lifecycle(ctx, kind, wave, lifecycle, random.Random(rng.random())) for kind, lifecycle in LIFECYCLES.items()]
            tasks += [_lifecycle(ctx, kind, wave, lifecycle, random.Random(backup_rng.random()))
                      for kind, lifecycle in BACKUP_LIFECYCLES.items()]
            lifecycles += len(tasks)
            for ends in await asyncio.gather(*tasks):
                expects += ends
        if schedule is not None:
            expects += await schedule
        chaos_seconds = time.monotonic() - started
        stop.set()
        await asyncio.gather(*background)

        converge_started = time.monotonic()
        world = None

        async def converged():
            nonlocal world
            world = await snapshot(cluster, api, log, expects)
            found = violations(world, expects)
            ctx.say(f"converging: {len(found)} violations" + "".join(f"\n    {v}" for v in found[:8]))
            return not found

        settled = await wait_until(converged, profile.converge_timeout, interval=2.0)
        found = violations(world, expects) if world is not None else ["no snapshot could be taken"]
        operators = operators_running(cluster)
        if operators != 1:
            found.append(f"{operators} operator processes run after the chaos (expected 1)")
        requests = log.entries
        return {
            "seed": seed,
            "kills": killer.kills,
            "lifecycles": lifecycles,
            "lifecyclesByEnding": summary(expects),
            **(backup_summary(world, expects) if world is not None else {}),
            "violations": found,
            "stalls": ctx.stalls,
            "slowestWaits": ctx.slowest_waits(),
            "seconds": {"chaos": round(chaos_seconds, 1),
                        "convergence": round(time.monotonic() - converge_started, 1) if settled else None},
            "operatorUptimeAtKill": {"min": min(killer.uptimes, default=None), "max": max(killer.uptimes, default=None)},
            "pineconeRequests": _count_by_operation(requests),
        }
    finally:
        await client.close()


def _count_by_operation(requests: list[dict]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for entry in requests:
        counts[entry["operation"]] = counts.get(entry["operation"], 0) + 1
    return dict(sorted(counts.items()))
