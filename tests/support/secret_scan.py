"""No Pinecone API key in anything a test captured: a pytest plugin, active in every suite.

After each test phase, the output pytest captured (stdout, stderr, log records) is searched for
API keys: those shaped like the keys the tests and local mode use (`pclocal-...`), those shaped
like real Pinecone keys (`pcsk_...`), and any registered with `register_secret`. At each test's
teardown, the *.log files under its `tmp_path` (what its subprocesses wrote) are searched too, and
so are the files and directories registered with `watch` (a local mode shared by a module), from
where the last search stopped. A test whose output holds a key fails, with the place shown and
the key masked; a test that failed anyway keeps its own failure. tests/conftest.py loads the hook.

It is cheap: one regular-expression search over each captured text, and lines are only looked
at when that search finds something.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterable

import pytest

MASK = "<API-KEY>"
# The keys every suite uses (TEST_API_KEY, the VectorIndex tests' keys, local mode's generated
# `pclocal-` + 32 hex digits) and keys shaped like Pinecone's own.
KEY_SHAPES = (r"pclocal-[A-Za-z0-9-]{4,}", r"pcsk_[A-Za-z0-9_]{8,}")

_extra: set[str] = set()
_pattern = re.compile("|".join(KEY_SHAPES))
# Watched file or directory -> {file: bytes already searched}.
_watched: dict[Path, dict[Path, int]] = {}
_closing: set[Path] = set()


def register_secret(value: str) -> None:
    """Also look for `value` (a key of another shape that a test made up), from now on."""
    global _pattern
    if value and value not in _extra:
        _extra.add(value)
        _pattern = re.compile("|".join([*KEY_SHAPES, *map(re.escape, sorted(_extra, key=len, reverse=True))]))


def watch(path: Path) -> None:
    """Search this file, or every *.log file under this directory, at each test's teardown until
    `unwatch`; only what was written since the last search is read."""
    _watched.setdefault(Path(path), {})


def unwatch(path: Path) -> None:
    """Stop watching after one last search (at the teardown of the test under way)."""
    _closing.add(Path(path))


def leaks(text: str, secrets: Iterable[str] = ()) -> list[str]:
    """Each line of `text` that shows a key (one of `secrets`, or one the scan knows), masked."""
    pattern = _pattern
    if secrets:
        pattern = re.compile("|".join([pattern.pattern, *map(re.escape, sorted(secrets, key=len, reverse=True))]))
    if not pattern.search(text):
        return []
    return [pattern.sub(MASK, line).strip()[:300] for line in text.splitlines() if pattern.search(line)]


def _logs_under(root: Path) -> list[Path]:
    """The *.log files at or under `root`. A directory removed while it is listed (a finished
    pod's, say) is skipped: os.walk ignores it, where Path.rglob raised and stopped the run."""
    if root.is_file():
        return [root]
    found = [Path(folder) / name for folder, _dirs, names in os.walk(root) for name in names if name.endswith(".log")]
    return sorted(found)


def _new_text(root: Path, offsets: dict[Path, int]) -> Iterable[tuple[str, str]]:
    files = _logs_under(root)
    for path in files:
        start = offsets.get(path, 0)
        try:
            size = path.stat().st_size
            if size < start:  # rotated or truncated: read it afresh
                start = 0
            if size == start:
                continue
            with open(path, "rb") as f:
                f.seek(start)
                data = f.read(size - start)
        except OSError:
            continue
        offsets[path] = start + len(data)
        yield f"file {path}", data.decode(errors="replace")


def _captured(item: pytest.Item, report: pytest.TestReport) -> Iterable[tuple[str, str]]:
    """What this phase captured (a report also carries the sections of earlier phases)."""
    yield from ((title, text) for title, text in report.sections if title.endswith(f" {report.when}"))
    if report.when == "teardown":
        tmp_path = (getattr(item, "funcargs", None) or {}).get("tmp_path")
        if isinstance(tmp_path, Path):
            yield from _new_text(tmp_path, {})
        for root, offsets in list(_watched.items()):
            yield from _new_text(root, offsets)
        for root in _closing:
            _watched.pop(root, None)
        _closing.clear()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    found = [(where, line) for where, text in _captured(item, report) for line in leaks(text)]
    if found:  # the report shows what was captured: never the key itself
        report.sections = [(title, _pattern.sub(MASK, text)) for title, text in report.sections]
    if found and not report.failed:
        shown = "\n".join(f"  {where}: {line}" for where, line in found[:20])
        report.outcome = "failed"
        report.longrepr = f"a Pinecone API key appears in what this test captured ({len(found)} lines):\n{shown}"
