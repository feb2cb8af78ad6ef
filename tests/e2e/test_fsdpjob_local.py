"""FSDPJobs in local mode: the operator's pods run as real torchrun processes on loopback.

Each test applies a job with kubectl and waits for its conditions as a user would. They are
CPU-heavy: run them one at a time (`flock /tmp/pinery-heavy.lock`).
"""

from __future__ import annotations

import json
import textwrap

import pytest
import yaml

from tests.conftest import REPO_ROOT
from tests.e2e.conftest import example
from tests.support.ports import free_port
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e

# Fails on the pod's first attempt on node 1 (read from the attempt label through the downward
# API), then all-reduces over the whole gang. Local mode maps mount paths in commands, arguments
# and variables, not inside programs: the file's path comes in ATTEMPT_FILE.
FLAKY = textwrap.dedent("""
    import json, os, sys
    from pathlib import Path

    attempt = int(Path(os.environ["ATTEMPT_FILE"]).read_text())
    rank = int(os.environ["RANK"])
    if attempt == 0 and rank == int(os.environ.get("FAIL_RANK", "-1")):
        print(f"rank {rank}: failing on attempt {attempt}", flush=True)
        sys.exit(int(os.environ["FAIL_CODE"]))
    if os.environ.get("ALWAYS_FAIL") and rank == int(os.environ["FAIL_RANK"]):
        sys.exit(int(os.environ["FAIL_CODE"]))

    import torch
    import torch.distributed as dist
    from datetime import timedelta

    dist.init_process_group("gloo", timeout=timedelta(seconds=60))
    value = torch.tensor([rank + 1.0])
    dist.all_reduce(value)
    world = dist.get_world_size()
    print(json.dumps({"rank": rank, "attempt": attempt, "sum": value.item(), "expected": world * (world + 1) / 2}), flush=True)
    dist.barrier()
    dist.destroy_process_group()
    sys.stdout.flush()
    os._exit(0)
""")


def script_job(name: str, port: int, *, env: dict[str, str], max_restarts: int) -> list[dict]:
    """A 2-node torchrun job running a script from a ConfigMap volume."""
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-script"}, "data": {"train.py": FLAKY}}
    job = {
        "apiVersion": "pinery.dev/v1alpha1",
        "kind": "FSDPJob",
        "metadata": {"name": name},
        "spec": {
            "numNodes": 2,
            "nprocPerNode": 1,
            "masterPort": port,
            "command": ["torchrun", "/opt/job/train.py"],
            "env": [{"name": k, "value": v} for k, v in {**env, "ATTEMPT_FILE": "/etc/podinfo/attempt"}.items()],
            "maxRestarts": max_restarts,
            "startupTimeoutSeconds": 60,
            "podTemplate": {
                "volumes": [
                    {"name": "script", "configMap": {"name": f"{name}-script"}},
                    {"name": "podinfo", "downwardAPI": {"items": [
                        {"path": "attempt", "fieldRef": {"fieldPath": "metadata.labels['pinery.dev/attempt']"}},
                    ]}},
                ],
                "volumeMounts": [
                    {"name": "script", "mountPath": "/opt/job"},
                    {"name": "podinfo", "mountPath": "/etc/podinfo"},
                ],
            },
        },
    }
    return [config_map, job]


def events(local_mode, name: str) -> list[str]:
    listing = local_mode.kubectl.get("events")
    return [e["reason"] for e in sorted(listing["items"], key=lambda e: e["metadata"]["creationTimestamp"])
            if e["involvedObject"]["name"] == name and e["involvedObject"]["kind"] == "FSDPJob"]


