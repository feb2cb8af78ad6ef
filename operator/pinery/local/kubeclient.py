"""A small asyncio client for the Kubernetes API (aiohttp), for local mode's own processes.

The pod runner needs streaming watches and a handful of calls; `pinery local up` needs to
apply manifests. Credentials come from a kubeconfig's current context (server and bearer
token, as `pinery local up` writes them).
"""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
from pathlib import Path
from typing import Any, AsyncIterator

import aiohttp
import yaml


class ApiError(Exception):
    def __init__(self, status: int, body: Any):
        message = body.get("message") if isinstance(body, dict) else str(body)
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.body = body


class WatchExpired(Exception):
    """The watch's resourceVersion is too old (410 Gone): list again."""


def read_kubeconfig(path: Path) -> tuple[str, str | None, bytes | None]:
    """(server URL, bearer token, CA certificate PEM) of the current context."""
    config = yaml.safe_load(Path(path).read_text())
    context_name = config.get("current-context")
    context = next(c["context"] for c in config["contexts"] if c["name"] == context_name)
    cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == context["cluster"])
    user: dict[str, Any] = next((u["user"] for u in config.get("users", []) if u["name"] == context.get("user")), {})
    ca = cluster.get("certificate-authority-data")
    if ca:
        ca_pem = base64.b64decode(ca)
    elif cluster.get("certificate-authority"):
        ca_pem = Path(cluster["certificate-authority"]).read_bytes()
    else:
        ca_pem = None
    return cluster["server"], user.get("token"), ca_pem


class KubeClient:
    def __init__(self, server: str, token: str | None = None, ca_pem: bytes | None = None):
        self.server = server.rstrip("/")
        self.token = token
        self.ca_pem = ca_pem  # handed on to pods as their service account's ca.crt
        self._ssl: ssl.SSLContext | bool = True
        if ca_pem:
            self._ssl = ssl.create_default_context(cadata=ca_pem.decode())
        self._session: aiohttp.ClientSession | None = None

    @classmethod
    def from_kubeconfig(cls, path: Path) -> "KubeClient":
        return cls(*read_kubeconfig(path))

    async def __aenter__(self) -> "KubeClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    def _headers(self, content_type: str | None = None) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if content_type:
            headers["Content-Type"] = content_type
        return headers

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=10),
                connector=aiohttp.TCPConnector(ssl=self._ssl),
            )
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def request(self, method: str, path: str, *, body: Any = None, params: dict | None = None,
                      content_type: str = "application/json", timeout: float = 30, accept: str | None = None) -> Any:
        data = json.dumps(body) if body is not None else None
        headers = self._headers(content_type if data is not None else None)
        if accept:
            headers["Accept"] = accept
        async with self.session.request(
            method, self.server + path, data=data, params=params, headers=headers,
            timeout=aiohttp.ClientTimeout(total=timeout),
        ) as response:
            text = await response.text()
            payload = json.loads(text) if text and response.content_type == "application/json" else text
            if response.status >= 400:
                raise ApiError(response.status, payload)
            return payload

    async def get(self, path: str, **params: Any) -> Any:
        return await self.request("GET", path, params=params or None)

    async def get_or_none(self, path: str) -> dict | None:
        try:
            return await self.get(path)
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise

    async def create(self, path: str, body: dict) -> dict:
        return await self.request("POST", path, body=body)

    async def merge_patch(self, path: str, body: dict) -> dict:
        return await self.request("PATCH", path, body=body, content_type="application/merge-patch+json")

    async def strategic_patch(self, path: str, body: dict) -> dict:
        return await self.request("PATCH", path, body=body, content_type="application/strategic-merge-patch+json")

    async def delete(self, path: str, body: dict | None = None) -> Any:
        try:
            return await self.request("DELETE", path, body=body)
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise

    async def watch(self, path: str, resource_version: str, timeout_seconds: int = 300) -> AsyncIterator[tuple[str, dict]]:
        """(type, object) events from `resource_version` on; raises WatchExpired on 410."""
        params = {
            "watch": "true",
            "resourceVersion": resource_version,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(timeout_seconds),
        }
        async with self.session.get(
            self.server + path, params=params, headers=self._headers(),
            timeout=aiohttp.ClientTimeout(total=None, sock_read=timeout_seconds + 30),
        ) as response:
            if response.status == 410:
                raise WatchExpired(path)
            if response.status >= 400:
                raise ApiError(response.status, await response.text())
            async for line in response.content:
                if not line.strip():
                    continue
                event = json.loads(line)
                if event.get("type") == "ERROR":
                    if (event.get("object") or {}).get("code") == 410:
                        raise WatchExpired(path)
                    raise ApiError((event.get("object") or {}).get("code", 500), event.get("object"))
                yield event["type"], event["object"]

    async def list_and_watch(self, path: str, stop: asyncio.Event) -> AsyncIterator[tuple[str, dict]]:
        """Every object as ADDED, then changes, re-listing whenever the watch expires.

        After each listing comes a ("LISTED", {"uids": [...]}) event, so that consumers can
        notice objects deleted while no watch was open.
        """
        while not stop.is_set():
            listing = await self.get(path)
            version = listing["metadata"].get("resourceVersion", "")
            for item in listing.get("items", []):
                yield "ADDED", item
            yield "LISTED", {"uids": [i["metadata"].get("uid") for i in listing.get("items", [])]}
            try:
                while not stop.is_set():
                    async for kind, obj in self.watch(path, version):
                        if kind == "BOOKMARK":
                            version = obj["metadata"].get("resourceVersion", version)
                            continue
                        version = obj["metadata"].get("resourceVersion", version)
                        yield kind, obj
            except (WatchExpired, aiohttp.ClientPayloadError):
                continue
