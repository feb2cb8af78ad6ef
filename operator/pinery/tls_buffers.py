"""asyncio's TLS read buffer, at 64 KiB instead of 256 KiB per connection.

asyncio gives every TLS connection a read buffer of `SSLProtocol.max_size`, 256 KiB, allocated
and zeroed when the connection is made (Lib/asyncio/sslproto.py, `SSLProtocol.__init__`;
python/cpython issue 109534 discusses the cost). The operator keeps up to about 70 such
connections open (Kopf's bounded pool, pinery.kopf_connections, and the requests' own,
pinery.gateways.kube_http): 15.5 MiB of live memory in a traced run over 1,000 objects
(docs/performance.md, "Operator memory"). The buffer takes what one read of the socket brings;
a TLS record holds at most 16 KiB of data, so 64 KiB still takes several records a read, and a
larger answer takes more reads, each as before. The setting is the class's, so it holds for
every TLS connection of the process: call `shrink` once, before the operator connects.
"""

from __future__ import annotations

from asyncio import sslproto

READ_BUFFER_BYTES = 64 * 1024


def shrink(size: int = READ_BUFFER_BYTES) -> None:
    """Make TLS connections opened from now on read into `size` bytes."""
    if hasattr(sslproto.SSLProtocol, "max_size"):  # an asyncio without it has its own sizing
        sslproto.SSLProtocol.max_size = size
