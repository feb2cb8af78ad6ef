"""State that survives a restart: a JSON snapshot plus an append-only log of the changes since.

Under `<state_dir>/apiserver/`:
- `objects.json`: every object and the resourceVersion counter, written to a temporary file,
  flushed to disk and renamed over the old one (atomic: a crash leaves the old or the new);
- `changes.jsonl`: one line per change after the snapshot (`{"rv", "key", "object"}`, or
  `"deleted"` with namespace and name), appended in batches on the event loop.

A change costs a line, not a snapshot, so writes stay proportional to what changed. When the
log outgrows the snapshot, a new snapshot is taken (encoded in a thread: stored objects are
never mutated) while new changes go to `changes.next.jsonl`; once the snapshot is in place the
next log takes over. Loading replays the snapshot, then both logs, skipping entries the snapshot
already holds and a torn last line. `stop()` leaves just the snapshot.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any, Iterator

from pinery.local.apiserver.store import Store
from pinery.local.apiserver.watch_cache import WatchEvent

FORMAT = 1
Objects = list[tuple[tuple[str, str], dict[str, Any]]]


def snapshot_path(state_dir: Path) -> Path:
    return Path(state_dir) / "apiserver" / "objects.json"


def _log_paths(snapshot: Path) -> tuple[Path, Path]:
    return snapshot.with_name("changes.jsonl"), snapshot.with_name("changes.next.jsonl")


def _entries(path: Path) -> Iterator[dict[str, Any]]:
    if not path.exists():
        return
    with open(path, "rb") as fh:
        for line in fh:
            try:
                yield json.loads(line)
            except ValueError:
                return  # a torn last line: the change never completed


def load(path: Path) -> tuple[int, Objects]:
    """(resourceVersion, [(storage key, object)]) from the snapshot and the logs after it."""
    rv = 0
    objects: dict[tuple[tuple[str, str], str, str], dict[str, Any]] = {}
    if path.exists():
        data = json.loads(path.read_text())
        if data.get("format") != FORMAT:
            raise ValueError(f"{path}: unknown snapshot format {data.get('format')!r}")
        rv = int(data["resourceVersion"])
        for entry in data.get("resources", []):
            key = (entry["group"], entry["resource"])
            for obj in entry["items"]:
                m = obj["metadata"]
                objects[(key, m.get("namespace") or "", m["name"])] = obj
    snapshot_rv = rv
    for log in _log_paths(path):
        for entry in _entries(log):
            if entry["rv"] <= snapshot_rv:
                continue
            key = (entry["key"][0], entry["key"][1])
            if "deleted" in entry:
                ns, name = entry["deleted"]
                objects.pop((key, ns, name), None)
            else:
                m = entry["object"]["metadata"]
                objects[(key, m.get("namespace") or "", m["name"])] = entry["object"]
            rv = max(rv, entry["rv"])
    return rv, [(where[0], obj) for where, obj in objects.items()]


def write_snapshot(path: Path, rv: int, objects: Objects) -> int:
    """Write the snapshot atomically; returns its size in bytes."""
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
    return path.stat().st_size


def change_line(event: WatchEvent) -> bytes:
    entry: dict[str, Any] = {"rv": event.rv, "key": list(event.key)}
    if event.type == "DELETED":
        m = event.obj["metadata"]
        entry["deleted"] = [m.get("namespace") or "", m["name"]]
    else:
        entry["object"] = event.obj
    return json.dumps(entry, separators=(",", ":")).encode() + b"\n"


class Persistence:
    def __init__(self, path: Path, store: Store, delay: float = 0.02, min_log_bytes: int = 1 << 20) -> None:
        self.path = path
        self.store = store
        self.delay = delay
        self.min_log_bytes = min_log_bytes
        self.log, self.next_log = _log_paths(path)
        self._pending: list[bytes] = []
        self._handle: asyncio.TimerHandle | None = None
        self._log_bytes = self.log.stat().st_size if self.log.exists() else 0
        self._snapshot_bytes = path.stat().st_size if path.exists() else 0
        self._compacting: asyncio.Task | None = None
        store.hub.listeners.append(self._record)

    def _record(self, event: WatchEvent) -> None:
        self._pending.append(change_line(event))
        if self._handle is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self._append()  # no loop (start-up): write at once
                return
            self._handle = loop.call_later(self.delay, self._append)

    def _append(self) -> None:
        self._handle = None
        if not self._pending:
            return
        data = b"".join(self._pending)
        self._pending.clear()
        target = self.next_log if self._compacting is not None else self.log
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "ab") as fh:
            fh.write(data)
        if self._compacting is None:
            self._log_bytes += len(data)
            if self._log_bytes > max(self.min_log_bytes, self._snapshot_bytes):
                try:
                    loop = asyncio.get_running_loop()
                except RuntimeError:
                    return  # compacted by the next write on the loop, or by flush()
                self._compacting = loop.create_task(self._compact())

    async def _compact(self) -> None:
        """Snapshot the store now; changes from here on go to the next log meanwhile."""
        try:
            rv, objects = self.store.rv, self.store.snapshot()
            size = await asyncio.get_running_loop().run_in_executor(None, write_snapshot, self.path, rv, objects)
            self._snapshot_bytes = size
            if self.next_log.exists():
                os.replace(self.next_log, self.log)
                self._log_bytes = self.log.stat().st_size
            else:
                self.log.unlink(missing_ok=True)
                self._log_bytes = 0
        finally:
            self._compacting = None

    async def flush(self) -> None:
        """Write everything now and leave a single snapshot (start-up and shutdown)."""
        if self._handle is not None:
            self._handle.cancel()
        self._append()
        if self._compacting is not None:
            await self._compacting
        self._append()
        self._snapshot_bytes = write_snapshot(self.path, self.store.rv, self.store.snapshot())
        for log in (self.log, self.next_log):
            log.unlink(missing_ok=True)
        self._log_bytes = 0
