"""The connection pool of Kopf's HTTP client: bounded.

Kopf's own client (kopf/_cogs/clients/auth.py, `APIContext.__init__`) opens its aiohttp
connector with `limit=0`: no limit. When a thousand objects start at once, their finalizer
patches, Event posts and status patches each open a TLS connection side by side, and each open
TLS connection keeps asyncio's read buffer (`asyncio/sslproto.py`, `SSLProtocol.get_buffer`: up
to `max_size`, 256 KiB; 128 KiB each as traced). Traced at 1,000 objects: 198 connections, 24.8
MiB (docs/performance.md, "Operator memory"). A bounded pool queues those requests on a few connections instead, which
also spares the API server as many TLS handshakes.

The bound must leave room for Kopf's watch streams, each holding a connection for as long as
it lasts (`settings.watching.server_timeout`): one per watched resource and namespace, or a
watch that cannot get a connection would wait behind requests that wait for the watch. Kopf
takes a login handler's `kopf.AiohttpSession` as it is (`APIContext.__init__`, the
`credentials.AiohttpSession()` case), the documented way to supply one's own session.
"""

from __future__ import annotations

from typing import Iterable

import aiohttp
import kopf

# Resources Kopf watches per namespace: FSDPJobs, VectorIndexes, VectorIndexBackups,
# VectorIndexBackupSchedules, pods and Kueue Workloads (the handlers), the peering object, and
# Namespaces (watched when namespaces are given as patterns). tests/unit/test_kopf_connections.py
# checks it against the registry.
WATCHED_RESOURCES = 8
# Connections for everything else: the requests of the handlers and daemons.
REQUEST_CONNECTIONS = 32
PATTERN_CHARACTERS = frozenset("*?[!^,")


def connection_limit(namespaces: Iterable[str]) -> int:
    """The most connections Kopf's client may open; 0 (no limit) where the number of watches is
    not known in advance: namespaces given as patterns (Kopf watches each namespace that
    matches, and namespaces come and go)."""
    names = list(namespaces)
    if any(PATTERN_CHARACTERS & set(n) for n in names):
        return 0
    return WATCHED_RESOURCES * max(1, len(names)) + REQUEST_CONNECTIONS


def bounded_session(info: kopf.ConnectionInfo, limit: int) -> kopf.AiohttpSession:
    """What Kopf would build from `info` (same TLS context and headers), with its pool bounded
    at `limit`. Made in the operator's event loop: call it from an async login handler."""
    session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=limit, ssl=info.as_ssl_context()),
        headers=info.as_http_headers(),
        proxy=info.proxy_url,
        trust_env=info.trust_env,
    )
    return kopf.AiohttpSession(
        aiohttp_session=session,
        server=info.server,
        default_namespace=info.default_namespace,
        priority=info.priority,
        expiration=info.expiration,
    )
