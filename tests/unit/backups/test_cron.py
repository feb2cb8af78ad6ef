"""pinery.cron: schedules read as Kubernetes CronJob reads them (robfig/cron v3.0.1
ParseStandard and SpecSchedule.Next, kubernetes validation.go)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from pinery.cron import STAR_BIT, CronSchedule, check_time_zone, parse, parse_field, parse_go_duration

UTC = timezone.utc
ZUTC = check_time_zone("UTC")
NY = check_time_zone("America/New_York")


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def iso(text: str) -> datetime:
    return datetime.fromisoformat(text)


def bits(*values: int) -> int:
    out = 0
    for v in values:
        out |= 1 << v
    return out


def every(low: int, high: int) -> int:
    return bits(*range(low, high + 1)) | STAR_BIT


# robfig/cron parser_test.go TestRange: getRange on custom bounds.
@pytest.mark.parametrize(
    "expr, low, high, expected, error",
    [
        ("5", 0, 7, 1 << 5, ""),
        ("0", 0, 7, 1 << 0, ""),
        ("7", 0, 7, 1 << 7, ""),
        ("5-5", 0, 7, 1 << 5, ""),
        ("5-6", 0, 7, 1 << 5 | 1 << 6, ""),
        ("5-7", 0, 7, 1 << 5 | 1 << 6 | 1 << 7, ""),
        ("5-6/2", 0, 7, 1 << 5, ""),
        ("5-7/2", 0, 7, 1 << 5 | 1 << 7, ""),
        ("5-7/1", 0, 7, 1 << 5 | 1 << 6 | 1 << 7, ""),
        ("*", 1, 3, 1 << 1 | 1 << 2 | 1 << 3 | STAR_BIT, ""),
        ("*/2", 1, 3, 1 << 1 | 1 << 3, ""),
        ("5--5", 0, 0, 0, "too many hyphens"),
        ("jan-x", 0, 0, 0, "failed to parse int from"),
        ("2-x", 1, 5, 0, "failed to parse int from"),
        ("*/-12", 0, 0, 0, "negative number"),
        ("*//2", 0, 0, 0, "too many slashes"),
        ("1", 3, 5, 0, "below minimum"),
        ("6", 3, 5, 0, "above maximum"),
        ("5-3", 3, 5, 0, "beyond end of range"),
        ("*/0", 0, 0, 0, "should be a positive number"),
    ],
)
def test_range(expr, low, high, expected, error):
    if error:
        with pytest.raises(ValueError, match=error):
            parse_field(expr, low, high)
    else:
        assert parse_field(expr, low, high) == expected


# robfig/cron parser_test.go TestField: comma-separated lists of ranges.
@pytest.mark.parametrize(
    "expr, low, high, expected",
    [
        ("5", 1, 7, 1 << 5),
        ("5,6", 1, 7, 1 << 5 | 1 << 6),
        ("5,6,7", 1, 7, 1 << 5 | 1 << 6 | 1 << 7),
        ("1,5-7/2,3", 1, 7, 1 << 1 | 1 << 5 | 1 << 7 | 1 << 3),
    ],
)
def test_field(expr, low, high, expected):
    assert parse_field(expr, low, high) == expected


# robfig/cron parser_test.go TestAll: a star sets every value of the field and the star bit.
@pytest.mark.parametrize(
    "low, high, expected",
    [(0, 59, 0xFFFFFFFFFFFFFFF), (0, 23, 0xFFFFFF), (1, 31, 0xFFFFFFFE), (1, 12, 0x1FFE), (0, 6, 0x7F)],
)
def test_all(low, high, expected):
    assert parse_field("*", low, high) == expected | STAR_BIT


EVERY_5_MIN = CronSchedule(1 << 5, every(0, 23), every(1, 31), every(1, 12), every(0, 6))
MIDNIGHT = CronSchedule(1, 1, every(1, 31), every(1, 12), every(0, 6))
ANNUAL = CronSchedule(1, 1, 1 << 1, 1 << 1, every(0, 6))


# robfig/cron parser_test.go TestParseSchedule and TestStandardSpecSchedule (the standard parser's
# entries; those with TZ= are Kubernetes-refused, see test_kubernetes_validation), and pinery's
# own cases for the rest of ParseStandard's grammar.
@pytest.mark.parametrize(
    "expr, expected",
    [
        ("5 * * * *", EVERY_5_MIN),
        ("@every 5m", CronSchedule(0, 0, 0, 0, 0, every=timedelta(minutes=5))),
        ("@midnight", MIDNIGHT),
        ("@daily", MIDNIGHT),
        ("@yearly", ANNUAL),
        ("@annually", ANNUAL),
        ("@monthly", CronSchedule(1, 1, 1 << 1, every(1, 12), every(0, 6))),
        ("@weekly", CronSchedule(1, 1, every(1, 31), every(1, 12), 1 << 0)),
        ("@hourly", CronSchedule(1, every(0, 23), every(1, 31), every(1, 12), every(0, 6))),
        # pinery's: names in any case, `?` anywhere, `a/n` to the maximum, a star ignores a range after it
        ("0 0 * JAN-mar Sun,SAT", CronSchedule(1, 1, every(1, 31), bits(1, 2, 3), bits(0, 6))),
        ("? ? ? ? ?", CronSchedule(every(0, 59), every(0, 23), every(1, 31), every(1, 12), every(0, 6))),
        ("50/5 22/1 28/2 10/1 5/1", CronSchedule(bits(50, 55), bits(22, 23), bits(28, 30), bits(10, 11, 12), bits(5, 6))),
        ("*-5 * * * *", CronSchedule(every(0, 59), every(0, 23), every(1, 31), every(1, 12), every(0, 6))),
        ("*/1 * * * *", CronSchedule(every(0, 59), every(0, 23), every(1, 31), every(1, 12), every(0, 6))),
        ("*/30 * * * *", CronSchedule(bits(0, 30), every(0, 23), every(1, 31), every(1, 12), every(0, 6))),
        ("+5 05 * * *", CronSchedule(1 << 5, 1 << 5, every(1, 31), every(1, 12), every(0, 6))),  # strconv.Atoi
        ("\t5  *\t* * *  ", EVERY_5_MIN),  # strings.Fields
        ("@every 1h30m", CronSchedule(0, 0, 0, 0, 0, every=timedelta(minutes=90))),
        ("@every 1500ms", CronSchedule(0, 0, 0, 0, 0, every=timedelta(seconds=1))),  # whole seconds (constantdelay.go Every)
        ("@every 1ns", CronSchedule(0, 0, 0, 0, 0, every=timedelta(seconds=1))),  # at least a second
    ],
)
def test_parse(expr, expected):
    assert parse(expr) == expected


# robfig/cron spec_test.go TestErrors, TestSlash0NoHang; parser_test.go TestParseScheduleErrors and
# TestStandardSpecSchedule's errors; and pinery's own: the message names the schedule and field.
@pytest.mark.parametrize(
    "expr, error",
    [
        ("xyz", "expected exactly 5 fields, found 1: \\[xyz\\]"),
        ("60 0 * * *", "minute field '60': end of range \\(60\\) above maximum \\(59\\)"),
        ("0 60 * * *", "hour field '60': end of range \\(60\\) above maximum \\(23\\)"),
        ("0 0 * * XYZ", "day-of-week field 'XYZ': failed to parse int from XYZ"),
        ("15/0 * * * *", "minute field '15/0': step of range should be a positive number"),
        ("5 j * * *", "hour field 'j': failed to parse int from"),
        ("* * * *", "expected exactly 5 fields"),
        ("* * * * * *", "expected exactly 5 fields, found 6"),
        ("", "empty spec string"),
        ("@every Xm", "failed to parse duration @every Xm: time: invalid duration"),
        ("@unrecognized", "unrecognized descriptor: @unrecognized"),
        ("@Daily", "unrecognized descriptor"),  # descriptors are matched exactly
        ("@daily ", "unrecognized descriptor"),
        ("* * * * 7", "day-of-week field '7': end of range \\(7\\) above maximum \\(6\\)"),  # robfig's dow is 0-6
        ("* * 0 * *", "day-of-month field '0': beginning of range \\(0\\) below minimum \\(1\\)"),
        ("* * * 13 *", "month field '13': end of range \\(13\\) above maximum \\(12\\)"),
        ("* * * * MON-", "failed to parse int from"),
        ("1.5 * * * *", "failed to parse int from"),
        ("* * * * sunday", "failed to parse int from sunday"),
    ],
)
def test_parse_errors(expr, error):
    with pytest.raises(ValueError, match=error):
        parse(expr)


# robfig/cron spec_test.go TestActivation: Next(t - 1s) == t exactly when the schedule is active
# at t. The times were in time.Local there; in UTC here.
@pytest.mark.parametrize(
    "at, expr, active",
    [
        (utc(2012, 7, 9, 15, 0), "0/15 * * * *", True),
        (utc(2012, 7, 9, 15, 45), "0/15 * * * *", True),
        (utc(2012, 7, 9, 15, 40), "0/15 * * * *", False),
        (utc(2012, 7, 9, 15, 5), "5/15 * * * *", True),
        (utc(2012, 7, 9, 15, 20), "5/15 * * * *", True),
        (utc(2012, 7, 9, 15, 50), "5/15 * * * *", True),
        (utc(2012, 7, 15, 15, 0), "0/15 * * Jul *", True),
        (utc(2012, 7, 15, 15, 0), "0/15 * * Jun *", False),
        (utc(2012, 7, 15, 8, 30), "30 08 ? Jul Sun", True),
        (utc(2012, 7, 15, 8, 30), "30 08 15 Jul ?", True),
        (utc(2012, 7, 16, 8, 30), "30 08 ? Jul Sun", False),
        (utc(2012, 7, 16, 8, 30), "30 08 15 Jul ?", False),
        (utc(2012, 7, 9, 15, 0), "@hourly", True),
        (utc(2012, 7, 9, 15, 4), "@hourly", False),
        (utc(2012, 7, 9, 15, 0), "@daily", False),
        (utc(2012, 7, 9, 0, 0), "@daily", True),
        (utc(2012, 7, 9, 0, 0), "@weekly", False),
        (utc(2012, 7, 8, 0, 0), "@weekly", True),
        (utc(2012, 7, 8, 1, 0), "@weekly", False),
        (utc(2012, 7, 8, 0, 0), "@monthly", False),
        (utc(2012, 7, 1, 0, 0), "@monthly", True),
        # both day fields restricted: either matches
        (utc(2012, 7, 15, 0, 0), "* * 1,15 * Sun", True),
        (utc(2012, 6, 15, 0, 0), "* * 1,15 * Sun", True),
        (utc(2012, 8, 1, 0, 0), "* * 1,15 * Sun", True),
        (utc(2012, 7, 15, 0, 0), "* * */10 * Sun", True),  # robfig issue 70
        # one of them a star: both must match
        (utc(2012, 7, 15, 0, 0), "* * * * Mon", False),
        (utc(2012, 7, 9, 0, 0), "* * 1,15 * *", False),
        (utc(2012, 7, 15, 0, 0), "* * 1,15 * *", True),
        (utc(2012, 7, 15, 0, 0), "* * */2 * Sun", True),
    ],
)
def test_activation(at, expr, active):
    assert (parse(expr).next_after(at - timedelta(seconds=1), ZUTC) == at) is active


# robfig/cron spec_test.go TestNext. Upstream runs them with a seconds field; ParseStandard has none,
# so the seconds field is dropped ("0 0/15 * * * *" is "0/15 * * * *") and so are the seconds
# of "15/35 ..." results (00:20:15 is 00:20). Times without a zone were in time.Local: UTC here.
# "TZ=America/New_York" in a spec or a time is the tz argument here; the "TZ=... <time>" rows
# repeat the spec-zone rows for the same instants and are not repeated.
@pytest.mark.parametrize(
    "after, expr, tz, expected",
    [
        (utc(2012, 7, 9, 14, 45), "0/15 * * * *", ZUTC, utc(2012, 7, 9, 15, 0)),
        (utc(2012, 7, 9, 14, 59), "0/15 * * * *", ZUTC, utc(2012, 7, 9, 15, 0)),
        (utc(2012, 7, 9, 14, 59, 59), "0/15 * * * *", ZUTC, utc(2012, 7, 9, 15, 0)),
        # wrap around hours
        (utc(2012, 7, 9, 15, 45), "20-35/15 * * * *", ZUTC, utc(2012, 7, 9, 16, 20)),
        # wrap around days
        (utc(2012, 7, 9, 23, 46), "*/15 * * * *", ZUTC, utc(2012, 7, 10, 0, 0)),
        (utc(2012, 7, 9, 23, 45), "20-35/15 * * * *", ZUTC, utc(2012, 7, 10, 0, 20)),
        (utc(2012, 7, 9, 23, 35, 51), "20-35/15 * * * *", ZUTC, utc(2012, 7, 10, 0, 20)),
        (utc(2012, 7, 9, 23, 35, 51), "20-35/15 1/2 * * *", ZUTC, utc(2012, 7, 10, 1, 20)),
        (utc(2012, 7, 9, 23, 35, 51), "20-35/15 10-12 * * *", ZUTC, utc(2012, 7, 10, 10, 20)),
        (utc(2012, 7, 9, 23, 35, 51), "20-35/15 1/2 */2 * *", ZUTC, utc(2012, 7, 11, 1, 20)),
        (utc(2012, 7, 9, 23, 35, 51), "20-35/15 * 9-20 * *", ZUTC, utc(2012, 7, 10, 0, 20)),
        (utc(2012, 7, 9, 23, 35, 51), "20-35/15 * 9-20 Jul *", ZUTC, utc(2012, 7, 10, 0, 20)),
        # wrap around months
        (utc(2012, 7, 9, 23, 35), "0 0 9 Apr-Oct ?", ZUTC, utc(2012, 8, 9, 0, 0)),
        (utc(2012, 7, 9, 23, 35), "0 0 */5 Apr,Aug,Oct Mon", ZUTC, utc(2012, 8, 1, 0, 0)),
        (utc(2012, 7, 9, 23, 35), "0 0 */5 Oct Mon", ZUTC, utc(2012, 10, 1, 0, 0)),
        # wrap around years
        (utc(2012, 7, 9, 23, 35), "0 0 * Feb Mon", ZUTC, utc(2013, 2, 4, 0, 0)),
        (utc(2012, 7, 9, 23, 35), "0 0 * Feb Mon/2", ZUTC, utc(2013, 2, 1, 0, 0)),
        # wrap around minute, hour, day, month and year
        (utc(2012, 12, 31, 23, 59, 45), "* * * * *", ZUTC, utc(2013, 1, 1, 0, 0)),
        # leap year
        (utc(2012, 7, 9, 23, 35), "0 0 29 Feb ?", ZUTC, utc(2016, 2, 29, 0, 0)),
        # spring forward, 2am EST (-5) -> 3am EDT (-4)
        (iso("2012-03-11T00:00:00-05:00"), "30 2 11 Mar ?", NY, iso("2013-03-11T02:30:00-04:00")),
        # hourly job
        (iso("2012-03-11T00:00:00-05:00"), "0 * * * ?", NY, iso("2012-03-11T01:00:00-05:00")),
        (iso("2012-03-11T01:00:00-05:00"), "0 * * * ?", NY, iso("2012-03-11T03:00:00-04:00")),
        (iso("2012-03-11T03:00:00-04:00"), "0 * * * ?", NY, iso("2012-03-11T04:00:00-04:00")),
        (iso("2012-03-11T04:00:00-04:00"), "0 * * * ?", NY, iso("2012-03-11T05:00:00-04:00")),
        # 1am nightly job
        (iso("2012-03-11T00:00:00-05:00"), "0 1 * * ?", NY, iso("2012-03-11T01:00:00-05:00")),
        (iso("2012-03-11T01:00:00-05:00"), "0 1 * * ?", NY, iso("2012-03-12T01:00:00-04:00")),
        # 2am nightly job (skipped)
        (iso("2012-03-11T00:00:00-05:00"), "0 2 * * ?", NY, iso("2012-03-12T02:00:00-04:00")),
        # fall back, 2am EDT (-4) -> 1am EST (-5)
        (iso("2012-11-04T00:00:00-04:00"), "30 2 04 Nov ?", NY, iso("2012-11-04T02:30:00-05:00")),
        (iso("2012-11-04T01:45:00-04:00"), "30 1 04 Nov ?", NY, iso("2012-11-04T01:30:00-05:00")),
        # hourly job
        (iso("2012-11-04T00:00:00-04:00"), "0 * * * ?", NY, iso("2012-11-04T01:00:00-04:00")),
        (iso("2012-11-04T01:00:00-04:00"), "0 * * * ?", NY, iso("2012-11-04T01:00:00-05:00")),
        (iso("2012-11-04T01:00:00-05:00"), "0 * * * ?", NY, iso("2012-11-04T02:00:00-05:00")),
        # 1am nightly job (runs twice)
        (iso("2012-11-04T00:00:00-04:00"), "0 1 * * ?", NY, iso("2012-11-04T01:00:00-04:00")),
        (iso("2012-11-04T01:00:00-04:00"), "0 1 * * ?", NY, iso("2012-11-04T01:00:00-05:00")),
        (iso("2012-11-04T01:00:00-05:00"), "0 1 * * ?", NY, iso("2012-11-05T01:00:00-05:00")),
        # 2am nightly job
        (iso("2012-11-04T00:00:00-04:00"), "0 2 * * ?", NY, iso("2012-11-04T02:00:00-05:00")),
        (iso("2012-11-04T02:00:00-05:00"), "0 2 * * ?", NY, iso("2012-11-05T02:00:00-05:00")),
        # 3am nightly job
        (iso("2012-11-04T00:00:00-04:00"), "0 3 * * ?", NY, iso("2012-11-04T03:00:00-05:00")),
        (iso("2012-11-04T03:00:00-05:00"), "0 3 * * ?", NY, iso("2012-11-05T03:00:00-05:00")),
        # unsatisfiable
        (utc(2012, 7, 9, 23, 35), "0 0 30 Feb ?", ZUTC, None),
        (utc(2012, 7, 9, 23, 35), "0 0 31 Apr ?", ZUTC, None),
        # monthly job
        (iso("2012-11-04T00:00:00-04:00"), "0 3 3 * ?", NY, iso("2012-12-03T03:00:00-05:00")),
        # DST making midnight not a valid time (robfig issue 157)
        (iso("2018-10-17T05:00:00-04:00"), "0 9 10 * ?", check_time_zone("America/Sao_Paulo"), iso("2018-11-10T06:00:00-05:00")),
        (iso("2018-02-14T05:00:00-05:00"), "0 9 22 * ?", check_time_zone("America/Sao_Paulo"), iso("2018-02-22T07:00:00-05:00")),
    ],
)
def test_next(after, expr, tz, expected):
    assert parse(expr).next_after(after, tz) == expected


# robfig/cron spec_test.go TestNextWithTz: a schedule in the zone of the time given (+05:30).
@pytest.mark.parametrize(
    "after, expr, expected",
    [
        ("2016-01-03T13:09:03+05:30", "14 14 * * *", "2016-01-03T14:14:00+05:30"),
        ("2016-01-03T04:09:03+05:30", "14 14 * * ?", "2016-01-03T14:14:00+05:30"),
        ("2016-01-03T14:09:03+05:30", "14 14 * * *", "2016-01-03T14:14:00+05:30"),
        ("2016-01-03T14:00:00+05:30", "14 14 * * ?", "2016-01-03T14:14:00+05:30"),
    ],
)
def test_next_with_tz(after, expr, expected):
    assert parse(expr).next_after(iso(after), check_time_zone("Asia/Kolkata")) == iso(expected)


BERLIN = check_time_zone("Europe/Berlin")


# pinery's own. Every expected time here was checked against robfig/cron v3.0.1's Next.
@pytest.mark.parametrize(
    "after, expr, tz, expected",
    [
        # a daily 02:30 in Berlin: spring forward (31 March 2024, 02:00 -> 03:00) skips the day
        (iso("2024-03-30T02:30:00+01:00"), "30 2 * * *", BERLIN, iso("2024-04-01T02:30:00+02:00")),
        # fall back (27 October 2024, 03:00 -> 02:00) runs it twice, then the next day
        (iso("2024-10-26T02:30:00+02:00"), "30 2 * * *", BERLIN, iso("2024-10-27T02:30:00+02:00")),
        (iso("2024-10-27T02:30:00+02:00"), "30 2 * * *", BERLIN, iso("2024-10-27T02:30:00+01:00")),
        (iso("2024-10-27T02:30:00+01:00"), "30 2 * * *", BERLIN, iso("2024-10-28T02:30:00+01:00")),
        # the answer is in UTC, whatever the zones
        (iso("2024-06-01T12:00:00+02:00"), "0 12 * * *", BERLIN, utc(2024, 6, 2, 10, 0)),
        # never: robfig searches five years and gives up
        (utc(2024, 1, 1), "0 0 30 2 *", ZUTC, None),
        (utc(2024, 1, 1), ", * * * *", ZUTC, None),  # an empty list is no value at all
        # the five-year limit: 2100 is no leap year, so 29 February is eight years on
        (utc(2096, 3, 1), "0 0 29 2 *", ZUTC, None),
        (utc(2099, 6, 1), "0 0 29 2 *", ZUTC, utc(2104, 2, 29)),
        # strictly after, from the whole second
        (utc(2024, 1, 1, 0, 5), "*/5 * * * *", ZUTC, utc(2024, 1, 1, 0, 10)),
        (utc(2024, 1, 1, 0, 4, 59, 999999), "*/5 * * * *", ZUTC, utc(2024, 1, 1, 0, 5)),
        # @every counts from t, dropping its fraction of a second (constantdelay.go Next)
        (utc(2024, 1, 1, 0, 0, 0, 500000), "@every 1h30m", ZUTC, utc(2024, 1, 1, 1, 30)),
        (utc(2024, 1, 1), "@every -1h", ZUTC, utc(2024, 1, 1, 0, 0, 1)),  # under a second is a second
        # robfig's quirks at midnight DST changes, reproduced: a weekly Friday in Cairo skips the
        # Friday DST begins on (28 April 2023, 00:00 -> 01:00) ...
        (iso("2023-04-21T03:00:00+02:00"), "0 3 * * 5", check_time_zone("Africa/Cairo"), iso("2023-05-05T03:00:00+03:00")),
        (iso("2023-04-28T01:30:00+03:00"), "0 3 * * 5", check_time_zone("Africa/Cairo"), iso("2023-04-28T03:00:00+03:00")),
        # ... and a Saturday 04:00 in Sao Paulo also runs on the Sunday DST began on (2013)
        (iso("2013-10-19T04:00:00-03:00"), "0 4 * * 6", check_time_zone("America/Sao_Paulo"), iso("2013-10-20T04:00:00-02:00")),
    ],
)
def test_next_pinery(after, expr, tz, expected):
    assert parse(expr).next_after(after, tz) == expected


def test_next_needs_an_aware_time():
    with pytest.raises(ValueError, match="timezone-aware"):
        parse("* * * * *").next_after(datetime(2024, 1, 1), ZUTC)


# count_between and latest_between agree with stepping next_after, over three days around each DST
# change of 2024 on whole hours: New York, Berlin, Sydney (southern), and Kolkata without DST.
@pytest.mark.parametrize(
    "zone, start",
    [
        ("UTC", utc(2024, 2, 28)),
        ("America/New_York", utc(2024, 3, 9)),
        ("America/New_York", utc(2024, 11, 2)),
        ("Europe/Berlin", utc(2024, 3, 30)),
        ("Europe/Berlin", utc(2024, 10, 26)),
        ("Australia/Sydney", utc(2024, 4, 6)),
        ("Australia/Sydney", utc(2024, 10, 5)),
        ("Asia/Kolkata", utc(2024, 3, 30)),
    ],
)
@pytest.mark.parametrize("expr", ["* * * * *", "*/7 1-3 * * *", "30 2 * * *", "0 0,12 1,15 * 1", "15 */5 * * 0"])
def test_counting_agrees_with_stepping(zone, start, expr):
    tz, schedule = check_time_zone(zone), parse(expr)
    steps, t = [], schedule.next_after(start, tz)
    while t is not None and t <= start + timedelta(days=3):
        steps.append(t)
        t = schedule.next_after(t, tz)
    # ends in the middle of a minute, and late in a day (the partial last day)
    for end in (start + timedelta(days=3, seconds=17), start + timedelta(days=2, hours=23, minutes=40, seconds=30)):
        upto = [s for s in steps if s <= end]
        assert schedule.count_between(start, end, tz) == len(upto)
        assert schedule.latest_between(start, end, tz) == (upto[-1] if upto else None)


# kubernetes pkg/apis/batch/validation/validation_test.go TestValidateCronJob (schedule cases),
# TestValidateCronJobScheduleTZ.
@pytest.mark.parametrize(
    "expr, error",
    [
        ("* * * * ?", None),
        ("@hourly", None),
        ("0 * * * *", None),
        ("@every 1h", None),  # ParseStandard takes it and validation does not refuse it
        ("error", "expected exactly 5 fields"),
        ("", "empty spec string"),  # "spec.schedule: Required value"
        ("TZ=UTC 0 * * * *", "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"),
        ("CRON_TZ=UTC 0 * * * *", "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"),
        ("CRON_TZ=UTC  5 * * * *", "cannot use TZ or CRON_TZ in schedule"),  # robfig parser_test.go TestParseSchedule
        ("TZ=America/New_York 15/0 * * * *", "cannot use TZ or CRON_TZ in schedule"),  # robfig TestSlash0NoHang
    ],
)
def test_kubernetes_validation(expr, error):
    if error is None:
        parse(expr)
    else:
        with pytest.raises(ValueError, match=error):
            parse(expr)


# kubernetes validation_test.go TestValidateCronJob (timeZone cases), TestValidateCronJobSpec, and
# a sample of TestTimeZones (every zone Go 1.19 knew is valid).
@pytest.mark.parametrize(
    "name, error",
    [
        ("UTC", None),
        ("Europe/Rome", None),
        ("America/New_York", None),
        ("America/Chicago", None),
        ("Africa/Abidjan", None),
        ("America/Argentina/ComodRivadavia", None),  # a 14-character part, the most allowed
        ("America/Port-au-Prince", None),
        ("Asia/Calcutta", None),
        ("Etc/GMT+5", None),
        ("LOCAL", "timeZone must be an explicit time zone"),
        ("Local", "timeZone must be an explicit time zone"),
        (" Europe/Rome", "unknown time zone  Europe/Rome"),
        ("Europe/Rome ", "unknown time zone Europe/Rome "),
        ("Europe/InvalidRome", "unknown time zone Europe/InvalidRome"),
        (" ", "unknown time zone  "),
        ("broken", "unknown time zone broken"),
        ("still broken", "unknown time zone still broken"),
        # pinery's own: the character rule, and names the zone database does not hold
        ("../etc/passwd", "unknown time zone"),
        ("/etc/localtime", "unknown time zone"),
        ("Europe/-Rome", "unknown time zone"),
        ("America", "unknown time zone"),
        ("zone.tab", "unknown time zone"),
    ],
)
def test_time_zone(name, error):
    if error is None:
        assert check_time_zone(name).key == name
    else:
        with pytest.raises(ValueError, match=error):
            check_time_zone(name)


@pytest.mark.parametrize("name", [None, ""])
def test_time_zone_absent_is_utc(name):
    # Kubernetes refuses "" and uses the controller manager's zone for nil; pinery uses UTC.
    assert check_time_zone(name).key == "UTC"


NS_S, NS_MS, NS_US, NS_M, NS_H = 10**9, 10**6, 10**3, 60 * 10**9, 3600 * 10**9


# Go src/time/time_test.go parseDurationTests (the @every argument and maxAge's grammar).
@pytest.mark.parametrize(
    "text, ns",
    [
        ("0", 0), ("5s", 5 * NS_S), ("30s", 30 * NS_S), ("1478s", 1478 * NS_S),
        ("-5s", -5 * NS_S), ("+5s", 5 * NS_S), ("-0", 0), ("+0", 0),
        ("5.0s", 5 * NS_S), ("5.6s", 5 * NS_S + 600 * NS_MS), ("5.s", 5 * NS_S), (".5s", 500 * NS_MS),
        ("1.0s", NS_S), ("1.00s", NS_S), ("1.004s", NS_S + 4 * NS_MS), ("1.0040s", NS_S + 4 * NS_MS),
        ("100.00100s", 100 * NS_S + NS_MS),
        ("10ns", 10), ("11us", 11 * NS_US), ("12\u00b5s", 12 * NS_US), ("12\u03bcs", 12 * NS_US),
        ("13ms", 13 * NS_MS), ("14s", 14 * NS_S), ("15m", 15 * NS_M), ("16h", 16 * NS_H),
        ("3h30m", 3 * NS_H + 30 * NS_M), ("10.5s4m", 4 * NS_M + 10 * NS_S + 500 * NS_MS),
        ("-2m3.4s", -(2 * NS_M + 3 * NS_S + 400 * NS_MS)),
        ("1h2m3s4ms5us6ns", NS_H + 2 * NS_M + 3 * NS_S + 4 * NS_MS + 5 * NS_US + 6),
        ("39h9m14.425s", 39 * NS_H + 9 * NS_M + 14 * NS_S + 425 * NS_MS),
        ("52763797000ns", 52763797000), ("0.3333333333333333333h", 20 * NS_M),
        ("9007199254740993ns", (1 << 53) + 1),
        ("9223372036854775807ns", (1 << 63) - 1), ("9223372036854775.807us", (1 << 63) - 1),
        ("9223372036s854ms775us807ns", (1 << 63) - 1),
        ("-9223372036854775808ns", -(1 << 63)), ("-9223372036854775.808us", -(1 << 63)),
        ("-9223372036s854ms775us808ns", -(1 << 63)), ("-2562047h47m16.854775808s", -(1 << 63)),
        ("0.100000000000000000000h", 6 * NS_M), ("0.830103483285477580700h", 49 * NS_M + 48 * NS_S + 372539827),
    ],
)
def test_go_duration(text, ns):
    assert parse_go_duration(text) == ns


# Go src/time/time_test.go parseDurationErrorTests.
@pytest.mark.parametrize(
    "text",
    ["", "3", "-", "s", ".", "-.", ".s", "+.s", "1d", "\x85\x85", "\ufffd", "\ufffd hello \ufffd world",
     "9223372036854775810ns", "9223372036854775808ns", "-9223372036854775809ns", "9223372036854776us",
     "3000000h", "9223372036854775.808us", "9223372036854ms775us808ns"],
)
def test_go_duration_errors(text):
    with pytest.raises(ValueError, match="time: "):
        parse_go_duration(text)
