"""State that survives a restart: an atomic JSON snapshot of every object and the
resourceVersion counter, at `<state_dir>/apiserver/objects.json`.

Writes are debounced (a burst of changes is one write) and done off the event loop: the store
never mutates stored objects, so the snapshot can be encoded in a thread while the loop goes on.
A snapshot is written to a temporary file, flushed to disk and renamed over the old one, so a
crash leaves either the old or the new state, never a torn file. `stop()` writes the last one.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from pinery.local.apiserver.store import Store

FORMAT = 1


def snapshot_path(state_dir: Path) -> Path:
    return Path(state_dir) / "apiserver" / "objects.json"


def load(path: Path) -> tuple[int, list[tuple[tuple[str, str], dict[str, Any]]]]:
    """(resourceVersion, [(storage key, object)]) from a snapshot; (0, []) when there is none."""
    if not path.exists():
        return 0, []
    data = json.loads(path.read_text())
    if data.get("format") != FORMAT:
        raise ValueError(f"{path}: unknown snapshot format {data.get('format')!r}")
    objects = []
    for entry in data.get("resources", []):
        key = (entry["group"], entry["resource"])
        objects.extend((key, obj) for obj in entry["items"])
    return int(data["resourceVersion"]), objects


def write(path: Path, rv: int, objects: list[tuple[tuple[str, str], dict[str, Any]]]) -> None:
    by_key: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for key, obj in objects:
        by_key.setdefault(key, []).append(obj)
    data = {
        "format": FORMAT,
        "resourceVersion": str(rv),
        "resources": [{"group": g, "resource": r, "items": items} for (g, r), items in sorted(by_key.items())],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as fh:
        json.dump(data, fh, separators=(",", ":"))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


class Persistence:
    def __init__(self, path: Path, store: Store, delay: float = 0.05) -> None:
        self.path = path
        self.store = store
        self.delay = delay
        self._dirty = False
        self._handle: asyncio.TimerHandle | None = None
        self._writing: asyncio.Task | None = None
        self._written_rv = store.rv
        store.hub.listeners.append(lambda _event: self.mark())

    def mark(self) -> None:
        self._dirty = True
        if self._handle is None and self._writing is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return
            self._handle = loop.call_later(self.delay, self._start_write)

    def _start_write(self) -> None:
        self._handle = None
        self._writing = asyncio.get_running_loop().create_task(self._write())

    async def _write(self) -> None:
        try:
            while self._dirty:
                self._dirty = False
                rv, objects = self.store.rv, self.store.snapshot()
                await asyncio.get_running_loop().run_in_executor(None, write, self.path, rv, objects)
                self._written_rv = rv
        finally:
            self._writing = None

    async def flush(self) -> None:
        """Write now if anything changed since the last write (and wait for it)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if self._writing is not None:
            await self._writing
        if self._dirty or self._written_rv != self.store.rv or not self.path.exists():
            self._dirty = True
            self._writing = asyncio.get_running_loop().create_task(self._write())
            await self._writing
