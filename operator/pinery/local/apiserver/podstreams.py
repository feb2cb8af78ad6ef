"""`pods/{name}/exec`, `attach` and `portforward`: refused, with a message saying why.

Local mode runs containers as local processes, not in a container runtime, so there is no
stream to open into one. The API server checks the request first as kube-apiserver does
(pkg/registry/core/pod/strategy.go, streamLocation/PortForwardLocation: the pod, the container,
a host assigned), then answers what it answers when the kubelet refuses the upgrade: a Status
instead of `101 Switching Protocols`. kubectl, over WebSocket or SPDY, prints its message
("unable to upgrade connection: ...").
"""

from __future__ import annotations

from aiohttp import web

from pinery.local.apiserver import errors
from pinery.local.apiserver.logs import choose_container
from pinery.local.apiserver.resources import ResourceType
from pinery.local.apiserver.store import Store

SUBRESOURCES = ("exec", "attach", "portforward")

_INSTEAD = {
    "exec": (
        "run the command on this machine instead (a container's processes carry PINERY_LOCAL_CONTAINER=<pod uid>/<container> in their environment), "
        'or read its output with "kubectl logs {pod} -c {container}"'
    ),
    "attach": 'read its output with "kubectl logs -f {pod} -c {container}" instead',
    "portforward": "connect to the pod's own address and port instead (status.podIP, reachable from this machine)",
}


def refusal(subresource: str, pod: str, container: str = "") -> str:
    """The message a refused exec, attach or port-forward answers with."""
    what = {"exec": "exec", "attach": "attach", "portforward": "port-forward"}[subresource]
    instead = _INSTEAD[subresource].format(pod=pod, container=container)
    return f"local mode runs containers as local processes, not in a container runtime, so {what} is not available: {instead}"


async def refuse(request: web.Request, store: Store, rtype: ResourceType, namespace: str, name: str, subresource: str) -> web.Response:
    if request.method not in ("GET", "POST"):
        raise errors.method_not_allowed("the server does not allow this method on the requested resource")
    pod = store.get(rtype.storage_key, namespace, name)
    if pod is None:
        raise errors.not_found(rtype, name)
    container = ""
    if subresource != "portforward":
        container = choose_container(pod, request.query.get("container"))
    if not (pod.get("spec") or {}).get("nodeName"):
        raise errors.bad_request(f"pod {name} does not have a host assigned")
    raise errors.bad_request(refusal(subresource, name, container))
