"""`pinery local up --operator=chart`: the operator as a real install would run it.

Instead of starting `pinery run` itself, local mode installs charts/pinery with Helm's Go SDK
(helm-python-sdk, the `local` extra, imported only here); the pod runner runs the chart's
Deployment: the operator image's entrypoint (`pinery run`) from this checkout's environment,
with the chart's env, as the chart's ServiceAccount and under the chart's RBAC. Values point
the operator at the local Pinecone emulator; ports the host may not have free are moved.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from pinery.local.kubeclient import KubeClient

CHART = Path(__file__).resolve().parents[3] / "charts" / "pinery"
RELEASE = "pinery"
FORMS = ("process", "chart")


def chart_values(pinecone_url: str, health_port: int) -> dict:
    return {
        "pinecone": {"host": pinecone_url},
        "clusterName": "local",
        "resyncSeconds": 60,
        # Pods share the host's ports: no metrics port, and a free one for the health endpoint.
        "metrics": {"enabled": False},
        "health": {"port": health_port},
    }


def _helm(kubeconfig: Path, namespace: str):
    try:
        import helm_python
    except ImportError as exc:  # an optional dependency
        raise RuntimeError("--operator=chart needs Helm's Go SDK: pip install 'pinery[local]' (helm-python-sdk)") from exc
    return helm_python.Config(kubeconfig_path=str(kubeconfig), namespace=namespace)


def helm_install(kubeconfig: Path, namespace: str, values: dict, chart: Path = CHART) -> dict:
    """Install the release, or upgrade it when a previous run left it installed."""
    config = _helm(kubeconfig, namespace)
    try:
        if any(r["name"] == RELEASE for r in config.list()):
            return config.upgrade(str(chart), RELEASE, values)
        return config.install(str(chart), RELEASE, values)
    finally:
        config.close()


def helm_uninstall(kubeconfig: Path, namespace: str) -> None:
    config = _helm(kubeconfig, namespace)
    try:
        config.uninstall(RELEASE, ignore_not_found=True)
    finally:
        config.close()


def available(deployment: dict | None) -> bool:
    """The Deployment's Available condition is True for its current generation."""
    if not deployment:
        return False
    status = deployment.get("status") or {}
    if status.get("observedGeneration", 0) < deployment["metadata"].get("generation", 0):
        return False
    return any(c.get("type") == "Available" and c.get("status") == "True" for c in status.get("conditions") or [])


async def wait_available(client: KubeClient, namespace: str, name: str = RELEASE, timeout: float = 120) -> dict:
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments/{name}"
    deadline = time.monotonic() + timeout
    deployment = None
    while time.monotonic() < deadline:
        deployment = await client.get_or_none(path)
        if available(deployment) and (deployment.get("status") or {}).get("availableReplicas", 0) >= 1:
            return deployment
        await asyncio.sleep(0.5)
    raise TimeoutError(f"deployment {namespace}/{name} did not become available: {(deployment or {}).get('status')}")
