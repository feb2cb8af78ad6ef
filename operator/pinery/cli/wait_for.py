"""`pinery wait-for HOST:PORT`: wait until HOST resolves and PORT accepts TCP connections.

FSDPJob pods other than rank 0 run it in an init container, so that torchrun starts only once
rank 0's rendezvous is reachable (TCPStore treats a DNS failure as fatal).
"""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "wait-for",
        help="wait until HOST:PORT resolves and accepts TCP connections",
        description=(
            "Wait until HOST resolves and PORT accepts a TCP connection. Exit 0 once it does; "
            "exit 1 with a message saying what was still missing when the timeout passes."
        ),
    )
    parser.add_argument("target", metavar="HOST:PORT", help="address to wait for ([v6 address]:port also works)")
    parser.add_argument("--timeout", type=float, default=600.0, metavar="SECONDS", help="give up after this long (default 600)")
    parser.add_argument("--interval", type=float, default=1.0, metavar="SECONDS", help="pause between attempts (default 1)")
    parser.set_defaults(func=run)


def split_target(target: str) -> tuple[str, int]:
    """("host", port) from HOST:PORT or [ADDRESS]:PORT; ValueError with a clear message."""
    host, sep, port = target.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{target!r} is not HOST:PORT with a port between 1 and 65535")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port)


def _probe(host: str, port: int, timeout: float) -> str | None:
    """None when a connection succeeds, else what is still missing."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        return f"{host} does not resolve yet ({exc.strerror or exc})"
    errors = []
    for family, kind, proto, _, address in infos:
        try:
            with socket.socket(family, kind, proto) as sock:
                sock.settimeout(timeout)
                sock.connect(address)
                return None
        except OSError as exc:
            errors.append(f"{address[0]}: {exc.strerror or exc}")
    return f"{host} resolves, but port {port} does not accept connections yet ({'; '.join(errors)})"


def run(args: argparse.Namespace) -> int:
    import time

    try:
        host, port = split_target(args.target)
    except ValueError as exc:
        print(f"pinery wait-for: {exc}", file=sys.stderr)
        return 2
    interval = max(args.interval, 0.05)
    start = time.monotonic()
    deadline = start + max(args.timeout, 0.0)
    print(f"waiting up to {args.timeout:g}s for {host}:{port} to accept TCP connections", flush=True)
    last = None
    while True:
        left = deadline - time.monotonic()
        missing = _probe(host, port, timeout=max(min(interval * 2, left), 0.1))
        if missing is None:
            print(f"{host}:{port} accepts connections (after {time.monotonic() - start:.1f}s)", flush=True)
            return 0
        if missing != last:
            print(missing, flush=True)
            last = missing
        left = deadline - time.monotonic()
        if left <= 0:
            print(f"pinery wait-for: timed out after {args.timeout:g}s: {missing}", file=sys.stderr, flush=True)
            return 1
        time.sleep(min(interval, left))
