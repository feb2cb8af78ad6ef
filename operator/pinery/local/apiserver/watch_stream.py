"""`?watch=true`: a stream of JSON lines `{"type": ..., "object": ...}`, as the API server's
watch cache serves it.

- `resourceVersion` unset or "0": ADDED for every matching object, then changes;
  `resourceVersion=N`: the changes after N from the history window, then live changes; a version
  older than the window is answered (with HTTP 200, like a real server) by one ERROR event
  carrying a 410 Expired Status, after which clients relist;
- `sendInitialEvents=true` (with `resourceVersionMatch=NotOlderThan` and bookmarks): ADDED for
  every matching object, then a BOOKMARK annotated `k8s.io/initial-events-end: "true"`;
- `allowWatchBookmarks=true`: a BOOKMARK with the current resourceVersion every
  `bookmark_interval` seconds without events, and one when the watch times out;
- `timeoutSeconds`: the stream ends then (default: a random time between 30 and 60 minutes);
- label and field selectors: an object that starts or stops matching is ADDED or DELETED.
"""

from __future__ import annotations

import asyncio
import json
import random
from dataclasses import dataclass
from typing import Any, Callable

from aiohttp import web

from pinery.local.apiserver import errors
from pinery.local.apiserver.conversion import present
from pinery.local.apiserver.operations import Api
from pinery.local.apiserver.resources import ResourceType
from pinery.local.apiserver.selectors import FieldSelector, LabelSelector
from pinery.local.apiserver.watch_cache import Watcher, WatchEvent
from pinery.schema.errors import FieldError

INITIAL_EVENTS_END = "k8s.io/initial-events-end"
TableMaker = Callable[..., dict[str, Any]]


@dataclass
class WatchSettings:
    bookmark_interval: float = 60.0
    min_request_timeout: float = 1800.0


def _line(event_type: str, obj: dict[str, Any]) -> bytes:
    return json.dumps({"type": event_type, "object": obj}, separators=(",", ":")).encode() + b"\n"


def encode(event_type: str, event: WatchEvent, rtype: ResourceType, table: TableMaker | None) -> bytes:
    if table is not None:
        return _line(event_type, table([present(rtype, event.obj)], event.obj["metadata"].get("resourceVersion", "")))
    cache_key = (event_type, rtype.group, rtype.version)
    data = event.encoded.get(cache_key)
    if data is None:
        data = event.encoded[cache_key] = _line(event_type, present(rtype, event.obj))
    return data


def bookmark(rtype: ResourceType, rv: int, initial_end: bool = False) -> bytes:
    meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if initial_end:
        meta["annotations"] = {INITIAL_EVENTS_END: "true"}
    return _line("BOOKMARK", {"kind": rtype.kind, "apiVersion": rtype.api_version, "metadata": meta})


def forbidden_field(path: str, why: str) -> FieldError:
    return FieldError(path, f"Forbidden: {why}")


