"""`pinery local up` and `pinery local down`."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

from pinery.local.cluster import AlreadyRunning, LocalCluster, StateLock

DEFAULT_STATE_DIR = Path(".pinery")


def _say(line: str) -> None:
    print(f"  {line}", flush=True)


async def up(state_dir: Path, *, pinecone_ready_delay: float = 2.0, operator_form: str = "process") -> int:
    """Start local mode and run until Ctrl-C, SIGTERM or `pinery local down`."""
    cluster = LocalCluster(state_dir, pinecone_ready_delay=pinecone_ready_delay, operator_form=operator_form, say=_say)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    print(f"pinery local mode, state in {cluster.state_dir}", flush=True)
    try:
        await cluster.start()
    except AlreadyRunning as exc:
        print(f"pinery local up: {exc}", flush=True)
        return 1
    flag = "" if Path(state_dir) == DEFAULT_STATE_DIR else f" --state-dir {state_dir}"
    print(
        "\nready. In another shell:\n"
        f"  export KUBECONFIG={cluster.kubeconfig}\n"
        "  kubectl apply -f examples/vectorindex-serverless.yaml\n"
        "  kubectl get pinery\n"
        f"Stop with Ctrl-C or `pinery local down{flag}`.",
        flush=True,
    )
    await stop.wait()
    print("stopping local mode...", flush=True)
    await cluster.stop()
    print("stopped.", flush=True)
    return 0


def down(state_dir: Path, timeout: float = 60) -> int:
    """Stop the `pinery local up` running on `state_dir`, and wait until it has."""
    lock = StateLock(Path(state_dir).resolve())
    pid = lock.holder()
    for _ in range(25):  # a holder that has just started may not have written its pid yet
        if pid != 0:
            break
        time.sleep(0.2)
        pid = lock.holder()
    if not pid:
        print(f"local mode is not running on {state_dir}")
        return 0
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while lock.holder() is not None and time.monotonic() < deadline:
        time.sleep(0.2)
    if lock.holder() is not None:
        print(f"local mode (pid {pid}) did not stop within {timeout:.0f}s")
        return 1
    print("local mode stopped")
    return 0
