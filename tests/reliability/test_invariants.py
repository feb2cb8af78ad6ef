"""The chaos suite's backup, restore and schedule invariants on made-up worlds: each breach the
suite is there to catch is caught, and a world without one passes."""

from __future__ import annotations

import dataclasses

from tests.reliability.invariants import (
    BACKUP,
    LABEL_SCHEDULE,
    SCHEDULE,
    SCHEDULED_AT,
    VI,
    Expect,
    World,
    backup_summary,
    pinecone_backup_name,
    violations,
)


def index(name: str) -> dict:
    from pinery.vectorindex.ownership import ownership_tags

    return {"name": name, "tags": ownership_tags("local", "chaos", name), "deletion_protection": "disabled"}


def vectorindex(name: str) -> dict:
    conditions = [{"type": t, "status": "True", "reason": "Ok"} for t in ("Ready", "Synced")]
    return {"metadata": {"name": name, "generation": 1}, "status": {"observedGeneration": 1, "conditions": conditions}}


def backup_object(name: str, uid: str, backup_id: str, records: int = 3, minute: str | None = None, schedule: str = "") -> dict:
    meta = {"name": name, "uid": uid, "labels": {LABEL_SCHEDULE: schedule} if schedule else {},
            "annotations": {SCHEDULED_AT: minute} if minute else {}}
    return {"metadata": meta, "status": {"phase": "Ready", "backupId": backup_id, "recordCount": records}}


def in_pinecone(name: str, backup_id: str, source: str = "src", records: int = 3) -> dict:
    return {"name": name, "backup_id": backup_id, "source_index_name": source, "record_count": records}


def create_backup(index_name: str, times: int) -> list[dict]:
    return [{"operation": "create_backup", "index": index_name, "status": 201} for _ in range(times)]


def world(**parts) -> World:
    base = {"namespace": "chaos", "cluster_name": "local", "vectorindexes": {"src": vectorindex("src")}, "jobs": {},
            "pods": [], "services": [], "indexes": {"src": index("src")}, "requests": []}
    return World(**{**base, **parts})


SOURCE = Expect(VI, "src", index="src")
KEPT = Expect(BACKUP, "b", index="src", backup=pinecone_backup_name("b", "uid-b-123456"), records=3)


def test_a_kept_backup_with_exactly_one_pinecone_backup_passes():
    w = world(backups={"b": backup_object("b", "uid-b-123456", "id1")}, pinecone_backups=[in_pinecone("b-uid-b-12", "id1")],
              requests=create_backup("src", 1))
    assert violations(w, [SOURCE, KEPT]) == []
    assert backup_summary(w, [SOURCE, KEPT])["backups"]["madeInPinecone"] == 1


def test_a_duplicate_backup_is_caught_by_name_and_by_the_request_log():
    w = world(backups={"b": backup_object("b", "uid-b-123456", "id1")},
              pinecone_backups=[in_pinecone("b-uid-b-12", "id1"), in_pinecone("b-uid-b-12", "id2")], requests=create_backup("src", 2))
    found = violations(w, [SOURCE, KEPT])
    assert any("2 backups named b-uid-b-12" in v for v in found)
    assert any("backed up 2 times for 1 VectorIndexBackups" in v for v in found)


def test_deletion_follows_the_policy():
    deleted = Expect(BACKUP, "b", live=False, kept=False, index="src", backup="b-uid-b-12")
    retained = Expect(BACKUP, "b", live=False, kept=True, index="src", backup="b-uid-b-12")
    left = world(pinecone_backups=[in_pinecone("b-uid-b-12", "id1")], requests=create_backup("src", 1))
    gone = world(requests=create_backup("src", 1))
    assert any("was to be deleted" in v for v in violations(left, [SOURCE, deleted]))
    assert violations(gone, [SOURCE, deleted]) == []
    assert any("was to be retained" in v for v in violations(gone, [SOURCE, retained]))
    assert violations(left, [SOURCE, retained]) == []