def test_custom_command_allreduce_over_two_nodes_of_two_processes(local_mode):
    """examples/fsdpjob-custom-command.yaml: `torchrun -m pinery_trainer.smoke` on 2 x 2."""
    kubectl = local_mode.kubectl
    kubectl.apply(example("fsdpjob-custom-command.yaml", metadata_name="smoke-e2e", spec_masterPort=free_port()))
    kubectl.wait_for("fsdpjob/smoke-e2e", "Succeeded", timeout=120)

    job = kubectl.get("fsdpjob/smoke-e2e")
    assert job["status"]["phase"] == "Succeeded" and job["status"]["restarts"] == 0
    assert [(n["index"], n["phase"], n["exitCode"]) for n in job["status"]["nodes"]] == [(0, "Succeeded", 0), (1, "Succeeded", 0)]
    results = []
    for node in (0, 1):
        log = kubectl("logs", f"smoke-e2e-node-{node}", "-c", "trainer").stdout
        results += [json.loads(line) for line in log.splitlines() if line.startswith('{"smoke"')]
    assert sorted(r["rank"] for r in results) == [0, 1, 2, 3]
    assert all(r["ok"] and r["worldSize"] == 4 and r["sum"] == 10 for r in results)
    # Node 1 waited for rank 0 in its init container before torchrun started.
    waited = kubectl("logs", "smoke-e2e-node-1", "-c", "wait-for-rank0").stdout
    assert "accepts connections" in waited
    table = kubectl("get", "fsdpjobs").stdout
    assert "smoke-e2e" in table and "Succeeded" in table


def test_any_script_reports_its_progress_with_the_report_helper(local_mode):
    """examples/progress/: a torchrun script of the user's own, with `report.step`, shows its
    step and loss in the status as the built-in trainer's would."""
    kubectl = local_mode.kubectl
    kubectl("create", "configmap", "progress-demo-script", f"--from-file={REPO_ROOT / 'examples' / 'progress' / 'train.py'}")
    job = yaml.safe_load((REPO_ROOT / "examples" / "progress" / "fsdpjob.yaml").read_text())
    job["spec"].update(masterPort=free_port(), env=[{"name": "STEPS", "value": "12"}])
    kubectl.apply(job)
    kubectl.wait_for("fsdpjob/progress-demo", "Succeeded", timeout=120)
    progress = kubectl.get("fsdpjob/progress-demo")["status"]["progress"]
    assert (progress["step"], progress["totalSteps"], progress["lastCheckpointStep"]) == (12, 12, 10)
    assert isinstance(progress["loss"], float) and progress["tokensPerSecond"] > 0
    assert "STEP" in kubectl("get", "fj", "progress-demo").stdout


def test_a_rank_failing_once_restarts_the_gang_which_then_succeeds(local_mode):
    kubectl = local_mode.kubectl
    kubectl.apply(*script_job("flaky", free_port(), env={"FAIL_RANK": "1", "FAIL_CODE": "3"}, max_restarts=2))
    kubectl.wait_for("fsdpjob/flaky", "Succeeded", timeout=120)

    job = kubectl.get("fsdpjob/flaky")
    assert job["status"]["restarts"] == 1
    assert [(n["attempt"], n["exitCode"]) for n in job["status"]["nodes"]] == [(1, 0), (1, 0)]
    for node in (0, 1):
        pod = kubectl.get(f"pod/flaky-node-{node}")
        assert pod["metadata"]["labels"]["pinery.dev/attempt"] == "1"
        log = kubectl("logs", f"flaky-node-{node}", "-c", "trainer").stdout
        result = json.loads(next(line for line in log.splitlines() if line.startswith('{"rank"')))
        assert result == {"rank": node, "attempt": 1, "sum": 3.0, "expected": 3.0}
    reasons = events(local_mode, "flaky")
    assert "NodeFailed" in reasons and "GangRestart" in reasons and reasons[-1] == "AllNodesSucceeded"


# Attempt 0 joins the gang and waits to be drained; attempt 1 all-reduces and exits 0.
DRAINED = textwrap.dedent("""
    import os, sys, time
    from datetime import timedelta
    from pathlib import Path

    import torch
    import torch.distributed as dist

    attempt = int(Path(os.environ["ATTEMPT_FILE"]).read_text())
    dist.init_process_group("gloo", timeout=timedelta(seconds=60))
    if attempt == 0:
        print("joined; waiting to be drained", flush=True)
        time.sleep(600)
    value = torch.tensor([1.0])
    dist.all_reduce(value)
    print(f"attempt {attempt}: sum {value.item()}", flush=True)
    dist.barrier()
    dist.destroy_process_group()
    sys.stdout.flush()
    os._exit(0)
""")


