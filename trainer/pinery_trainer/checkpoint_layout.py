"""The checkpoint directory: which checkpoints are complete, which to resume from, which to delete.

Layout: `<dir>/step-00000120/` holds one torch.distributed.checkpoint (a `.metadata` file and
one `.distcp` file per rank). Rank 0 writes `complete.json` into it last, listing every file and
its size; a checkpoint without it, or whose files no longer match it, is never loaded.
Torch-free: only the file system.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

MARKER = "complete.json"
FORMAT = "pinery-checkpoint/1"
_STEP_DIR = re.compile(r"^step-(\d{8,})$")


def step_dir(root: Path, step: int) -> Path:
    return root / f"step-{step:08d}"


@dataclass(frozen=True)
class Entry:
    step: int
    path: Path
    # None when the checkpoint is complete and intact; else why it is skipped.
    problem: Optional[str] = None
    manifest: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def usable(self) -> bool:
        return self.problem is None


def scan(root: Path) -> list[Entry]:
    """Every step directory under root, oldest first, each checked against its marker."""
    if not root.is_dir():
        return []
    entries = []
    for child in root.iterdir():
        match = _STEP_DIR.match(child.name)
        if match and child.is_dir():
            entries.append(inspect(child, int(match.group(1))))
    return sorted(entries, key=lambda e: e.step)


def inspect(path: Path, step: int) -> Entry:
    marker = path / MARKER
    if not marker.is_file():
        return Entry(step, path, "incomplete: no complete.json")
    try:
        manifest = json.loads(marker.read_text())
    except (OSError, ValueError) as e:
        return Entry(step, path, f"unreadable complete.json: {e}")
    problem = manifest_problem(manifest, step, path)
    return Entry(step, path, problem, manifest if problem is None else {})


def manifest_problem(manifest: Any, step: int, path: Path) -> Optional[str]:
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        return f"complete.json is not a {FORMAT} manifest"
    if manifest.get("step") != step:
        return f"complete.json is for step {manifest.get('step')}, not {step}"
    files = manifest.get("files")
    if not isinstance(files, dict) or ".metadata" not in files:
        return "complete.json lists no .metadata file"
    for name, size in sorted(files.items()):
        try:
            actual = (path / name).stat().st_size
        except OSError:
            return f"{name} is missing"
        if actual != size:
            return f"{name} has {actual} bytes, {size} expected"
    return None


def resume_candidates(entries: Sequence[Entry]) -> list[Entry]:
    """Usable checkpoints, newest first: the trainer tries them in this order."""
    return sorted((e for e in entries if e.usable), key=lambda e: e.step, reverse=True)


def to_delete(entries: Sequence[Entry], keep: int) -> list[Entry]:
    """Rotation: all but the `keep` newest usable checkpoints, and unusable ones older than them.

    Unusable directories newer than the newest usable one are left alone: they are evidence of
    a failure and are replaced when training reaches that step again.
    """
    usable = resume_candidates(entries)
    if not usable:
        return []
    newest = usable[0].step
    doomed = usable[keep:] + [e for e in entries if not e.usable and e.step < newest]
    return sorted(doomed, key=lambda e: e.step)


def build_manifest(path: Path, step: int, extra: dict[str, Any]) -> dict[str, Any]:
    files = {p.name: p.stat().st_size for p in sorted(path.iterdir()) if p.is_file() and p.name != MARKER}
    return {"format": FORMAT, "step": step, **extra, "files": files}


def write_marker(path: Path, manifest: dict[str, Any]) -> None:
    """Write complete.json durably and atomically: after it, the checkpoint exists."""
    tmp = path / f".{MARKER}.tmp"
    with tmp.open("w") as out:
        json.dump(manifest, out, indent=2, sort_keys=True)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path / MARKER)
    fsync_dir(path)


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove(entry: Entry) -> None:
    # The marker goes first, so a half-deleted checkpoint is never taken for a complete one.
    (entry.path / MARKER).unlink(missing_ok=True)
    shutil.rmtree(entry.path, ignore_errors=True)
