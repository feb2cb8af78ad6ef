"""`make demo`: pinery on this machine, from nothing to a trained job, in a few minutes.

Starts local mode (control plane, Pinecone emulator, pod runner, operator) in a fresh state
directory, applies examples/vectorindex-serverless.yaml and examples/fsdpjob-builtin-trainer.yaml
as a user would (with kubectl when it is installed, else through the API), shows the index
becoming Ready and the two-node job training to Succeeded, shows `kubectl get pinery`, and shuts
everything down.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from pinery.api import ResourceInfo, resource_for_kind
from pinery.api.base import GROUP, VERSION
from pinery.local.cluster import LocalCluster, leftover_processes
from pinery.local.kubeclient import ApiError, KubeClient

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
INDEX_EXAMPLE, JOB_EXAMPLE = "vectorindex-serverless.yaml", "fsdpjob-builtin-trainer.yaml"
NAMESPACE = "default"
STEPS = 5
TABLE = "application/json;as=Table;g=meta.k8s.io;v=v1"


def say(line: str = "") -> None:
    print(f"      {line}" if line else "", flush=True)


def step(number: int, text: str) -> None:
    print(f"\n[{number}/{STEPS}] {text}", flush=True)


def port_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("", port))
        except OSError:
            return False
    return True


def listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def render_table(table: dict) -> list[str]:
    """A server-side Table as kubectl prints it (columns of priority 0)."""
    columns = [i for i, c in enumerate(table.get("columnDefinitions", [])) if c.get("priority", 0) == 0]
    rows = [[c["name"].upper() for i, c in enumerate(table["columnDefinitions"]) if i in columns]]
    rows += [["" if row["cells"][i] is None else str(row["cells"][i]) for i in columns] for row in table.get("rows", [])]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["   ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def resource(kind: str) -> ResourceInfo:
    res = resource_for_kind(kind)
    if res is None:
        raise RuntimeError(f"pinery has no resource of kind {kind}")
    return res


class Cluster:
    """What the demo does to the cluster: kubectl when installed, else the same through the API."""

    def __init__(self, local: LocalCluster, client: KubeClient):
        self.local = local
        self.client = client
        self.kubectl = shutil.which("kubectl")

    async def run_kubectl(self, *args: str, input: str | None = None) -> str:
        env = {"KUBECONFIG": str(self.local.kubeconfig), "HOME": str(self.local.state_dir),
               "PATH": "/usr/local/bin:/usr/bin:/bin"}
        if self.kubectl is None:
            raise RuntimeError("kubectl is not installed")
        process = await asyncio.create_subprocess_exec(
            self.kubectl, *args, env=env, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )
        out, _ = await process.communicate(input.encode() if input else None)
        if process.returncode != 0:
            raise RuntimeError(f"kubectl {' '.join(args)} failed: {out.decode().strip()}")
        return out.decode()

    async def apply(self, obj: dict) -> str:
        if self.kubectl:
            return (await self.run_kubectl("apply", "-f", "-", input=yaml.safe_dump(obj))).strip()
        res = resource(obj["kind"])
        await self.client.create(f"/apis/{GROUP}/{VERSION}/namespaces/{NAMESPACE}/{res.plural}", obj)
        return f"{res.kind.lower()}.{GROUP}/{obj['metadata']['name']} created"

    async def get(self, kind: str, name: str) -> dict:
        res = resource(kind)
        return await self.client.get(f"/apis/{GROUP}/{VERSION}/namespaces/{NAMESPACE}/{res.plural}/{name}")

    async def get_pinery(self) -> list[str]:
        if self.kubectl:
            return (await self.run_kubectl("get", "pinery")).rstrip().splitlines()
        lines = []
        for kind in ("VectorIndex", "FSDPJob"):
            res = resource(kind)
            table = await self.client.request("GET", f"/apis/{GROUP}/{VERSION}/namespaces/{NAMESPACE}/{res.plural}", accept=TABLE)
            rendered = render_table(table)
            rendered[1:] = [f"{res.kind.lower()}.{GROUP}/{line}" for line in rendered[1:]]
            lines += [*rendered, ""]
        return lines[:-1]


def pod_summary(nodes: list[dict]) -> str:
    return ", ".join(f"{n.get('pod')} {n.get('reason') or n.get('phase') or 'Pending'}" for n in nodes)


async def show_index(cluster: Cluster, timeout: float) -> dict:
    obj = yaml.safe_load((EXAMPLES / INDEX_EXAMPLE).read_text())
    name = obj["metadata"]["name"]
    say(await cluster.apply(obj))
    say(f"the operator creates index {name!r} in the Pinecone emulator and waits until it is ready:")
    start, last = time.monotonic(), None
    while time.monotonic() - start < timeout:
        status = (await cluster.get("VectorIndex", name)).get("status") or {}
        seen = (status.get("phase"), status.get("state"))
        if seen != last and status.get("phase"):
            state = f", Pinecone state {status['state']}" if status.get("state") else ""
            say(f"{time.monotonic() - start:5.1f}s  phase {status['phase']}{state}")
            last = seen
        if status.get("phase") == "Ready":
            say(f"host {status['host']}")
            config = obj["spec"].get("connectionConfigMap")
            if config:
                data = (await cluster.client.get(f"/api/v1/namespaces/{NAMESPACE}/configmaps/{config}")).get("data") or {}
                say(f"ConfigMap {config} (for applications): " + ", ".join(f"{k}={v}" for k, v in sorted(data.items())))
            return status
        await asyncio.sleep(0.5)
    raise TimeoutError(f"VectorIndex {name} was not Ready after {timeout:.0f}s")


async def show_training(cluster: Cluster, master_port: int | None, timeout: float) -> dict:
    obj = yaml.safe_load((EXAMPLES / JOB_EXAMPLE).read_text())
    name, spec = obj["metadata"]["name"], obj["spec"]
    port = master_port or spec.get("masterPort", 29500)
    if master_port is None and not port_free(port):
        port = _free_port()
        say(f"(port {spec.get('masterPort', 29500)} is in use on this machine: using masterPort {port})")
    spec["masterPort"] = port
    trainer = spec["trainer"]
    say(await cluster.apply(obj))
    say(f"{spec['numNodes']} nodes x {spec['nprocPerNode']} processes, model {trainer['model']['preset']!r}, "
        f"{trainer['steps']} steps on CPU: each node is a pod, each pod a torchrun on its own loopback address")
    say("progress: the trainer prints JSON lines on rank 0; the operator reads them into status.progress")
    start, last, shown = time.monotonic(), None, set()
    while time.monotonic() - start < timeout:
        status = (await cluster.get("FSDPJob", name)).get("status") or {}
        phase = status.get("phase")
        line = f"phase {phase}"
        if phase in (None, "Pending") and status.get("nodes"):
            line += f": {pod_summary(status['nodes'])}"
        progress = status.get("progress") or {}
        if progress.get("step") is not None:
            line += f", status.progress step {progress['step']}/{progress.get('totalSteps')}"
        if line != last and phase:
            say(f"{time.monotonic() - start:5.1f}s  {line}")
            last = line
        for event in await rank0_progress(cluster, name):
            if event["step"] not in shown:
                shown.add(event["step"])
                say(f"{time.monotonic() - start:5.1f}s  rank 0: step {event['step']}/{event['totalSteps']}, "
                    f"loss {event['loss']:.3f}, {event.get('tokensPerSecond') or 0:.0f} tokens/s")
        if phase in ("Succeeded", "Failed"):
            if phase == "Failed":
                failed: dict[str, Any] = next((c for c in status.get("conditions", []) if c["type"] == "Failed"), {})
                raise RuntimeError(f"FSDPJob {name} failed: {failed.get('message')}")
            return status
        await asyncio.sleep(0.5)
    raise TimeoutError(f"FSDPJob {name} did not finish within {timeout:.0f}s")


async def rank0_progress(cluster: Cluster, job: str) -> list[dict]:
    """The progress lines rank 0 has printed so far (`kubectl logs <job>-node-0`)."""
    try:
        text = await cluster.client.request("GET", f"/api/v1/namespaces/{NAMESPACE}/pods/{job}-node-0/log",
                                            params={"container": "trainer"})
    except ApiError:
        return []  # not started yet
    events = []
    for line in str(text).splitlines():
        if line.startswith("{"):
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("event") == "progress" and isinstance(event.get("loss"), (int, float)):
                events.append(event)
    return events


def _free_port() -> int:
    for candidate in range(29600, 29700):
        if port_free(candidate):
            return candidate
    raise OSError("no free port for the rendezvous")


async def demo(state_dir: Path | None, master_port: int | None, timeout: float) -> int:
    keep = state_dir is not None
    state = Path(state_dir) if state_dir is not None else Path(tempfile.mkdtemp(prefix="pinery-demo-"))
    print("pinery demo: a Kubernetes control plane, Pinecone and a two-node training job, all on this machine.")
    step(1, f"Starting local mode in {state}")
    cluster = LocalCluster(state, pinecone_ready_delay=2.0, say=say)
    began = time.monotonic()
    code = 1
    try:
        await cluster.start()
        if cluster.client is None:
            raise RuntimeError("local mode started without a client")
        ops = Cluster(cluster, cluster.client)
        if ops.kubectl is None:
            say("(kubectl is not installed: the demo makes the same requests through the API)")
        say(f"kubeconfig {cluster.kubeconfig}")

        step(2, f"kubectl apply -f examples/{INDEX_EXAMPLE}")
        await show_index(ops, timeout)

        step(3, f"kubectl apply -f examples/{JOB_EXAMPLE}")
        status = await show_training(ops, master_port, timeout)
        progress = status.get("progress") or {}
        say(f"Succeeded: every node exited 0; {progress.get('step')} steps, final loss {progress.get('loss', float('nan')):.3f}, "
            f"{progress.get('tokensPerSecond', 0):.0f} tokens/s, {status.get('restarts', 0)} restarts")

        step(4, "kubectl get pinery")
        for line in await ops.get_pinery():
            say(line)
        code = 0
    except (ApiError, RuntimeError, TimeoutError, OSError) as exc:
        print(f"\ndemo failed: {exc}\n(the operator's log is {state / 'operator.log'})", file=sys.stderr, flush=True)
    finally:
        step(5, "Stopping local mode")
        await cluster.stop()
        left = leftover_processes(state)
        ports = [p for p in (cluster.state.apiserver_port, cluster.state.pinecone_port) if p and listening(p)]
        if left or ports:
            say(f"NOT clean: processes {left} and ports {ports} are still there")
            code = 1
        else:
            say("stopped: no operator, no pod processes, no listening ports left")
        if not keep:
            shutil.rmtree(state, ignore_errors=True)
    if code == 0:
        print(f"\nDone in {time.monotonic() - began:.0f}s. To try it yourself:\n"
              "  .venv/bin/pinery local up          # then, in another shell:\n"
              "  export KUBECONFIG=.pinery/kubeconfig\n"
              "  kubectl apply -f examples/ && kubectl get pinery -w", flush=True)
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pinery.local.demo", description=__doc__.splitlines()[0])
    parser.add_argument("--state-dir", type=Path, help="keep local mode's state here (default: a temporary directory, removed)")
    parser.add_argument("--master-port", type=int, help="rendezvous port of the training job (default: the example's)")
    parser.add_argument("--timeout", type=float, default=150, help="seconds to wait for each resource (default 150)")
    args = parser.parse_args(argv)
    try:
        return asyncio.run(demo(args.state_dir, args.master_port, args.timeout))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