def drain(kubectl, selector: str) -> str:
    """A real `kubectl drain` of the pods `selector` picks (pods/eviction); its output."""
    try:
        return kubectl("drain", "pinery-local", f"--pod-selector={selector}", "--ignore-daemonsets", "--delete-emptydir-data",
                       "--timeout=60s", timeout=90).stdout
    finally:
        kubectl("uncordon", "pinery-local")  # the runner ignores a cordon; the other tests share the node


def test_kubectl_drain_of_a_node_restarts_the_gang_without_spending_a_restart(local_mode):
    """A real drain (kubectl's eviction of pods/eviction, its DisruptionTarget condition kept by
    the pod runner as by a kubelet) is a disruption: the gang restarts with maxRestarts 0."""
    kubectl = local_mode.kubectl
    config_map, job = script_job("drained", free_port(), env={}, max_restarts=0)
    config_map["data"]["train.py"] = DRAINED
    job["spec"]["podTemplate"]["terminationGracePeriodSeconds"] = 5
    kubectl.apply(config_map, job)
    kubectl.wait_for("fsdpjob/drained", "Running", timeout=90)
    assert "pod/drained-node-1 evicted" in drain(kubectl, "pinery.dev/job-name=drained,pinery.dev/node-rank=1")
    kubectl.wait_for("fsdpjob/drained", "Succeeded", timeout=120)
    status = kubectl.get("fsdpjob/drained")["status"]
    assert (status["restarts"], status["disruptions"]) == (0, 1)
    assert status["lastDisruption"]["reason"] == "EvictionByEvictionAPI" and status["lastDisruption"]["node"] == 1
    assert [n["attempt"] for n in status["nodes"]] == [1, 1]
    reasons = events(local_mode, "drained")
    assert "NodeDisrupted" in reasons and "Disrupted" in reasons and "NodeFailed" not in reasons


def test_a_job_that_exhausts_its_restarts_fails_naming_the_node_and_exit_code(local_mode):
    kubectl = local_mode.kubectl
    kubectl.apply(*script_job("doomed", free_port(), env={"FAIL_RANK": "1", "FAIL_CODE": "5", "ALWAYS_FAIL": "1"}, max_restarts=1))
    kubectl.wait_for("fsdpjob/doomed", "Failed", timeout=120)

    job = kubectl.get("fsdpjob/doomed")
    failed = next(c for c in job["status"]["conditions"] if c["type"] == "Failed")
    assert job["status"]["phase"] == "Failed" and job["status"]["restarts"] == 1
    assert failed["reason"] == "RestartLimitExceeded"
    # torchrun exits 1; the worker's own code comes from its failure summary in the pod status.
    assert failed["message"].startswith("node 1 (pod doomed-node-1) failed: exit code 5 (Error)")
    assert "worker rank 1 exited with 5" in failed["message"]
    assert failed["message"].endswith("no restarts left (1 of 1 used)")
    assert "RestartLimitExceeded" in events(local_mode, "doomed")
    # The surviving node is stopped (its pod deleted); the failed one is kept for its logs.
    def pods():
        listing = json.loads(kubectl("get", "pods", "-l", "pinery.dev/job-name=doomed", "-o", "json").stdout)
        return {p["metadata"]["name"]: p["status"]["phase"] for p in listing["items"]}

    wait_for(lambda: pods() == {"doomed-node-1": "Failed"}, timeout=30, interval=0.3, what="the surviving pod to be stopped")
    assert "exitcode  : 5" in kubectl("logs", "doomed-node-1", "-c", "trainer").stdout


