"""The progress log cursor (pinery.fsdpjob.log_cursor): what each read of rank 0's log asks for."""

import pytest

from pinery.fsdpjob.log_cursor import LogCursor

LINES = (
    "2026-12-05T07:00:00.100000000Z {\"event\": \"progress\", \"step\": 1}\n"
    "2026-12-05T07:00:01.900000000Z {\"event\": \"progress\", \"step\": 2}\n"
)


@pytest.mark.parametrize("reads, uid, expected", [
    pytest.param([], "a", None, id="nothing read: the tail"),
    pytest.param([("a", LINES)], "a", "2026-12-05T07:00:01Z", id="the newest line's second (the kubelet's precision)"),
    pytest.param([("a", LINES)], "b", None, id="another pod (a restart): the tail again"),
    pytest.param([("a", LINES), ("a", "")], "a", "2026-12-05T07:00:01Z", id="a read with nothing new keeps the place"),
    pytest.param([("a", LINES), ("b", "")], "b", None, id="a new pod with no lines yet: still nothing known"),
    pytest.param([("a", "no timestamp\n")], "a", None, id="lines without a time leave it unknown"),
    pytest.param([("a", LINES), ("a", "2026-12-05T07:00:09.000000001Z x\nbroken line\n")], "a", "2026-12-05T07:00:09Z",
                 id="later lines move it on; lines without a time are skipped"),
    pytest.param([("a", "2026-12-05T07:00:05Z late\n2026-12-05T07:00:03Z early\n")], "a", "2026-12-05T07:00:05Z",
                 id="the newest time, not the last line's"),
    pytest.param([("a", LINES)], None, None, id="no pod: nothing to ask"),
])
def test_since_time(reads, uid, expected):
    cursor = LogCursor()
    for pod_uid, text in reads:
        cursor.advance(pod_uid, text)
    assert cursor.since_time(uid) == expected
