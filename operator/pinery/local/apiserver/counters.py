"""Requests served, by verb and resource: what a client such as the operator costs the server.

One Counter increment per request on the server's loop, nothing else; read it with
`LocalApiServer.request_counts()` (the benchmarks compare it with the least a task needs).
Keys read like an audit log: `create pods`, `patch fsdpjobs/status`, `watch vectorindexes`,
`get discovery`.
"""

from __future__ import annotations

from collections import Counter

_WRITE_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch"}


def verb(method: str, named: bool, watch: bool = False) -> str:
    """The Kubernetes verb of a request to a resource (`list` and `get` differ by a name)."""
    if method == "GET":
        return "get" if named else ("watch" if watch else "list")
    if method == "DELETE":
        return "delete" if named else "deletecollection"
    return _WRITE_VERBS.get(method, method.lower())


class RequestCounter:
    def __init__(self) -> None:
        self._counts: Counter[str] = Counter()

    def count(self, verb_: str, resource: str) -> None:
        self._counts[f"{verb_} {resource}"] += 1

    def snapshot(self) -> dict[str, int]:
        return dict(self._counts)

    def reset(self) -> None:
        self._counts.clear()
