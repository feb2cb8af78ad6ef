"""A clear answer for gRPC clients on the emulator's plain HTTP/1.1 port.

The SDKs' gRPC clients (`PineconeGRPC`, `pc.Index(..., grpc=True)`, 9.x `GrpcIndex`) open TLS
to the index host, or with `secure=False` plaintext HTTP/2; against HTTP/1.1 they fail with
`received corrupt message of type InvalidContentType` and nothing says why
(docs/pinecone-api-versions.md, "Transport: REST and gRPC"). The listening socket looks at the
first bytes of each connection before aiohttp parses them:

- the HTTP/2 client preface (RFC 9113 section 3.4): answered as a gRPC server answers a method it
  lacks, status UNIMPLEMENTED (12) with a message saying what to do, in a Trailers-Only response
  (grpc/grpc doc/PROTOCOL-HTTP2.md); the few frames are written here by hand;
- a TLS handshake record (RFC 8446 section 5.1: content type 22, version 3.x): logged with the
  peer and what to do, and closed, since the client's own message cannot change without a
  certificate;
- anything else goes to aiohttp unchanged.
"""

from __future__ import annotations

import asyncio
import logging
import struct
import time
from collections.abc import Callable
from typing import cast

from aiohttp import web

log = logging.getLogger(__name__)

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"  # RFC 9113 section 3.4
ADVICE = ("local mode serves the Pinecone data plane over REST only; create the index client without grpc "
          "(e.g. Pinecone(api_key=..., host=...).Index(host=...))")
GRPC_UNIMPLEMENTED = 12
IDLE_CLOSE = 30.0  # seconds a refused HTTP/2 connection is kept open without frames
WARN_EVERY = 60.0  # a client retrying its connection is warned about once a minute per address
_warned: dict[tuple[str, str], float] = {}


def _warn(kind: str, peer: str, message: str, *args) -> None:
    """A warning, repeated for the same client address and kind at most once a minute (a gRPC
    client reconnects every second or two); the repeats go to debug."""
    key, now = (kind, peer.rsplit(":", 1)[0]), time.monotonic()
    if now - _warned.get(key, -WARN_EVERY) >= WARN_EVERY:
        _warned[key] = now
        log.warning(message, peer, *args)
    else:
        log.debug(message, peer, *args)

# Frame types and flags (RFC 9113 section 6).
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = 0x0, 0x1, 0x3, 0x4, 0x6, 0x7, 0x8, 0x9
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4
NO_ERROR = 0x0


def classify(first: bytes) -> str | None:
    """"tls", "h2" or "http" for a connection's first bytes; None while they could still be either."""
    if not first:
        return None
    if first[0] == 0x16:
        if len(first) < 2:
            return None
        return "tls" if first[1] == 0x03 else "http"
    if first.startswith(PREFACE):
        return "h2"
    if PREFACE.startswith(first):
        return None
    return "http"


# -- HTTP/2 frames and HPACK, just what a Trailers-Only answer needs ---------------------------
def frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream & 0x7FFFFFFF) + payload


def _hpack_int(value: int, prefix_bits: int, first: int = 0) -> bytes:
    """RFC 7541 section 5.1."""
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first | value])
    out, value = bytearray([first | limit]), value - limit
    while value >= 128:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _hpack_literal(name: bytes, value: bytes) -> bytes:
    """A literal header field without indexing, new name, no Huffman coding (RFC 7541 section 6.2.2)."""
    return b"\x00" + _hpack_int(len(name), 7) + name + _hpack_int(len(value), 7) + value


def percent_encode(message: str) -> bytes:
    """grpc-message encoding (PROTOCOL-HTTP2.md): bytes outside 0x20-0x7E, and '%', as %XX."""
    return b"".join(bytes([b]) if 0x20 <= b <= 0x7E and b != 0x25 else f"%{b:02X}".encode()
                    for b in message.encode())


def trailers_only(status: int, message: str) -> bytes:
    """The header block of a Trailers-Only gRPC response."""
    return (b"\x88"  # :status 200, static table index 8 (RFC 7541 appendix A)
            + _hpack_literal(b"content-type", b"application/grpc")
            + _hpack_literal(b"grpc-status", str(status).encode())
            + _hpack_literal(b"grpc-message", percent_encode(message)))


