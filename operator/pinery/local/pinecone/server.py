"""The emulator's HTTP server: one aiohttp application on one port.

The control plane is served at the root, like https://api.pinecone.io. Each index's data plane
is served under `/index/<project>/<index>`; that URL, scheme included, is the `host` the
control plane reports, so `pc.Index(host=...)` works unchanged. Admin routes for tests and
benchmarks live under `/_emulator/`, a path the real API does not use.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from aiohttp import web

from pinery.local.pinecone import admin, backups, control, data, imports, inference, records, shapes, v2026_07_documents, versions
from pinery.local.pinecone.context import CONTEXT, DEFAULT_PROJECT, Context, Settings
from pinery.local.pinecone.errors import ApiError
from pinery.local.pinecone.faults import FaultRule, Faults
from pinery.local.pinecone.grpc_refusal import SniffingTCPSite
from pinery.local.pinecone.imports import IMPORTER, Importer
from pinery.local.pinecone.state import Store

log = logging.getLogger(__name__)

API_VERSION = versions.NATIVE  # the version whose shapes the handlers build
# Each index's data plane: vectors and namespaces (data.py), integrated records (records.py),
# bulk imports (imports.py), the 2026-07 documents API (v2026_07_documents.py).
DATA_ROUTES = (*data.ROUTES, *records.ROUTES, *imports.ROUTES, *v2026_07_documents.ROUTES)
DATA_OPERATIONS = frozenset(name for *_, name in DATA_ROUTES)


async def _index_of(request: web.Request, operation: str) -> str | None:
    """The index a request is about: from its path, or the body of a create."""
    name = request.match_info.get("index_name")
    if name is None and operation == "create_index":
        try:
            name = json.loads(await request.read()).get("name")
        except (ValueError, AttributeError, ConnectionError):
            name = None
    return name if isinstance(name, str) else None


class PineconeEmulator:
    """A local server speaking Pinecone's control and data plane, API 2024-07 to 2026-07 (versions.py).

    `api_key=None` accepts any non-empty key; `api_keys` maps several keys to projects (each
    project sees only its own indexes). Delays are in seconds; zero makes transitions immediate.
    """

    def __init__(
        self,
        state_dir: Path | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        api_key: str | None = None,
        ready_delay: float = 1.0,
        *,
        api_keys: Mapping[str, str] | None = None,
        scale_delay: float | None = None,
        read_capacity_delay: float | None = None,
        terminate_delay: float | None = None,
        collection_delay: float | None = None,
        backup_delay: float | None = None,
        restore_delay: float | None = None,
        import_delay: float | None = None,
        index_quota: int | None = None,
        fail_initialization: Iterable[str] = (),
        backup_quota: int | None = None,
        backups_allowed: bool = True,
        fail_backups: Iterable[str] = (),
        fault_rules: Iterable[FaultRule | dict] = (),
        seed: int = 0,
        advertised_url: str | None = None,
        flush_interval: float = 0.5,
        record_exchanges: bool = False,
    ) -> None:
        self.host, self.port = host, port
        keys: dict[str, str] | None = dict(api_keys) if api_keys else None
        if api_key is not None:
            keys = {**(keys or {}), api_key: DEFAULT_PROJECT}
        self.settings = Settings(
            ready_delay=ready_delay,
            scale_delay=ready_delay if scale_delay is None else scale_delay,
            read_capacity_delay=ready_delay if read_capacity_delay is None else read_capacity_delay,
            terminate_delay=ready_delay if terminate_delay is None else terminate_delay,
            collection_delay=ready_delay if collection_delay is None else collection_delay,
            backup_delay=ready_delay if backup_delay is None else backup_delay,
            restore_delay=ready_delay if restore_delay is None else restore_delay,
            import_delay=ready_delay if import_delay is None else import_delay,
            index_quota=index_quota,
            fail_initialization=set(fail_initialization),
            backup_quota=backup_quota,
            backups_allowed=backups_allowed,
            fail_backups=set(fail_backups),
        )
        self.faults = Faults(seed, [r if isinstance(r, FaultRule) else FaultRule.parse(r) for r in fault_rules])
        self.store = Store(state_dir)
        self.imports = Importer(self.store)
        # What the route handlers are given (context.py): they never see the emulator itself.
        self.context = Context(self.store, self.settings, self.faults, keys, url=lambda: self.url, flush=self.flush)
        self._advertised = advertised_url.rstrip("/") if advertised_url else None
        self.flush_interval = flush_interval
        self.exchanges: list[dict[str, Any]] | None = [] if record_exchanges else None
        self._runner: web.AppRunner | None = None
        self._flusher: asyncio.Task | None = None
        self._flush_lock = asyncio.Lock()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def api_keys(self) -> dict[str, str] | None:
        return self.context.api_keys

    # -- addresses -----------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """The control-plane URL (pass it as `Pinecone(host=...)`)."""
        if self._advertised:
            return self._advertised
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}"

    def index_host(self, name: str, project: str = DEFAULT_PROJECT) -> str:
        from pinery.local.pinecone.render import index_host
        return index_host(self.url, project, name)

    # -- application ---------------------------------------------------------------------------
    def build_app(self) -> web.Application:
        app = web.Application(middlewares=[self._middleware], client_max_size=64 * 1024 * 1024)
        app[CONTEXT] = self.context
        app[IMPORTER] = self.imports
        # The control plane: indexes and collections (control.py), backups and restore jobs (backups.py).
        for method, path, handler, name in (*control.ROUTES, *backups.ROUTES):
            app.router.add_route(method, path, handler, name=name)
        for method, path, handler, name in DATA_ROUTES:
            app.router.add_route(method, data.PREFIX + path, handler, name=name)
        inference.add_routes(app, admin.PREFIX)  # /embed, /rerank, /models on the control-plane host (inference.py)
        admin.add_routes(app)
        return app

    def project(self, request: web.Request) -> str:
        return self.context.project(request)

    @web.middleware
    async def _middleware(self, request: web.Request, handler) -> web.StreamResponse:
        if request.path.startswith(admin.PREFIX):
            return await handler(request)
        operation = request.match_info.route.name or "unknown"
        arrived = time.time()
        self.faults.count_request(operation)
        plane = "data" if operation in DATA_OPERATIONS or request.path.startswith("/index/") else "control"
        try:
            decision = self.faults.decide(operation)
            if decision.delay:
                # A slow server has the whole request: it carries it out late even when the
                # client gave up meanwhile (the body could not be read once it had gone).
                await request.read()
                await asyncio.sleep(decision.delay)
            if decision.drop:
                self.faults.count_response(operation, 0)
                self.faults.record(operation, await _index_of(request, operation), arrived, time.time(), 0,
                                   api_version=request.headers.get(versions.HEADER))
                if request.transport is not None:
                    request.transport.abort()
                raise asyncio.CancelledError()
            if decision.status:
                headers = {"Retry-After": f"{decision.retry_after:g}"} if decision.retry_after is not None else {}
                raise ApiError(decision.status, decision.message, headers=headers)
            if operation == "unknown":
                raise _unrouted(request)
            request[versions.VERSION] = versions.negotiate(request.headers.get(versions.HEADER))
            self.project(request)  # authenticates
            if plane == "data":
                await _refuse_default_namespace(request)
            if self.store.refresh():
                self.store.save()
            response = _reshaped(await handler(request), operation, versions.of(request))
        except ApiError as err:
            body = err.data_body() if plane == "data" else err.control_body()
            response = web.json_response(body, status=err.status, headers=err.headers)
        except web.HTTPException as exc:  # 405 and friends from the router
            refusal = ApiError(exc.status, exc.reason)
            body = refusal.data_body() if plane == "data" else refusal.control_body()
            response = web.json_response(body, status=refusal.status)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("emulator error in %s", operation)
            failure = ApiError(500, "Internal server error", "INTERNAL" if plane == "data" else "UNKNOWN")
            response = web.json_response(failure.data_body() if plane == "data" else failure.control_body(), status=500)
        self.faults.count_response(operation, response.status)
        self.faults.record(operation, await _index_of(request, operation), arrived, time.time(), response.status,
                           response.headers.get("Retry-After"), request.headers.get(versions.HEADER))
        if self.exchanges is not None:
            await self._record(request, response, operation, plane)
        return response

    async def _record(self, request: web.Request, response: web.StreamResponse, operation: str, plane: str) -> None:
        if self.exchanges is None:
            return
        path = request.path
        if plane == "data" and "project" in request.match_info:
            path = path[len(f"/index/{request.match_info['project']}/{request.match_info['index_name']}"):]
        self.exchanges.append({
            "operation": operation, "plane": plane, "method": request.method, "path": path,
            "query": request.query_string, "headers": {k: ("***" if k.lower() == "api-key" else v) for k, v in request.headers.items()},
            "body": await request.read(), "status": response.status,
            "content_type": response.content_type,
            "response": response.body if isinstance(response, web.Response) and isinstance(response.body, bytes) else b"",
        })

    # -- persistence ---------------------------------------------------------------------------
    async def flush(self) -> None:
        """Write changed vector data (a snapshot taken on the loop, written in a worker thread)."""
        async with self._flush_lock:
            changed, removed = self.store.take_dirty()
            if changed or removed:
                await asyncio.get_running_loop().run_in_executor(None, self.store.write_data, changed, removed)

    async def _flush_forever(self) -> None:
        while True:
            await asyncio.sleep(self.flush_interval)
            try:
                if self.store.refresh():
                    self.store.save()
                await self.flush()
            except Exception:
                log.exception("could not persist the emulator's state")

    # -- lifecycle -----------------------------------------------------------------------------
    async def start(self) -> None:
        self._flush_lock = asyncio.Lock()
        self._runner = web.AppRunner(self.build_app(), access_log=None, handle_signals=False)
        await self._runner.setup()
        # gRPC clients get a clear answer instead of a TLS or HTTP/2 parse error (grpc_refusal.py).
        site = SniffingTCPSite(self._runner, self.host, self.port, reuse_address=True)
        await site.start()
        if not self.port:
            self.port = self._runner.addresses[0][1]
        if self.store.state_dir is not None:
            self._flusher = asyncio.create_task(self._flush_forever())
        self.imports.resume()
        log.info("Pinecone emulator serving API versions %s at %s", ", ".join(versions.SERVED), self.url)
        log.info("Pinecone emulator: %s", inference.startup_note())

    async def stop(self) -> None:
        await self.imports.stop()
        if self._flusher is not None:
            self._flusher.cancel()
            try:
                await self._flusher
            except asyncio.CancelledError:
                pass
            self._flusher = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        self.store.refresh()
        self.store.save()
        await self.flush()

    def start_in_thread(self, timeout: float = 30.0) -> PineconeEmulator:
        """Serve from a daemon thread with its own event loop (for synchronous callers)."""
        started = threading.Event()
        failure: list[BaseException] = []

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self.start())
            except BaseException as exc:  # reported to the caller below
                failure.append(exc)
                started.set()
                loop.close()
                return
            started.set()
            loop.run_forever()
            loop.close()

        self._thread = threading.Thread(target=serve, name="pinecone-emulator", daemon=True)
        self._thread.start()
        if not started.wait(timeout):
            raise TimeoutError("the Pinecone emulator did not start in time")
        if failure:
            raise failure[0]
        return self

    def stop_thread(self, timeout: float = 30.0) -> None:
        if self._loop is None or self._thread is None:
            return
        asyncio.run_coroutine_threadsafe(self.stop(), self._loop).result(timeout)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout)
        self._thread = self._loop = None

    def call(self, fn, *args):
        """Run fn(*args) on the emulator's loop thread and return its result (thread mode)."""
        if self._loop is None:
            return fn(*args)

        async def run():
            return fn(*args)

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(30)


