"""pinery.backups.schedule_policy: when a backup schedule runs (Kubernetes CronJob's
mostRecentScheduleTime / nextScheduleTime / syncCronJob, with pinery's one catch-up run)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from pinery.backups.schedule_policy import Due, due
from pinery.cron import check_time_zone, parse

UTC = timezone.utc
ZUTC = check_time_zone("UTC")
BERLIN = check_time_zone("Europe/Berlin")
# kubernetes utils_test.go topOfTheHour: 2016-05-19T10:00:00Z, a Thursday.
TOP = datetime(2016, 5, 19, 10, 0, tzinfo=UTC)


def at(hours: float = 0, minutes: float = 0, seconds: float = 0, days: float = 0) -> datetime:
    """kubernetes utils_test.go deltaTimeAfterTopOfTheHour."""
    return TOP + timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def check(expr, *, created, last, now, deadline, expected, tz=ZUTC, suspend=False):
    got = due(parse(expr), tz, created=created, last_scheduled=last, now=now, starting_deadline_seconds=deadline, suspend=suspend)
    assert got == expected


# kubernetes pkg/controller/cronjob/utils_test.go TestMostRecentScheduleTime. Upstream's
# includeSDS=false rows have no deadline here; the "@every" row is given both ways.
@pytest.mark.parametrize(
    "expr, created, last, now, deadline, expected",
    [
        pytest.param("0 * * * *", TOP, None, at(seconds=30), None, Due(None, 0, False, at(1)), id="now before next schedule"),
        pytest.param("0 * * * *", TOP, None, at(minutes=61), None, Due(at(1), 0, False, at(2)), id="now just after next schedule"),
        pytest.param("0 * * * *", at(seconds=10), None, at(minutes=301), None, Due(at(5), 4, False, at(6)), id="missed 5 schedules"),
        pytest.param("30 6-16/4 * * 1-5", TOP, at(minutes=30), at(24, 31), None, Due(at(24, 30), 2, False, at(28, 30)),
                     id="complex schedule"),
        # Upstream's estimate (one interval of 1h from Thursday's 11:30) finds no most recent time
        # here; the times really missed are Thursday 11:30, 12:30 and Friday 10:30, 11:30, 12:30.
        pytest.param("30 10,11,12 * * 1-5", TOP, at(minutes=30), at(30, 30), None, Due(at(26, 30), 4, False, at(96, 30)),
                     id="another complex schedule"),
        pytest.param("30 6-16/4 * * 1-5", TOP, at(minutes=30), at(96, 31), None, Due(at(96, 30), 5, False, at(100, 30)),
                     id="complex schedule with longer diff between executions"),
        pytest.param("30 6-16/4 * * 1-5", TOP, None, at(24, 31), None, Due(at(24, 30), 3, False, at(28, 30)),
                     id="complex schedule with shorter diff between executions"),
        pytest.param("@every 1h", at(minutes=-59), at(minutes=1), at(days=7), None, Due(at(days=6, hours=23, minutes=1), 166, True, at(days=7, minutes=1)),
                     id="@every schedule"),
        # nextScheduleTime's view of the same CronJob (includeSDS=true, startingDeadlineSeconds 10)
        pytest.param("@every 1h", at(minutes=-59), at(minutes=1), at(days=7), 10, Due(None, 167, False, at(days=7, minutes=1)),
                     id="@every schedule, with its deadline"),
        # upstream: an error ("time difference between two schedules is less than 1 second")
        pytest.param("59 23 31 2 *", at(seconds=10), None, at(1), None, Due(None, 0, False, None), id="rogue cronjob"),
        pytest.param("0 * * * *", TOP, TOP, at(seconds=30), None, Due(None, 0, False, at(1)),
                     id="earliestTime being CreationTimestamp and LastScheduleTime"),
        pytest.param("*/5 * * * *", TOP, at(minutes=30), at(minutes=31), None, Due(None, 0, False, at(minutes=35)),
                     id="earliestTime being LastScheduleTime"),
        pytest.param("*/5 * * * *", TOP, at(minutes=30), at(minutes=31), 60, Due(None, 0, False, at(minutes=35)),
                     id="earliestTime being LastScheduleTime (within StartingDeadlineSeconds)"),
        pytest.param("*/5 * * * *", TOP, at(minutes=30), at(minutes=32), 60, Due(None, 0, False, at(minutes=35)),
                     id="earliestTime being LastScheduleTime (outside StartingDeadlineSeconds)"),
    ],
)
def test_most_recent_schedule_time(expr, created, last, now, deadline, expected):
    check(expr, created=created, last=last, now=now, deadline=deadline, expected=expected)


T1, T2 = TOP, at(1)


# kubernetes utils_test.go TestNextScheduleTime: an hourly CronJob, T1 and T2 two of its times.
@pytest.mark.parametrize(
    "expr, created, last, now, deadline, expected",
    [
        pytest.param("0 * * * ?", T1 - timedelta(minutes=10), None, T1 - timedelta(minutes=7), None, Due(None, 0, False, T1),
                     id="case 1: no known start times, and none needed yet"),
        pytest.param("0 * * * ?", T1 - timedelta(minutes=10), None, T1 + timedelta(seconds=2), None, Due(T1, 0, False, T2),
                     id="case 2: no known start times, and one needed"),
        pytest.param("0 * * * ?", T1 - timedelta(minutes=10), T1, T1 + timedelta(minutes=2), None, Due(None, 0, False, T2),
                     id="case 3: known LastScheduleTime, no start needed"),
        pytest.param("0 * * * ?", T1 - timedelta(minutes=10), T1, T2 + timedelta(minutes=5), None, Due(T2, 0, False, at(2)),
                     id="case 4: known LastScheduleTime, a start needed"),
        pytest.param("0 * * * ?", T1 - timedelta(hours=2), T1 - timedelta(hours=1), T2 + timedelta(minutes=5), None, Due(T2, 1, False, at(2)),
                     id="case 5: known LastScheduleTime, two starts needed"),
        pytest.param("0 * * * ?", T1 - timedelta(hours=2), T1 - timedelta(hours=1), T2 + timedelta(days=10), None,
                     Due(T2 + timedelta(days=10), 241, True, at(242)), id="case 6: now is way way ahead of last start time, and there is no deadline"),
        pytest.param("0 * * * ?", T1 - timedelta(hours=2), T1 - timedelta(hours=1), T2 + timedelta(days=10), 2 * 60 * 60,
                     Due(T2 + timedelta(days=10), 241, False, at(242)), id="case 7: now is way way ahead of last start time, but there is a short deadline"),
        # upstream: the error of mostRecentScheduleTime, and no start time
        pytest.param("59 23 31 2 *", T1 + timedelta(seconds=10), None, at(1), None, Due(None, 0, False, None), id="case 8: rogue schedule"),
    ],
)
def test_next_schedule_time(expr, created, last, now, deadline, expected):
    check(expr, created=created, last=last, now=now, deadline=deadline, expected=expected)


# kubernetes utils_test.go TestNextScheduleTimeDuration: how long until the next time (without
# upstream's 100ms nextScheduleDelta, which is the caller's business).
@pytest.mark.parametrize(
    "expr, last, now, wait",
    [
        pytest.param("30 6-16/4 * * 1-5", at(minutes=30), at(24, 31), timedelta(hours=3, minutes=59), id="complex schedule skipping weekend"),
        pytest.param("30 10,11,12 * * 1-5", at(minutes=30), at(30, 30), timedelta(hours=66), id="another complex schedule skipping weekend"),
        pytest.param("0 12 * * 4", at(2), at(days=19, hours=1, minutes=30), timedelta(hours=48, minutes=30), id="once a week cronjob, missed two runs"),
        pytest.param("0 12 * * 5", None, at(6), timedelta(hours=20), id="no previous run of a cronjob"),
    ],
)
def test_next_schedule_time_duration(expr, last, now, wait):
    got = due(parse(expr), ZUTC, created=TOP, last_scheduled=last, now=now, starting_deadline_seconds=None)
    assert got.next_at is not None and got.next_at - now == wait


JAN1 = utc(2024, 1, 1)


# pinery's own.
@pytest.mark.parametrize(
    "expr, tz, created, last, now, deadline, suspend, expected",
    [
        # a per-minute schedule after 30 days down: one catch-up run, 43,199 skipped, counted
        # without stepping through them
        pytest.param("* * * * *", ZUTC, JAN1, JAN1, utc(2024, 1, 31, 0, 0, 30), None, False,
                     Due(utc(2024, 1, 31), 43199, True, utc(2024, 1, 31, 0, 1)), id="per minute, 30 days down"),
        pytest.param("* * * * *", ZUTC, JAN1, JAN1, utc(2024, 1, 31, 0, 0, 30), 60, False,
                     Due(utc(2024, 1, 31), 43199, False, utc(2024, 1, 31, 0, 1)), id="per minute, 30 days down, within the deadline"),
        pytest.param("* * * * *", ZUTC, JAN1, JAN1, utc(2024, 1, 31, 0, 0, 30), 10, False,
                     Due(None, 43200, False, utc(2024, 1, 31, 0, 1)), id="per minute, 30 days down, past the deadline"),
        pytest.param("* * * * *", ZUTC, JAN1, JAN1, utc(2024, 1, 31, 0, 0, 30), None, True,
                     Due(None, 43200, False, utc(2024, 1, 31, 0, 1)), id="per minute, 30 days down, suspended"),
        pytest.param("* * * * *", BERLIN, JAN1, JAN1, utc(2034, 1, 1), None, False,
                     Due(utc(2034, 1, 1), 5260319, True, utc(2034, 1, 1, 0, 1)), id="per minute, ten years down, in Berlin"),
        # CronJob's "many" is more than 100 in its window (utils.go mostRecentScheduleTime)
        pytest.param("* * * * *", ZUTC, JAN1, JAN1, utc(2024, 1, 1, 1, 40), None, False,
                     Due(utc(2024, 1, 1, 1, 40), 99, False, utc(2024, 1, 1, 1, 41)), id="100 times: not many"),
        pytest.param("* * * * *", ZUTC, JAN1, JAN1, utc(2024, 1, 1, 1, 41), None, False,
                     Due(utc(2024, 1, 1, 1, 41), 100, True, utc(2024, 1, 1, 1, 42)), id="101 times: many"),
        pytest.param("* * * * *", ZUTC, JAN1, JAN1, utc(2024, 1, 1, 1, 42), None, False,
                     Due(utc(2024, 1, 1, 1, 42), 101, True, utc(2024, 1, 1, 1, 43)), id="102 times: many, counted"),
        # a daily 02:30 in Berlin, the operator down over the fall back: 27 October runs twice
        pytest.param("30 2 * * *", BERLIN, JAN1, datetime.fromisoformat("2024-10-25T02:30:00+02:00"), utc(2024, 10, 28, 12), None, False,
                     Due(utc(2024, 10, 28, 1, 30), 3, False, utc(2024, 10, 29, 1, 30)), id="Berlin fall back, down"),
        # ... and over the spring forward: 31 March has no 02:30
        pytest.param("30 2 * * *", BERLIN, JAN1, datetime.fromisoformat("2024-03-29T02:30:00+01:00"), utc(2024, 4, 2), None, False,
                     Due(utc(2024, 4, 1, 0, 30), 1, False, utc(2024, 4, 2, 0, 30)), id="Berlin spring forward, down"),
        # the same, the walk replaced by counting (more than 101 days down)
        pytest.param("30 2 * * *", BERLIN, JAN1, datetime.fromisoformat("2024-03-29T02:30:00+01:00"), utc(2024, 10, 28, 12), None, False,
                     Due(utc(2024, 10, 28, 1, 30), 212, True, utc(2024, 10, 29, 1, 30)), id="Berlin both changes, long down"),
        # a schedule that never fires
        pytest.param("0 0 30 2 *", ZUTC, JAN1, None, utc(2030, 1, 1), None, False, Due(None, 0, False, None), id="0 0 30 2 * never fires"),
        # the deadline: "within" means after now - deadline, as CronJob moves its earliest time there
        pytest.param("0 * * * *", ZUTC, TOP, TOP, at(1, seconds=60), 60, False, Due(None, 1, False, at(2)), id="deadline: exactly too late"),
        pytest.param("0 * * * *", ZUTC, TOP, TOP, at(1, seconds=60), 61, False, Due(at(1), 0, False, at(2)), id="deadline: just in time"),
        pytest.param("0 * * * *", ZUTC, TOP, TOP, at(1), 0, False, Due(None, 1, False, at(2)), id="deadline 0 never runs"),
        # suspended: nothing runs, the misses are counted, the next time is still known
        pytest.param("0 * * * *", ZUTC, TOP, TOP, at(3, 30), None, True, Due(None, 3, False, at(4)), id="suspended"),
        # the earliest time is the later of creation and the last scheduled time
        pytest.param("0 * * * *", ZUTC, at(minutes=30), at(-5), at(2, 30), None, False, Due(at(2), 1, False, at(3)), id="created after the last schedule"),
        # created after now (clock skew): nothing yet; the next time comes after the creation
        pytest.param("0 * * * *", ZUTC, at(1, 30), None, TOP, None, False, Due(None, 0, False, at(2)), id="created in the future"),
        # @every counts from the earliest time, not from now
        pytest.param("@every 25m", ZUTC, TOP, None, at(1, 10), None, False, Due(at(minutes=50), 1, False, at(1, 15)), id="@every from the earliest"),
    ],
)
def test_due(expr, tz, created, last, now, deadline, suspend, expected):
    check(expr, tz=tz, created=created, last=last, now=now, deadline=deadline, suspend=suspend, expected=expected)


def test_a_negative_deadline_is_refused():
    with pytest.raises(ValueError, match="startingDeadlineSeconds"):
        due(parse("* * * * *"), check_time_zone(None), created=TOP, last_scheduled=None, now=at(1), starting_deadline_seconds=-1)


def test_naive_times_are_refused():
    with pytest.raises(ValueError, match="timezone-aware"):
        due(parse("* * * * *"), check_time_zone(None), created=datetime(2024, 1, 1), last_scheduled=None, now=at(1),
            starting_deadline_seconds=None)
