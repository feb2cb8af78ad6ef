"""Free ports for what the tests start (torchrun's rendezvous, local servers)."""

from __future__ import annotations

import random
import socket
from pathlib import Path


def free_port() -> int:
    """A free port below the ephemeral range, which gloo's own sockets and every outgoing
    connection on the machine draw from: a port from there may be taken before torchrun binds it."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    rng = random.Random()
    for _ in range(100):
        port = rng.randrange(max(1024, low - 12000), low)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port")
