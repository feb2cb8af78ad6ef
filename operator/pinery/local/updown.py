"""`pinery local up` and `pinery local down`."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

from pinery.local.cluster import LocalCluster, LocalState

DEFAULT_STATE_DIR = Path(".pinery")


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


async def up(state_dir: Path, *, pinecone_ready_delay: float = 2.0) -> int:
    """Start local mode and run until Ctrl-C, SIGTERM or `pinery local down`."""
    previous = LocalState.load(state_dir)
    if _alive(previous.pid) and previous.pid != os.getpid():
        print(f"local mode is already running on {state_dir} (pid {previous.pid}); `pinery local down` stops it")
        return 1
    cluster = LocalCluster(state_dir, pinecone_ready_delay=pinecone_ready_delay, say=lambda line: print(f"  {line}", flush=True))
    print(f"pinery local mode, state in {cluster.state_dir}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await cluster.start()
    except BaseException:
        await cluster.stop()
        raise
    print(
        "\nready. In another shell:\n"
        f"  export KUBECONFIG={cluster.kubeconfig}\n"
        "  kubectl apply -f examples/vectorindex-serverless.yaml\n"
        "  kubectl get pinery\n"
        "Stop with Ctrl-C or `pinery local down"
        + ("" if state_dir == DEFAULT_STATE_DIR else f" --state-dir {state_dir}")
        + "`.",
        flush=True,
    )
    await stop.wait()
    print("stopping local mode...", flush=True)
    await cluster.stop()
    print("stopped.", flush=True)
    return 0


def down(state_dir: Path, timeout: float = 60) -> int:
    """Stop the `pinery local up` running on `state_dir`, and wait until it has."""
    state = LocalState.load(state_dir)
    if not _alive(state.pid):
        print(f"local mode is not running on {state_dir}")
        return 0
    os.kill(state.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _alive(state.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if _alive(state.pid):
        print(f"local mode (pid {state.pid}) did not stop within {timeout:.0f}s")
        return 1
    print("local mode stopped")
    return 0
