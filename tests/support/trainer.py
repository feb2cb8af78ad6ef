"""Running the trainer as an FSDPJob node would: real torchrun processes on loopback.

Each "node" is one torchrun (or launcher) process with exactly the rendezvous environment the
FSDPJob operator sets on its pod. Processes are always cleaned up, workers included (torchrun
starts its workers in their own sessions, so they are found through /proc).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from tests.conftest import REPO_ROOT
from tests.support.ports import free_port

BIN = Path(sys.executable).parent
TORCHRUN = str(BIN / "torchrun")
TRAINER = [sys.executable, "-m", "pinery_trainer"]
LAUNCHER = [sys.executable, "-m", "pinery_trainer.launch"]
# Small and fast on CPU: the tiny preset, short sequences.
FAST = ["--set", "model.seqLen=32", "--set", "optim.lr=0.002", "--set", "optim.warmupSteps=2", "--set", "logEvery=1"]

_CLEAN = ("PET_", "MASTER_", "TORCHELASTIC_")
_CLEAN_NAMES = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "NODE_RANK", "NNODES", "NPROC_PER_NODE",
                "GROUP_RANK", "PINERY_CHECKPOINT_DIR", "PINERY_CHECKPOINT_INTERVAL"}


def base_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_CLEAN) and k not in _CLEAN_NAMES}
    env["PYTHONUNBUFFERED"] = "1"
    return env


def operator_env(num_nodes: int, nproc: int, node_rank: int, port: int) -> dict[str, str]:
    """The rendezvous variables the FSDPJob operator puts on node `node_rank`'s pod."""
    env = {
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(port),
        "NNODES": str(num_nodes),
        "NODE_RANK": str(node_rank),
        "NPROC_PER_NODE": str(nproc),
        "WORLD_SIZE": str(num_nodes * nproc),
        "PET_NNODES": str(num_nodes),
        "PET_NODE_RANK": str(node_rank),
        "PET_NPROC_PER_NODE": str(nproc),
        "PET_MASTER_ADDR": "127.0.0.1",
        "PET_MASTER_PORT": str(port),
    }
    if nproc == 1:
        env["RANK"] = str(node_rank)
    return env


@dataclass
class Node:
    proc: subprocess.Popen
    out_path: Path
    err_path: Path

    @property
    def stdout(self) -> str:
        return self.out_path.read_text()

    @property
    def stderr(self) -> str:
        return self.err_path.read_text()

    def events(self, name: Optional[str] = None) -> list[dict]:
        return [e for e in parse_events(self.stdout) if name is None or e["event"] == name]

    def wait(self, timeout: float) -> int:
        return self.proc.wait(timeout=timeout)

    def wait_for_event(self, predicate, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for event in self.events():
                if predicate(event):
                    return event
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"no such event within {timeout}s (exit {self.proc.poll()}):\n{self.stdout}\n{self.stderr[-3000:]}")


def parse_events(text: str) -> list[dict]:
    """Lines that are JSON objects with an `event` key, as the FSDPJob operator reads them."""
    events = []
    for line in text.splitlines():
        if line.startswith("{"):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and "event" in record:
                events.append(record)
    return events


def start(command: list[str], env: dict[str, str], logs: Path, name: str, cwd: Path = REPO_ROOT) -> Node:
    logs.mkdir(parents=True, exist_ok=True)
    out, err = logs / f"{name}.out", logs / f"{name}.err"
    with out.open("w") as o, err.open("w") as e:
        proc = subprocess.Popen(command, env=env, stdout=o, stderr=e, cwd=cwd, start_new_session=True)
    return Node(proc, out, err)


def start_nodes(num_nodes: int, nproc: int, args: list[str], logs: Path, launcher: bool = False,
                extra_env: Optional[dict[str, str]] = None) -> list[Node]:
    """One torchrun (or launcher) per node, configured only through the environment."""
    port = free_port()
    command = LAUNCHER + args if launcher else [TORCHRUN, "-m", "pinery_trainer", *args]
    return [
        start(command, {**base_env(), **operator_env(num_nodes, nproc, i, port), **(extra_env or {})}, logs, f"node{i}")
        for i in range(num_nodes)
    ]


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def kill_tree(node: Node, sig: int = signal.SIGKILL) -> None:
    """Signal the node's process and every process under it (workers run in their own sessions)."""
    for pid in [node.proc.pid, *descendants(node.proc.pid)]:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def wait_all(nodes: list[Node], timeout: float) -> list[int]:
    deadline = time.monotonic() + timeout
    try:
        return [n.wait(max(0.1, deadline - time.monotonic())) for n in nodes]
    except subprocess.TimeoutExpired:
        details = "\n".join(f"--- node {i}\n{n.stdout[-2000:]}\n{n.stderr[-3000:]}" for i, n in enumerate(nodes))
        raise AssertionError(f"nodes did not finish within {timeout}s\n{details}") from None


def cleanup(nodes: list[Node]) -> None:
    for node in nodes:
        if node.proc.poll() is None or descendants(node.proc.pid):
            kill_tree(node)
        try:
            node.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


def progress_losses(node: Node) -> dict[int, float]:
    return {e["step"]: e["loss"] for e in node.events("progress")}
