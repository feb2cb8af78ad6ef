"""gRPC clients get a clear answer from the emulator's plain HTTP/1.1 port (grpc_refusal.py).

Raw sockets check both detections (the HTTP/2 client preface answered with gRPC status
UNIMPLEMENTED, a TLS ClientHello logged and closed) and that HTTP/1.1 still gets through; then
the real gRPC clients: SDK 9.1's built-in one (marked sdk9), and 7.x's grpcio one in the client venv
`pinecone-7-grpc` that compat/run.py makes (compat/clients.py; `make test` makes it first), found
and skipped without it by tests.conftest.compat_python.
"""

from __future__ import annotations

import logging
import socket
import struct
import subprocess
import sys
import textwrap
import time
from urllib.parse import unquote_to_bytes

import pytest
from pinecone import ServerlessSpec

from pinery.local.pinecone import grpc_refusal
from tests.conftest import compat_python, without_pythonpath
from tests.support.emulator import TEST_API_KEY

ADVICE = "local mode serves the Pinecone data plane over REST only; create the index client without grpc"
PINECONE_7_GRPC = "pinecone-7-grpc"  # the client venv compat/run.py makes (compat/clients.py)
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def connect(emulator) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", emulator.port), timeout=5)
    return sock


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


class FrameReader:
    """The frames (type, flags, stream, payload) a socket has sent so far."""

    def __init__(self, sock):
        self.sock, self.buffer, self.frames = sock, b"", []

    def until(self, done):
        """Reads until `done(frames)` holds for all frames read so far; returns them."""
        while not done(self.frames):
            chunk = self.sock.recv(65536)
            assert chunk, "the connection closed"
            self.buffer += chunk
            while len(self.buffer) >= 9 and len(self.buffer) >= 9 + int.from_bytes(self.buffer[:3], "big"):
                length = int.from_bytes(self.buffer[:3], "big")
                self.frames.append((self.buffer[3], self.buffer[4], int.from_bytes(self.buffer[5:9], "big") & 0x7FFFFFFF,
                                    self.buffer[9:9 + length]))
                self.buffer = self.buffer[9 + length:]
        return self.frames


