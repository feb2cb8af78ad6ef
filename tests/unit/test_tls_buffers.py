"""asyncio's TLS read buffer, shrunk (pinery.tls_buffers): a connection made after `shrink`
allocates the smaller buffer (Lib/asyncio/sslproto.py, `SSLProtocol.__init__`)."""

import asyncio
import ssl
from asyncio import sslproto

from pinery import tls_buffers


def new_protocol() -> sslproto.SSLProtocol:
    loop = asyncio.new_event_loop()
    try:
        return sslproto.SSLProtocol(loop, asyncio.Protocol(), ssl.create_default_context(), loop.create_future())
    finally:
        loop.close()


def test_connections_made_after_shrink_read_into_the_smaller_buffer(monkeypatch):
    monkeypatch.setattr(sslproto.SSLProtocol, "max_size", 256 * 1024)  # asyncio's own, restored after
    assert len(new_protocol()._ssl_buffer) == 256 * 1024
    tls_buffers.shrink()
    assert len(new_protocol()._ssl_buffer) == tls_buffers.READ_BUFFER_BYTES == 64 * 1024
    assert new_protocol().get_buffer(1 << 20).nbytes == 64 * 1024  # a read never asks for more
