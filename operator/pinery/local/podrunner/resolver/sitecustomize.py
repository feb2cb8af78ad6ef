"""Cluster DNS for Python processes of local-mode pods (loaded through PYTHONPATH).

The pod runner writes a hosts file (`name address [address ...]` per line) and points
PINERY_LOCAL_HOSTS at it; names found there, directly or through the pod's search path
(PINERY_LOCAL_SEARCH), resolve to their loopback addresses; other names in the cluster domain
(PINERY_LOCAL_DOMAIN) do not exist; everything else resolves as usual.
"""

import os
import socket
import time

_HOSTS_FILE = os.environ.get("PINERY_LOCAL_HOSTS")
_real_getaddrinfo = socket.getaddrinfo
_real_gethostbyname = socket.gethostbyname
_real_gethostbyname_ex = socket.gethostbyname_ex
_cache: dict = {"key": None, "table": {}}


def _table():
    try:
        st = os.stat(_HOSTS_FILE)
    except OSError:
        return {}
    # The file is replaced on every change, but two changes can share a timestamp (its
    # resolution is the kernel's tick): a file changed within the last second is read again.
    key = (st.st_ino, st.st_size, st.st_mtime_ns)
    if key != _cache["key"] or time.time() - st.st_mtime < 1.0:
        table = {}
        try:
            with open(_HOSTS_FILE) as hosts:
                for line in hosts:
                    parts = line.split()
                    if len(parts) >= 2:
                        table[parts[0]] = parts[1:]
        except OSError:
            return _cache["table"]
        _cache.update(key=key, table=table)
    return _cache["table"]


def _lookup(host):
    """The addresses of `host` in the cluster, or None when it is not a cluster name."""
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str) or not host:
        return None
    table = _table()
    name = host.rstrip(".").lower()
    if name in table:
        return table[name]
    if host.endswith("."):  # fully qualified: no search path
        return None
    for suffix in os.environ.get("PINERY_LOCAL_SEARCH", "").split():
        if f"{name}.{suffix}" in table:
            return table[f"{name}.{suffix}"]
    return None


def _unknown_cluster_name(host):
    """A name in the cluster domain that does not exist: cluster DNS answers NXDOMAIN at once."""
    domain = os.environ.get("PINERY_LOCAL_DOMAIN")
    return bool(domain) and isinstance(host, str) and host.rstrip(".").lower().endswith("." + domain)


def _not_found(host):
    return socket.gaierror(socket.EAI_NONAME, "Name or service not known")


def getaddrinfo(host, *args, **kwargs):
    addresses = _lookup(host)
    if not addresses:
        if _unknown_cluster_name(host):
            raise _not_found(host)
        return _real_getaddrinfo(host, *args, **kwargs)
    results = []
    for address in addresses:
        for info in _real_getaddrinfo(address, *args, **kwargs):
            if info not in results:
                results.append(info)
    return results


def gethostbyname(host):
    addresses = _lookup(host)
    if not addresses and _unknown_cluster_name(host):
        raise _not_found(host)
    return addresses[0] if addresses else _real_gethostbyname(host)


def gethostbyname_ex(host):
    addresses = _lookup(host)
    if not addresses and _unknown_cluster_name(host):
        raise _not_found(host)
    return (host, [], list(addresses)) if addresses else _real_gethostbyname_ex(host)


if _HOSTS_FILE:
    socket.getaddrinfo = getaddrinfo
    socket.gethostbyname = gethostbyname
    socket.gethostbyname_ex = gethostbyname_ex

import pinery_local_mounts  # noqa: E402  (same directory, on PYTHONPATH with this file)

pinery_local_mounts.install()
