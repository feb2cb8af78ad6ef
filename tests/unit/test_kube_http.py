"""The operator's Kubernetes transport (pinery.gateways.kube_http) is set up from the official
client's Configuration as the official client sets up urllib3 (kubernetes/client/rest.py,
`RESTClientObject.__init__`; the proxy choice: `should_bypass_proxies`, `is_socks_proxy_url`)."""

from __future__ import annotations

import asyncio
import ssl

import kubernetes
import pytest

from pinery.gateways.kube_http import Transport, proxy, ssl_context


def configuration(**fields) -> kubernetes.client.Configuration:
    c = kubernetes.client.Configuration()
    c.host = "https://127.0.0.1:6443"
    for key, value in fields.items():
        setattr(c, key, value)
    return c


def test_plain_http_has_no_tls():
    assert ssl_context(configuration(host="http://127.0.0.1:8080")) is False


@pytest.mark.parametrize(
    "fields, verify_mode, check_hostname",
    [
        ({}, ssl.CERT_REQUIRED, True),  # the system's CAs, host name checked
        ({"verify_ssl": False}, ssl.CERT_NONE, False),  # insecure-skip-tls-verify
        ({"assert_hostname": False}, ssl.CERT_REQUIRED, False),  # the certificate, not the name
    ],
)
def test_tls_as_the_official_client(fields, verify_mode, check_hostname):
    context = ssl_context(configuration(**fields))
    assert isinstance(context, ssl.SSLContext)
    assert (context.verify_mode, context.check_hostname) == (verify_mode, check_hostname)


@pytest.mark.parametrize(
    "proxy_url, no_proxy, expected",
    [
        (None, None, None),
        ("http://proxy:3128", None, "http://proxy:3128"),
        ("http://proxy:3128", "127.0.0.1", None),  # bypassed for the API server's host
        ("http://proxy:3128", "example.com", "http://proxy:3128"),
    ],
)
def test_proxy_as_the_official_client(proxy_url, no_proxy, expected):
    assert proxy(configuration(proxy=proxy_url, no_proxy=no_proxy)) == expected


def test_a_socks_proxy_is_refused_with_a_clear_error():
    with pytest.raises(ValueError, match="SOCKS proxy"):
        proxy(configuration(proxy="socks5://proxy:1080"))


def test_the_token_is_taken_afresh_for_every_request():
    """The refresh hook (in-cluster token rotation, exec plugins) runs as it does for the
    official client's own requests (`Configuration.get_api_key_with_prefix`)."""
    tokens = iter(["one", "two"])

    def refresh(c):
        c.api_key["authorization"] = next(tokens)

    transport = Transport(configuration(api_key_prefix={"authorization": "Bearer"}, api_key={"authorization": "zero"},
                                        refresh_api_key_hook=refresh))
    assert transport.headers("application/json", None)["authorization"] == "Bearer one"
    assert transport.headers("application/json", "application/merge-patch+json") == {
        "Accept": "application/json", "Content-Type": "application/merge-patch+json", "authorization": "Bearer two"}


def test_each_event_loop_has_its_own_session_and_closes_it():
    transport = Transport(configuration())

    async def session():
        first = transport._session()
        assert transport._session() is first  # one per loop
        await transport.close()
        assert first.closed
        return first

    assert asyncio.run(session()) is not asyncio.run(session())
    assert len(transport._sessions) == 0