class GrpcRefusal(asyncio.Protocol):
    """Speaks just enough HTTP/2 to answer every gRPC call with UNIMPLEMENTED and the advice."""

    def __init__(self, transport: asyncio.Transport, received: bytes, peer: str,
                 connections: set[asyncio.Transport]) -> None:
        self.transport, self.peer, self.connections = transport, peer, connections
        self.buffer = received[len(PREFACE):]
        self.open_headers: int | None = None  # a stream whose header block goes on in CONTINUATION frames
        self.answered: set[int] = set()
        self.last_stream = 0
        self.loop = asyncio.get_running_loop()
        self.idle: asyncio.TimerHandle | None = None
        transport.write(frame(SETTINGS, 0, 0))  # the server's preface: a SETTINGS frame, here with defaults
        self.data_received(b"")

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        self._rearm()
        while len(self.buffer) >= 9:
            length = int.from_bytes(self.buffer[:3], "big")
            if len(self.buffer) < 9 + length:
                break
            kind, flags = self.buffer[3], self.buffer[4]
            stream = int.from_bytes(self.buffer[5:9], "big") & 0x7FFFFFFF
            payload, self.buffer = self.buffer[9:9 + length], self.buffer[9 + length:]
            self._frame(kind, flags, stream, payload)

    def _frame(self, kind: int, flags: int, stream: int, payload: bytes) -> None:
        if kind == SETTINGS and not flags & ACK:
            self.transport.write(frame(SETTINGS, ACK, 0))
        elif kind == PING and not flags & ACK:
            self.transport.write(frame(PING, ACK, 0, payload))
        elif kind == HEADERS or (kind == CONTINUATION and stream == self.open_headers):
            if flags & END_HEADERS:
                self.open_headers = None
                # A stream that the client keeps open for its message is reset once answered, with
                # NO_ERROR: the response is complete (RFC 9113 section 8.1).
                self._answer(stream, reset=kind == CONTINUATION or not flags & END_STREAM)
            else:
                self.open_headers = stream
        elif kind == DATA and payload:
            # Give the connection's flow-control window back, so later calls are not held up.
            self.transport.write(frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", len(payload))))
        elif kind == GOAWAY:
            self.transport.close()

    def _answer(self, stream: int, reset: bool) -> None:
        if stream in self.answered or stream == 0:
            return
        self.answered.add(stream)
        self.last_stream = max(self.last_stream, stream)
        if len(self.answered) == 1:
            _warn("h2", self.peer, "gRPC call from %s refused with UNIMPLEMENTED: %s", ADVICE)
        self.transport.write(frame(HEADERS, END_HEADERS | END_STREAM, stream,
                                   trailers_only(GRPC_UNIMPLEMENTED, ADVICE)))
        if reset:
            self.transport.write(frame(RST_STREAM, 0, stream, struct.pack(">I", NO_ERROR)))

    def _rearm(self) -> None:
        if self.idle is not None:
            self.idle.cancel()
        self.idle = self.loop.call_later(IDLE_CLOSE, self._goaway)

    def _goaway(self) -> None:
        if not self.transport.is_closing():
            self.transport.write(frame(GOAWAY, 0, 0, struct.pack(">II", self.last_stream, NO_ERROR)))
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.connections.discard(self.transport)
        if self.idle is not None:
            self.idle.cancel()


class Sniffer(asyncio.Protocol):
    """Holds a new connection's first bytes until they tell TLS, HTTP/2 or HTTP/1.1 apart."""

    def __init__(self, http_factory: Callable[[], asyncio.Protocol], connections: set[asyncio.Transport]) -> None:
        self.http_factory, self.connections = http_factory, connections
        self.transport: asyncio.Transport | None = None
        self.first = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # a TCP connection's transport
        self.connections.add(self.transport)

    def data_received(self, data: bytes) -> None:
        self.first += data
        kind = classify(self.first)
        if kind is None:
            return
        transport = self.transport
        assert transport is not None  # set by connection_made, before any data
        peer = _peer(transport)
        if kind == "http":
            self._hand_over(self.http_factory())
        elif kind == "h2":
            transport.set_protocol(GrpcRefusal(transport, self.first, peer, self.connections))
        else:
            _warn("tls", peer, "TLS connection from %s closed: local mode's Pinecone emulator speaks plain HTTP, "
                  "without TLS. A gRPC client shows a TLS or connection error (SDK 9.x: 'tls handshake eof'); %s, "
                  "or pass secure=False to reach it in plaintext and get this advice as its error. A REST client "
                  "needs the http:// host the control plane reports.", ADVICE)
            transport.close()

    def _hand_over(self, protocol: asyncio.Protocol) -> None:
        transport = self.transport
        assert transport is not None  # set by connection_made, before any data
        self.connections.discard(transport)
        transport.set_protocol(protocol)
        protocol.connection_made(transport)
        protocol.data_received(self.first)

    def eof_received(self) -> bool | None:
        if self.first:  # a short request that ended early: aiohttp answers it as it would
            protocol = self.http_factory()
            self._hand_over(protocol)
            return protocol.eof_received()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.connections.discard(self.transport)


def _peer(transport: asyncio.BaseTransport | None) -> str:
    peer = transport.get_extra_info("peername") if transport is not None else None
    if isinstance(peer, tuple) and len(peer) >= 2:
        return f"{peer[0]}:{peer[1]}"
    return str(peer or "an unknown peer")


class SniffingTCPSite(web.TCPSite):
    """aiohttp's TCPSite with each connection's first bytes looked at by Sniffer first."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._sniffed: set[asyncio.Transport] = set()  # connections aiohttp does not hold

    async def start(self) -> None:
        # As TCPSite.start (aiohttp 3.9-3.14), with the protocol factory wrapped.
        await web.BaseSite.start(self)  # registers the site with its runner
        loop = asyncio.get_running_loop()
        http_factory = self._runner.server
        assert http_factory is not None
        self._server = await loop.create_server(
            lambda: Sniffer(http_factory, self._sniffed), self._host, self._port,
            backlog=self._backlog, reuse_address=self._reuse_address, reuse_port=self._reuse_port)
        self._bound_port = self._server.sockets[0].getsockname()[1] if self._server.sockets else self._port

    async def stop(self) -> None:
        for transport in list(self._sniffed):
            transport.close()
        await super().stop()
