"""Container log files in the kubelet's (CRI) format: write them, parse them, read them back.

A record is one line of the file:

    2016-10-06T00:17:09.669794202Z stdout F log content 1
    2016-10-06T00:17:09.669794203Z stderr P a line cut here, continued by the next record

the time it was written (RFC 3339 with nanoseconds), the stream, a tag (`F` a full line, `P` a
part of one; more tags may follow after `:`), one space, and the text. The runner writes what
a container prints this way (as containerd's `pkg/cri/io/logger.go` redirectLogs does: a line
goes out when its newline arrives, a line longer than `MAX_LINE` in `P` pieces, an unfinished
line at the end as `P`), and the log endpoint reads it back as the kubelet's
`pkg/kubelet/kuberuntime/logs/logs.go` ReadLogs does, with its parseCRILog and NewLogOptions.

Differences: a line that is not a record (log files written by hand or by older versions) is
served as it is, with no time, so `since` keeps it and `timestamps` gives it no prefix (the
kubelet skips such lines); times are shown in UTC whatever offset a record carries.

Nothing here touches files or the clock: callers pass bytes and times (nanoseconds since the
epoch).
"""

from __future__ import annotations

import calendar
import re
import time
from dataclasses import dataclass

# containerd's default max_container_log_line_size.
MAX_LINE = 16 * 1024
STREAMS = (b"stdout", b"stderr")

_TIME = re.compile(rb"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)\Z")


def format_time(ns: int) -> bytes:
    """RFC3339NanoFixed in UTC (`types.RFC3339NanoFixed`, the kubelet's timeFormatOut): always
    nine fractional digits, so that such times sort as text in time order."""
    seconds, fraction = divmod(ns, 1_000_000_000)
    return b"%s.%09dZ" % (time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)).encode(), fraction)


def parse_time(text: bytes | str) -> int:
    """Nanoseconds since the epoch of an RFC 3339 time, with or without a fraction of up to
    nine digits (`types.RFC3339NanoLenient`, the kubelet's timeFormatIn); ValueError otherwise."""
    raw = text.encode() if isinstance(text, str) else text
    match = _TIME.match(raw)
    if match is None:
        raise ValueError(f"not an RFC 3339 time: {raw.decode(errors='replace')!r}")
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    fraction, zone = match.group(7) or b"", match.group(8)
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour <= 23 and minute <= 59 and second <= 60):
        raise ValueError(f"not an RFC 3339 time: {raw.decode(errors='replace')!r}")
    seconds = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    if zone != b"Z":
        sign = -1 if zone[:1] == b"+" else 1
        seconds += sign * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60)
    return seconds * 1_000_000_000 + int(fraction.ljust(9, b"0") or b"0")


class LineSplitter:
    """One stream of a container (stdout or stderr) cut into records, as containerd's
    redirectLogs does: `feed` what was read, get back the records to append to the file."""

    __slots__ = ("_full", "_partial", "_pending")

    def __init__(self, stream: str):
        name = stream.encode()
        if name not in STREAMS:
            raise ValueError(f"unknown stream {stream!r}")
        self._full, self._partial = b" " + name + b" F ", b" " + name + b" P "
        self._pending = b""

    def feed(self, data: bytes, now_ns: int) -> bytes:
        """Records for the lines `data` completes, all stamped `now_ns`; an unfinished line is
        kept for the next call (and cut into `P` records once longer than MAX_LINE)."""
        if self._pending:
            data = self._pending + data
        end = data.rfind(b"\n")
        stamp = format_time(now_ns)
        out = b""
        if end >= 0:
            lines = data[:end].split(b"\n")
            full = stamp + self._full
            if max(map(len, lines)) <= MAX_LINE:  # the usual case: one join for the whole read
                out = full + (b"\n" + full).join(lines) + b"\n"
            else:
                out = b"".join(self._long(line, stamp) for line in lines)
            data = data[end + 1:]
        while len(data) > MAX_LINE:
            out += stamp + self._partial + data[:MAX_LINE] + b"\n"
            data = data[MAX_LINE:]
        self._pending = data
        return out

    def close(self, now_ns: int) -> bytes:
        """The stream has ended: an unfinished line left over goes out as a `P` record."""
        rest, self._pending = self._pending, b""
        return format_time(now_ns) + self._partial + rest + b"\n" if rest else b""

    def _long(self, line: bytes, stamp: bytes) -> bytes:
        pieces = []
        while len(line) > MAX_LINE:
            pieces.append(stamp + self._partial + line[:MAX_LINE] + b"\n")
            line = line[MAX_LINE:]
        pieces.append(stamp + self._full + line + b"\n")
        return b"".join(pieces)


