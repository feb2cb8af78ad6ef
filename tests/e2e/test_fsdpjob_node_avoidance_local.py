"""Failed-node avoidance in local mode with three fake nodes (PINERY_LOCAL_NODES): a rank killed
by SIGKILL on one node makes the next attempt's pods keep off it, and the job succeeds there.

CPU-heavy like the other FSDPJob end-to-end tests: run under `flock /tmp/pinery-heavy.lock`.
"""

from __future__ import annotations

import textwrap
from typing import Iterator

import pytest

from tests.e2e.conftest import LocalMode, running_local_mode
from tests.e2e.test_fsdpjob_local import events, script_job
from tests.support.ports import free_port

pytestmark = pytest.mark.e2e

# Rank 1 of attempt 0 dies by SIGKILL, as from outside (not the container's memory limit):
# torchrun reports the worker's -9, which the operator reads as exit code 137.
KILLED = textwrap.dedent("""
    import os, signal, sys
    from datetime import timedelta
    from pathlib import Path

    import torch
    import torch.distributed as dist

    attempt = int(Path(os.environ["ATTEMPT_FILE"]).read_text())
    rank = int(os.environ["RANK"])
    if attempt == 0 and rank == 1:
        print("rank 1: killed on attempt 0", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    dist.init_process_group("gloo", timeout=timedelta(seconds=60))
    value = torch.tensor([rank + 1.0])
    dist.all_reduce(value)
    print(f"attempt {attempt}: sum {value.item()}", flush=True)
    dist.barrier()
    dist.destroy_process_group()
    sys.stdout.flush()
    os._exit(0)
""")


@pytest.fixture(scope="module")
def local_mode(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalMode]:
    yield from running_local_mode(tmp_path_factory, nodes=3)


def test_the_node_of_a_rank_killed_by_a_signal_is_avoided_on_the_next_attempt(local_mode):
    kubectl = local_mode.kubectl
    nodes = sorted(n["metadata"]["name"] for n in kubectl.get("nodes")["items"])
    assert nodes == ["pinery-local", "pinery-local-2", "pinery-local-3"]
    config_map, job = script_job("avoid", free_port(), env={}, max_restarts=2)
    config_map["data"]["train.py"] = KILLED
    job["spec"]["podTemplate"]["terminationGracePeriodSeconds"] = 5
    kubectl.apply(config_map, job)
    kubectl.wait_for("fsdpjob/avoid", "Succeeded", timeout=180)

    status = kubectl.get("fsdpjob/avoid")["status"]
    assert status["restarts"] == 1
    [avoided] = status["avoidedNodes"]
    assert (avoided["reason"], avoided["node"], avoided["attempt"]) == ("Signal", 1, 0)
    assert "exit code 137" in avoided["message"] and "SIGKILL" in avoided["message"]
    assert avoided["nodeName"] in nodes
    # Three Ready nodes leave two besides the avoided one: enough for the gang, so required.
    assert status["avoidanceMode"] == "Required"
    placed = {n["index"]: n["nodeName"] for n in status["nodes"]}
    assert avoided["nodeName"] not in placed.values() and len(set(placed.values())) == 2
    for rank in (0, 1):
        pod = kubectl.get(f"pod/avoid-node-{rank}")
        assert pod["metadata"]["labels"]["pinery.dev/attempt"] == "1"
        assert pod["spec"]["nodeName"] == placed[rank]
        terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        assert terms == [{"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": [avoided["nodeName"]]}]}]
    reasons = events(local_mode, "avoid")
    assert {"NodeFailed", "GangRestart", "NodeAvoided"} <= set(reasons) and reasons[-1] == "AllNodesSucceeded"
    listing = kubectl.get("events")["items"]
    message = next(e["message"] for e in listing if e["reason"] == "NodeAvoided" and e["involvedObject"]["name"] == "avoid")
    assert avoided["nodeName"] in message and "Signal" in message
