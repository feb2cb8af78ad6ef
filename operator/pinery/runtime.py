"""Running the operator: Kopf configured with pinery's settings (`pinery run`)."""

from __future__ import annotations

import asyncio
import logging
import secrets
import threading
from typing import Any, Iterable

import kopf

from pinery import heap_trim, tls_buffers
from pinery.api.base import FINALIZER
from pinery.gateways.kube_http import REQUEST_TIMEOUT
from pinery.handlers import register_all
from pinery.kopf_connections import bounded_session, connection_limit
from pinery.kopf_diffbase import EVENT_ONLY_KINDS, EventOnlyAwareDiffBase
from pinery.services import Services
from pinery.settings import OperatorSettings

# Kopf keeps its bookkeeping in annotations under this prefix (not in status: the CRDs'
# status schemas would prune it).
ANNOTATION_PREFIX = "pinery.dev"
LIST_CHUNK = 50
WORKER_IDLE_SECONDS = 0.5


def kopf_settings(settings: OperatorSettings, event_only_kinds: Iterable[tuple[str, str]] = EVENT_ONLY_KINDS) -> kopf.OperatorSettings:
    """Kopf's settings; `event_only_kinds`: the kinds whose handlers are all `on.event`
    (pinery.kopf_diffbase)."""
    ks = kopf.OperatorSettings()
    ks.persistence.finalizer = FINALIZER
    ks.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix=ANNOTATION_PREFIX)
    ks.persistence.diffbase_storage = EventOnlyAwareDiffBase(
        event_only=event_only_kinds, prefix=ANNOTATION_PREFIX, key="last-handled-configuration"
    )
    # Events are posted explicitly (kopf.event) for state changes, not for every log line.
    ks.posting.level = logging.WARNING
    ks.watching.server_timeout = 300
    # The first listing of each resource in pages of 50 (kopf/_cogs/clients/fetching.py,
    # `fetch_objs`). Unpaged, a restarted operator kept one whole listing per resource for good:
    # traced, 28 MiB of decoded JSON over 1,000 objects, held by Kopf's listing generators
    # (`continuous_watch` suspended at its yield of a listed object, and `fetch_objs`); a page is
    # all it can keep (docs/performance.md, "Operator memory"). 10,000 pods take 200 requests.
    ks.watching.chunk_size = LIST_CHUNK
    # Kopf keeps a worker task (with the object's last event) per object for this long after its
    # last event (kopf/_core/reactor/queueing.py, `worker`): at 5 s, Kopf's default, a burst of
    # 1,000 new objects and their pods kept thousands at once. A worker has nothing to do once
    # its object's events are handled (the passes run from pinery.handlers.pass_queue), and the
    # next event starts another.
    ks.queueing.idle_timeout = WORKER_IDLE_SECONDS
    ks.watching.client_timeout = 330
    ks.networking.request_timeout = REQUEST_TIMEOUT  # the same bound as the operator's own requests
    ks.peering.standalone = not settings.peering
    if settings.peering:
        ks.peering.name = settings.peering
        ks.peering.clusterwide = not settings.namespaces
    return ks


def build_registry(services: Services) -> kopf.OperatorRegistry:
    registry = kopf.OperatorRegistry()
    register_all(registry, services)

    # Registered after the handlers' own cleanups (Kopf runs them one after another, in this
    # order: kopf/_core/actions/execution.py, `execute_handlers_once`), so that the passes
    # have stopped before their connections close.
    @kopf.on.cleanup(id="kube_connections_close", registry=registry)
    async def kube_connections_close(**_: Any) -> None:
        await services.kube.close()

    @kopf.on.login(id="build_registry.<locals>.pinery_login", registry=registry)  # the implicit id, kept
    async def pinery_login(**_: Any) -> kopf.AiohttpSession:
        # One source of credentials: the same configuration the operator's own client uses;
        # async, so that the session is made in the operator's loop.
        info = connection_info(services.kube.api_client.configuration)
        return bounded_session(info, connection_limit(services.settings.namespaces))

    return registry


def connection_info(configuration: Any) -> kopf.ConnectionInfo:
    auth = (configuration.api_key or {}).get("authorization") or (configuration.api_key or {}).get("BearerToken")
    scheme, _, token = (auth or "").partition(" ")
    return kopf.ConnectionInfo(
        server=configuration.host,
        ca_path=configuration.ssl_ca_cert,
        insecure=not configuration.verify_ssl,
        scheme=scheme or None,
        token=token or None,
        certificate_path=configuration.cert_file,
        private_key_path=configuration.key_file,
        default_namespace="default",
    )


def operator_kwargs(settings: OperatorSettings) -> dict[str, Any]:
    """The arguments of kopf.operator()/KopfRunner that depend on settings."""
    return {
        "standalone": not settings.peering,
        "peering_name": settings.peering or None,
        # Kopf pauses every replica when priorities are equal: give each its own, so that
        # exactly one (the highest) is active and the others stand by.
        "priority": secrets.randbelow(1_000_000) + 1 if settings.peering else None,
        "clusterwide": not settings.namespaces,
        "namespaces": list(settings.namespaces),
        "liveness_endpoint": f"http://0.0.0.0:{settings.health_port}/healthz" if settings.health_port else None,
    }


# Libraries that log every request at INFO: their lines would drown the operator's own.
QUIET_LOGGERS = ("pinecone", "httpx", "httpcore", "urllib3", "kubernetes")


class QuietSpies(logging.Filter):
    """Kopf logs every handler that succeeds at INFO. For the `<kind>_event` spies, which only
    wake a daemon, that is a line per watch event of every object: drop those (their failures
    still show)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not (message.startswith("Handler '") and message.endswith("_event' succeeded."))


def configure_logging(settings: OperatorSettings, verbose: bool = False) -> None:
    log_format = kopf.LogFormat.JSON if settings.log_format == "json" else kopf.LogFormat.PLAIN
    kopf.configure(verbose=verbose, log_format=log_format)
    if not verbose:
        for name in QUIET_LOGGERS:
            logging.getLogger(name).setLevel(logging.WARNING)
        objects = logging.getLogger("kopf.objects")
        if not any(isinstance(f, QuietSpies) for f in objects.filters):
            objects.addFilter(QuietSpies())


async def operate(
    services: Services,
    *,
    stop_flag: asyncio.Event | threading.Event | None = None,
    ready_flag: asyncio.Event | threading.Event | None = None,
) -> None:
    """Run the operator until stopped (the coroutine `pinery run` and local mode use)."""
    settings = services.settings
    if settings.metrics_port:
        services.metrics.serve(settings.metrics_port)
    tls_buffers.shrink()
    await asyncio.to_thread(services.pinecone.warm_up)
    trimming = asyncio.create_task(heap_trim.every(), name="pinery heap trim")
    try:
        await kopf.operator(
            registry=build_registry(services),
            settings=kopf_settings(settings),
            stop_flag=stop_flag,
            ready_flag=ready_flag,
            **operator_kwargs(settings),
        )
    finally:
        trimming.cancel()
        await asyncio.gather(trimming, return_exceptions=True)
