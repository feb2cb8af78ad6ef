"""`GET /api/v1/namespaces/{ns}/pods/{name}/log`: container output that the pod runner writes.

Contract with the pod runner (the stand-in kubelet):
- the output (stdout and stderr together) of container `c` of pod `p` in namespace `ns` is
  appended to `<logs_dir>/<ns>/<p>/<c>.log`, created when the container starts, one record per
  line in the kubelet's (CRI) format, `<RFC3339Nano time> stdout|stderr F|P <text>`
  (`podrunner/crilog.py`); lines in no such format (files written by hand) are served as they
  are, with no time;
- when a container restarts, the runner renames its `<c>.log` to `<c>.previous.log` (replacing
  an older one) before starting it again, so `previous=true` serves the last attempt;
- the runner reports the pod's phase in `status.phase`; a `follow=true` stream ends once the
  phase is Succeeded or Failed (after sending what is left in the file) or the pod is gone.

Parameters (PodLogOptions): `container` (needed when the pod has several containers),
`follow`, `previous`, `tailLines`, `sinceSeconds`, `sinceTime`, `timestamps`, `limitBytes`,
applied as the kubelet's ReadLogs applies them (`pkg/kubelet/kuberuntime/logs/logs.go`): the
last `tailLines` lines of the file, then those not older than the `since` time, then each with
its time in front, then at most `limitBytes` bytes. They are validated as
`pkg/apis/core/validation` ValidatePodLogOptions does (422 `PodLogOptions "p" is invalid`, as
`pkg/registry/core/pod/rest/log.go` answers). Other errors are those of a real API server: 404
for an unknown pod, 400 for a missing or unknown container, for a container that has not started
(no log file yet) and for a missing previous attempt.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from aiohttp import web

from pinery.local.apiserver import errors
from pinery.local.apiserver.resources import ResourceType
from pinery.local.apiserver.store import Store
from pinery.local.podrunner import crilog

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


def _int(query, name: str) -> int | None:
    value = query.get(name)
    if value in (None, ""):
        return None
    try:
        return int(value)
    except ValueError:
        raise errors.bad_request(f'{name}: Invalid value: "{value}": must be an integer') from None


def _time(query, name: str) -> int | None:
    """A `sinceTime` query value: RFC 3339, as metav1.Time's UnmarshalQueryParameter takes it."""
    value = query.get(name)
    if value in (None, ""):
        return None
    try:
        return crilog.parse_time(value)
    except ValueError:
        raise errors.bad_request(f'{name}: Invalid value: "{value}": must be an RFC 3339 time') from None


def _invalid(name: str, problems: list[tuple[str, str, str]]) -> errors.ApiError:
    """errors.NewInvalid(api.Kind("PodLogOptions"), name, errs): each (field, type, detail) is
    a cause, and the message lists them as `field: Type: detail` (a field of "" included)."""
    shown = [f"{path}: {kind}: {detail}" for path, kind, detail in problems]
    listed = shown[0] if len(shown) == 1 else "[" + ", ".join(shown) + "]"
    causes = []
    for path, kind, detail in problems:
        cause = {"reason": errors.cause_reason(kind), "message": f"{kind}: {detail}"}
        if path:
            cause["field"] = path
        causes.append(cause)
    details = {"name": name, "kind": "PodLogOptions", "causes": causes}
    return errors.ApiError(422, "Invalid", f'PodLogOptions "{name}" is invalid: {listed}', details)


def validate_options(name: str, tail_lines: int | None, limit_bytes: int | None,
                     since_seconds: int | None, since_time: int | None) -> None:
    """ValidatePodLogOptions (pkg/apis/core/validation/validation.go)."""
    problems = []
    if tail_lines is not None and tail_lines < 0:
        problems.append(("tailLines", "Invalid value", f"{tail_lines}: must be greater than or equal to 0"))
    if limit_bytes is not None and limit_bytes < 1:
        problems.append(("limitBytes", "Invalid value", f"{limit_bytes}: must be greater than 0"))
    if since_seconds is not None and since_time is not None:
        problems.append(("", "Forbidden", "at most one of `sinceTime` or `sinceSeconds` may be specified"))
    elif since_seconds is not None and since_seconds < 1:
        problems.append(("sinceSeconds", "Invalid value", f"{since_seconds}: must be greater than 0"))
    if problems:
        raise _invalid(name, problems)


async def serve_log(request: web.Request, store: Store, rtype: ResourceType, namespace: str, name: str, logs_dir: Path) -> web.StreamResponse:
    pod = store.get(rtype.storage_key, namespace, name)
    if pod is None:
        raise errors.not_found(rtype, name)
    query = request.query
    lines, limit = _int(query, "tailLines"), _int(query, "limitBytes")
    since_seconds, since_time = _int(query, "sinceSeconds"), _time(query, "sinceTime")
    validate_options(name, lines, limit, since_seconds, since_time)
    container = choose_container(pod, query.get("container"))
    previous = query.get("previous", "").lower() == "true"
    follow = query.get("follow", "").lower() == "true"
    timestamps = query.get("timestamps", "").lower() == "true"
    path = log_path(logs_dir, namespace, name, container, previous)
    if not path.exists():
        if previous:
            raise errors.bad_request(f'previous terminated container "{container}" in pod "{name}" not found')
        raise errors.bad_request(f'container "{container}" in pod "{name}" is waiting to start: {waiting_reason(pod, container)}')
    reader = crilog.Reader(since=crilog.since_ns(since_seconds, since_time, time.time_ns()), timestamps=timestamps, limit=limit)
    content = path.read_bytes()
    if not follow or previous:
        return web.Response(body=reader.render(crilog.tail_lines(crilog.split_lines(content), lines)), content_type="text/plain")
    # Follow: complete lines only, the rest of a record being written is kept for the next read.
    end = content.rfind(b"\n") + 1
    pending = content[end:]
    data = reader.render(crilog.tail_lines(crilog.split_lines(content[:end]), lines))
    response = web.StreamResponse(status=200, headers={"Content-Type": "text/plain"})
    await response.prepare(request)
    if data:
        await response.write(data)
    offset = len(content)
    inode = path.stat().st_ino
    uid = pod["metadata"].get("uid")
    while not reader.exhausted:
        current = store.get(rtype.storage_key, namespace, name)
        finished = current is None or current["metadata"].get("uid") != uid or (current.get("status") or {}).get("phase") in _DONE
        try:
            stat = path.stat()
        except FileNotFoundError:
            stat = None
        if stat is not None and (stat.st_ino != inode or stat.st_size < offset):
            inode, offset, pending = stat.st_ino, 0, b""  # a restart began a new file
        if stat is not None and stat.st_size > offset:
            with open(path, "rb") as fh:
                fh.seek(offset)
                chunk = fh.read(stat.st_size - offset)
            offset += len(chunk)
            chunk = pending + chunk
            end = chunk.rfind(b"\n") + 1
            pending = chunk[end:]
            data = reader.render(crilog.split_lines(chunk[:end]))
            if data:
                await response.write(data)
        if finished:
            if pending and not reader.exhausted:  # an unfinished last line, as ReadLogs sends it at the end
                data = reader.render([pending])
                if data:
                    await response.write(data)
            break
        await asyncio.sleep(POLL_SECONDS)
    await response.write_eof()
    return response
