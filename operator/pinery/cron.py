"""Cron schedules read exactly as Kubernetes CronJob reads `spec.schedule` and `spec.timeZone`.

Kubernetes parses a schedule with github.com/robfig/cron/v3 `ParseStandard` and finds its next
time with `SpecSchedule.Next` (pkg/controller/cronjob/cronjob_controllerv2.go syncCronJob); the API
server refuses `TZ=`/`CRON_TZ=` in the schedule and unknown zones (pkg/apis/batch/validation/
validation.go validateScheduleFormat, validateTimeZone). This module follows those functions, quirks
included:

- five fields, minute hour day-of-month month day-of-week; `*` and `?` in any field; lists `a,b`;
  ranges `a-b`; steps `*/n`, `a-b/n` and `a/n` (= a to the field's maximum, step n); JAN-DEC and
  SUN-SAT in any case; day-of-week 0-6 (7 is refused, as robfig refuses it);
- the descriptors @yearly @annually @monthly @weekly @daily @midnight @hourly, and `@every <Go
  duration>`, which ParseStandard accepts and Kubernetes does not refuse;
- day-of-month and day-of-week: both must match when either was written with a star, else either;
- `next_after`: the first matching time strictly after t, stepping the wall clock of the zone the
  way robfig does: a time that a spring-forward skips does not run that day, a time that a
  fall-back repeats runs twice; nothing within five years gives None. Where a DST change is not a
  whole hour at the top of an hour (Lord Howe, Chatham) or happens at midnight (Sao Paulo until
  2019, Cairo), robfig's stepping skips or adds some times, and so does this.

Time zones: an absent or empty `timeZone` means UTC in pinery. Kubernetes uses the
kube-controller-manager's local zone there; an operator pod's local zone is arbitrary, so pinery
does not.

Pure: no clock, no I/O; datetimes in must be timezone-aware, datetimes out are in UTC.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import Mapping, Optional
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

# robfig parser.go/spec.go starBit: set when a field was written `*` or `?` (not with a step > 1).
STAR_BIT = 1 << 63

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
_DAY = 86400

_MONTHS = {name: i + 1 for i, name in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())}
_WEEKDAYS = {name: i for i, name in enumerate("sun mon tue wed thu fri sat".split())}

# robfig spec.go: the bounds of each field (name, min, max, names).
_FIELDS: tuple[tuple[str, int, int, Optional[Mapping[str, int]]], ...] = (
    ("minute", 0, 59, None),
    ("hour", 0, 23, None),
    ("day-of-month", 1, 31, None),
    ("month", 1, 12, _MONTHS),
    ("day-of-week", 0, 6, _WEEKDAYS),
)

# Go's strings.Fields splits on unicode.IsSpace, a narrower set than Python's str.split().
_GO_SPACE = re.compile("[\t\n\v\f\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+")
# strconv.Atoi: an optional sign and ASCII digits only.
_GO_INT = re.compile(r"[+-]?[0-9]+")
# validation.go validTimeZoneCharacters, applied to each '/'-separated part of a zone name.
_TZ_PART = re.compile(r"[A-Za-z.\-_0-9+]{1,14}")

_TZ_IN_SCHEDULE = "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"


def _bits(low: int, high: int, step: int = 1) -> int:
    """robfig parser.go getBits: the bits low..high, every step-th."""
    out = 0
    for i in range(low, high + 1, step):
        out |= 1 << i
    return out


def _all(low: int, high: int) -> int:
    """robfig parser.go all: every value of a field, plus the star bit."""
    return _bits(low, high) | STAR_BIT


def _atoi(text: str) -> int:
    """robfig parser.go mustParseInt: strconv.Atoi, then negative numbers refused."""
    if not _GO_INT.fullmatch(text):
        raise ValueError(f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": invalid syntax')
    num = int(text)
    if not -(1 << 63) <= num < 1 << 63:
        raise ValueError(f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": value out of range')
    if num < 0:
        raise ValueError(f"negative number ({num}) not allowed: {text}")
    return num


def _int_or_name(text: str, names: Optional[Mapping[str, int]]) -> int:
    """robfig parser.go parseIntOrName: a name (any case) of the field, else a number."""
    if names is not None and text.lower() in names:
        return names[text.lower()]
    return _atoi(text)


def _range(expr: str, low: int, high: int, names: Optional[Mapping[str, int]]) -> int:
    """robfig parser.go getRange: `*`, `?`, `n`, `a-b`, each with an optional `/step`."""
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    single = len(low_and_high) == 1
    extra = 0
    if low_and_high[0] in ("*", "?"):
        # robfig reads nothing after the star: "*-5" is "*".
        start, end, extra = low, high, STAR_BIT
    else:
        start = _int_or_name(low_and_high[0], names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _int_or_name(low_and_high[1], names)
        else:
            raise ValueError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _atoi(range_and_step[1])
        if single:
            end = high  # "N/step" means "N-max/step"
        if step > 1:
            extra = 0
    else:
        raise ValueError(f"too many slashes: {expr}")
    if start < low:
        raise ValueError(f"beginning of range ({start}) below minimum ({low}): {expr}")
    if end > high:
        raise ValueError(f"end of range ({end}) above maximum ({high}): {expr}")
    if start > end:
        raise ValueError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise ValueError(f"step of range should be a positive number: {expr}")
    return _bits(start, end, step) | extra


def parse_field(text: str, low: int, high: int, names: Optional[Mapping[str, int]] = None) -> int:
    """robfig parser.go getField: the bits of a comma-separated list of ranges (empty items are
    dropped, as strings.FieldsFunc drops them), with STAR_BIT when one was a star."""
    out = 0
    for expr in (part for part in text.split(",") if part):
        out |= _range(expr, low, high, names)
    return out


_UNITS_NS = {"ns": 1, "us": 1_000, "\u00b5s": 1_000, "\u03bcs": 1_000, "ms": 1_000_000,
             "s": 1_000_000_000, "m": 60_000_000_000, "h": 3_600_000_000_000}
_DAY_NS = 24 * _UNITS_NS["h"]
_MAX_NS = 1 << 63


def parse_go_duration(text: str, *, days: bool = False) -> int:
    """Go's time.ParseDuration (src/time/format.go), in nanoseconds: `[-+]?([0-9]*(\\.[0-9]*)?[a-z]+)+`
    with units ns us µs ms s m h, or "0". `days=True` adds the unit `d` (24h), which Go lacks."""
    invalid = ValueError(f'time: invalid duration "{text}"')
    s = text
    neg = False
    if s and s[0] in "+-":
        neg, s = s[0] == "-", s[1:]
    if s == "0":
        return 0
    if not s:
        raise invalid
    total = 0
    while s:
        if not (s[0] == "." or "0" <= s[0] <= "9"):
            raise invalid
        i = 0
        whole = 0
        while i < len(s) and "0" <= s[i] <= "9":
            # format.go leadingInt: overflow is an invalid duration
            if whole > _MAX_NS // 10:
                raise invalid
            whole = whole * 10 + int(s[i])
            if whole > _MAX_NS:
                raise invalid
            i += 1
        pre = i > 0
        s = s[i:]
        frac, scale, post = 0, 1.0, False
        if s and s[0] == ".":
            s = s[1:]
            i, overflow = 0, False
            while i < len(s) and "0" <= s[i] <= "9":
                # format.go leadingFraction: digits past int64 precision are read and ignored
                if not overflow:
                    nxt = frac * 10 + int(s[i])
                    if frac > (_MAX_NS - 1) // 10 or nxt > _MAX_NS:
                        overflow = True
                    else:
                        frac, scale = nxt, scale * 10
                i += 1
            post = i > 0
            s = s[i:]
        if not pre and not post:
            raise invalid
        i = 0
        while i < len(s) and not (s[i] == "." or "0" <= s[i] <= "9"):
            i += 1
        if i == 0:
            raise ValueError(f'time: missing unit in duration "{text}"')
        unit_name, s = s[:i], s[i:]
        unit = _DAY_NS if days and unit_name == "d" else _UNITS_NS.get(unit_name)
        if unit is None:
            raise ValueError(f'time: unknown unit "{unit_name}" in duration "{text}"')
        if whole > _MAX_NS // unit:
            raise invalid
        value = whole * unit
        if frac > 0:
            value += int(float(frac) * (float(unit) / scale))
            if value > _MAX_NS:
                raise invalid
        total += value
        if total > _MAX_NS:
            raise invalid
    if neg:
        return -total
    if total > _MAX_NS - 1:
        raise invalid
    return total


def check_time_zone(name: Optional[str]) -> ZoneInfo:
    """validation.go validateTimeZone: an IANA zone name. Absent or empty means UTC in pinery
    (Kubernetes refuses "" and uses the controller manager's local zone for an absent one)."""
    if not name:
        return ZoneInfo("UTC")
    for part in name.split("/"):
        if part in (".", "..") or part.startswith("-") or not _TZ_PART.fullmatch(part):
            raise ValueError(f"unknown time zone {name}")
    if name.lower() == "local":
        raise ValueError("timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(f"unknown time zone {name}") from None


def _seconds(t: datetime, what: str) -> int:
    """Whole seconds since the epoch, rounded down (robfig drops the nanoseconds the same way)."""
    if t.tzinfo is None or t.utcoffset() is None:
        raise ValueError(f"{what} must be a timezone-aware datetime, got {t!r}")
    return (t - _EPOCH) // timedelta(seconds=1)


def _utc(ts: int) -> datetime:
    return _EPOCH + timedelta(seconds=ts)


def _local(ts: int, tz: ZoneInfo) -> datetime:
    return datetime.fromtimestamp(ts, tz)


def _offset(ts: int, tz: ZoneInfo) -> int:
    off = _local(ts, tz).utcoffset()
    assert off is not None
    return int(off.total_seconds())


def _go_date(year: int, month: int, day: int, hour: int, minute: int, second: int, tz: ZoneInfo) -> int:
    """Go's time.Date (src/time/time.go Date): months and days past their range carry over; a wall
    time that a DST change skips or repeats gets the offset found at the wall time read as UTC,
    looked up again at the instant that gives when that lands in another zone period."""
    carry, month0 = divmod(month - 1, 12)
    ordinal = date(year + carry, month0 + 1, 1).toordinal() + day - 1
    wall = (ordinal - _EPOCH_ORDINAL) * _DAY + hour * 3600 + minute * 60 + second
    return wall - _offset(wall - _offset(wall, tz), tz)


def _add_date(ts: int, tz: ZoneInfo, months: int = 0, days: int = 0) -> int:
    """Go's Time.AddDate: time.Date on the wall clock with the months and days added."""
    t = _local(ts, tz)
    return _go_date(t.year, t.month + months, t.day + days, t.hour, t.minute, t.second, tz)


def _weekday(t: datetime) -> int:
    return t.isoweekday() % 7  # Go's time.Weekday: Sunday is 0


@dataclass(frozen=True)
class CronSchedule:
    """A parsed schedule: the bits of each field (robfig spec.go SpecSchedule, its seconds always
    0), or for `@every` the delay (robfig constantdelay.go ConstantDelaySchedule)."""

    minute: int
    hour: int
    dom: int
    month: int
    dow: int
    every: Optional[timedelta] = None

    def next_after(self, t: datetime, tz: ZoneInfo) -> Optional[datetime]:
        """The first time strictly after t when the schedule runs, in UTC; None when it runs
        nowhere in the next five years (robfig spec.go SpecSchedule.Next)."""
        ts = _seconds(t, "t")
        nxt = self._next(ts, tz)
        return None if nxt is None else _utc(nxt)

    def latest_between(self, after: datetime, until: datetime, tz: ZoneInfo) -> Optional[datetime]:
        """The last time in (after, until] when the schedule runs, in UTC, or None: found by
        bisection over next_after, so a few dozen steps however long the interval. `@every` has
        no calendar: its times are counted from `after` (constantdelay.go Next)."""
        a, b = _seconds(after, "after"), _seconds(until, "until")
        if self.every is not None:
            delay = self._delay()
            k = (b - a) // delay
            return _utc(a + k * delay) if k >= 1 else None
        found = self._latest(a, b, tz)
        return None if found is None else _utc(found)

    def count_between(self, after: datetime, until: datetime, tz: ZoneInfo) -> int:
        """How many times in (after, until] the schedule runs, from the calendar: each matching
        wall-clock minute once per instant that shows it (a time a fall-back repeats counts
        twice, one a spring-forward skips not at all), a day at a time. robfig's Next agrees
        except around DST changes that are not whole hours at the top of an hour, or happen at
        midnight, where it skips or adds some times. `@every` is counted from `after`."""
        a, b = _seconds(after, "after"), _seconds(until, "until")
        if b <= a:
            return 0
        if self.every is not None:
            return (b - a) // self._delay()
        return sum(self._count_wall(lo + off, hi + off) for lo, hi, off in _segments(a, b, tz))

    def _delay(self) -> int:
        # constantdelay.go Every: at least a second, whole seconds only.
        assert self.every is not None
        return max(1, int(self.every.total_seconds()))

    def _never(self) -> bool:
        """A field with no value can never match: robfig would search five years and give up."""
        values = ~STAR_BIT
        if not (self.minute & values and self.hour & values and self.month & values):
            return True
        dom, dow = self.dom & values, self.dow & values
        if (self.dom | self.dow) & STAR_BIT:
            return not (dom and dow)
        return not (dom or dow)

    def _day_matches(self, day: int, weekday: int) -> bool:
        """robfig spec.go dayMatches: AND when either field has the star bit, else OR."""
        dom_match = bool(1 << day & self.dom)
        dow_match = bool(1 << weekday & self.dow)
        if (self.dom | self.dow) & STAR_BIT:
            return dom_match and dow_match
        return dom_match or dow_match

    def _next(self, start: int, tz: ZoneInfo) -> Optional[int]:
        if self.every is not None:
            return start + self._delay()  # constantdelay.go Next, from the whole second
        if self._never():
            return None
        # spec.go Next: start at the upcoming second; give up past five years from there.
        t = start + 1
        added = False
        year_limit = _local(t, tz).year + 5
        while True:  # spec.go's WRAP label
            now = _local(t, tz)
            if now.year > year_limit:
                return None
            # The month: on a change, from the 1st at midnight, a month at a time.
            wrapped = False
            while not 1 << now.month & self.month:
                if not added:
                    added = True
                    t = _go_date(now.year, now.month, 1, 0, 0, 0, tz)
                t = _add_date(t, tz, months=1)
                now = _local(t, tz)
                if now.month == 1:
                    wrapped = True
                    break
            if wrapped:
                continue
            # The day: from midnight, a day at a time; a midnight moved by DST is put back to
            # midnight by adding or taking away the stray hours (robfig issue 157).
            while not self._day_matches(now.day, _weekday(now)):
                if not added:
                    added = True
                    t = _go_date(now.year, now.month, now.day, 0, 0, 0, tz)
                t = _add_date(t, tz, days=1)
                hour = _local(t, tz).hour
                if hour != 0:
                    t += (24 - hour) * 3600 if hour > 12 else -hour * 3600
                now = _local(t, tz)
                if now.day == 1:
                    wrapped = True
                    break
            if wrapped:
                continue
            # The hour, in elapsed hours: a wall hour skipped by DST never matches, a repeated
            # one matches twice.
            while not 1 << now.hour & self.hour:
                if not added:
                    added = True
                    t = _go_date(now.year, now.month, now.day, now.hour, 0, 0, tz)
                t += 3600
                now = _local(t, tz)
                if now.hour == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not 1 << now.minute & self.minute:
                if not added:
                    added = True
                    t -= t % 60  # Go's Time.Truncate(time.Minute), on the absolute time
                t += 60
                now = _local(t, tz)
                if now.minute == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            if now.second == 0:
                return t
            # The seconds field is "0": step to the next whole minute of the wall clock, then
            # check every field again. A minute jump gives the same answer as robfig's second by
            # second steps unless the offset changes on the way.
            added = True
            jump = t + 60 - now.second
            if _offset(jump, tz) == _offset(t, tz):
                t = jump
            else:
                t += 1
                while _local(t, tz).second != 0:
                    t += 1

    def _latest(self, a: int, b: int, tz: ZoneInfo) -> Optional[int]:
        """The last time in (a, b]: Next(p) <= b holds for every p before that time and for none
        after it, so widen a window back from b until it holds, then bisect."""
        if b <= a:
            return None

        def fires_by(p: int) -> bool:
            nxt = self._next(p, tz)
            return nxt is not None and nxt <= b

        span, bad = 60, b
        while True:
            p = max(a, b - span)
            if fires_by(p):
                good = p
                break
            if p == a:
                return None
            bad, span = p, span * 4
        while bad - good > 1:
            mid = (good + bad) // 2
            if fires_by(mid):
                good = mid
            else:
                bad = mid
        return self._next(good, tz)

    def _count_wall(self, w0: int, w1: int) -> int:
        """Matching wall-clock times in (w0, w1], both in seconds of a wall clock with no DST."""
        if self._never():
            return 0
        values = ~STAR_BIT
        hours = [h for h in range(24) if 1 << h & self.hour]
        minutes = self.minute & values
        per_day = len(hours) * minutes.bit_count()
        total = 0
        for day in range((w0 + 1) // _DAY, w1 // _DAY + 1):
            d = date.fromordinal(_EPOCH_ORDINAL + day)
            if not (1 << d.month & self.month and self._day_matches(d.day, (day + 4) % 7)):
                continue  # 1970-01-01 was a Thursday (4)
            lo, hi = w0 - day * _DAY, w1 - day * _DAY  # lo excluded, hi included
            if lo < 0 and hi >= 23 * 3600 + 59 * 60:
                total += per_day
                continue
            for h in hours:
                first = max(0, (lo - h * 3600) // 60 + 1)
                last = min(59, (hi - h * 3600) // 60)
                if first <= last:
                    total += (minutes & _bits(first, last)).bit_count()
        return total


def _segments(a: int, b: int, tz: ZoneInfo) -> list[tuple[int, int, int]]:
    """(lo, hi, offset): (a, b] cut where the zone's UTC offset changes; (lo, hi] has that offset.
    The offset is sampled once a day and each change found by bisection: zones change at most
    once a day."""
    pieces = []
    lo, p = a, a + 1
    off = _offset(p, tz)
    while True:
        q = min(p + _DAY, b)
        if _offset(q, tz) != off:
            same, changed = p, q
            while changed - same > 1:
                mid = (same + changed) // 2
                if _offset(mid, tz) == off:
                    same = mid
                else:
                    changed = mid
            pieces.append((lo, changed - 1, off))
            lo, p, off = changed - 1, changed, _offset(changed, tz)
            continue
        if q == b:
            pieces.append((lo, b, off))
            return pieces
        p = q


def _descriptor(spec: str) -> CronSchedule:
    """robfig parser.go parseDescriptor."""
    _, hour, dom, month, dow = (_all(low, high) for _, low, high, _ in _FIELDS)
    if spec in ("@yearly", "@annually"):
        return CronSchedule(1, 1, 1 << 1, 1 << 1, dow)
    if spec == "@monthly":
        return CronSchedule(1, 1, 1 << 1, month, dow)
    if spec == "@weekly":
        return CronSchedule(1, 1, dom, month, 1 << 0)
    if spec in ("@daily", "@midnight"):
        return CronSchedule(1, 1, dom, month, dow)
    if spec == "@hourly":
        return CronSchedule(1, hour, dom, month, dow)
    if spec.startswith("@every "):
        try:
            ns = parse_go_duration(spec[len("@every "):])
        except ValueError as err:
            raise ValueError(f"failed to parse duration {spec}: {err}") from None
        # constantdelay.go Every: under a second counts as a second; fractions are dropped.
        return CronSchedule(0, 0, 0, 0, 0, every=timedelta(seconds=max(1, ns // 1_000_000_000)))
    raise ValueError(f"unrecognized descriptor: {spec}")


def parse(expr: str) -> CronSchedule:
    """A schedule as Kubernetes accepts it (robfig parser.go ParseStandard, plus validation.go
    validateScheduleFormat's refusal of TZ); ValueError names the schedule and the bad field."""
    # validation.go validateScheduleFormat: any "TZ" is refused on a new object.
    if "TZ" in expr:
        raise ValueError(f"schedule {expr!r}: {_TZ_IN_SCHEDULE}")
    if not expr:
        raise ValueError("schedule '': empty spec string")
    if expr.startswith("@"):
        try:
            return _descriptor(expr)
        except ValueError as err:
            raise ValueError(f"schedule {expr!r}: {err}") from None
    # parser.go normalizeFields: exactly five fields for the standard parser.
    fields = [f for f in _GO_SPACE.split(expr) if f]
    if len(fields) != 5:
        raise ValueError(f"schedule {expr!r}: expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    bits: list[int] = []
    for text, (name, low, high, names) in zip(fields, _FIELDS, strict=True):
        try:
            bits.append(parse_field(text, low, high, names))
        except ValueError as err:
            raise ValueError(f"schedule {expr!r}: {name} field {text!r}: {err}") from None
    minute, hour, dom, month, dow = bits
    return CronSchedule(minute, hour, dom, month, dow)