def record(stream: str, text: str | bytes, now_ns: int) -> bytes:
    """Records for text written at once, ending with a newline (or a `P` record for the rest)."""
    splitter = LineSplitter(stream)
    data = text.encode() if isinstance(text, str) else text
    return splitter.feed(data, now_ns) + splitter.close(now_ns)


@dataclass(frozen=True, slots=True)
class Entry:
    """One line of a log file. `stamp` is the record's time as written (None for a line that is
    not a record), `text` what the container printed: with its newline for a full line, without
    one for a part (`P`) or an unfinished last line."""

    stamp: bytes | None
    stream: str | None
    partial: bool
    text: bytes

    def time_ns(self) -> int | None:
        return None if self.stamp is None else parse_time(self.stamp)


def parse_line(line: bytes) -> Entry:
    """A record as parseCRILog reads it (time, stream, tags, text), else the line as it is."""
    parts = line.split(b" ", 3)
    if len(parts) == 4 and parts[1] in STREAMS:
        stamp, stream, tags, text = parts
        if _TIME.match(stamp):
            partial = tags.split(b":", 1)[0] == b"P"
            if partial and text.endswith(b"\n"):
                text = text[:-1]
            return Entry(stamp, stream.decode(), partial, text)
    return Entry(None, None, False, line)


def split_lines(data: bytes) -> list[bytes]:
    """The file's lines, each with its newline (the last one may have none)."""
    lines = data.split(b"\n")
    last = lines.pop()
    out = [line + b"\n" for line in lines]
    if last:
        out.append(last)
    return out


def tail_lines(lines: list[bytes], count: int | None) -> list[bytes]:
    """The last `count` lines of the file (all for None), as `pkg/util/tail`
    FindTailLineStartIndex finds them: parts of a line (`P` records) count as lines."""
    if count is None:
        return lines
    return lines[-count:] if count > 0 else []


def since_ns(since_seconds: int | None, since_time: int | None, now_ns: int) -> int | None:
    """The earliest time to show, as NewLogOptions computes it: now less sinceSeconds, or
    sinceTime when that is later (validation lets only one of them through)."""
    since = None
    if since_seconds is not None:
        since = now_ns - since_seconds * 1_000_000_000
    if since_time is not None and (since is None or since_time > since):
        since = since_time
    return since


class Reader:
    """What the log endpoint sends for some lines of a file, as logWriter.write writes them:
    lines older than `since` are skipped, the rest get their time in front with `timestamps`,
    and no more than `limit` bytes go out in all (the last line cut)."""

    def __init__(self, *, since: int | None = None, timestamps: bool = False, limit: int | None = None):
        self.since = since
        # Before the epoch every record is later (and gmtime need not take such times).
        self.since_stamp = None if since is None else format_time(since) if since > 0 else b""
        self.timestamps = timestamps
        self.remaining = limit

    @property
    def exhausted(self) -> bool:
        return self.remaining is not None and self.remaining <= 0

    def render(self, lines: list[bytes]) -> bytes:
        out = []
        for line in lines:
            entry = parse_line(line)
            if entry.stamp is None:
                out.append(entry.text)
                continue
            fixed = len(entry.stamp) == 30 and entry.stamp[-1:] == b"Z"
            if self.since is not None:
                # Times in the fixed form compare as text; others are parsed.
                if (entry.stamp < (self.since_stamp or b"")) if fixed else (parse_time(entry.stamp) < self.since):
                    continue
            if self.timestamps:
                out.append((entry.stamp if fixed else format_time(parse_time(entry.stamp))) + b" " + entry.text)
            else:
                out.append(entry.text)
        data = b"".join(out)
        if self.remaining is not None:
            data = data[: max(self.remaining, 0)]
            self.remaining -= len(data)
        return data


def read(data: bytes, *, tail: int | None = None, since: int | None = None, timestamps: bool = False,
         limit: int | None = None) -> bytes:
    """A whole log file as ReadLogs serves it: the last `tail` lines, then `since`, then the
    time prefixes, then `limit` bytes."""
    return Reader(since=since, timestamps=timestamps, limit=limit).render(tail_lines(split_lines(data), tail))


def text_of(data: bytes, cut: bool = False) -> bytes:
    """What the container printed, from some records (no times, no tags); with `cut` the data
    starts inside the file and its first, possibly incomplete, line is left out."""
    lines = split_lines(data)
    if cut and lines:
        lines = lines[1:]
    return b"".join(parse_line(line).text for line in lines)