def _check_params(query, rtype: ResourceType) -> tuple[str | None, bool]:
    send_initial = query.get("sendInitialEvents")
    rv_match = query.get("resourceVersionMatch", "")
    bookmarks = query.get("allowWatchBookmarks", "").lower() in ("true", "1")
    problems = []
    if send_initial is not None:
        if rv_match != "NotOlderThan":
            problems.append(forbidden_field("resourceVersionMatch", "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
        if send_initial == "true" and not bookmarks:
            problems.append(forbidden_field("allowWatchBookmarks", "sendInitialEvents requires setting allowWatchBookmarks to true"))
    elif rv_match:
        problems.append(forbidden_field("resourceVersionMatch", "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
    if problems:
        raise errors.invalid(rtype, "", problems)
    return send_initial, bookmarks


async def serve_watch(
    request: web.Request,
    api: Api,
    rtype: ResourceType,
    namespace: str | None,
    labels: LabelSelector,
    fields: FieldSelector,
    settings: WatchSettings,
    table: TableMaker | None,
) -> web.StreamResponse:
    query = request.query
    send_initial, bookmarks = _check_params(query, rtype)
    rv_param = query.get("resourceVersion", "")
    timeout_param = query.get("timeoutSeconds", "")
    timeout = float(timeout_param) if timeout_param.isdigit() else random.uniform(1, 2) * settings.min_request_timeout
    store = api.store
    key = rtype.storage_key
    kind = api.primary(rtype).kind
    watcher = Watcher(key, namespace if rtype.namespaced else None, labels, fields, kind)

    expired: str | None = None
    if send_initial == "true" or (send_initial is None and rv_param in ("", "0")):
        for obj in store.iterate(key, watcher.namespace, labels, fields, kind):
            rv = int(obj["metadata"]["resourceVersion"])
            watcher.queue.put_nowait(("ADDED", WatchEvent("ADDED", rv, key, obj)))
    elif rv_param not in ("", "0"):
        try:
            since = int(rv_param)
        except ValueError:
            raise errors.bad_request(f'resourceVersion: Invalid value: "{rv_param}": must be an integer') from None
        replay = store.hub.since(key, since)
        if replay is None:
            expired = f"too old resource version: {since} ({store.hub.floor(key)})"
        else:
            for event in replay:
                watcher.offer(event)
    if expired is None:
        store.hub.add(watcher)  # no await since the snapshot above: no change can slip between

    response = web.StreamResponse(status=200, headers={"Content-Type": "application/json", "Cache-Control": "no-cache, private"})
    response.enable_chunked_encoding()
    await response.prepare(request)
    if expired is not None:
        await response.write(_line("ERROR", errors.gone(expired).status()))
        await response.write_eof()
        return response
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    try:
        if send_initial == "true":
            chunks = _drain(watcher, rtype, table)
            chunks.append(bookmark(rtype, store.rv, initial_end=True))
            await response.write(b"".join(chunks))
        next_bookmark = loop.time() + settings.bookmark_interval
        while not watcher.closed:
            now = loop.time()
            if now >= deadline:
                # What the watcher holds goes out first: a bookmark past an unsent event would
                # make a client resuming from it miss that event.
                await response.write(b"".join(_drain_then_bookmark(watcher, rtype, table, store.rv if bookmarks else None)))
                break
            if watcher.queue.empty():
                wake = min(deadline, next_bookmark) if bookmarks else deadline
                try:
                    item = await asyncio.wait_for(watcher.queue.get(), max(0.0, wake - now))
                except asyncio.TimeoutError:
                    if bookmarks and loop.time() >= next_bookmark:
                        await response.write(b"".join(_drain_then_bookmark(watcher, rtype, table, store.rv)))
                        next_bookmark = loop.time() + settings.bookmark_interval
                    continue
                if item is None:
                    break
                chunks = [encode(item[0], item[1], rtype, table)] + _drain(watcher, rtype, table)
            else:
                chunks = _drain(watcher, rtype, table)
            if chunks:
                await response.write(b"".join(chunks))
                next_bookmark = loop.time() + settings.bookmark_interval
    except (ConnectionResetError, ConnectionError):
        pass
    finally:
        store.hub.remove(watcher)
    try:
        await response.write_eof()
    except (ConnectionResetError, ConnectionError):
        pass
    return response


def _drain_then_bookmark(watcher: Watcher, rtype: ResourceType, table: TableMaker | None, rv: int | None) -> list[bytes]:
    """The events the watcher holds, then a bookmark at `rv` (None: none). Every event up to the
    store's resourceVersion was offered to the watcher when it was committed, so with no await
    between reading `rv` and draining, the bookmark passes no event this watch has not sent:
    upstream's cacher orders its bookmarks with the events the same way (cacher.go,
    dispatchEvents)."""
    chunks = _drain(watcher, rtype, table)
    if rv is not None:
        chunks.append(bookmark(rtype, rv))
    return chunks


def _drain(watcher: Watcher, rtype: ResourceType, table: TableMaker | None) -> list[bytes]:
    chunks = []
    while not watcher.queue.empty():
        item = watcher.queue.get_nowait()
        if item is None:
            watcher.closed = True
            break
        chunks.append(encode(item[0], item[1], rtype, table))
    return chunks