def test_rank0_exiting_before_the_other_node_joined_fails_at_once_not_at_the_startup_timeout(local_mode):
    """Rank 0 exits 0 without ever opening its port: node 1 waits for it in wait-for-rank0 and
    never can join. The job fails as rank 0's failure within seconds, not after the 600 s
    startup timeout (the wait below gives it 120 s)."""
    kubectl = local_mode.kubectl
    command = "import os, sys; sys.exit(0 if os.environ['NODE_RANK'] == '0' else 4)"
    kubectl.apply({
        "apiVersion": "pinery.dev/v1alpha1",
        "kind": "FSDPJob",
        "metadata": {"name": "alone"},
        "spec": {"numNodes": 2, "nprocPerNode": 1, "masterPort": free_port(), "maxRestarts": 0,
                 "command": ["python", "-c", command]},
    })
    kubectl.wait_for("fsdpjob/alone", "Failed", timeout=120)

    job = kubectl.get("fsdpjob/alone")
    failed = next(c for c in job["status"]["conditions"] if c["type"] == "Failed")
    assert failed["reason"] == "RestartLimitExceeded" and job["status"]["restarts"] == 0
    assert failed["message"] == (
        "node 0 (pod alone-node-0) failed: exit code 0 (ExitedBeforeNodesJoined): rank 0 exited before the other "
        "nodes joined: node 1 never joined (WaitingForRank0); no restarts left (0 of 0 used)"
    )
    node0 = job["status"]["nodes"][0]
    assert (node0.get("exitCode"), node0["reason"]) == (0, "ExitedBeforeNodesJoined"), json.dumps(job["status"]["nodes"])
    assert "NodeFailed" in events(local_mode, "alone")
    # node 1 was stopped while it still waited; rank 0's pod is kept for its log
    def pods():
        listing = json.loads(kubectl("get", "pods", "-l", "pinery.dev/job-name=alone", "-o", "json").stdout)
        return {p["metadata"]["name"]: p["status"]["phase"] for p in listing["items"]}

    wait_for(lambda: pods() == {"alone-node-0": "Succeeded"}, timeout=30, interval=0.3, what="node 1's pod to be stopped")


def test_the_built_in_trainer_trains_with_progress_in_the_status(local_mode):
    """An FSDPJob with no command: the built-in FSDP2 trainer on 2 nodes x 1 process."""
    kubectl = local_mode.kubectl
    job = example("fsdpjob-builtin-trainer.yaml", metadata_name="trainer-e2e", spec_masterPort=free_port(), spec_nprocPerNode=1)
    job["spec"]["trainer"].update({"steps": 12, "logEvery": 4})
    job["spec"]["trainer"]["model"]["seqLen"] = 32
    kubectl.apply(job)
    kubectl.wait_for("fsdpjob/trainer-e2e", "Succeeded", timeout=120)

    status = kubectl.get("fsdpjob/trainer-e2e")["status"]
    progress = status["progress"]
    assert progress["step"] == progress["totalSteps"] == 12
    assert isinstance(progress["loss"], float) and progress["tokensPerSecond"] > 0 and progress["updatedAt"]
    assert status["restarts"] == 0
    lines = [json.loads(line) for line in kubectl("logs", "trainer-e2e-node-0", "-c", "trainer").stdout.splitlines()
             if line.startswith("{")]
    steps = [line for line in lines if line.get("event") == "progress"]
    assert [s["step"] for s in steps] == [4, 8, 12]
    assert steps[-1]["loss"] < steps[0]["loss"]
    assert next(line for line in lines if line.get("event") == "start")["worldSize"] == 2
    assert progress["loss"] == pytest.approx(steps[-1]["loss"])
    assert "12" in kubectl("get", "fsdpjob", "trainer-e2e").stdout  # the STEP column


