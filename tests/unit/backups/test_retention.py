"""pinery.backups.retention: which backups a schedule deletes, and maxAge's format."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from pinery.backups.retention import Made, parse_max_age, to_delete

UTC = timezone.utc
NOW = datetime(2024, 6, 10, tzinfo=UTC)


def day(n: int) -> datetime:
    return datetime(2024, 6, n, tzinfo=UTC)


# Ready on the 1st, 2nd, 4th and 7th of June (ages 9, 8, 6 and 3 days); Failed on the 3rd, 5th and
# 8th; one still Pending from the 9th.
HISTORY = [
    Made("b1", day(1), "Ready"),
    Made("b2", day(2), "Ready"),
    Made("b3", day(3), "Failed"),
    Made("b4", day(4), "Ready"),
    Made("b5", day(5), "Failed"),
    Made("b7", day(7), "Ready"),
    Made("b8", day(8), "Failed"),
    Made("b9", day(9), "Pending"),
]


@pytest.mark.parametrize(
    "made, keep_last, max_age, expected",
    [
        # neither rule: every Ready one stays; of the Failed ones only the newest (CronJob's
        # failedJobsHistoryLimit default, pkg/apis/batch/v1/defaults.go)
        pytest.param(HISTORY, None, None, ["b3", "b5"], id="no rule keeps every Ready"),
        pytest.param(HISTORY, 2, None, ["b1", "b2", "b3", "b5"], id="keepLast 2"),
        pytest.param(HISTORY, 10, None, ["b3", "b5"], id="keepLast more than there are"),
        pytest.param(HISTORY, 0, None, ["b1", "b2", "b3", "b4", "b5"], id="keepLast 0 still keeps the newest Ready"),
        pytest.param(HISTORY, None, timedelta(days=7), ["b1", "b2", "b3", "b5"], id="maxAge 7d"),
        pytest.param(HISTORY, None, timedelta(days=6), ["b1", "b2", "b3", "b4", "b5"], id="maxAge: exactly that old is not younger"),
        pytest.param(HISTORY, None, timedelta(days=1), ["b1", "b2", "b3", "b4", "b5"], id="maxAge shorter than all keeps the newest Ready"),
        pytest.param(HISTORY, 1, timedelta(days=7), ["b1", "b2", "b3", "b5"], id="keepLast 1 or maxAge 7d"),
        pytest.param(HISTORY, 3, timedelta(days=1), ["b1", "b3", "b5"], id="keepLast 3 or maxAge 1d"),
        pytest.param(HISTORY, 0, timedelta(days=20), ["b3", "b5"], id="keepLast 0 or maxAge 20d"),
        # Pending is never deleted, whatever the rules
        pytest.param([Made("p1", day(1), "Pending"), Made("p2", day(2), "Pending")], 0, timedelta(days=1), [], id="Pending never"),
        pytest.param([Made("f1", day(1), "Failed"), Made("f2", day(2), "Failed"), Made("f3", day(3), "Failed")], None, None,
                     ["f1", "f2"], id="only Failed: the newest stays"),
        pytest.param([], 1, timedelta(days=1), [], id="nothing made"),
        # the same scheduled time: the name decides which is newer
        pytest.param([Made("y", day(5), "Ready"), Made("x", day(5), "Ready")], 1, None, ["x"], id="tie broken by name"),
        # a backup scheduled after now (clock skew) is young
        pytest.param([Made("old", day(1), "Ready"), Made("skewed", day(11), "Ready"), Made("mid", day(8), "Ready")], None,
                     timedelta(days=1), ["old", "mid"], id="scheduled in the future"),
        # the newest Failed stays even when Ready ones are newer, and the order out is oldest first
        pytest.param([Made("r2", day(6), "Ready"), Made("f2", day(4), "Failed"), Made("r1", day(2), "Ready"), Made("f1", day(1), "Failed")],
                     1, None, ["f1", "r1"], id="oldest first"),
    ],
)
def test_to_delete(made, keep_last, max_age, expected):
    assert to_delete(made, keep_last=keep_last, max_age=max_age, now=NOW) == expected


def test_a_negative_keep_last_is_refused():
    with pytest.raises(ValueError, match="keepLast"):
        to_delete(HISTORY, keep_last=-1, max_age=None, now=NOW)


@pytest.mark.parametrize(
    "text, age",
    [
        ("30d", timedelta(days=30)),
        ("12h", timedelta(hours=12)),
        ("90m", timedelta(minutes=90)),
        ("1d12h", timedelta(hours=36)),
        ("720h", timedelta(days=30)),
        ("1.5h", timedelta(minutes=90)),
        ("+7d", timedelta(days=7)),
        ("1h30m15s", timedelta(hours=1, minutes=30, seconds=15)),
        ("0.5d", timedelta(hours=12)),
    ],
)
def test_parse_max_age(text, age):
    assert parse_max_age(text) == age


@pytest.mark.parametrize(
    "text, error",
    [
        ("", "invalid duration"),
        ("30", "missing unit"),
        ("d", "invalid duration"),
        ("30days", 'unknown unit "days"'),
        ("1w", 'unknown unit "w"'),
        ("30 d", 'unknown unit " d"'),
        ("P30D", "invalid duration"),
        ("30D", 'unknown unit "D"'),
        ("-30d", "must be a positive duration"),
        ("0", "must be a positive duration"),
        ("0d", "must be a positive duration"),
        ("1ns", "must be a positive duration"),
        ("106752d", "invalid duration"),  # past Go's 292 years
    ],
)
def test_parse_max_age_errors(text, error):
    with pytest.raises(ValueError, match=error):
        parse_max_age(text)
