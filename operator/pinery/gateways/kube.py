"""The Kubernetes API as the operator uses it, beyond what Kopf does for its own resources.

A thin generic layer: paths are derived from apiVersion/kind for the few kinds pinery touches,
bodies and results are plain dicts, and requests are coroutines on the event loop
(pinery.gateways.kube_http), set up from the official client's configuration. 404 on delete and 409 on create are
answers, not errors: handlers are idempotent and re-run after crashes.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any, Awaitable, Iterator, TypeVar

from pinery.gateways.kube_http import Transport
from pinery.gateways.per_sweep import PerSweep

# A Kubernetes object or list as JSON: the operator reads and writes plain dicts.
Obj = dict[str, Any]
T = TypeVar("T")

# kind -> (apiVersion, plural) for every kind pinery reads or writes itself; a kind that two
# API groups define is keyed `Kind.group` (`kind_key`).
KINDS: dict[str, tuple[str, str]] = {
    "Pod": ("v1", "pods"),
    "Service": ("v1", "services"),
    "ConfigMap": ("v1", "configmaps"),
    "Secret": ("v1", "secrets"),
    "PersistentVolumeClaim": ("v1", "persistentvolumeclaims"),
    # Cluster-scoped: an FSDPJob that avoids failed nodes counts the nodes left (node_avoidance).
    "Node": ("v1", "nodes"),
    "FSDPJob": ("pinery.dev/v1alpha1", "fsdpjobs"),
    "VectorIndex": ("pinery.dev/v1alpha1", "vectorindexes"),
    "VectorIndexBackup": ("pinery.dev/v1alpha1", "vectorindexbackups"),
    "VectorIndexBackupSchedule": ("pinery.dev/v1alpha1", "vectorindexbackupschedules"),
    # Kueue (pinery.fsdpjob.kueue): the job's Workload; ResourceFlavor, WorkloadPriorityClass
    # and PriorityClass are cluster-scoped (read with namespace None).
    "Workload": ("kueue.x-k8s.io/v1beta2", "workloads"),
    "ResourceFlavor": ("kueue.x-k8s.io/v1beta2", "resourceflavors"),
    "WorkloadPriorityClass": ("kueue.x-k8s.io/v1beta2", "workloadpriorityclasses"),
    "PriorityClass": ("scheduling.k8s.io/v1", "priorityclasses"),
    # An FSDPJob's gang (spec.gang): scheduler-plugins' coscheduling and Volcano.
    "PodGroup.scheduling.x-k8s.io": ("scheduling.x-k8s.io/v1alpha1", "podgroups"),
    "PodGroup.scheduling.volcano.sh": ("scheduling.volcano.sh/v1beta1", "podgroups"),
}


class KubeError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message


def load_api_client(kubeconfig: str | None = None, context: str | None = None) -> Any:
    """An ApiClient for the cluster: in-cluster credentials in a pod, else a kubeconfig (its
    current context, or `context`)."""
    import kubernetes

    configuration = kubernetes.client.Configuration()
    if kubeconfig is None and context is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
        # The kubernetes client ships no type information.
        kubernetes.config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
    else:
        kubernetes.config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=configuration)  # type: ignore[no-untyped-call]
    return kubernetes.client.ApiClient(configuration)


def context_namespace(kubeconfig: str | None = None, context: str | None = None) -> str:
    """The namespace a kubeconfig context names (as kubectl takes it), else `default`; in a pod
    without a kubeconfig, the pod's own namespace."""
    import kubernetes

    if kubeconfig is None and context is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
        try:
            with open("/var/run/secrets/kubernetes.io/serviceaccount/namespace") as fh:
                return fh.read().strip() or "default"
        except OSError:
            return "default"
    try:
        contexts, active = kubernetes.config.list_kube_config_contexts(config_file=kubeconfig)  # type: ignore[no-untyped-call]
    except (kubernetes.config.ConfigException, OSError):
        return "default"
    chosen = next((c for c in contexts if c.get("name") == context), None) if context else active
    namespace = ((chosen or {}).get("context") or {}).get("namespace")
    return str(namespace) if namespace else "default"


