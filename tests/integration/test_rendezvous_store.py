"""The rendezvous store program an elastic job's store pod runs (rendezvous.STORE_COMMAND), as a
real process with real torch TCPStore clients: the agents' c10d backend connects to it as
`_create_tcp_store` does with `is_host=false` (a client, multi_tenant)."""

from __future__ import annotations

import signal
import subprocess
import sys
from datetime import timedelta

import pytest

from pinery.fsdpjob.rendezvous import STORE_COMMAND
from tests.support.ports import free_port

pytestmark = pytest.mark.slow


def test_the_store_serves_agents_and_stops_at_once_on_sigterm():
    from torch.distributed import TCPStore

    port = free_port()
    # python3 in a pod; this interpreter here (the pod runner puts the venv first on PATH alike).
    store = subprocess.Popen([sys.executable, *STORE_COMMAND[1:], str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert store.stdout is not None
        assert store.stdout.readline().strip() == f"pinery: rendezvous store listening on port {port}"
        agents = [TCPStore("localhost", port, is_master=False, multi_tenant=True, timeout=timedelta(seconds=30)) for _ in range(2)]
        agents[0].set("torch.rendezvous.run/state", "x")
        assert agents[1].get("torch.rendezvous.run/state") == b"x"
        assert [agents[0].add("n", 1), agents[1].add("n", 1)] == [1, 2]
        del agents
        # Its own handler: by default SIGTERM would end it by the signal, and as a container's PID 1
        # not at all.
        store.send_signal(signal.SIGTERM)
        assert store.wait(timeout=30) == 0
    finally:
        if store.poll() is None:
            store.kill()
            store.wait()