def test_a_backup_no_object_accounts_for_is_an_orphan():
    w = world(pinecone_backups=[in_pinecone("quick-uid-q-12", "id9")], requests=create_backup("src", 1))
    quick = Expect(BACKUP, "quick", live=False, kept=False, index="src", backup="quick-uid-q-12")
    found = violations(w, [SOURCE, quick])
    assert any("no VectorIndexBackup should have it" in v for v in found)


def test_a_restored_index_needs_the_backups_records_and_one_restore_job():
    restored = Expect(VI, "copy", index="copy", records=3, restored=True)
    good = world(vectorindexes={"src": vectorindex("src"), "copy": vectorindex("copy")}, indexes={"src": index("src"), "copy": index("copy")},
                 records={"copy": 3}, restore_jobs=[{"target_index_name": "copy", "status": "Completed", "restore_job_id": "j1"}])
    assert violations(good, [SOURCE, restored]) == []
    twice = dataclasses.replace(good, restore_jobs=good.restore_jobs * 2, records={"copy": 2})
    found = violations(twice, [SOURCE, restored])
    assert any("2 restore jobs" in v for v in found) and any("holds 2 records, expected 3" in v for v in found)


def schedule_world(kept: list[tuple[str, str, str]], in_pinecone_names: list[str], made: int) -> World:
    """A schedule `s` of index src that keeps the (name, uid, minute) backups given."""
    objects = {name: backup_object(name, uid, f"id-{name}", minute=minute, schedule="s") for name, uid, minute in kept}
    return world(schedules={"s": {"metadata": {"name": "s"}}}, backups=objects, requests=create_backup("src", made),
                 pinecone_backups=[in_pinecone(n, f"id-{n.rsplit('-', 1)[0]}") for n in in_pinecone_names])


MINUTES = ["2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z", "2026-01-01T00:03:00Z"]


def schedule(seen: dict[str, set[str]]) -> Expect:
    return Expect(SCHEDULE, "s", index="src", keep_last=2, scheduled=seen)


def test_a_schedule_that_kept_the_newest_two_passes():
    seen = {MINUTES[0]: {"u0"}, MINUTES[1]: {"u1"}, MINUTES[2]: {"u2"}}
    w = schedule_world([("s-1", "u1", MINUTES[1]), ("s-2", "u2", MINUTES[2])], ["s-1-u1", "s-2-u2"], made=3)
    assert violations(w, [SOURCE, schedule(seen)]) == []
    counts = backup_summary(w, [SOURCE, schedule(seen)])["backups"]
    assert (counts["scheduled"], counts["scheduledKept"]) == (3, 2)


def test_a_schedule_breach_of_each_kind_is_caught():
    seen = {MINUTES[0]: {"u0"}, MINUTES[1]: {"u1"}, MINUTES[2]: {"u2"}}
    # two objects for one minute
    twice = schedule_world([("s-1", "u1", MINUTES[1]), ("s-2", "u2", MINUTES[2])], ["s-1-u1", "s-2-u2"], made=4)
    found = violations(twice, [SOURCE, schedule({**seen, MINUTES[2]: {"u2", "u2b"}})])
    assert any("2 VectorIndexBackups for the minute" in v for v in found)
    # none kept that it drops: the oldest's backup is still in Pinecone
    dropped = schedule_world([("s-1", "u1", MINUTES[1]), ("s-2", "u2", MINUTES[2])], ["s-0-u0", "s-1-u1", "s-2-u2"], made=3)
    assert any("no kept VectorIndexBackup has: ['s-0-u0']" in v for v in violations(dropped, [SOURCE, schedule(seen)]))
    # none lost that it keeps
    lost = schedule_world([("s-1", "u1", MINUTES[1]), ("s-2", "u2", MINUTES[2])], ["s-2-u2"], made=3)
    assert any("s-1, which retention keeps, is not in Pinecone" in v for v in violations(lost, [SOURCE, schedule(seen)]))
    # retention kept the wrong ones
    wrong = schedule_world([("s-0", "u0", MINUTES[0]), ("s-2", "u2", MINUTES[2])], ["s-0-u0", "s-2-u2"], made=3)
    assert any("retention (keepLast 2) keeps those of" in v for v in violations(wrong, [SOURCE, schedule(seen)]))
