"""The kubelet's container log format and reader (podrunner/crilog.py), with the cases of
kubernetes pkg/kubelet/kuberuntime/logs/logs_test.go (TestLogOptions, TestReadLogs,
TestParseLog, TestWriteLogs, TestWriteLogsWithBytesLimit) as tables, the writer's cut of lines
as containerd's redirectLogs makes it, and the option checks of ValidatePodLogOptions
(pkg/apis/core/validation TestValidatePodLogOptions)."""

from __future__ import annotations

import pytest

from pinery.local.apiserver import errors
from pinery.local.apiserver.logs import validate_options
from pinery.local.podrunner import crilog
from pinery.local.podrunner.crilog import Entry

S = 1_000_000_000
T1 = crilog.parse_time("2020-09-27T11:18:01Z")


def records(*lines: tuple[int, str, str, str]) -> bytes:
    """A file of records (time, stream, tag, text) as the runner writes them."""
    return b"".join(crilog.format_time(t) + f" {stream} {tag} {text}\n".encode() for t, stream, tag, text in lines)


# --- times -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, ns", [
    ("2016-10-20T18:39:20.57606443Z", crilog.parse_time("2016-10-20T18:39:20Z") + 576064430),
    ("2020-09-27T11:18:01Z", 1601205481 * S),
    ("2020-09-27T11:18:01.000000001Z", 1601205481 * S + 1),
    ("2020-09-27T13:18:01.5+02:00", 1601205481 * S + S // 2),  # offsets, as RFC3339NanoLenient takes them
    ("1970-01-01T00:00:00Z", 0),
])
def test_parse_time(text, ns):
    assert crilog.parse_time(text) == ns


@pytest.mark.parametrize("text", ["", "2020-09-27", "2020-09-27 11:18:01Z", "2020-09-27T11:18:01", "2020-13-27T11:18:01Z",
                                  "2020-09-27T11:18:01.1234567890Z", "yesterday"])
def test_parse_time_refuses(text):
    with pytest.raises(ValueError):
        crilog.parse_time(text)


@pytest.mark.parametrize("ns, shown", [
    (T1, b"2020-09-27T11:18:01.000000000Z"),   # RFC3339NanoFixed: always nine digits
    (T1 + 43210, b"2020-09-27T11:18:01.000043210Z"),
    (1234 * S + 43210, b"1970-01-01T00:20:34.000043210Z"),  # TestWriteLogs' time.Unix(1234, 43210)
])
def test_format_time(ns, shown):
    assert crilog.format_time(ns) == shown
    assert crilog.parse_time(shown) == ns


# --- TestLogOptions: NewLogOptions' since ------------------------------------------------------

NOW = T1 + 100 * S


@pytest.mark.parametrize("since_seconds, since_time, expected", [
    (None, None, None),                    # empty options
    (None, T1, T1),                        # since timestamp
    (10, None, NOW - 10 * S),              # since seconds
    (10, NOW - 5 * S, NOW - 5 * S),        # both (validation refuses it): the later one
    (10, NOW - 50 * S, NOW - 10 * S),
])
def test_since(since_seconds, since_time, expected):
    assert crilog.since_ns(since_seconds, since_time, NOW) == expected


# --- TestReadLogs ------------------------------------------------------------------------------

THREE = records((T1, "stdout", "F", "line1"), (T1 + S, "stdout", "F", "line2"), (T1 + 2 * S, "stdout", "F", "line3"))


