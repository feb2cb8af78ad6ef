"""The bound on Kopf's connection pool (pinery.kopf_connections), and the session the login
handler gives Kopf."""

import asyncio
from pathlib import Path

import aiohttp
import kopf
import pytest

from pinery.kopf_connections import REQUEST_CONNECTIONS, WATCHED_RESOURCES, bounded_session, connection_limit
from pinery.runtime import build_registry
from pinery.services import Services
from pinery.settings import OperatorSettings

KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: secret-token}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: team}}]
current-context: x
"""


@pytest.mark.parametrize(
    "namespaces, limit",
    [
        ((), WATCHED_RESOURCES + REQUEST_CONNECTIONS),  # cluster-wide: one watch per resource
        (("a",), WATCHED_RESOURCES + REQUEST_CONNECTIONS),
        (("a", "b", "c"), 3 * WATCHED_RESOURCES + REQUEST_CONNECTIONS),  # a watch per resource and namespace
        (("team-*",), 0),  # patterns: as many watches as namespaces match, unknown: no bound
        (("a", "!b"), 0),
        (("ml-?",), 0),
    ],
)
def test_connection_limit(namespaces, limit):
    assert connection_limit(namespaces) == limit


def services(tmp_path: Path) -> Services:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    return Services.create(OperatorSettings(namespaces=("a", "b")), str(kubeconfig))


def test_the_watched_resources_are_counted(tmp_path: Path):
    """The bound leaves room for every watch: the registry's resources, the peering object and
    Namespaces."""
    registry = build_registry(services(tmp_path))
    selectors = set()
    for part in (registry._watching, registry._spawning, registry._changing, registry._indexing):
        selectors |= set(part.get_all_selectors())
    assert len(selectors) + 2 <= WATCHED_RESOURCES


def test_the_login_handler_gives_kopf_a_bounded_session_with_the_clients_credentials(tmp_path: Path):
    registry = build_registry(services(tmp_path))
    (handler,) = [h for h in registry._activities.get_all_handlers() if h.id == "build_registry.<locals>.pinery_login"]

    async def login():
        info = await handler.fn()
        try:
            assert isinstance(info, kopf.AiohttpSession)
            session = info.aiohttp_session
            assert isinstance(session.connector, aiohttp.TCPConnector)
            assert session.connector.limit == 2 * WATCHED_RESOURCES + REQUEST_CONNECTIONS
            assert session.headers["Authorization"] == "Bearer secret-token"
            assert info.server == "https://127.0.0.1:6443"
        finally:
            await info.aiohttp_session.close()

    asyncio.run(login())


def test_the_session_keeps_what_kopf_would_have_built():
    info = kopf.ConnectionInfo(server="https://h:443", scheme="Bearer", token="t", default_namespace="ns", priority=5)

    async def build():
        made = bounded_session(info, 7)
        try:
            assert made.aiohttp_session.connector.limit == 7
            assert (made.server, made.default_namespace, made.priority) == ("https://h:443", "ns", 5)
            assert made.aiohttp_session.headers["Authorization"] == "Bearer t"
        finally:
            await made.aiohttp_session.close()

    asyncio.run(build())
