"""A small synchronous client for the emulator's /_emulator/ admin routes (tests, benchmarks)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any


class AdminError(RuntimeError):
    pass


class EmulatorAdmin:
    def __init__(self, url: str, timeout: float = 10.0) -> None:
        self.base = url.rstrip("/") + "/_emulator"
        self.timeout = timeout

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            raise AdminError(f"{method} {path}: {exc.code} {exc.read().decode(errors='replace')}") from exc

    def health(self) -> dict:
        return self._call("GET", "/health")

    # faults
    def faults(self) -> dict:
        return self._call("GET", "/faults")

    def set_faults(self, rules: list[dict], seed: int | None = None) -> dict:
        doc: dict[str, Any] = {"rules": rules}
        if seed is not None:
            doc["seed"] = seed
        return self._call("PUT", "/faults", doc)

    def add_fault(self, operation: str = "*", kind: str = "status", **fields: Any) -> dict:
        return self._call("POST", "/faults", {"operation": operation, "kind": kind, **fields})

    def clear_faults(self) -> dict:
        return self._call("DELETE", "/faults")

    # counters
    def stats(self) -> dict:
        return self._call("GET", "/stats")

    def reset_stats(self) -> dict:
        return self._call("DELETE", "/stats")

    def requests(self, since: int = 0) -> list[dict]:
        """The request log (oldest first): operation, index, arrived, answered (epoch seconds),
        status (0: dropped), retryAfter and apiVersion (the header sent) of each request after sequence number `since`."""
        return self._call("GET", f"/requests?since={int(since)}")["requests"]

    # settings
    def settings(self) -> dict:
        return self._call("GET", "/settings")

    def configure(self, **changes: Any) -> dict:
        return self._call("PATCH", "/settings", changes)

    def flush(self) -> None:
        self._call("POST", "/flush")
