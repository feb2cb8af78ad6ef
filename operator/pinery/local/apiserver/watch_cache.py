"""Watch fan-out and the bounded history that watches resume from.

Every committed change becomes a `WatchEvent` with the resourceVersion the change got. Each
storage key (group, plural) keeps the last `capacity` events; a watch resuming from a version
older than what that window still holds gets 410 Gone, as from a real API server whose watch
cache has moved on. Watchers are indexed by storage key, so an event only visits the watchers
of its own resource.

Objects held here are never mutated: every change stores a new dict.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from pinery.local.apiserver.selectors import FieldSelector, LabelSelector

StorageKey = tuple[str, str]


@dataclass
class WatchEvent:
    type: str  # ADDED, MODIFIED, DELETED
    rv: int
    key: StorageKey
    obj: dict[str, Any]
    old: dict[str, Any] | None = None  # the previous state of a MODIFIED object
    # Encoded forms, shared by the watchers that present the event the same way.
    encoded: dict[Any, bytes] = field(default_factory=dict, repr=False)


def _labels(obj: dict[str, Any] | None) -> dict[str, str]:
    return ((obj or {}).get("metadata") or {}).get("labels") or {}


@dataclass(eq=False)  # identity: watchers live in sets
class Watcher:
    key: StorageKey
    namespace: str | None
    labels: LabelSelector
    fields: FieldSelector
    kind: str
    queue: asyncio.Queue = field(default_factory=asyncio.Queue)
    closed: bool = False

    def _matches(self, obj: dict[str, Any] | None) -> bool:
        if obj is None:
            return False
        if self.namespace is not None and (obj.get("metadata") or {}).get("namespace") != self.namespace:
            return False
        return self.labels.matches(_labels(obj)) and self.fields.matches(obj, self.kind)

    def offer(self, event: WatchEvent) -> None:
        """Queue the event as this watcher sees it: an object that starts or stops matching the
        selectors is ADDED or DELETED for this watcher, as the API server's watch cache does."""
        now = self._matches(event.obj)
        if event.type != "MODIFIED":
            if now:
                self.queue.put_nowait((event.type, event))
            return
        before = self._matches(event.old)
        if now and before:
            self.queue.put_nowait(("MODIFIED", event))
        elif now:
            self.queue.put_nowait(("ADDED", event))
        elif before:
            self.queue.put_nowait(("DELETED", event))


class WatchHub:
    def __init__(self, start_rv: int, capacity: int = 10_000) -> None:
        self.capacity = capacity
        self._start_rv = start_rv
        self._history: dict[StorageKey, deque[WatchEvent]] = {}
        self._floor: dict[StorageKey, int] = {}
        self._watchers: dict[StorageKey, set[Watcher]] = {}
        self.listeners: list[Callable[[WatchEvent], None]] = []

    def publish(self, event: WatchEvent) -> None:
        history = self._history.get(event.key)
        if history is None:
            history = self._history[event.key] = deque()
        if len(history) >= self.capacity:
            self._floor[event.key] = history.popleft().rv
        history.append(event)
        for watcher in self._watchers.get(event.key, ()):
            watcher.offer(event)
        for listener in self.listeners:
            listener(event)

    def floor(self, key: StorageKey) -> int:
        """The oldest resourceVersion a watch of this resource can resume from."""
        return self._floor.get(key, self._start_rv)

    def since(self, key: StorageKey, rv: int) -> list[WatchEvent] | None:
        """Events after `rv`, oldest first; None when `rv` is older than the window."""
        if rv < self.floor(key):
            return None
        out = []
        for event in reversed(self._history.get(key, ())):
            if event.rv <= rv:
                break
            out.append(event)
        out.reverse()
        return out

    def add(self, watcher: Watcher) -> None:
        self._watchers.setdefault(watcher.key, set()).add(watcher)

    def remove(self, watcher: Watcher) -> None:
        watcher.closed = True
        self._watchers.get(watcher.key, set()).discard(watcher)

    def watcher_count(self) -> int:
        return sum(len(w) for w in self._watchers.values())

    def close_all(self) -> None:
        for watchers in self._watchers.values():
            for watcher in watchers:
                watcher.closed = True
                watcher.queue.put_nowait(None)
        self._watchers.clear()
