"""VectorIndexBackupSchedule through the operator (KopfRunner) and the emulator, on a clock that
runs 120 times faster than the wall clock (the operator's `services.clock`; the schedule's
arithmetic is table-tested on its own): backups made at each scheduled time and owned by the
schedule, retention deleting the oldest with their Pinecone backups, suspend, the status and
the metrics an alert reads."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import pytest

from pinery.api.base import GROUP, VERSION
from pinery.clock import WallClock
from tests.support.vectorindex import NS, World
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

SPEED = 120.0  # clock seconds per real second: ten minutes pass in five seconds


class FastClock(WallClock):
    def __init__(self, speed: float) -> None:
        self.speed, self.start, self.t0 = speed, datetime.now(timezone.utc), time.monotonic()

    def now(self) -> datetime:
        return self.start + timedelta(seconds=(time.monotonic() - self.t0) * self.speed)

    def real_seconds(self, seconds: float) -> float:
        return seconds / self.speed


@pytest.fixture
def fast(vi_world: World):
    vi_world.operator.services.clock = FastClock(SPEED)
    yield vi_world
    vi_world.operator.services.clock = WallClock()


def schedule(w: World, name: str, **spec) -> dict:
    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "VectorIndexBackupSchedule", "metadata": {"name": name}, "spec": spec}
    return w.api.create_namespaced_custom_object(GROUP, VERSION, NS, "vectorindexbackupschedules", body)


def schedule_obj(w: World, name: str) -> dict:
    return w.api.get_namespaced_custom_object(GROUP, VERSION, NS, "vectorindexbackupschedules", name)


def backups_of(w: World, name: str) -> list[dict]:
    found = w.api.list_namespaced_custom_object(GROUP, VERSION, NS, "vectorindexbackups", label_selector=f"pinery.dev/backup-schedule={name}")
    return [b for b in found["items"] if not b["metadata"].get("deletionTimestamp")]


def made_events(w: World, name: str) -> list[str]:
    return [m for _, r, m in w.events(name, kind="VectorIndexBackupSchedule") if r == "BackupMade"]


def pinecone_backup_ids(w: World, index_name: str) -> set[str]:
    pc = w.pinecone()
    try:
        return {b.backup_id for b in pc.indexes.list_backups(index_name)}
    finally:
        pc.close()


def test_a_schedule_makes_backups_on_time_keeps_what_retention_says_and_can_be_suspended(fast: World):
    w = fast
    w.create("catalog", dimension=3)
    w.wait_ready("catalog")
    schedule(w, "catalog-nightly", vectorIndexName="catalog", schedule="*/10 * * * *",
             retention={"keepLast": 2}, backupTemplate={"description": "nightly"})

    # four runs (40 clock minutes): two kept, the oldest two deleted with their Pinecone backups
    def four_made():
        status = schedule_obj(w, "catalog-nightly").get("status") or {}
        ready = [b for b in backups_of(w, "catalog-nightly") if (b.get("status") or {}).get("phase") == "Ready"]
        settled = status.get("active") == 0 and len(ready) == 2
        return settled and len(made_events(w, "catalog-nightly")) >= 4 and status
    status = wait_for(four_made, timeout=90, interval=0.2, what="four scheduled backups, two kept")

    kept = backups_of(w, "catalog-nightly")
    names = sorted(b["metadata"]["name"] for b in kept)
    for b in kept:
        assert b["metadata"]["ownerReferences"][0]["kind"] == "VectorIndexBackupSchedule"
        assert b["spec"] == {"vectorIndexName": "catalog", "deletionPolicy": "Delete", "description": "nightly"}
        minute = int(b["metadata"]["name"][-2:])
        assert minute % 10 == 0, names  # named after the scheduled time
    ids = {b["status"]["backupId"] for b in kept if (b.get("status") or {}).get("backupId")}
    wait_for(lambda: pinecone_backup_ids(w, "catalog") == ids, timeout=10, what="Pinecone holds exactly the kept backups")
    assert status["lastSuccessfulBackup"] in names and status["failed"] == 0
    assert status["nextScheduleTime"] > status["lastScheduleTime"]
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert ready["reason"] == "Scheduled"
    assert next(c for c in status["conditions"] if c["type"] == "LastBackupSucceeded")["status"] == "True"

    metrics = w.operator.metrics()
    made = [line for line in metrics.splitlines() if line.startswith('pinery_backups_made_total{namespace="default",schedule="catalog-nightly"}')]
    # Each of the two kept became Ready; an older one may have fallen out of retention (and been
    # deleted) before its backup was ready, so not every one of the four need count.
    assert made and 2 <= float(made[0].split()[-1]) <= len(made_events(w, "catalog-nightly"))
    assert not [line for line in metrics.splitlines()
                if line.startswith('pinery_backups_failed_total{namespace="default",schedule="catalog-nightly"}') and not line.endswith(" 0.0")]
    assert 'pinery_backup_schedule_last_success_timestamp_seconds{namespace="default",schedule="catalog-nightly"}' in metrics

    # suspended: no new backups over two more scheduled times
    w.api.patch_namespaced_custom_object(GROUP, VERSION, NS, "vectorindexbackupschedules", "catalog-nightly", {"spec": {"suspend": True}})
    wait_for(lambda: next(c for c in (schedule_obj(w, "catalog-nightly").get("status") or {}).get("conditions", [])
                          if c["type"] == "Ready")["reason"] == "Suspended", timeout=10, what="Suspended")
    before = len(made_events(w, "catalog-nightly"))
    time.sleep(20 * 60 / SPEED)
    assert len(made_events(w, "catalog-nightly")) == before