@pytest.mark.parametrize("name, options, expected", [
    ("default pod log options should output all lines", {}, b"line1\nline2\nline3\n"),
    ("using TailLines 2 should output last 2 lines", {"tail": 2}, b"line2\nline3\n"),
    ("using TailLines 4 should output all lines when the log has less than 4 lines", {"tail": 4}, b"line1\nline2\nline3\n"),
    ("using TailLines 0 should output nothing", {"tail": 0}, b""),
    ("using LimitBytes 9 should output first 9 bytes", {"limit": 9}, b"line1\nlin"),
    ("using LimitBytes 100 should output all bytes when the log has less than 100 bytes", {"limit": 100}, b"line1\nline2\nline3\n"),
    ("using LimitBytes 0 should output nothing", {"limit": 0}, b""),
    ("using SinceTime should output lines with a time on or after the specified time", {"since": T1 + S}, b"line2\nline3\n"),
    ("using SinceTime now should output nothing", {"since": T1 + 1000 * S}, b""),
    ("tail comes before since", {"tail": 2, "since": T1 + 2 * S}, b"line3\n"),
    ("since comes before the byte limit", {"since": T1 + S, "limit": 8}, b"line2\nli"),
    ("timestamps come before the byte limit", {"timestamps": True, "limit": 33},
     b"2020-09-27T11:18:01.000000000Z li"),
])
def test_read_logs(name, options, expected):
    assert crilog.read(THREE, **options) == expected


def test_read_logs_with_timestamps_and_both_streams():
    data = records((T1, "stdout", "F", "out"), (T1 + 1, "stderr", "F", "err"), (T1 + 2, "stdout", "P", "half "),
                   (T1 + 3, "stdout", "F", "whole"))
    assert crilog.read(data) == b"out\nerr\nhalf whole\n"
    assert crilog.read(data, timestamps=True) == (
        b"2020-09-27T11:18:01.000000000Z out\n2020-09-27T11:18:01.000000001Z err\n"
        b"2020-09-27T11:18:01.000000002Z half 2020-09-27T11:18:01.000000003Z whole\n")
    assert crilog.read(data, tail=1) == b"whole\n"  # a part of a line counts as a line, as upstream's tail does


def test_lines_in_no_format_are_served_as_they_are():
    """Log files written by hand: the kubelet would skip such lines; here they are shown, with
    no time, whatever since asks, and mixed with records."""
    data = b"plain one\n" + records((T1, "stdout", "F", "timed")) + b"plain two"
    assert crilog.read(data) == b"plain one\ntimed\nplain two"
    assert crilog.read(data, timestamps=True) == b"plain one\n2020-09-27T11:18:01.000000000Z timed\nplain two"
    assert crilog.read(data, since=T1 + S) == b"plain one\nplain two"
    assert crilog.read(b"one\ntwo\nthree\n", tail=2) == b"two\nthree\n"


def test_a_carriage_return_is_no_line_end():
    data = records((T1, "stdout", "F", "10%\r20%\r30%"))
    assert crilog.read(data, tail=1) == b"10%\r20%\r30%\n"


