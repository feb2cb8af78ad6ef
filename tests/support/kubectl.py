"""A minimal API server that real kubectl can talk to, for testing the pure modules it serves.

Only what kubectl needs on the way to the request under test: /version, discovery, the OpenAPI
v3 documents (from `openapi.py`, or none), Tables (from `table.py`), get/list, create (JSON, or
protobuf through `protobuf.py`) and a merge-style patch.
It records every request. This is a test helper, not the local control plane.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import threading
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from pinery.local.apiserver import openapi, protobuf, table
from pinery.local.apiserver.resources import ResourceType
from tests.conftest import IN_CI

KUBECTL_TIMEOUT = 60


def kubectl_binary() -> str:
    """The kubectl on PATH: skipped without one on a user's machine, a failure in CI."""
    path = shutil.which("kubectl")
    if path is None:
        if IN_CI:
            pytest.fail("kubectl is not installed, and CI must not skip the tests that need it")
        pytest.skip("kubectl is not installed")
    return path


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes

    @property
    def content_type(self) -> str:
        return self.headers.get("Content-Type", "")


@dataclass
class KubectlStub:
    types: list[ResourceType]
    workdir: Path
    serve_openapi: bool = True
    objects: list[dict[str, Any]] = field(default_factory=list)
    requests: list[Recorded] = field(default_factory=list)

    def __enter__(self) -> KubectlStub:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._loop = asyncio.new_event_loop()
        started = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(started,), daemon=True)
        self._thread.start()
        if not started.wait(10):
            raise RuntimeError("the stub server did not start")
        self.kubeconfig = self.workdir / "kubeconfig"
        self.kubeconfig.write_text(json.dumps({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "stub", "cluster": {"server": f"http://127.0.0.1:{self.port}"}}],
            "users": [{"name": "stub", "user": {"token": "stub"}}],
            "contexts": [{"name": "stub", "context": {"cluster": "stub", "user": "stub", "namespace": "default"}}],
            "current-context": "stub",
        }))
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _serve(self, started: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        self.port = self._runner.addresses[0][1]
        started.set()
        self._loop.run_forever()

    def kubectl(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
        # A fresh cache directory per stub: kubectl caches discovery and OpenAPI on disk.
        return subprocess.run(
            [kubectl_binary(), "--kubeconfig", str(self.kubeconfig), "--cache-dir", str(self.workdir / "cache"), *args],
            capture_output=True, text=True, timeout=KUBECTL_TIMEOUT, cwd=cwd,
        )

    def paths(self) -> list[str]:
        return [f"{r.method} {r.path}" for r in self.requests]

    def posts(self) -> list[Recorded]:
        return [r for r in self.requests if r.method == "POST"]

    # --- the server --------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        self.requests.append(Recorded(request.method, request.path, dict(request.query), dict(request.headers), body))
        path = request.path.rstrip("/")
        if path == "/version":
            return web.json_response({"major": "1", "minor": "32", "gitVersion": "v1.32.0", "platform": "linux/amd64"})
        if path == "/api":
            return web.json_response({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []})
        if path == "/apis":
            return web.json_response(self._groups())
        if path.startswith("/openapi/v3"):
            return self._openapi(path.removeprefix("/openapi/v3").strip("/"))
        if path.startswith("/openapi/"):
            return _status(404, "NotFound", f"{path} is not served")
        parts = path.strip("/").split("/")
        if parts[0] == "api":
            group, version, rest = "", parts[1], parts[2:]
        elif parts[0] == "apis" and len(parts) >= 3:
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            return _status(404, "NotFound", f"{path} is not served")
        if not rest:
            return web.json_response(self._resources(group, version))
        namespace = ""
        if rest[0] == "namespaces" and len(rest) >= 3:
            namespace, rest = rest[1], rest[2:]
        rtype = next((t for t in self.types if (t.group, t.version, t.plural) == (group, version, rest[0])), None)
        if rtype is None:
            return _status(404, "NotFound", f"the server could not find the requested resource ({path})")
        name = rest[1] if len(rest) > 1 else ""
        if request.method == "POST" and not name:
            return self._create(rtype, namespace, request.headers.get("Content-Type", ""), body)
        if request.method == "GET":
            return self._get(rtype, namespace, name, request)
        if request.method == "PATCH" and name:
            return self._patch(rtype, namespace, name, body)
        return _status(405, "MethodNotAllowed", f"{request.method} is not served by the stub")

    def _groups(self) -> dict[str, Any]:
        groups: dict[str, list[str]] = {}
        for t in self.types:
            if t.group and t.version not in groups.setdefault(t.group, []):
                groups[t.group].append(t.version)
        return {
            "kind": "APIGroupList",
            "apiVersion": "v1",
            "groups": [
                {
                    "name": g,
                    "versions": [{"groupVersion": f"{g}/{v}", "version": v} for v in versions],
                    "preferredVersion": {"groupVersion": f"{g}/{versions[0]}", "version": versions[0]},
                }
                for g, versions in groups.items()
            ],
        }

    def _resources(self, group: str, version: str) -> dict[str, Any]:
        resources = []
        for t in self.types:
            if (t.group, t.version) != (group, version):
                continue
            resources.append({
                "name": t.plural, "singularName": t.singular_name, "namespaced": t.namespaced, "kind": t.kind,
                "verbs": list(t.verbs), "shortNames": list(t.short_names), "categories": list(t.categories),
            })
            for sub in t.subresources:
                resources.append({"name": f"{t.plural}/{sub}", "singularName": "", "namespaced": t.namespaced,
                                  "kind": t.kind, "verbs": ["get", "patch", "update"]})
        return {"kind": "APIResourceList", "apiVersion": "v1",
                "groupVersion": f"{group}/{version}" if group else version, "resources": resources}

    def _openapi(self, rest: str) -> web.Response:
        if not self.serve_openapi:
            return _status(404, "NotFound", "OpenAPI is not served")
        if not rest:
            return web.json_response(openapi.v3_index(self.types))
        parts = rest.split("/")
        if parts[0] == "api" and len(parts) == 2:
            return web.json_response(openapi.v3_document("", parts[1], self.types))
        if parts[0] == "apis" and len(parts) == 3:
            return web.json_response(openapi.v3_document(parts[1], parts[2], self.types))
        return _status(404, "NotFound", f"/openapi/v3/{rest} is not served")

    def _create(self, rtype: ResourceType, namespace: str, content_type: str, body: bytes) -> web.Response:
        if content_type.startswith(protobuf.CONTENT_TYPE):
            try:
                obj = protobuf.decode(body)
            except protobuf.ProtobufError as exc:
                return _status(415, "UnsupportedMediaType", str(exc))
        else:
            obj = json.loads(body)
        meta = obj.setdefault("metadata", {})
        if rtype.namespaced:
            meta["namespace"] = namespace
        if not meta.get("name"):
            meta["name"] = meta.get("generateName", "") + uuid.uuid4().hex[:5]
        meta.update(uid=str(uuid.uuid4()), resourceVersion=str(len(self.requests)),
                    creationTimestamp=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
        self.objects.append(obj)
        return web.json_response(obj, status=201)

    def _patch(self, rtype: ResourceType, namespace: str, name: str, body: bytes) -> web.Response:
        found = self._find(rtype, namespace, name)
        if not found:
            return _status(404, "NotFound", f'{rtype.plural} "{name}" not found', name=name, kind=rtype.plural)
        _merge(found[0], json.loads(body))
        return web.json_response(found[0])

    def _find(self, rtype: ResourceType, namespace: str, name: str) -> list[dict[str, Any]]:
        return [
            o for o in self.objects
            if o.get("kind") == rtype.kind and o.get("apiVersion") == rtype.api_version
            and (not rtype.namespaced or not namespace or o["metadata"].get("namespace") == namespace)
            and (not name or o["metadata"]["name"] == name)
        ]

    def _get(self, rtype: ResourceType, namespace: str, name: str, request: web.Request) -> web.Response:
        found = self._find(rtype, namespace, name)
        if name and not found:
            return _status(404, "NotFound", f'{rtype.plural} "{name}" not found', name=name, kind=rtype.plural)
        if "as=Table" in request.headers.get("Accept", ""):
            include = request.query.get("includeObject", "Metadata")
            return web.json_response(table.to_table(rtype, found, resource_version="1", include_object=include))
        if name:
            return web.json_response(found[0])
        return web.json_response({"kind": f"{rtype.kind}List", "apiVersion": rtype.api_version,
                                  "metadata": {"resourceVersion": "1"}, "items": found})


def _merge(target: dict[str, Any], patch: dict[str, Any]) -> None:
    """A JSON merge patch; strategic-merge directives ($setElementOrder, ...) are dropped."""
    for key, value in patch.items():
        if key.startswith("$"):
            continue
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = value


def _status(code: int, reason: str, message: str, **details: str) -> web.Response:
    return web.json_response(
        {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
         "reason": reason, "details": details, "code": code},
        status=code,
    )