async def serve_forever(emulator: PineconeEmulator) -> None:
    """Serve until SIGINT or SIGTERM, then stop cleanly (pending vector data is written)."""
    import signal

    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stopping.set)
    await emulator.start()
    try:
        await stopping.wait()
    finally:
        await emulator.stop()


# Pinecone APIs that local mode does not emulate at all, by their path on Pinecone's hosts: the
# Assistant API (`/assistant/...`) and the Admin API (`/admin/...`, projects, API keys).
NOT_EMULATED = {"/assistant": "the Assistant API", "/admin": "the Admin API"}


def _unrouted(request: web.Request) -> ApiError:
    """501 naming what is not emulated for a Pinecone API local mode lacks; 404 otherwise."""
    for prefix, what in NOT_EMULATED.items():
        if request.path == prefix or request.path.startswith(prefix + "/"):
            return ApiError(501, f"{what} ({request.method} {request.path}) is not emulated by local mode's Pinecone "
                                 "emulator; it serves the control plane, the data plane and backups (docs/local-mode.md).",
                            "UNIMPLEMENTED")
    return ApiError(404, f"No route for {request.method} {request.path}.", "NOT_FOUND")


async def _refuse_default_namespace(request: web.Request) -> None:
    """Before 2025-04 the default namespace may not be named `__default__` (shapes.py)."""
    version = versions.of(request)
    if versions.at_least(version, "2025-04"):
        return
    named = [request.query.get("namespace"), request.match_info.get("namespace")]
    if request.can_read_body and request.content_type == "application/json":
        raw = await request.read()
        try:
            body = json.loads(raw) if shapes.DEFAULT_NAMESPACE.encode() in raw else None
        except ValueError:
            body = None  # the handler answers a malformed body
        if isinstance(body, dict):
            named.append(body.get("namespace"))
    if any(shapes.names_default_namespace_refused(version, ns) for ns in named):
        raise ApiError(400, shapes.DEFAULT_NAMESPACE_REFUSED, "INVALID_ARGUMENT")


def _reshaped(response: web.StreamResponse, operation: str, version: str) -> web.StreamResponse:
    """A 2xx JSON answer in the shape of the request's API version (shapes.py)."""
    if (operation not in shapes.RULES or versions.at_least(version, versions.NATIVE)
            or not isinstance(response, web.Response) or not 200 <= response.status < 300
            or response.content_type != "application/json" or not isinstance(response.body, bytes)):
        return response
    response.body = json.dumps(shapes.reshape(operation, json.loads(response.body), version)).encode()
    return response