def test_foreign_offsets_are_shown_in_utc_and_compared_as_times():
    data = b"2020-09-27T13:18:01.5+02:00 stdout F later\n2020-09-27T11:18:01Z stdout F earlier\n"
    assert crilog.read(data, since=T1 + S // 4) == b"later\n"
    assert crilog.read(data, timestamps=True) == b"2020-09-27T11:18:01.500000000Z later\n2020-09-27T11:18:01.000000000Z earlier\n"


# --- TestParseLog ------------------------------------------------------------------------------

STAMP = b"2016-10-20T18:39:20.57606443Z"


@pytest.mark.parametrize("line, entry", [
    (STAMP + b" stdout F cri stdout test log\n", Entry(STAMP, "stdout", False, b"cri stdout test log\n")),
    (STAMP + b" stderr F cri stderr test log\n", Entry(STAMP, "stderr", False, b"cri stderr test log\n")),
    (STAMP + b" stdout P cri stdout partial test log\n", Entry(STAMP, "stdout", True, b"cri stdout partial test log")),
    (STAMP + b" stdout P:TAG1:TAG2 cri stdout partial test log\n", Entry(STAMP, "stdout", True, b"cri stdout partial test log")),
    (STAMP + b" stdout F \n", Entry(STAMP, "stdout", False, b"\n")),  # an empty line
    (STAMP + b" stdout F unfinished", Entry(STAMP, "stdout", False, b"unfinished")),
    # Unsupported formats (the kubelet fails to parse them; here they are text): Docker's JSON
    # lines among them, which local mode never writes.
    (b"unsupported log format test log\n", Entry(None, None, False, b"unsupported log format test log\n")),
    (b'{"log":"docker stdout test log","stream":"stdout","time":"2016-10-20T18:39:20.57606443Z"}\n',
     Entry(None, None, False, b'{"log":"docker stdout test log","stream":"stdout","time":"2016-10-20T18:39:20.57606443Z"}\n')),
    (STAMP + b" stdlog F unknown stream\n", Entry(None, None, False, STAMP + b" stdlog F unknown stream\n")),
    (b"2016-10-20 stdout F not a time\n", Entry(None, None, False, b"2016-10-20 stdout F not a time\n")),
    (STAMP + b" stdout F\n", Entry(None, None, False, STAMP + b" stdout F\n")),  # log tag is not found
])
def test_parse_line(line, entry):
    assert crilog.parse_line(line) == entry


# --- TestWriteLogs and TestWriteLogsWithBytesLimit: the reader's writer ------------------------

UNIX = 1234 * S + 43210
LOG = "abcdefg"


@pytest.mark.parametrize("stream, since, timestamps, expected", [
    ("stderr", None, False, b"abcdefg\n"),
    ("stdout", None, False, b"abcdefg\n"),
    ("stdout", UNIX + S, False, b""),               # since is after the line's time
    ("stderr", None, True, b"1970-01-01T00:20:34.000043210Z abcdefg\n"),
])
def test_write_logs(stream, since, timestamps, expected):
    line = records((UNIX, stream, "F", LOG))
    assert crilog.Reader(since=since, timestamps=timestamps).render([line]) == expected


STAMPED = b"1970-01-01T00:20:34.000004321Z"


@pytest.mark.parametrize("stdout_lines, stderr_lines, limit, timestamps, expected", [
    (3, 0, 3, False, b"abc"),                                    # limit bytes less than one line
    (3, 0, 8 + 3, False, b"abcdefg\nabc"),                       # limit bytes across lines
    (3, 0, 3 * 8, False, b"abcdefg\nabcdefg\nabcdefg\n"),        # limit bytes more than all lines
    (0, 3, 8 + 3, False, b"abcdefg\nabc"),                       # limit bytes for stderr
    (1, 2, 8 + 3, False, b"abcdefg\nabc"),                       # stdout first, then stderr (one stream here)
    (3, 0, len(STAMPED) + 1 + 8 + 2, True, STAMPED + b" abcdefg\n" + STAMPED[:2]),  # limit bytes with timestamp
])
def test_write_logs_with_bytes_limit(stdout_lines, stderr_lines, limit, timestamps, expected):
    when = 1234 * S + 4321
    lines = [records((when, "stdout", "F", LOG))] * stdout_lines + [records((when, "stderr", "F", LOG))] * stderr_lines
    reader = crilog.Reader(timestamps=timestamps, limit=limit)
    # One line at a time, as a follow stream renders them: the limit holds across calls.
    assert b"".join(reader.render([line]) for line in lines) == expected
    assert reader.exhausted == (limit <= len(expected))


# --- the writer: lines cut as containerd's redirectLogs cuts them ------------------------------

@pytest.mark.parametrize("reads, expected", [
    ([b"one\ntwo\n"], [("F", b"one"), ("F", b"two")]),
    ([b"one\ntw", b"o\n"], [("F", b"one"), ("F", b"two")]),      # a line goes out when its newline comes
    ([b"\n"], [("F", b"")]),
    ([b"no newline"], [("P", b"no newline")]),                   # left at the end: a part
    ([b"a" * crilog.MAX_LINE + b"\n"], [("F", b"a" * crilog.MAX_LINE)]),
    ([b"a" * crilog.MAX_LINE + b"b\n"], [("P", b"a" * crilog.MAX_LINE), ("F", b"b")]),
    ([b"a" * (crilog.MAX_LINE // 2), b"a" * crilog.MAX_LINE, b"c\n"],
     [("P", b"a" * crilog.MAX_LINE), ("F", b"a" * (crilog.MAX_LINE // 2) + b"c")]),
    ([b"x\n" + b"a" * (2 * crilog.MAX_LINE + 1) + b"\ny\n"],
     [("F", b"x"), ("P", b"a" * crilog.MAX_LINE), ("P", b"a" * crilog.MAX_LINE), ("F", b"a"), ("F", b"y")]),
])
def test_line_splitter(reads, expected):
    splitter = crilog.LineSplitter("stderr")
    data = b"".join(splitter.feed(chunk, T1 + i) for i, chunk in enumerate(reads)) + splitter.close(T1 + 99)
    entries = [crilog.parse_line(line) for line in crilog.split_lines(data)]
    assert [("P" if e.partial else "F", e.text.removesuffix(b"\n")) for e in entries] == expected
    assert {e.stream for e in entries} == {"stderr"}
    assert crilog.read(data) == b"".join(reads)  # read back, the output is what was printed
    assert crilog.text_of(data) == b"".join(reads)


def test_line_splitter_stamps_lines_when_their_newline_arrives():
    splitter = crilog.LineSplitter("stdout")
    assert splitter.feed(b"early ", T1) == b""
    data = splitter.feed(b"done\nnext\n", T1 + S)
    assert data == b"2020-09-27T11:18:02.000000000Z stdout F early done\n2020-09-27T11:18:02.000000000Z stdout F next\n"
    assert splitter.close(T1 + 2 * S) == b""


def test_record_and_unknown_streams():
    assert crilog.record("stderr", "exec failed\n", T1) == b"2020-09-27T11:18:01.000000000Z stderr F exec failed\n"
    with pytest.raises(ValueError):
        crilog.LineSplitter("stdin")


def test_text_of_a_cut_tail_leaves_out_the_cut_line():
    data = records((T1, "stdout", "F", "first"), (T1, "stderr", "F", "second"))
    assert crilog.text_of(data[5:], cut=True) == b"second\n"
    assert crilog.text_of(b"raw\nlines\n") == b"raw\nlines\n"


# --- ValidatePodLogOptions ---------------------------------------------------------------------

@pytest.mark.parametrize("tail, limit, since_seconds, since_time", [
    (None, None, None, None), (8, None, None, None), (0, None, None, None), (None, 1, None, None),
    (None, 12, None, None), (None, None, 1, None), (None, None, 10, None), (None, None, None, 0), (8, 12, None, T1),
])
def test_valid_log_options(tail, limit, since_seconds, since_time):
    validate_options("p", tail, limit, since_seconds, since_time)


@pytest.mark.parametrize("tail, limit, since_seconds, since_time, message, causes", [
    (-8, None, None, None, 'PodLogOptions "p" is invalid: tailLines: Invalid value: -8: must be greater than or equal to 0',
     [{"reason": "FieldValueInvalid", "message": "Invalid value: -8: must be greater than or equal to 0", "field": "tailLines"}]),
    (None, 0, None, None, 'PodLogOptions "p" is invalid: limitBytes: Invalid value: 0: must be greater than 0',
     [{"reason": "FieldValueInvalid", "message": "Invalid value: 0: must be greater than 0", "field": "limitBytes"}]),
    (None, None, 0, None, 'PodLogOptions "p" is invalid: sinceSeconds: Invalid value: 0: must be greater than 0',
     [{"reason": "FieldValueInvalid", "message": "Invalid value: 0: must be greater than 0", "field": "sinceSeconds"}]),
    (None, None, 10, T1, 'PodLogOptions "p" is invalid: : Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified',
     [{"reason": "FieldValueForbidden", "message": "Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified"}]),
    (-1, 0, None, None,
     'PodLogOptions "p" is invalid: [tailLines: Invalid value: -1: must be greater than or equal to 0, '
     'limitBytes: Invalid value: 0: must be greater than 0]', None),
])
def test_invalid_log_options(tail, limit, since_seconds, since_time, message, causes):
    with pytest.raises(errors.ApiError) as info:
        validate_options("p", tail, limit, since_seconds, since_time)
    assert (info.value.code, info.value.reason, info.value.message) == (422, "Invalid", message)
    assert info.value.details["kind"] == "PodLogOptions" and info.value.details["name"] == "p"
    if causes is not None:
        assert info.value.details["causes"] == causes
