"""One pass of a VectorIndexBackupSchedule, decided (pinery.backups.schedule_plan), table-driven:
what it makes, what retention drops, what the status says, when it looks again. The cron,
missed-run and retention arithmetic has its own tables in tests/unit/backups/."""

from datetime import datetime, timedelta, timezone

import pytest

from pinery.api.backups import VectorIndexBackupScheduleSpec
from pinery.backups.retention import Made
from pinery.backups.schedule_plan import MAX_SLEEP, backup_name, plan

UTC = timezone.utc
CREATED = datetime(2027, 1, 10, 12, 0, tzinfo=UTC)


def spec(**kw):
    return VectorIndexBackupScheduleSpec.model_validate({"vectorIndexName": "docs", "schedule": "0 3 * * *", **kw})


def at(day, hour=3, minute=0):
    return datetime(2027, 1, day, hour, minute, tzinfo=UTC)


def made(day, state="Ready"):
    return Made(backup_name("nightly", at(day)), at(day), state)


@pytest.mark.parametrize(
    "the_spec, now, backups, last, makes, missed",
    [
        # before the first time: nothing, and the daemon sleeps until 03:00 (at most MAX_SLEEP)
        (spec(), at(11, 2, 58), [], None, None, 0),
        # at 03:00 (woken a little late): that time's backup
        (spec(), at(11, 3, 0) + timedelta(seconds=2), [], None, at(11), 0),
        # made already (the status write was lost): the backup itself says so, nothing twice
        (spec(), at(11, 3, 1), [made(11, "Pending")], None, None, 0),
        # down for three nights: one catch-up run, the latest; the two before are missed
        (spec(), at(14, 9), [made(11)], at(11), at(14), 2),
        # ... unless the latest is past startingDeadlineSeconds
        (spec(startingDeadlineSeconds=3600), at(14, 9), [made(11)], at(11), None, 3),
        (spec(startingDeadlineSeconds=7 * 3600), at(14, 9), [made(11)], at(11), at(14), 2),
        # suspended: nothing, the times are counted
        (spec(suspend=True), at(14, 9), [made(11)], at(11), None, 3),
        # in the schedule's time zone: 03:00 in Berlin is 02:00 UTC in winter
        (spec(timeZone="Europe/Berlin"), at(11, 2, 0) + timedelta(seconds=5), [], None, at(11, 2, 0), 0),
    ],
)
def test_what_a_pass_makes(the_spec, now, backups, last, makes, missed):
    step = plan("nightly", the_spec, created=CREATED, now=now, made=backups, last_scheduled=last)
    assert step.make == ((backup_name("nightly", makes), makes) if makes else None)
    assert step.status["missed"] == missed
    assert 0 <= step.sleep <= MAX_SLEEP.total_seconds()


def test_backup_names_carry_the_scheduled_minute_in_utc():
    assert backup_name("nightly", datetime(2027, 3, 28, 1, 30, tzinfo=UTC)) == "nightly-202703280130"


def test_retention_and_the_status_counts():
    backups = [made(d) for d in (5, 6, 7, 8)] + [made(9, "Failed"), made(10, "Failed")]
    step = plan("nightly", spec(retention={"keepLast": 2}), created=CREATED - timedelta(days=10), now=at(11, 3, 0),
                made=backups, last_scheduled=at(10))
    assert step.make == (backup_name("nightly", at(11)), at(11))
    assert step.delete == (made(5).name, made(6).name, made(9, "Failed").name)  # oldest first
    assert step.status["lastSuccessfulBackup"] == made(8).name
    assert (step.status["active"], step.status["failed"]) == (1, 1)  # the new one; the newest failure is kept
    assert step.ready[:2] == ("True", "Scheduled") and step.last_ok[:2] == ("False", "BackupFailed")


def test_max_age_counts_on_the_schedules_clock():
    backups = [made(1), made(5), made(9)]
    step = plan("nightly", spec(retention={"maxAge": "3d"}), created=CREATED - timedelta(days=20), now=at(10, 12),
                made=backups, last_scheduled=at(10))
    assert step.delete == (made(1).name, made(5).name) and step.make is None
    # the newest ready backup is never deleted, however old
    step = plan("nightly", spec(retention={"maxAge": "1h"}, suspend=True), created=CREATED - timedelta(days=20), now=at(20),
                made=backups, last_scheduled=at(10))
    assert step.delete == (made(1).name, made(5).name)


@pytest.mark.parametrize(
    "extra, path, message",
    [
        ({"schedule": "0 25 * * *"}, "spec.schedule", "hour"),
        ({"schedule": "CRON_TZ=UTC 0 3 * * *"}, "spec.schedule", "TZ"),
        ({"timeZone": "Mars/Olympus"}, "spec.timeZone", "Mars/Olympus"),
        ({"retention": {"maxAge": "0d"}}, "spec.retention.maxAge", "more than 0"),
    ],
)
def test_an_invalid_schedule_is_refused_naming_the_field_and_makes_nothing(extra, path, message):
    found: list = []
    VectorIndexBackupScheduleSpec.model_validate({"vectorIndexName": "docs", "schedule": "0 3 * * *", **extra}, context={"problems": found})
    assert [p.path for p in found] == [path] and message in found[0].message
    # a spec that reached the operator without validation (a CRD without the model's rules) makes nothing
    unchecked = VectorIndexBackupScheduleSpec.model_construct(**{**spec().__dict__, **{k: v for k, v in extra.items() if k != "retention"}})
    if "retention" not in extra:
        step = plan("nightly", unchecked, created=CREATED, now=at(12), made=[made(11)], last_scheduled=at(11))
        assert step.ready[:2] == ("False", "InvalidSpec") and message in step.ready[2]
        assert step.make is None and step.delete == ()
