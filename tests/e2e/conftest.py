"""Local mode for end-to-end tests: control plane, Pinecone emulator, pod runner and the operator
(a `pinery run` subprocess), with real kubectl against it.

    def test_something(local_mode):
        local_mode.kubectl("apply", "-f", "-", input=manifest)
        local_mode.kubectl.wait_for("fsdpjob/x", "Succeeded", timeout=90)

`local_mode` is shared by the tests of a module; give every object a name of its own and every
FSDPJob a master port of its own (`free_port()`): all pods share the machine's ports.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from pinery.local.cluster import LocalCluster, leftover_processes
from pinery.local.podrunner import processes
from tests.conftest import REPO_ROOT
from tests.support import secret_scan
from tests.support.kubectl import kubectl_binary

EXAMPLES = REPO_ROOT / "examples"


@dataclass
class Kubectl:
    """Real kubectl pointed at a local mode's kubeconfig."""

    kubeconfig: Path
    home: Path

    def __call__(self, *args: str, input: str | None = None, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
        env = {**os.environ, "KUBECONFIG": str(self.kubeconfig), "HOME": str(self.home),
               "KUBECACHEDIR": str(self.home / "kubectl-cache")}
        result = subprocess.run([kubectl_binary(), *args], input=input, capture_output=True, text=True, env=env, timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        return result

    def get(self, what: str, namespace: str = "default") -> dict:
        return json.loads(self("get", what, "-n", namespace, "-o", "json").stdout)

    def apply(self, *objects: dict) -> str:
        return self("apply", "-f", "-", input=yaml.safe_dump_all(objects)).stdout

    def wait_for(self, what: str, condition: str, timeout: float = 90) -> None:
        """`kubectl wait --for=condition=...`, with the object and its pods' logs on failure."""
        result = self("wait", f"--for=condition={condition}", what, f"--timeout={int(timeout)}s", check=False, timeout=timeout + 30)
        if result.returncode != 0:
            raise AssertionError(f"{what} is not {condition}:\n{result.stderr}\n{self.describe(what)}")

    def describe(self, what: str) -> str:
        parts = [self("get", what, "-o", "yaml", check=False).stdout, self("get", "pods", "-o", "wide", check=False).stdout]
        kind, _, name = what.partition("/")
        if kind.lower().startswith("fsdpjob"):
            for pod in self("get", "pods", "-l", f"pinery.dev/job-name={name}", "-o", "name", check=False).stdout.split():
                parts.append(f"--- {pod}\n" + self("logs", pod, "--all-containers", "--tail", "40", check=False).stdout)
        return "\n".join(parts)


@dataclass
class LocalMode:
    cluster: LocalCluster
    kubectl: Kubectl

    @property
    def state_dir(self) -> Path:
        return self.cluster.state_dir

    def operator_log(self) -> str:
        return (self.state_dir / "operator.log").read_text(errors="replace")


@pytest.fixture(scope="module")
def local_mode(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalMode]:
    yield from running_local_mode(tmp_path_factory)


def running_local_mode(tmp_path_factory: pytest.TempPathFactory, **options: Any) -> Iterator[LocalMode]:
    """Local mode started for a module, stopped with nothing left running (`options`: more
    LocalCluster arguments, such as `nodes`)."""
    kubectl_binary()
    state_dir = tmp_path_factory.mktemp("local")
    cluster = LocalCluster(state_dir, pinecone_ready_delay=0.5, **options).start_in_thread()
    secret_scan.watch(state_dir)  # the operator's and the pods' logs: no API key in them
    try:
        yield LocalMode(cluster, Kubectl(cluster.kubeconfig, state_dir))
    finally:
        secret_scan.unwatch(state_dir)
        cluster.stop_thread()
        left = leftover_processes(cluster.state_dir)
        processes.kill_marked(processes.OWNER_VARIABLE, str((cluster.state_dir / "pods").resolve()))
        assert not left, f"processes outlived local mode: {left}"




def example(name: str, **changes: Any) -> dict:
    """An example manifest with some fields changed (`metadata_name`, `spec_<field>`)."""
    obj = yaml.safe_load((EXAMPLES / name).read_text())
    for key, value in changes.items():
        section, _, field = key.partition("_")
        obj[section][field] = value
    return obj