# Elastic: node LOST_NODE's first pod trains two rounds and is then lost with its torchrun agent
# (as when a machine dies). The survivors' agents re-rendezvous inside their own pods through the
# job's rendezvous store; with restarts left, the pod pinery starts for the lost node joins them
# and the job finishes only in a group of three; without, it finishes in a group of two. Each
# worker start prints the group torchrun gave it, and what its pod said of the job's size.
ELASTIC = textwrap.dedent("""
    import json, os, signal, sys, time
    from datetime import timedelta
    from pathlib import Path

    import torch
    import torch.distributed as dist

    attempt = int(Path(os.environ["ATTEMPT_FILE"]).read_text())
    node = int(os.environ["PINERY_POD_INDEX"])
    lost, final = int(os.environ["LOST_NODE"]), int(os.environ["FINAL_WORLD"])
    dist.init_process_group("gloo", timeout=timedelta(seconds=30))
    world = dist.get_world_size()
    print(json.dumps({"group": world, "WORLD_SIZE": os.environ["WORLD_SIZE"], "RANK": os.environ["RANK"],
                      "restart": int(os.environ["TORCHELASTIC_RESTART_COUNT"])}), flush=True)
    for round in range(3):
        total = torch.ones(1)
        dist.all_reduce(total)
        assert total.item() == world
        if node == lost and attempt == 0 and round == 1:
            print(f"node {node}: losing the whole node", flush=True)
            os.kill(os.getppid(), signal.SIGKILL)
            os._exit(1)
        time.sleep(0.5)
    if world != final:
        time.sleep(120)  # torchrun restarts this worker when the membership changes
        sys.exit(4)
    print(json.dumps({"node": node, "attempt": attempt, "world": world,
                      "agentRestarts": int(os.environ["TORCHELASTIC_RESTART_COUNT"])}), flush=True)
    dist.barrier()
    dist.destroy_process_group()
    sys.stdout.flush()
    os._exit(0)
""")
# Set on an elastic node's pod, these would be false once membership changes: pinery sets none.
STALE_ELASTIC_ENV = {"WORLD_SIZE", "NNODES", "NODE_RANK", "RANK", "MASTER_ADDR", "MASTER_PORT"}


def elastic_job(name: str, *, lost: int, final: int, max_restarts: int) -> list[dict]:
    config_map, job = script_job(name, free_port(), env={"LOST_NODE": str(lost), "FINAL_WORLD": str(final)}, max_restarts=max_restarts)
    config_map["data"]["train.py"] = ELASTIC
    job["spec"].update(numNodes=3, elastic={"minNodes": 2, "maxRestarts": 3})
    return [config_map, job]


def worker_lines(kubectl, pod: str, key: str) -> list[dict]:
    log = kubectl("logs", pod, "-c", "trainer").stdout
    return [json.loads(line) for line in log.splitlines() if line.startswith(f'{{"{key}"')]


def test_elastic_job_survives_losing_node_0_whose_replacement_rejoins(local_mode):
    """Node 0 hosts nothing: the rendezvous store is a pod of its own, so losing node 0 costs one
    replacement, not a gang restart, and the survivors keep their pods."""
    kubectl = local_mode.kubectl
    kubectl.apply(*elastic_job("flex", lost=0, final=3, max_restarts=2))
    kubectl.wait_for("fsdpjob/flex", "Running", timeout=90)
    store = kubectl.get("pod/flex-rendezvous")
    assert store["metadata"]["labels"]["pinery.dev/role"] == "rendezvous" and "pinery.dev/node-rank" not in store["metadata"]["labels"]
    survivors = {n: kubectl.get(f"pod/flex-node-{n}")["metadata"]["uid"] for n in (1, 2)}
    kubectl.wait_for("fsdpjob/flex", "Succeeded", timeout=240)

    status = kubectl.get("fsdpjob/flex")["status"]
    assert status["restarts"] == 1
    assert [(n["attempt"], n["restarts"], n["exitCode"]) for n in status["nodes"]] == [(1, 1, 0), (0, 0, 0), (0, 0, 0)]
    # Nodes 1 and 2 kept their pods: torchrun restarted their workers into the new group.
    assert {n: kubectl.get(f"pod/flex-node-{n}")["metadata"]["uid"] for n in (1, 2)} == survivors
    for node in (0, 1, 2):
        (result,) = worker_lines(kubectl, f"flex-node-{node}", "node")
        assert result["world"] == 3 and result["attempt"] == (1 if node == 0 else 0)
        if node != 0:
            # Its workers were started again into a new group: each start prints its group. The
            # restart count says why, which is timing: 1 or more when the survivors' collective
            # failed on the lost peer first, 0 when the new node's arrival restarted them first
            # (a membership change does not count as a failure).
            groups = worker_lines(kubectl, f"flex-node-{node}", "group")
            assert len(groups) >= 2 and groups[-1]["group"] == 3, groups
    reasons = events(local_mode, "flex")
    assert "NodeReplaced" in reasons and "AllNodesSucceeded" in reasons and "GangRestart" not in reasons
    # The finished job's store is stopped: it has no rendezvous left to keep.
    wait_for(lambda: "not found" in kubectl("get", "pod/flex-rendezvous", check=False).stderr, timeout=60, interval=1,
             what="the store pod to go")


