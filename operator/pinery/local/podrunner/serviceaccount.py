"""In-cluster credentials of a pod, as a kubelet gives them.

Upstream, the ServiceAccount admission plugin (plugin/pkg/admission/serviceaccount) adds a
projected `kube-api-access-*` volume (a bound token, the kube-root-ca.crt ConfigMap, the
namespace) mounted at /var/run/secrets/kubernetes.io/serviceaccount unless
automountServiceAccountToken is false on the pod or, failing that, on its ServiceAccount; the
kubelet fills the token through the TokenRequest API. Here the pod runner does both when the
pod starts (the token is not refreshed: it lives an hour longer than any test). The kubelet
also gives every container the `kubernetes` Service's variables (pkg/kubelet/kubelet_pods.go
getServiceEnvVarMap); they point at the local control plane.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from pinery.local.kubeclient import ApiError, KubeClient

MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
# The admission plugin's default: an hour and the 7 s the kubelet adds to spot legacy use.
TOKEN_SECONDS = 3607


def automount(pod: dict, account: dict | None) -> bool:
    """The pod's field wins; then the ServiceAccount's; then true."""
    spec = pod.get("spec") or {}
    if spec.get("automountServiceAccountToken") is not None:
        return bool(spec["automountServiceAccountToken"])
    if account is not None and account.get("automountServiceAccountToken") is not None:
        return bool(account["automountServiceAccountToken"])
    return True


async def mount(client: KubeClient, pod: dict, target: Path) -> Path | None:
    """Write token, ca.crt and namespace under `target`; None when the pod gets no token.
    Raises ApiError while the ServiceAccount is missing (the pod then waits, as upstream,
    where admission refuses it)."""
    ns = pod["metadata"].get("namespace", "default")
    name = (pod.get("spec") or {}).get("serviceAccountName") or "default"
    base = f"/api/v1/namespaces/{ns}/serviceaccounts/{name}"
    account = await client.get_or_none(base)
    if account is None:
        raise ApiError(404, {"message": f'serviceaccount "{name}" not found'})
    if not automount(pod, account):
        return None
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
               "spec": {"expirationSeconds": TOKEN_SECONDS}}
    answer = await client.create(f"{base}/token", request)
    target.mkdir(parents=True, exist_ok=True)
    for file, content in (("token", answer["status"]["token"].encode()), ("ca.crt", client.ca_pem or b""), ("namespace", ns.encode())):
        (target / file).write_bytes(content)
        (target / file).chmod(0o644)
    return target


def service_env(server: str) -> dict[str, str]:
    """The `kubernetes` Service's variables, for the local control plane's address."""
    url = urlsplit(server)
    host, port = url.hostname or "127.0.0.1", str(url.port or 443)
    address = f"tcp://{host}:{port}"
    prefix = f"KUBERNETES_PORT_{port}_TCP"
    return {
        "KUBERNETES_SERVICE_HOST": host,
        "KUBERNETES_SERVICE_PORT": port,
        "KUBERNETES_SERVICE_PORT_HTTPS": port,
        "KUBERNETES_PORT": address,
        prefix: address,
        f"{prefix}_PROTO": "tcp",
        f"{prefix}_PORT": port,
        f"{prefix}_ADDR": host,
    }
