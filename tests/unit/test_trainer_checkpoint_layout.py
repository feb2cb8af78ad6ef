"""Which checkpoints are complete, which one to resume from, which ones rotation deletes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pinery_trainer.checkpoint_layout import (
    MARKER,
    Entry,
    build_manifest,
    inspect,
    remove,
    resume_candidates,
    scan,
    step_dir,
    to_delete,
    write_marker,
)


def make(root, step, *, marker=True, files=None):
    path = step_dir(root, step)
    path.mkdir(parents=True)
    for name, data in (files or {".metadata": b"m" * 10, "__0_0.distcp": b"x" * 100}).items():
        (path / name).write_bytes(data)
    if marker:
        write_marker(path, build_manifest(path, step, {"worldSize": 2}))
    return path


def test_step_directories_sort_numerically_and_other_entries_are_ignored(tmp_path):
    for step in (100, 20, 3):
        make(tmp_path, step)
    (tmp_path / "step-abc").mkdir()
    (tmp_path / "notes.txt").write_text("hi")
    (tmp_path / "step-00000007").write_text("a file, not a directory")
    assert [e.step for e in scan(tmp_path)] == [3, 20, 100]
    assert step_dir(tmp_path, 20).name == "step-00000020"
    assert scan(tmp_path / "missing") == []


def test_the_manifest_lists_every_file_but_itself(tmp_path):
    path = make(tmp_path, 5)
    manifest = json.loads((path / MARKER).read_text())
    assert manifest == {
        "format": "pinery-checkpoint/1", "step": 5, "worldSize": 2,
        "files": {".metadata": 10, "__0_0.distcp": 100},
    }
    assert inspect(path, 5).usable
    assert not list(path.glob(".*.tmp"))


@pytest.mark.parametrize(
    "damage, words",
    [
        (lambda p: (p / MARKER).unlink(), "incomplete: no complete.json"),
        (lambda p: (p / MARKER).write_text("{not json"), "unreadable complete.json"),
        (lambda p: (p / MARKER).write_text('{"format": "other"}'), "not a pinery-checkpoint/1 manifest"),
        (lambda p: (p / "__0_0.distcp").unlink(), "__0_0.distcp is missing"),
        (lambda p: (p / "__0_0.distcp").write_bytes(b"x" * 99), "__0_0.distcp has 99 bytes, 100 expected"),
        (lambda p: _edit(p, step=6), "complete.json is for step 6, not 5"),
        (lambda p: _edit(p, files={"__0_0.distcp": 100}), "lists no .metadata file"),
    ],
)
def test_damaged_checkpoints_are_unusable_with_a_reason(tmp_path, damage, words):
    path = make(tmp_path, 5)
    damage(path)
    entry = inspect(path, 5)
    assert not entry.usable and words in entry.problem


def _edit(path, **changes):
    manifest = json.loads((path / MARKER).read_text())
    manifest.update(changes)
    (path / MARKER).write_text(json.dumps(manifest))


def E(step, usable=True):
    return Entry(step, step_dir(Path("/c"), step), None if usable else "broken")


def test_resume_tries_usable_checkpoints_newest_first():
    entries = [E(10), E(20), E(30, usable=False), E(5)]
    assert [e.step for e in resume_candidates(entries)] == [20, 10, 5]
    assert resume_candidates([E(1, usable=False)]) == []


@pytest.mark.parametrize(
    "entries, keep, deleted",
    [
        ([E(10), E(20), E(30)], 3, []),
        ([E(10), E(20), E(30), E(40)], 3, [10]),
        ([E(10), E(20), E(30)], 1, [10, 20]),
        # Unusable leftovers older than the newest usable checkpoint go; newer ones stay.
        ([E(10), E(15, usable=False), E(20), E(25, usable=False)], 2, [15]),
        ([E(5, usable=False), E(10)], 1, [5]),
        # Without any usable checkpoint nothing is deleted.
        ([E(5, usable=False), E(6, usable=False)], 1, []),
    ],
)
def test_rotation(entries, keep, deleted):
    assert [e.step for e in to_delete(entries, keep)] == deleted


def test_remove_deletes_the_marker_and_the_directory(tmp_path):
    path = make(tmp_path, 3)
    remove(inspect(path, 3))
    assert not path.exists()