@pytest.mark.long  # about a minute; losing a node without a replacement (the replacement case runs in make test)
def test_an_elastic_job_whose_membership_shrinks_sees_no_stale_world_size(local_mode):
    """Without restarts left, node 2 is not replaced: the others train on as a group of two, and
    what they read says two, never the spec's three."""
    kubectl = local_mode.kubectl
    kubectl.apply(*elastic_job("shrink", lost=2, final=2, max_restarts=0))
    kubectl.wait_for("fsdpjob/shrink", "Succeeded", timeout=240)

    for node in (0, 1):
        pod = kubectl.get(f"pod/shrink-node-{node}")
        env = {e["name"]: e.get("value") for e in pod["spec"]["containers"][0]["env"]}
        assert not STALE_ELASTIC_ENV & env.keys(), STALE_ELASTIC_ENV & env.keys()
        assert (env["PINERY_POD_INDEX"], env["PINERY_NUM_NODES"], env["PINERY_MIN_NODES"], env["PINERY_MAX_NODES"]) == (str(node), "3", "2", "3")
        groups = worker_lines(kubectl, f"shrink-node-{node}", "group")
        # torchrun's own values, every round: 3 at first, then 2 once node 2 was lost.
        assert groups[0]["group"] == 3 and groups[-1]["group"] == 2, groups
        assert all(g["WORLD_SIZE"] == str(g["group"]) for g in groups), groups
        (result,) = worker_lines(kubectl, f"shrink-node-{node}", "node")
        assert result["world"] == 2
    status = kubectl.get("fsdpjob/shrink")["status"]
    assert status["restarts"] == 0 and status["nodes"][2]["phase"] == "Failed"
    reasons = events(local_mode, "shrink")
    assert "NodeNotReplaced" in reasons and "GangRestart" not in reasons and "AllNodesSucceeded" in reasons


# Trains for minutes on its first attempt (long enough for the test to act on it), briefly on
# later ones.
LONG_FIRST = textwrap.dedent("""
    import json, os, time
    from datetime import timedelta
    from pathlib import Path

    import torch
    import torch.distributed as dist

    attempt = int(Path(os.environ["ATTEMPT_FILE"]).read_text())
    dist.init_process_group("gloo", timeout=timedelta(seconds=30))
    for round in range(600 if attempt == 0 else 3):
        total = torch.ones(1)
        dist.all_reduce(total)
        time.sleep(0.5)
    print(json.dumps({"node": int(os.environ["PINERY_POD_INDEX"]), "attempt": attempt, "world": dist.get_world_size()}), flush=True)
    dist.barrier()
    dist.destroy_process_group()
    os._exit(0)
""")


@pytest.mark.long  # a drain of a node runs in make test; this one drains the store
def test_a_drain_of_the_rendezvous_store_restarts_the_gang_as_a_disruption(local_mode):
    """Every agent loses its rendezvous with the store; pinery restarts the gang on a new store at
    once, a disruption since Kubernetes evicted the store, so maxRestarts 0 is enough."""
    kubectl = local_mode.kubectl
    config_map, job = elastic_job("storeless", lost=-1, final=3, max_restarts=0)
    config_map["data"]["train.py"] = LONG_FIRST
    kubectl.apply(config_map, job)
    kubectl.wait_for("fsdpjob/storeless", "Running", timeout=90)
    old = kubectl.get("pod/storeless-rendezvous")["metadata"]["uid"]
    assert "pod/storeless-rendezvous evicted" in drain(kubectl, "pinery.dev/job-name=storeless,pinery.dev/role=rendezvous")
    kubectl.wait_for("fsdpjob/storeless", "Succeeded", timeout=180)
    status = kubectl.get("fsdpjob/storeless")["status"]
    assert (status["restarts"], status["disruptions"]) == (0, 1)
    assert [n["attempt"] for n in status["nodes"]] == [1, 1, 1]
    for node in range(3):
        (result,) = worker_lines(kubectl, f"storeless-node-{node}", "node")
        assert (result["attempt"], result["world"]) == (1, 3)
    reasons = events(local_mode, "storeless")
    assert "RendezvousStoreLost" in reasons and "NodeFailed" not in reasons and "AllNodesSucceeded" in reasons
    # The store the new gang used was a new pod (since stopped with the job).
    store = kubectl("get", "pod/storeless-rendezvous", "-o", "jsonpath={.metadata.uid}", check=False).stdout
    assert store != old