def kind_key(obj: Obj) -> str:
    """The `KINDS` key of an object: `Kind.group` where that is a key, else its kind."""
    kind: str = obj["kind"]
    qualified = f"{kind}.{str(obj.get('apiVersion') or '').rpartition('/')[0]}"
    return qualified if qualified in KINDS else kind


def path_for(kind: str, namespace: str | None, name: str | None = None, subresource: str | None = None) -> str:
    api_version, plural = KINDS[kind]
    base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
    if namespace:
        base += f"/namespaces/{namespace}"
    base += f"/{plural}"
    if name:
        base += f"/{name}"
    if subresource:
        base += f"/{subresource}"
    return base


class Kube:
    def __init__(self, api_client: Any):
        self.api_client = api_client  # its configuration says where and how; it streams logs for the CLI
        self.transport = Transport(api_client.configuration)
        self._sweep_secrets: PerSweep[Obj | None] = PerSweep()  # (namespace, name) -> the Secret

    async def _run(self, method: str, path: str, *, body: Any = None, query: dict[str, Any] | None = None,
                   content_type: str = "application/json") -> Obj:
        """A request; its JSON answer (an object or a list)."""
        text = await self._run_text(method, path, body=body, query=query, content_type=content_type)
        result: Obj = json.loads(text) if text else {}
        return result

    async def _run_text(self, method: str, path: str, *, body: Any = None, query: dict[str, Any] | None = None,
                        content_type: str = "application/json") -> str:
        data = json.dumps(body).encode() if body is not None else None
        status, answer, reason = await self.transport.request(method, path, query=query, body=data, content_type=content_type if data else None)
        if status >= 400:
            raise KubeError(status, _status_message(answer, reason))
        return answer.decode("utf-8", errors="replace")

    async def close(self) -> None:
        """Close the connections this event loop opened."""
        await self.transport.close()

    def sync(self, request: Awaitable[T]) -> T:
        """`request` (a coroutine of this client's) run to its end from synchronous code (the
        CLI), on an event loop of its own whose connections close with it."""

        async def once() -> T:
            try:
                return await request
            finally:
                await self.close()

        return asyncio.run(once())

    async def get(self, kind: str, namespace: str | None, name: str) -> Obj | None:
        try:
            return await self._run("GET", path_for(kind, namespace, name))
        except KubeError as exc:
            if exc.status == 404:
                return None
            raise

    async def served(self, kind: str) -> bool:
        """Whether the API server serves `kind` (its API group version lists the resource): a
        missing CRD and a missing object both answer 404 to a GET of the object."""
        api_version, plural = KINDS[kind]
        path = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
        try:
            listing = await self._run("GET", path)
        except KubeError as exc:
            if exc.status == 404:
                return False
            raise
        return any(r.get("name") == plural for r in listing.get("resources") or [])

    async def list(self, kind: str, namespace: str | None, label_selector: str = "") -> list[Obj]:
        query = {"labelSelector": label_selector} if label_selector else None
        result = await self._run("GET", path_for(kind, namespace), query=query)
        items: list[Obj] = result.get("items", [])
        return items

    async def create(self, obj: Obj) -> Obj:
        """Create `obj`; when it already exists, return the existing object instead."""
        meta = obj["metadata"]
        try:
            return await self._run("POST", path_for(kind_key(obj), meta.get("namespace")), body=obj)
        except KubeError as exc:
            if exc.status != 409:
                raise
        existing = await self.get(kind_key(obj), meta.get("namespace"), meta["name"])
        if existing is None:  # deleted in between: let the caller's next pass try again
            raise KubeError(409, f"{obj['kind']} {meta['name']} is being replaced")
        return existing

    async def merge_patch(self, kind: str, namespace: str | None, name: str, patch: Obj, subresource: str | None = None) -> Obj:
        return await self._run(
            "PATCH", path_for(kind, namespace, name, subresource), body=patch, content_type="application/merge-patch+json"
        )

    async def apply(self, obj: Obj) -> Obj:
        """Create `obj`, or merge its labels, annotations, owner references and data into it."""
        meta = obj["metadata"]
        current = await self.get(obj["kind"], meta.get("namespace"), meta["name"])
        if current is None:
            return await self.create(obj)
        patch = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata")}
        patch["metadata"] = {k: meta[k] for k in ("labels", "annotations", "ownerReferences") if k in meta}
        if _contains(current, patch):  # already so: no write (resyncs apply the same object again)
            return current
        return await self.merge_patch(obj["kind"], meta.get("namespace"), meta["name"], patch)

    async def delete(self, kind: str, namespace: str | None, name: str, *, grace_seconds: int | None = None,
                     propagation: str | None = None, uid: str | None = None) -> bool:
        """Delete; False when it was already gone (or, with `uid`, replaced by a newer object)."""
        body: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if grace_seconds is not None:
            body["gracePeriodSeconds"] = grace_seconds
        if propagation:
            body["propagationPolicy"] = propagation
        if uid:
            body["preconditions"] = {"uid": uid}
        try:
            await self._run("DELETE", path_for(kind, namespace, name), body=body)
        except KubeError as exc:
            if exc.status == 404 or (uid and exc.status == 409):
                return False
            raise
        return True

    async def secret_value(self, namespace: str, name: str, key: str, sweep: int | None = None) -> str | None:
        """The decoded value of a Secret key, or None when the Secret or key is missing. Passes
        of one resync sweep (`sweep`, its number) share one read of each Secret."""
        import base64

        if sweep is None:
            secret = await self.get("Secret", namespace, name)
        else:
            secret = await self._sweep_secrets.read((namespace, name), sweep, lambda: self.get("Secret", namespace, name))
        if secret is None:
            return None
        data: dict[str, str] = secret.get("data") or {}
        if key in data:
            return base64.b64decode(data[key]).decode("utf-8").strip()
        string_data: dict[str, str] = secret.get("stringData") or {}
        return string_data.get(key)

    async def pod_log(self, namespace: str, name: str, container: str | None = None, tail_lines: int | None = None,
                      timestamps: bool = False, since_time: str | None = None) -> str:
        query: dict[str, Any] = {}
        if container:
            query["container"] = container
        if tail_lines is not None:
            query["tailLines"] = tail_lines
        if since_time is not None:
            query["sinceTime"] = since_time
        if timestamps:
            query["timestamps"] = "true"
        return await self._run_text("GET", path_for("Pod", namespace, name, "log"), query=query)


    def pod_log_stream(self, namespace: str, name: str, container: str | None = None, *, follow: bool = False,
                       tail_lines: int | None = None, since_seconds: int | None = None, since_time: str | None = None,
                       timestamps: bool = False) -> Iterator[bytes]:
        """The pod's log as it arrives, in chunks (synchronous: `pinery logs` reads each stream
        in a thread of its own). Raises KubeError for an answer >= 400."""
        query: dict[str, Any] = {}
        for key, value in (("container", container), ("tailLines", tail_lines), ("sinceSeconds", since_seconds),
                           ("sinceTime", since_time)):
            if value is not None:
                query[key] = value
        if follow:
            query["follow"] = "true"
        if timestamps:
            query["timestamps"] = "true"
        serialized = self.api_client.param_serialize(
            "GET", path_for("Pod", namespace, name, "log"), query_params=list(query.items()),
            header_params={"Accept": "*/*"}, auth_settings=["BearerToken"],
        )
        response = self.api_client.call_api(*serialized)
        raw = response.response  # urllib3's response, not read yet (the client streams it)
        try:
            if response.status >= 400:
                raise KubeError(response.status, _status_message(raw.read(), response.reason))
            yield from raw.stream(64 * 1024, decode_content=True)
        finally:
            raw.release_conn()


def _status_message(data: bytes, reason: Any) -> str:
    try:
        message = json.loads(data).get("message")
        return message if isinstance(message, str) and message else str(reason)
    except (TypeError, ValueError, AttributeError):
        return str(reason)


def _contains(current: Any, patch: Any) -> bool:
    """Whether merging `patch` into `current` would change nothing (lists compare whole)."""
    if isinstance(patch, dict):
        return isinstance(current, dict) and all(_contains(current.get(k), v) for k, v in patch.items())
    same: bool = current == patch
    return same
