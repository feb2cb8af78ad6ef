"""`GET /api/v1/namespaces/{ns}/pods/{name}/log`: container output that the pod runner writes.

Contract with the pod runner (the stand-in kubelet):
- the output (stdout and stderr together) of container `c` of pod `p` in namespace `ns` is
  appended to `<logs_dir>/<ns>/<p>/<c>.log`, created when the container starts; `logs_dir` is
  `LocalApiServer(logs_dir=...)`, by default `<state_dir>/logs`;
- when a container restarts, the runner renames its `<c>.log` to `<c>.previous.log` (replacing
  an older one) before starting it again, so `previous=true` serves the last attempt;
- the runner reports the pod's phase in `status.phase`; a `follow=true` stream ends once the
  phase is Succeeded or Failed (after sending what is left in the file) or the pod is gone.

Parameters: `container` (needed when the pod has several containers), `follow`, `tailLines`,
`limitBytes`, `previous`. `timestamps` and `sinceSeconds` are accepted and ignored. Errors are
those of a real API server: 404 for an unknown pod, 400 for a missing or unknown container,
for a container that has not started (no log file yet) and for a missing previous attempt.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from aiohttp import web

from pinery.local.apiserver import errors
from pinery.local.apiserver.resources import ResourceType
from pinery.local.apiserver.store import Store

POLL_SECONDS = 0.1
_DONE = ("Succeeded", "Failed")


def log_path(logs_dir: Path, namespace: str, pod: str, container: str, previous: bool = False) -> Path:
    suffix = ".previous.log" if previous else ".log"
    return Path(logs_dir) / namespace / pod / f"{container}{suffix}"


def choose_container(pod: dict[str, Any], wanted: str | None) -> str:
    name = pod["metadata"]["name"]
    spec = pod.get("spec") or {}
    containers = [c.get("name") for c in spec.get("containers") or []]
    init = [c.get("name") for c in spec.get("initContainers") or []]
    if not wanted:
        if len(containers) == 1:
            return containers[0]
        message = f"a container name must be specified for pod {name}, choose one of: [{' '.join(containers)}]"
        if init:
            message += f" or one of the init containers: [{' '.join(init)}]"
        raise errors.bad_request(message)
    if wanted not in containers + init:
        raise errors.bad_request(f"container {wanted} is not valid for pod {name}")
    return wanted


def waiting_reason(pod: dict[str, Any], container: str) -> str:
    """The reason kubelet_pods.go validateContainerLogStatus names: the container's waiting
    reason as reported, ContainerCreating before any status."""
    status = pod.get("status") or {}
    for cs in [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]:
        if cs.get("name") == container:
            return ((cs.get("state") or {}).get("waiting") or {}).get("reason") or "ContainerCreating"
    return "ContainerCreating"


def tail(data: bytes, lines: int | None) -> bytes:
    if lines is None:
        return data
    if lines <= 0:
        return b""
    parts = data.splitlines(keepends=True)
    return b"".join(parts[-lines:])


def _int(query, name: str) -> int | None:
    value = query.get(name)
    if value in (None, ""):
        return None
    try:
        return int(value)
    except ValueError:
        raise errors.bad_request(f'{name}: Invalid value: "{value}": must be an integer') from None


async def serve_log(request: web.Request, store: Store, rtype: ResourceType, namespace: str, name: str, logs_dir: Path) -> web.StreamResponse:
    pod = store.get(rtype.storage_key, namespace, name)
    if pod is None:
        raise errors.not_found(rtype, name)
    query = request.query
    container = choose_container(pod, query.get("container"))
    previous = query.get("previous", "").lower() == "true"
    follow = query.get("follow", "").lower() == "true"
    lines, limit = _int(query, "tailLines"), _int(query, "limitBytes")
    path = log_path(logs_dir, namespace, name, container, previous)
    if not path.exists():
        if previous:
            raise errors.bad_request(f'previous terminated container "{container}" in pod "{name}" not found')
        raise errors.bad_request(f'container "{container}" in pod "{name}" is waiting to start: {waiting_reason(pod, container)}')
    data = tail(path.read_bytes(), lines)
    if limit is not None:
        data = data[:limit]
    if not follow or previous:
        return web.Response(body=data, content_type="text/plain")
    response = web.StreamResponse(status=200, headers={"Content-Type": "text/plain"})
    await response.prepare(request)
    if data:
        await response.write(data)
    sent = len(data)
    offset = path.stat().st_size
    inode = path.stat().st_ino
    uid = pod["metadata"].get("uid")
    while True:
        current = store.get(rtype.storage_key, namespace, name)
        finished = current is None or current["metadata"].get("uid") != uid or (current.get("status") or {}).get("phase") in _DONE
        try:
            stat = path.stat()
        except FileNotFoundError:
            stat = None
        if stat is not None and (stat.st_ino != inode or stat.st_size < offset):
            inode, offset = stat.st_ino, 0  # a restart began a new file
        if stat is not None and stat.st_size > offset:
            with open(path, "rb") as fh:
                fh.seek(offset)
                chunk = fh.read(stat.st_size - offset)
            offset += len(chunk)
            if limit is not None:
                chunk = chunk[: max(0, limit - sent)]
            if chunk:
                await response.write(chunk)
                sent += len(chunk)
        if finished or (limit is not None and sent >= limit):
            break
        await asyncio.sleep(POLL_SECONDS)
    await response.write_eof()
    return response