# Reports a step every ~0.2 s and saves it (rank 0) in the checkpoint volume; on the attempt
# that found no checkpoint, every rank hangs after step 3, as a deadlocked job does: nothing
# exits, only the progress stops. The next attempt resumes from step 3 and finishes.
HANGS_ONCE = textwrap.dedent("""
    import json, os, time
    from datetime import timedelta
    from pathlib import Path

    import torch.distributed as dist
    from pinery_trainer import report

    saved = Path(os.environ["PINERY_CHECKPOINT_DIR"]) / "step.json"
    rank = int(os.environ["RANK"])
    dist.init_process_group("gloo", timeout=timedelta(seconds=120))
    start = json.loads(saved.read_text())["step"] if saved.exists() else 0
    dist.barrier()  # every rank has read the checkpoint before rank 0 writes the next one
    if rank == 0:
        print(json.dumps({"resumedFrom": start}), flush=True)
    for step in range(start + 1, 11):
        time.sleep(0.2)
        dist.barrier()
        if rank == 0:
            saved.with_suffix(".tmp").write_text(json.dumps({"step": step}))
            saved.with_suffix(".tmp").replace(saved)
        report.step(step, total_steps=10, checkpoint_step=step)
        if step == 3 and start == 0:
            time.sleep(3600)
    dist.barrier()
    dist.destroy_process_group()
    os._exit(0)
""")


@pytest.mark.long  # two gangs and a deadline: 40 s (the deadline policy's table test runs in make test)
def test_a_gang_whose_step_stops_advancing_is_restarted_as_stalled_and_resumes(local_mode):
    """progressDeadlineSeconds: the first gang hangs after step 3 without exiting; the operator,
    woken by its own deadline (no pod event comes), restarts it as Stalled; the second gang
    resumes from its checkpoint and succeeds."""
    kubectl = local_mode.kubectl
    config_map, job = script_job("stalls", free_port(), env={}, max_restarts=2)
    config_map["data"]["train.py"] = HANGS_ONCE
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "stalls-ckpt"},
             "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "1Gi"}}}}
    # Steps come every ~0.2 s, so 8 s without one is a hang even on a loaded machine; the first
    # step (torch's import, the gloo rendezvous) gets far longer.
    job["spec"].update(progressDeadlineSeconds=8, firstProgressDeadlineSeconds=120,
                       checkpoint={"volumeClaimName": "stalls-ckpt", "path": "/ckpt"})
    job["spec"]["podTemplate"]["terminationGracePeriodSeconds"] = 5
    kubectl.apply(claim, config_map, job)
    kubectl.wait_for("fsdpjob/stalls", "Succeeded", timeout=240)

    status = kubectl.get("fsdpjob/stalls")["status"]
    assert status["restarts"] == 1 and [n["attempt"] for n in status["nodes"]] == [1, 1]
    assert status["progress"]["step"] == 10 and status["progress"]["stepTime"]
    assert "Stalled" in events(local_mode, "stalls")
    stalled = next(e for e in kubectl.get("events")["items"] if e["reason"] == "Stalled" and e["involvedObject"]["name"] == "stalls")
    assert stalled["type"] == "Warning"
    assert stalled["message"].startswith("stalled: step 3 has not advanced for 8s (progressDeadlineSeconds): unchanged since ")
    assert stalled["message"].endswith("restarting all 2 nodes (restart 1 of 2)")
    log = kubectl("logs", "stalls-node-0", "-c", "trainer").stdout
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    assert [line for line in lines if "resumedFrom" in line][-1] == {"resumedFrom": 3}
    assert [line["step"] for line in lines if line.get("event") == "progress"][-7:] == [4, 5, 6, 7, 8, 9, 10]
