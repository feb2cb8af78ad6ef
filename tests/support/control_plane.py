"""The local control plane as a fixture, for every integration test (re-exported by conftest.py).

    def test_something(control_plane):           # a fresh server per test (starts in ~50 ms)
        control_plane.install_crds()              # pinery's CRDs, served once discovery has them
        api = control_plane.core_v1()             # kubernetes client bound to this server
        control_plane.kubectl("get", "ns")        # real kubectl with this server's kubeconfig
        with control_plane.kopf_login():          # Kopf (KopfRunner) logs in to this server
            ...

`control_plane_module` is the same, shared by the tests of a module.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pytest
import requests

from pinery.local.apiserver.server import LocalApiServer


@dataclass
class ControlPlane:
    server: LocalApiServer
    state_dir: Path
    kubeconfig: Path
    token: str
    _clients: list[Any] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.server.url

    # Raw HTTP

    def http(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        """A request with this server's bearer token (for what the client cannot express)."""
        headers = {"Authorization": f"Bearer {self.token}", **kwargs.pop("headers", {})}
        kwargs.setdefault("timeout", 10)
        kwargs.setdefault("verify", str(self.server.ca_cert) if self.server.ca_cert else True)
        return requests.request(method, self.url + path, headers=headers, **kwargs)

    # The kubernetes Python client

    def api_client(self):
        import kubernetes

        config = kubernetes.client.Configuration()
        kubernetes.config.load_kube_config(config_file=str(self.kubeconfig), client_configuration=config)
        client = kubernetes.client.ApiClient(config)
        self._clients.append(client)
        return client

    def core_v1(self):
        import kubernetes

        return kubernetes.client.CoreV1Api(self.api_client())

    def custom_objects(self):
        import kubernetes

        return kubernetes.client.CustomObjectsApi(self.api_client())

    # pinery's CRDs

    def install_crds(self, timeout: float = 10.0) -> None:
        """Create pinery's CRDs and wait until they are Established and in discovery."""
        from pinery.api import RESOURCES
        from pinery.generate.crds import build_crd

        for res in RESOURCES:
            response = self.http("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=build_crd(res))
            if response.status_code != 409:
                response.raise_for_status()
        deadline = time.monotonic() + timeout
        for res in RESOURCES:
            while True:
                crd = self.http("GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{res.crd_name}").json()
                established = any(
                    c.get("type") == "Established" and c.get("status") == "True"
                    for c in (crd.get("status") or {}).get("conditions") or []
                )
                listing = self.http("GET", f"/apis/{res.group}/{res.version}")
                served = listing.ok and any(r["name"] == res.plural for r in listing.json()["resources"])
                if established and served:
                    break
                if time.monotonic() > deadline:
                    raise TimeoutError(f"CRD {res.crd_name} was not established within {timeout}s")
                time.sleep(0.02)

    # Kopf

    @contextlib.contextmanager
    def kopf_login(self) -> Iterator[None]:
        """Point Kopf's login (through the kubernetes client) at this server.

        The kubernetes client reads $KUBECONFIG when it is imported, so setting the variable is
        not enough in-process: its default location is patched as well.
        """
        import kubernetes.config.kube_config as kube_config

        saved_location = kube_config.KUBE_CONFIG_DEFAULT_LOCATION
        saved_env = os.environ.get("KUBECONFIG")
        kube_config.KUBE_CONFIG_DEFAULT_LOCATION = str(self.kubeconfig)
        os.environ["KUBECONFIG"] = str(self.kubeconfig)
        try:
            yield
        finally:
            kube_config.KUBE_CONFIG_DEFAULT_LOCATION = saved_location
            if saved_env is None:
                os.environ.pop("KUBECONFIG", None)
            else:
                os.environ["KUBECONFIG"] = saved_env

    # kubectl

    def kubectl(self, *args: str, input: str | None = None, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
        kubectl = shutil.which("kubectl")
        if kubectl is None:
            pytest.skip("kubectl is not installed")
        env = {
            **os.environ,
            "KUBECONFIG": str(self.kubeconfig),
            "KUBECACHEDIR": str(self.state_dir / "kubectl-cache"),
            "HOME": str(self.state_dir),
        }
        result = subprocess.run(
            [kubectl, *args], input=input, capture_output=True, text=True, env=env, timeout=timeout
        )
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        return result

    def close(self) -> None:
        for client in self._clients:
            client.close()
        self._clients.clear()


@contextlib.contextmanager
def running_control_plane(state_dir: Path, **server_options: Any) -> Iterator[ControlPlane]:
    """A local control plane on a free port with its kubeconfig, stopped on exit."""
    token = secrets.token_urlsafe(16)
    server = LocalApiServer(state_dir, token=token, **server_options).start_in_thread()
    plane = ControlPlane(server, state_dir, server.write_kubeconfig(state_dir / "kubeconfig"), token)
    try:
        yield plane
    finally:
        plane.close()
        server.stop_thread()


@pytest.fixture
def control_plane(tmp_path: Path) -> Iterator[ControlPlane]:
    with running_control_plane(tmp_path / "state") as plane:
        yield plane


@pytest.fixture(scope="module")
def control_plane_module(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    with running_control_plane(tmp_path_factory.mktemp("control-plane")) as plane:
        yield plane
