"""Admin routes under /_emulator/: faults, settings, counters and persistence, for tests.

    GET    /_emulator/health              {"ok": true, "api_version": "2025-10"}
    GET    /_emulator/faults              {"seed": N, "rules": [...]}
    PUT    /_emulator/faults              replace: {"seed": N?, "rules": [rule, ...]}
    POST   /_emulator/faults              add one rule
    DELETE /_emulator/faults              remove every rule
    GET    /_emulator/stats               request/response counters by operation
    DELETE /_emulator/stats               reset the counters and the request log
    GET    /_emulator/requests?since=N    the request log after sequence number N: operation, index,
                                          arrival and answer times, status, Retry-After
    GET    /_emulator/settings            delays, index and backup quotas, whether backups are allowed,
                                          names whose initialization or backups fail
    PATCH  /_emulator/settings            change some of them
    POST   /_emulator/flush               write pending vector data to the state directory now

A rule: {"operation": "<operationId>|*", "kind": "status|delay|drop", "rate": 0..1,
"status": 429, "retry_after": 1, "seconds": 0.5, "times": N, "message": "..."}.
"""

from __future__ import annotations

import json

from aiohttp import web

from pinery.local.pinecone.context import context, store
from pinery.local.pinecone.faults import FaultRule

PREFIX = "/_emulator"


def _error(message: str) -> web.Response:
    return web.json_response({"error": message}, status=400)


async def _json(request: web.Request):
    try:
        return json.loads(await request.read() or b"{}")
    except ValueError as exc:
        raise web.HTTPBadRequest(text=json.dumps({"error": f"invalid JSON: {exc}"}),
                                 content_type="application/json") from exc


async def health(request: web.Request) -> web.Response:
    return web.json_response({"ok": True, "api_version": "2025-10", "url": context(request).url})


async def get_faults(request: web.Request) -> web.Response:
    return web.json_response(context(request).faults.describe())


async def _apply(request: web.Request, apply, describe, expected: str) -> web.Response:
    """Parse the body, apply it, and answer the new state (400 with the reason when it is refused)."""
    doc = await _json(request)
    try:
        if not isinstance(doc, dict):
            raise ValueError(f"expected {expected}")
        apply(doc)
    except (TypeError, ValueError) as exc:
        return _error(str(exc))
    return web.json_response(describe())


async def put_faults(request: web.Request) -> web.Response:
    faults = context(request).faults
    return await _apply(request, faults.configure, faults.describe, "an object with 'rules' (and optionally 'seed')")


async def add_fault(request: web.Request) -> web.Response:
    faults = context(request).faults
    return await _apply(request, lambda doc: faults.add(FaultRule.parse(doc)), faults.describe, "a fault rule object")


async def clear_faults(request: web.Request) -> web.Response:
    faults = context(request).faults
    faults.rules.clear()
    return web.json_response(faults.describe())


async def get_stats(request: web.Request) -> web.Response:
    return web.json_response(context(request).faults.stats())


async def reset_stats(request: web.Request) -> web.Response:
    context(request).faults.reset_stats()
    return web.json_response(context(request).faults.stats())


async def get_requests(request: web.Request) -> web.Response:
    try:
        since = int(request.query.get("since", "0"))
    except ValueError:
        return _error("since must be a whole number")
    return web.json_response(context(request).faults.requests_since(since))


async def get_settings(request: web.Request) -> web.Response:
    return web.json_response(context(request).settings.as_json())


async def patch_settings(request: web.Request) -> web.Response:
    settings = context(request).settings
    return await _apply(request, settings.update, settings.as_json, "an object of settings")


async def flush(request: web.Request) -> web.Response:
    store(request).refresh()
    store(request).save()
    await context(request).flush()
    return web.json_response({"ok": True})


def add_routes(app: web.Application) -> None:
    app.router.add_get(f"{PREFIX}/health", health)
    app.router.add_get(f"{PREFIX}/faults", get_faults)
    app.router.add_put(f"{PREFIX}/faults", put_faults)
    app.router.add_post(f"{PREFIX}/faults", add_fault)
    app.router.add_delete(f"{PREFIX}/faults", clear_faults)
    app.router.add_get(f"{PREFIX}/stats", get_stats)
    app.router.add_delete(f"{PREFIX}/stats", reset_stats)
    app.router.add_get(f"{PREFIX}/requests", get_requests)
    app.router.add_get(f"{PREFIX}/settings", get_settings)
    app.router.add_patch(f"{PREFIX}/settings", patch_settings)
    app.router.add_post(f"{PREFIX}/flush", flush)
