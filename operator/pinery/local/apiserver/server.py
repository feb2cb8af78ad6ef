"""`LocalApiServer`: the local control plane's HTTP server, its start-up and shutdown.

    server = LocalApiServer(state_dir, token="secret")
    await server.start()            # or server.start_in_thread() from synchronous code
    server.write_kubeconfig(state_dir / "kubeconfig")
    ...
    await server.stop()             # or server.stop_thread()

It serves HTTPS with a CA of its own (see `pki`): kubectl sends credentials only over TLS.
`tls=False` serves plain HTTP, for clients that need no credentials.

On start it loads the snapshot under the state directory (objects and resourceVersions
continue where they stopped; watches from before the restart get 410), serves the CRDs found
there, and makes sure the namespaces `default`, `kube-system` and `kube-public` exist, each
with a `default` ServiceAccount. With a token, requests must carry `Authorization: Bearer
<token>`: a wrong token is 401 everywhere, a missing one everywhere but the health and
version endpoints. That token is the all-powerful admin; ServiceAccount tokens (from
TokenRequest) are held to RBAC (see `access`).
"""

from __future__ import annotations

import asyncio
import base64
import logging
import threading
from pathlib import Path
from typing import Any

import yaml
from aiohttp import web

from pinery.local.apiserver import errors, impersonation, rbac_defaults
from pinery.local.apiserver.access import ADMIN, ANONYMOUS_USER, USER_KEY, Access
from pinery.local.apiserver.controllers import Controllers
from pinery.local.apiserver.counters import RequestCounter
from pinery.local.apiserver.operations import CRD_KEY, KUBE_APISERVER, NAMESPACE_KEY, Api, WriteOptions
from pinery.local.apiserver.persistence import Persistence, load, snapshot_path
from pinery.local.apiserver.pki import Pki, ensure_pki
from pinery.local.apiserver.resources import TypeRegistry, types_from_crd
from pinery.local.apiserver.routes import Routes, json_response
from pinery.local.apiserver.serviceaccount_tokens import TokenSigner
from pinery.local.apiserver.store import Store
from pinery.local.apiserver.watch_stream import WatchSettings

log = logging.getLogger(__name__)
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public")
_PUBLIC_PATHS = ("/healthz", "/livez", "/readyz", "/version")
_MAX_BODY = 3 * 1024 * 1024  # the API server's request size limit


def kubeconfig(
    url: str, token: str | None, ca_pem: bytes | None = None, name: str = "pinery-local", namespace: str = "default"
) -> dict[str, Any]:
    user: dict[str, Any] = {"token": token} if token else {}
    cluster: dict[str, Any] = {"server": url}
    if ca_pem:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": name, "user": user}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name, "namespace": namespace}}],
        "current-context": name,
        "preferences": {},
    }


