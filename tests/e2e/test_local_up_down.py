"""`pinery local up` and `pinery local down` as a user runs them, in subprocesses.

One test walks the whole story, because each `up` costs an operator start: up, use it, a second
up refused, down (nothing left running), up again (objects, indexes, vectors and a job found again; the
job's pods were lost with the processes and the job restarts its gang), down.
"""

from __future__ import annotations

import base64
import json
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pinery.local.cluster import leftover_processes
from tests.conftest import REPO_ROOT
from tests.e2e.conftest import Kubectl, example
from tests.support.ports import free_port
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e

# Each node runs until it is stopped on its first attempt. Rank 0 listens on the master port (node
# 1's init container waits for it); on later attempts node 1 tells rank 0 it is there, and both exit 0.
SLEEPER = textwrap.dedent("""
    import os, socket, time
    attempt, rank, port = os.environ["PINERY_ATTEMPT"], int(os.environ["NODE_RANK"]), int(os.environ["MASTER_PORT"])
    server = socket.create_server(("", port)) if rank == 0 else None
    print("attempt", attempt, flush=True)
    if attempt == "0":
        time.sleep(600)
    if rank == 0:
        while server.accept()[0].recv(16) != b"done":
            pass
    else:
        socket.create_connection((os.environ["MASTER_ADDR"], port)).sendall(b"done")
""")


class Up:
    """A `pinery local up` subprocess with its output in a file."""

    def __init__(self, state_dir: Path, log: Path):
        self.log = log
        self.process = subprocess.Popen(
            [sys.executable, "-m", "pinery", "local", "up", "--state-dir", str(state_dir), "--pinecone-ready-delay", "0.5"],
            stdout=open(log, "w"), stderr=subprocess.STDOUT, cwd=REPO_ROOT,
        )

    def output(self) -> str:
        return self.log.read_text()

    def wait_ready(self, timeout: float = 60) -> None:
        wait_for(lambda: "ready." in self.output() or self.process.poll() is not None, timeout=timeout, interval=0.1, what="local mode to be ready")
        assert "ready." in self.output(), self.output()

    def wait_exit(self, timeout: float = 60) -> int:
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(30)
            raise AssertionError(f"`pinery local up` did not exit:\n{self.output()}") from None


def pinery(*args: str, timeout: float = 90) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pinery", *args], capture_output=True, text=True, cwd=REPO_ROOT, timeout=timeout)


def listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def ports(state_dir: Path) -> list[int]:
    state = json.loads((state_dir / "local.json").read_text())
    return [state["apiserver_port"], state["pinecone_port"]]


def pinecone_client(kubectl: Kubectl):
    """An SDK client as an application gets one: the connection ConfigMap and the API key Secret."""
    from pinecone import Pinecone

    host = kubectl.get("configmap/up-down-connection")["data"]["PINECONE_CONTROLLER_HOST"]
    key = base64.b64decode(kubectl.get("secret/pinecone-api-key", namespace="pinery-system")["data"]["api-key"]).decode()
    return Pinecone(api_key=key, host=host)


def index_names(kubectl: Kubectl) -> list[str]:
    return [i.name for i in pinecone_client(kubectl).list_indexes()]


def app_index(kubectl: Kubectl):
    return pinecone_client(kubectl).Index(host=kubectl.get("configmap/up-down-connection")["data"]["PINECONE_INDEX_HOST"])


def test_up_down_and_up_again(tmp_path):
    state_dir = tmp_path / "state"
    kubectl = Kubectl(state_dir / "kubeconfig", tmp_path)
    first = Up(state_dir, tmp_path / "up-1.log")
    try:
        first.wait_ready()
        out = first.output()
        assert f"export KUBECONFIG={state_dir.resolve() / 'kubeconfig'}" in out
        assert f"pinery local down --state-dir {state_dir}" in out

        assert "pinery-local" in kubectl("get", "nodes").stdout
        kubectl.apply(example("vectorindex-serverless.yaml", metadata_name="up-down", spec_connectionConfigMap="up-down-connection"))
        kubectl.wait_for("vectorindex/up-down", "Ready", timeout=60)
        host = kubectl.get("vectorindex/up-down")["status"]["host"]
        app_index(kubectl).upsert(vectors=[("kept", [0.5] * 384, {"n": 1})], namespace="tenant")
        kubectl.apply({
            "apiVersion": "pinery.dev/v1alpha1", "kind": "FSDPJob", "metadata": {"name": "sleeper"},
            "spec": {"numNodes": 2, "nprocPerNode": 1, "masterPort": free_port(), "maxRestarts": 1,
                     "command": ["python", "-c", SLEEPER], "startupTimeoutSeconds": 60},
        })
        for node in (0, 1):
            wait_for(lambda node=node: "attempt 0" in kubectl("logs", f"sleeper-node-{node}", "-c", "trainer", check=False).stdout,
                     timeout=60, interval=0.3, what=f"node {node} to run")

        # A second `up` on the same directory is refused while the first runs.
        second = pinery("local", "up", "--state-dir", str(state_dir))
        assert second.returncode == 1 and "already running" in second.stdout

        down = pinery("local", "down", "--state-dir", str(state_dir))
        assert down.returncode == 0, down.stdout + down.stderr
        assert first.wait_exit() == 0
        assert first.output().rstrip().endswith("stopped.")
        assert leftover_processes(state_dir) == []
        assert not any(listening(port) for port in ports(state_dir))
        assert "not running" in pinery("local", "down", "--state-dir", str(state_dir)).stdout
    finally:
        if first.process.poll() is None:
            first.process.send_signal(signal.SIGTERM)
            first.wait_exit()

    again = Up(state_dir, tmp_path / "up-2.log")
    try:
        again.wait_ready()
        # The index is found again, in the API and in the emulator, at the same host.
        assert kubectl.get("vectorindex/up-down")["status"]["host"] == host
        kubectl.wait_for("vectorindex/up-down", "Ready", timeout=30)
        assert "up-down" in index_names(kubectl)
        # ... and so are its vectors: `down` wrote them to the state directory.
        kept = app_index(kubectl).fetch(ids=["kept"], namespace="tenant").vectors["kept"]
        assert kept.values == [0.5] * 384 and kept.metadata == {"n": 1}
        # The job's pods were lost with their processes: the runner reports them Failed
        # (NodeLost), and the job restarts its gang and succeeds. A lost node is a
        # disruption, not the job's failure: no restart of its budget is spent.
        kubectl.wait_for("fsdpjob/sleeper", "Succeeded", timeout=60)
        job = kubectl.get("fsdpjob/sleeper")
        assert (job["status"]["restarts"], job["status"]["disruptions"]) == (0, 1)
        assert job["status"]["lastDisruption"]["reason"] == "NodeLost"
        messages = [e["message"] for e in kubectl.get("events")["items"] if e["involvedObject"]["name"] == "sleeper"]
        assert any("NodeLost" in m for m in messages), messages
    finally:
        assert pinery("local", "down", "--state-dir", str(state_dir)).returncode == 0
        assert again.wait_exit() == 0
    assert leftover_processes(state_dir) == []
    assert not any(listening(port) for port in ports(state_dir))