def hpack_int(block, at, prefix_bits):
    limit = (1 << prefix_bits) - 1
    value, at = block[at] & limit, at + 1
    if value < limit:
        return value, at
    shift = 0
    while True:
        byte, at = block[at], at + 1
        value += (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at


def decode_headers(block):
    """The header block the emulator writes: indexed :status 200, then literals with new names."""
    assert block[0] == 0x88
    headers, at = {":status": "200"}, 1
    while at < len(block):
        assert block[at] == 0x00, block[at:]
        length, at = hpack_int(block, at + 1, 7)
        name, at = block[at:at + length], at + length
        length, at = hpack_int(block, at, 7)
        value, at = block[at:at + length], at + length
        headers[name.decode()] = value.decode()
    return headers


def answered(stream):
    return lambda frames: any(f[0] == 0x1 and f[2] == stream for f in frames)


def test_http2_preface_gets_grpc_unimplemented_with_the_advice(pinecone_emulator, caplog):
    caplog.set_level(logging.WARNING, logger="pinery.local.pinecone.grpc_refusal")
    grpc_refusal._warned.clear()  # warnings repeat once a minute per address
    with connect(pinecone_emulator) as sock:
        # The preface split across writes, then SETTINGS, a PING, and a gRPC call whose request
        # stays open (its message would follow in DATA frames).
        sock.sendall(PREFACE[:5])
        time.sleep(0.05)
        sock.sendall(PREFACE[5:] + frame(0x4, 0, 0) + frame(0x6, 0, 0, b"12345678")
                     + frame(0x1, 0x4, 1, b"\x83\x86any-header-block"))
        reader = FrameReader(sock)
        frames = reader.until(answered(1))
        assert frames[0][:3] == (0x4, 0, 0)  # the server's preface
        assert (0x4, 0x1, 0, b"") in frames  # our SETTINGS acknowledged
        assert (0x6, 0x1, 0, b"12345678") in frames  # PING answered
        kind, flags, stream, block = next(f for f in frames if f[0] == 0x1)
        assert flags == 0x5  # END_STREAM | END_HEADERS: a Trailers-Only response
        headers = decode_headers(block)
        assert headers["content-type"] == "application/grpc" and headers["grpc-status"] == "12"
        message = unquote_to_bytes(headers["grpc-message"]).decode()
        assert message.startswith(ADVICE) and "Pinecone(api_key=..., host=...).Index(host=...)" in message
        frames = reader.until(lambda fs: any(f[0] == 0x3 for f in fs))
        assert (0x3, 0, 1, b"\x00\x00\x00\x00") in frames  # the open request reset with NO_ERROR

        # A second call, its header block continued in a CONTINUATION frame.
        sock.sendall(frame(0x1, 0x1, 3, b"\x83") + frame(0x9, 0x4, 3, b"\x86"))
        frames = reader.until(answered(3))
        assert decode_headers(next(f for f in frames if f[0] == 0x1 and f[2] == 3)[3])["grpc-status"] == "12"
    assert any("refused with UNIMPLEMENTED" in r.getMessage() and "127.0.0.1:" in r.getMessage()
               for r in caplog.records)


def test_tls_client_hello_is_logged_and_closed(pinecone_emulator, caplog):
    caplog.set_level(logging.WARNING, logger="pinery.local.pinecone.grpc_refusal")
    grpc_refusal._warned.clear()
    with connect(pinecone_emulator) as sock:
        sock.sendall(b"\x16\x03\x01\x00\x2f\x01\x00\x00\x2b\x03\x03" + bytes(32))
        peer = "%s:%d" % sock.getsockname()
        assert sock.recv(1024) == b""  # closed without an answer
    deadline = time.monotonic() + 5
    while not any("TLS connection" in r.getMessage() for r in caplog.records):
        assert time.monotonic() < deadline, "no warning logged"
        time.sleep(0.02)
    message = next(r.getMessage() for r in caplog.records if "TLS connection" in r.getMessage())
    assert f"TLS connection from {peer} closed" in message and ADVICE in message


def test_http1_requests_still_reach_the_api(pinecone_emulator):
    # Bytes that start like the HTTP/2 preface ("P" of POST) or arrive one at a time still get
    # HTTP/1.1 answers.
    with connect(pinecone_emulator) as sock:
        request = b"POST /indexes HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
        sock.sendall(request[:1])
        time.sleep(0.05)
        sock.sendall(request[1:])
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 401")
    with connect(pinecone_emulator) as sock:
        sock.sendall(b"GET /_emulator/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")


def test_classify():
    assert grpc_refusal.classify(b"") is None
    assert grpc_refusal.classify(b"\x16") is None
    assert grpc_refusal.classify(b"\x16\x03\x01") == "tls"
    assert grpc_refusal.classify(b"PRI * HT") is None
    assert grpc_refusal.classify(PREFACE) == "h2"
    assert grpc_refusal.classify(b"POST /query") == "http"
    assert grpc_refusal.classify(b"GET / HTTP/1.1") == "http"


@pytest.fixture
def index_host(pinecone_client):
    return pinecone_client.create_index(name="grpc", dimension=2, spec=ServerlessSpec(cloud="aws", region="us-east-1"),
                                        timeout=5).host


@pytest.mark.sdk9  # `make test` runs it with the 9.1.0 overlay (compat/overlay.py)
def test_sdk_9_grpc_client_plaintext_gets_the_advice(pinecone_client, index_host):
    from pinecone.errors.exceptions import PineconeConnectionError, PineconeError
    from pinecone.grpc import GrpcIndex

    idx = GrpcIndex(host=index_host, api_key=TEST_API_KEY, secure=False)
    for call in (lambda: idx.upsert(vectors=[("a", [1.0, 2.0])]), lambda: idx.query(vector=[1.0, 2.0], top_k=1)):
        with pytest.raises(PineconeError) as caught:
            call()
        assert str(caught.value).startswith(ADVICE)
        assert "Pinecone(api_key=..., host=...).Index(host=...)" in str(caught.value)

    # With TLS (the default, and what pc.index(..., grpc=True) builds) the client's own error stays.
    secure = pinecone_client.index(host=index_host, grpc=True)
    with pytest.raises(PineconeConnectionError, match="tls handshake eof"):
        secure.describe_index_stats()

    # The REST client on the same host is unaffected.
    rest = pinecone_client.Index(host=index_host)
    assert rest.upsert(vectors=[("a", [1.0, 2.0])]).upserted_count == 1


SDK_7_SCRIPT = textwrap.dedent("""
    import sys
    from pinecone.grpc import GRPCClientConfig, PineconeGRPC
    url, target, secure = sys.argv[1], sys.argv[2], sys.argv[3] == "secure"
    pc = PineconeGRPC(api_key=sys.argv[4], host=url)
    idx = pc.Index(host=target, grpc_config=GRPCClientConfig(secure=secure, timeout=5, conn_timeout=1))
    try:
        idx.describe_index_stats()
    except Exception as exc:
        print(type(exc).__name__, exc)
    else:
        print("no error")
""")


def test_sdk_7_grpc_client(pinecone_emulator, index_host):
    python = compat_python(PINECONE_7_GRPC)

    def run(target, mode):
        done = subprocess.run([str(python), "-c", SDK_7_SCRIPT, pinecone_emulator.url, target, mode,
                               TEST_API_KEY], capture_output=True, text=True, timeout=60, check=True, env=without_pythonpath())
        return done.stdout.strip()

    bare = f"127.0.0.1:{pinecone_emulator.port}"  # grpcio needs host:port; it cannot use the reported URL
    assert run(bare, "plaintext").startswith(f"PineconeException UNIMPLEMENTED:{ADVICE}")
    assert "Misformatted domain name" in run(index_host, "plaintext")
    assert "Handshake read failed" in run(bare, "secure")


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
