"""The operator's requests to the Kubernetes API, sent by aiohttp on the event loop.

The official client (urllib3) is synchronous, so each request used to run in a worker thread:
at most as many requests in flight as the default executor has threads (6 on 2 cores), and
every answer handed back to the loop through the GIL. In a burst of 1,000 new FSDPJobs the
passes spent longer waiting for a thread than the API server took to answer, and the API server
served the operator's few requests behind everyone else's (docs/performance.md, "FSDPJob:
create to children"). Here requests are coroutines on the loop, up to `CONNECTIONS` at once.

Everything about the connection comes from the official client's `Configuration`, as the
kubeconfig or in-cluster loader filled it (`pinery.gateways.kube.load_api_client`): the server,
the CA, client certificates, TLS verification, the proxy, and the bearer token, taken afresh
for every request from `Configuration.auth_settings()` so that its refresh hook (an in-cluster
token that the kubelet rotates, an exec plugin's token) works as it does for the official
client's own requests.

An aiohttp session belongs to one event loop; the operator has one, and tests and the CLI make
others: each loop gets its own session, closed by `close` from that loop.
"""

from __future__ import annotations

import asyncio
import ssl
import weakref
from typing import Any
from urllib.parse import urlencode

import aiohttp

# Requests in flight at most: what Kopf's own pool leaves for handlers (pinery.kopf_connections,
# REQUEST_CONNECTIONS), on a pool of its own.
CONNECTIONS = 32


# What a request may take at most, Kopf's own too (pinery.runtime sets
# `settings.networking.request_timeout` from it): a pass waits on no answer for ever.
REQUEST_TIMEOUT = 60.0


def ssl_context(configuration: Any) -> ssl.SSLContext | bool:
    """TLS as the official client sets it up for urllib3 (kubernetes/client/rest.py,
    `RESTClientObject.__init__`): the CA (file or data), or no verification; the host name
    checked unless `assert_hostname` is False; the client certificate."""
    if not str(configuration.host).startswith("https"):
        return False
    context = ssl.create_default_context(cafile=configuration.ssl_ca_cert, cadata=configuration.ca_cert_data)
    if not configuration.verify_ssl:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif configuration.assert_hostname is False:
        context.check_hostname = False
    if configuration.cert_file:
        context.load_cert_chain(configuration.cert_file, configuration.key_file)
    return context


def proxy(configuration: Any) -> str | None:
    """The proxy for the API server, as the official client chooses it (`no_proxy` bypasses it).
    aiohttp speaks to HTTP proxies only."""
    from kubernetes.client.rest import is_socks_proxy_url, should_bypass_proxies

    url = configuration.proxy
    if not url or should_bypass_proxies(configuration.host, configuration.no_proxy or ""):
        return None
    if is_socks_proxy_url(url):  # type: ignore[no-untyped-call]
        raise ValueError(f"the operator cannot reach the API server through a SOCKS proxy ({url}): use an HTTP proxy")
    return str(url)


class Transport:
    """Sends requests for the API server `configuration` describes."""

    def __init__(self, configuration: Any, connections: int = CONNECTIONS) -> None:
        self.configuration = configuration
        self.connections = connections
        self._sessions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, aiohttp.ClientSession] = weakref.WeakKeyDictionary()
        self._ssl = ssl_context(configuration)
        self._proxy = proxy(configuration)

    def _session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        session = self._sessions.get(loop)
        if session is None or session.closed:
            session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self.connections, ssl=self._ssl),
                headers={"User-Agent": "pinery"},
            )
            self._sessions[loop] = session
        return session

    def headers(self, accept: str, content_type: str | None) -> dict[str, str]:
        headers = {"Accept": accept}
        if content_type:
            headers["Content-Type"] = content_type
        for auth in self.configuration.auth_settings().values():  # refreshes a token that expired
            if auth.get("in") == "header" and auth.get("value"):
                headers[auth["key"]] = auth["value"]
        return headers

    async def request(self, method: str, path: str, *, query: dict[str, Any] | None = None, body: bytes | None = None,
                      content_type: str | None = None, accept: str = "application/json",
                      timeout: float = REQUEST_TIMEOUT) -> tuple[int, bytes, str]:
        """(status, body, reason) of one request."""
        url = self.configuration.host + path
        if query:
            url += "?" + urlencode(query)
        async with self._session().request(method, url, data=body, headers=self.headers(accept, content_type),
                                           server_hostname=self.configuration.tls_server_name or None,
                                           proxy=self._proxy, proxy_headers=self.configuration.proxy_headers,
                                           timeout=aiohttp.ClientTimeout(total=timeout)) as response:
            return response.status, await response.read(), response.reason or ""

    async def close(self) -> None:
        """Close this loop's session (each loop closes its own)."""
        session = self._sessions.pop(asyncio.get_running_loop(), None)
        if session is not None:
            await session.close()
