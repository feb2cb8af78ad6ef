"""Cluster DNS for Python processes of local-mode pods (loaded through PYTHONPATH).

The pod runner writes a hosts file (`name address` per line) and points PINERY_LOCAL_HOSTS at
it; names found there resolve to their loopback address, everything else as usual.
"""

import os
import socket

_HOSTS_FILE = os.environ.get("PINERY_LOCAL_HOSTS")
_real_getaddrinfo = socket.getaddrinfo
_real_gethostbyname = socket.gethostbyname
_cache = {"mtime": None, "table": {}}


def _table():
    try:
        mtime = os.stat(_HOSTS_FILE).st_mtime_ns
    except OSError:
        return {}
    if mtime != _cache["mtime"]:
        table = {}
        with open(_HOSTS_FILE) as hosts:
            for line in hosts:
                parts = line.split()
                if len(parts) == 2:
                    table[parts[0]] = parts[1]
        _cache.update(mtime=mtime, table=table)
    return _cache["table"]


def _lookup(host):
    if not isinstance(host, str):
        return None
    table = _table()
    name = host.rstrip(".").lower()
    if name in table:
        return table[name]
    search = os.environ.get("PINERY_LOCAL_SEARCH", "").split()
    for suffix in search:
        if f"{name}.{suffix}" in table:
            return table[f"{name}.{suffix}"]
    return None


def getaddrinfo(host, *args, **kwargs):
    address = _lookup(host)
    return _real_getaddrinfo(address or host, *args, **kwargs)


def gethostbyname(host):
    return _lookup(host) or _real_gethostbyname(host)


if _HOSTS_FILE:
    socket.getaddrinfo = getaddrinfo
    socket.gethostbyname = gethostbyname