class LocalApiServer:
    def __init__(
        self,
        state_dir: Path,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        *,
        tls: bool = True,
        logs_dir: Path | None = None,
        bookmark_interval: float = 60.0,
        history: int = 10_000,
        persist_delay: float = 0.02,
        access_log: bool = False,
    ) -> None:
        self.state_dir = Path(state_dir)
        self.host = host
        self.port = port
        self.token = token
        self.tls = tls
        # Where the pod runner writes container output (see `logs`).
        self.logs_dir = Path(logs_dir) if logs_dir is not None else self.state_dir / "logs"
        self._pki: Pki | None = None
        self.watch_settings = WatchSettings(bookmark_interval=bookmark_interval)
        self.history = history
        self.persist_delay = persist_delay
        self.access_log = access_log
        # Requests served by verb and resource (`request_counts()`), kept across restarts of the server.
        self.requests = RequestCounter()
        self.store: Store | None = None
        self.api: Api | None = None
        self._runner: web.AppRunner | None = None
        self._controllers: Controllers | None = None
        self._persistence: Persistence | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.access: Access | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}"

    @property
    def ca_cert(self) -> Path | None:
        """The CA that signed the serving certificate (None without TLS or before start)."""
        return self._pki.ca_cert if self._pki else None

    def write_kubeconfig(self, path: Path, namespace: str = "default") -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        ca = self._pki.ca_pem() if self._pki else None
        path.write_text(yaml.safe_dump(kubeconfig(self.url, self.token, ca, namespace=namespace), sort_keys=False))
        path.chmod(0o600)
        return path

    # Async life cycle

    async def start(self) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        rv, objects = load(snapshot_path(self.state_dir))
        store = Store(rv, self.history)
        store.load(objects)
        registry = TypeRegistry()
        for key, obj in objects:
            if key == CRD_KEY:
                registry.set_crd(obj["metadata"]["name"], types_from_crd(obj))
        api = Api(store, registry)
        self.store, self.api = store, api
        self._persistence = Persistence(snapshot_path(self.state_dir), store, self.persist_delay)
        self._controllers = Controllers(api)
        self._controllers.resync()
        self._bootstrap(api)
        self._controllers.drain()
        self._controllers.start()
        await self._persistence.flush()

        routes = Routes(api, self.logs_dir, lambda: f"{self.host}:{self.port}", self.watch_settings, self.requests)
        self.access = access = Access(store, TokenSigner(self.state_dir / "apiserver" / "pki" / "sa-signing.key"), self.token)
        app = web.Application(middlewares=[self._middleware], client_max_size=_MAX_BODY)
        app.router.add_post("/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token", access.token_request)
        app.router.add_post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", access.self_subject_access_review)
        app.router.add_post("/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", access.self_subject_rules_review)
        app.router.add_post("/apis/authentication.k8s.io/v1/selfsubjectreviews", access.self_subject_review)
        app.router.add_route("*", "/{tail:.*}", routes.dispatch)
        self._runner = web.AppRunner(
            app, handler_cancellation=True, access_log=log if self.access_log else None, shutdown_timeout=1.0
        )
        await self._runner.setup()
        context = None
        if self.tls:
            self._pki = ensure_pki(self.state_dir / "apiserver" / "pki", self.host)
            context = self._pki.ssl_context()
        site = web.TCPSite(self._runner, self.host, self.port, ssl_context=context)
        await site.start()
        # aiohttp types _server as asyncio.AbstractServer; a TCPSite's is an asyncio.Server, which has sockets.
        sockets = site._server.sockets if site._server else []  # type: ignore[attr-defined]
        if sockets:
            self.port = sockets[0].getsockname()[1]
        log.info("local control plane listening on %s (state in %s)", self.url, self.state_dir)

    def request_counts(self) -> dict[str, int]:
        """Requests served so far, `verb resource` -> count (`create pods`, `patch fsdpjobs/status`)."""
        return self.requests.snapshot()

    @staticmethod
    def _bootstrap(api: Api) -> None:
        namespaces = api.registry.lookup("", "v1", "namespaces")
        assert namespaces is not None
        for name in SYSTEM_NAMESPACES:
            if api.store.get(NAMESPACE_KEY, "", name) is None:
                api.create(namespaces, "", {"metadata": {"name": name}}, WriteOptions(field_manager=KUBE_APISERVER))
        # The default RBAC policy (rbac_defaults), as kube-apiserver's RBAC storage bootstrap.
        for plural, objects in (("clusterroles", rbac_defaults.cluster_roles()), ("clusterrolebindings", rbac_defaults.cluster_role_bindings())):
            rtype = api.registry.lookup("rbac.authorization.k8s.io", "v1", plural)
            assert rtype is not None
            for obj in objects:
                if api.store.get(rtype.storage_key, "", obj["metadata"]["name"]) is None:
                    api.create(rtype, "", obj, WriteOptions(field_manager=KUBE_APISERVER))

    async def stop(self) -> None:
        if self.store is not None:
            self.store.hub.close_all()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._controllers is not None:
            await self._controllers.stop()
        if self._persistence is not None:
            await self._persistence.flush()

    @web.middleware
    async def _middleware(self, request: web.Request, handler) -> web.StreamResponse:
        try:
            user = self._authenticate(request)
            if self.access is not None and impersonation.wants(request.headers.items()):
                # After authentication, before authorization, as the API server's filter chain.
                user = impersonation.impersonate(user, request.headers.items(), self.access.allowed)
            if self.access is not None and user is not ANONYMOUS_USER:
                self.access.check(request, user)
            request[USER_KEY] = user
            return await handler(request)
        except errors.ApiError as exc:
            return json_response(exc.status(), exc.code)
        except web.HTTPException:
            raise
        except (asyncio.CancelledError, ConnectionResetError):
            raise
        except Exception as exc:
            log.exception("internal error serving %s %s", request.method, request.path_qs)
            body = errors.status_body(500, "InternalError", f"Internal error occurred: {type(exc).__name__}: {exc}")
            return json_response(body, 500)

    def _authenticate(self, request: web.Request):
        header = request.headers.get("Authorization", "")
        user = self.access.authenticate(header) if self.access is not None and header else None
        if self.token is None:
            return user or ADMIN  # no token configured: everyone but a ServiceAccount is the admin
        if header:
            if user is None:
                raise errors.unauthorized()
            return user
        path = request.path.rstrip("/")
        if not any(path == p or path.startswith(p + "/") for p in _PUBLIC_PATHS):
            raise errors.unauthorized()
        return ANONYMOUS_USER

    # Synchronous life cycle (tests, CLI)

    def start_in_thread(self, timeout: float = 30.0) -> "LocalApiServer":
        """Run the server on its own event loop in a daemon thread; returns once it listens."""
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.call_soon(ready.set)
            loop.run_forever()

        thread = threading.Thread(target=run, name="pinery-local-apiserver", daemon=True)
        thread.start()
        ready.wait(timeout)
        self._loop, self._thread = loop, thread
        try:
            asyncio.run_coroutine_threadsafe(self.start(), loop).result(timeout)
        except BaseException:
            self.stop_thread()
            raise
        return self

    def stop_thread(self, timeout: float = 30.0) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self.stop(), loop).result(timeout)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout)
            loop.close()
            self._loop, self._thread = None, None
