"""`pinery local up --operator=chart|manifests|kustomize`: the operator as a real install runs it.

Instead of starting `pinery run` itself, local mode installs the operator as a user does on a
cluster: charts/pinery with Helm's Go SDK (helm-python-sdk, the `local` extra, imported only
here), deploy/pinery.yaml with `kubectl apply -f`, or deploy/kustomize through an overlay with
`kubectl apply --server-side -k`. The pod runner runs the Deployment: the operator image's
entrypoint (`pinery run`) from this checkout's environment, with the Deployment's env, as its
ServiceAccount and under its RBAC. Values (or the overlay's patch) point the operator at the
local Pinecone emulator; ports the host may not have free are moved.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import yaml

from pinery import kube_yaml
from pinery.local.kubeclient import KubeClient

REPO = Path(__file__).resolve().parents[3]
CHART = REPO / "charts" / "pinery"
MANIFEST = REPO / "deploy" / "pinery.yaml"
KUSTOMIZE_BASE = REPO / "deploy" / "kustomize"
RELEASE = "pinery"
FORMS = ("process", "chart", "manifests", "kustomize")


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
        if deployment is not None and available(deployment) and (deployment.get("status") or {}).get("availableReplicas", 0) >= 1:
            return deployment
        await asyncio.sleep(0.5)
    raise TimeoutError(f"deployment {namespace}/{name} did not become available: {(deployment or {}).get('status')}")


# --- the plain manifests: `kubectl apply -f deploy/pinery.yaml` and `-k deploy/kustomize` ----------

def local_env(pinecone_url: str, health_port: int) -> dict[str, str]:
    """`chart_values` as the Deployment's env (charts/pinery/templates/deployment.yaml), for the
    forms without Helm."""
    return {
        "PINERY_PINECONE_HOST": pinecone_url,
        "PINERY_CLUSTER_NAME": "local",
        "PINERY_RESYNC_SECONDS": "60",
        "PINERY_METRICS_PORT": "0",
        "PINERY_HEALTH_PORT": str(health_port),
    }


def local_patch(deployment: dict, env: dict[str, str], health_port: int) -> list[dict]:
    """RFC 6902 operations that point the shipped Deployment's operator container at local mode:
    its env values, and the `health` port its probes name. Indexes are found in the object
    itself and each is guarded by a `test`, so a reordered chart cannot change the wrong entry."""
    containers = deployment["spec"]["template"]["spec"]["containers"]
    index = next(i for i, c in enumerate(containers) if c["name"] == "operator")
    base = f"/spec/template/spec/containers/{index}"
    present = containers[index].get("env") or []
    ops: list[dict] = []
    for i, var in enumerate(present):
        if var["name"] in env:
            ops += [{"op": "test", "path": f"{base}/env/{i}/name", "value": var["name"]},
                    {"op": "replace", "path": f"{base}/env/{i}", "value": {"name": var["name"], "value": env[var["name"]]}}]
    named = {var["name"] for var in present}
    ops += [{"op": "add", "path": f"{base}/env/-", "value": {"name": k, "value": v}} for k, v in env.items() if k not in named]
    for i, port in enumerate(containers[index].get("ports") or []):
        if port.get("name") == "health":
            ops += [{"op": "test", "path": f"{base}/ports/{i}/name", "value": "health"},
                    {"op": "replace", "path": f"{base}/ports/{i}/containerPort", "value": health_port}]
    return ops


def operator_deployment(objects: list[dict]) -> dict:
    return next(o for o in objects if o.get("kind") == "Deployment" and o["metadata"]["name"] == RELEASE)


def patched(objects: list[dict], ops: list[dict]) -> list[dict]:
    """The objects, the operator's Deployment changed by `ops`."""
    from pinery.local.apiserver.patch import json_patch

    deployment = operator_deployment(objects)
    return [json_patch(o, ops) if o is deployment else o for o in objects]


def kustomize_overlay(directory: Path, ops: list[dict], base: Path = KUSTOMIZE_BASE) -> Path:
    """An overlay of deploy/kustomize as a user writes one: the base as a resource, and a JSON
    patch of the operator's Deployment (kustomize `patches` with a target)."""
    directory.mkdir(parents=True, exist_ok=True)
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [os.path.relpath(base, directory)],
        "patches": [{"target": {"group": "apps", "version": "v1", "kind": "Deployment", "name": RELEASE},
                     "patch": json.dumps(ops)}],
    }
    (directory / "kustomization.yaml").write_text(yaml.safe_dump(kustomization, sort_keys=False))
    return directory


def kubectl(kubeconfig: Path, *args: str, input: str | None = None, timeout: float = 120) -> str:
    binary = shutil.which("kubectl")
    if binary is None:
        raise RuntimeError("--operator=manifests and --operator=kustomize run kubectl, which is not on PATH")
    done = subprocess.run([binary, "--kubeconfig", str(kubeconfig), *args], input=input,
                          capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(args)} failed: {(done.stderr or done.stdout).strip()}")
    return done.stdout


def apply_manifests(kubeconfig: Path, form: str, work_dir: Path, pinecone_url: str, health_port: int) -> list[dict]:
    """Install the operator as `form` ("manifests" or "kustomize") does on a cluster, with
    kubectl; the objects applied."""
    shipped = kube_yaml.load_all(MANIFEST.read_text())
    ops = local_patch(operator_deployment(shipped), local_env(pinecone_url, health_port), health_port)
    work_dir.mkdir(parents=True, exist_ok=True)
    if form == "manifests":
        # deploy/pinery.yaml with the Deployment's env changed, as `kubectl apply -f` reads it
        # (`kubectl set env --local` cannot read a file holding CRDs).
        objects = patched(shipped, ops)
        rendered = work_dir / "pinery.yaml"
        rendered.write_text(kube_yaml.dump_all(objects))
        kubectl(kubeconfig, "apply", "-f", str(rendered))
        return objects
    overlay = kustomize_overlay(work_dir / "kustomize", ops)
    kubectl(kubeconfig, "apply", "--server-side", "-k", str(overlay))
    return kube_yaml.load_all(kubectl(kubeconfig, "kustomize", str(overlay)))


def delete_manifests(kubeconfig: Path, objects: list[dict]) -> None:
    """Remove what the manifests installed, as `helm uninstall` removes a release: not the
    CRDs (deleting one deletes every object of its kind) nor the namespace."""
    installed = [o for o in objects if o["kind"] not in ("CustomResourceDefinition", "Namespace")]
    kubectl(kubeconfig, "delete", "--ignore-not-found", "--wait=false", "-f", "-", input=kube_yaml.dump_all(installed))
