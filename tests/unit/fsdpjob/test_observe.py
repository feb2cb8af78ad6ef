"""Reading pods: reasons, exit codes and torchrun's failure summary, the real one included."""

import subprocess
import sys

import pytest

from pinery.fsdpjob.observe import torchrun_root_cause, view_pod
from tests.unit.fsdpjob.test_lifecycle import TORCHRUN_78


def pod(status, labels=None, **meta):
    return {"metadata": {"name": "j-node-1", "uid": "u", "labels": labels or {"pinery.dev/node-rank": "1", "pinery.dev/attempt": "2"}, **meta},
            "status": status}


def test_summary_root_cause():
    cause = torchrun_root_cause(TORCHRUN_78)
    assert (cause.rank, cause.exit_code) == (3, 78)
    assert torchrun_root_cause("exitcode : 5") is None and torchrun_root_cause(None) is None
    signal = TORCHRUN_78.replace("exitcode  : 78", "exitcode  : -9")
    assert torchrun_root_cause(signal).exit_code == 137


@pytest.mark.slow
def test_summary_of_a_real_torchrun_failure(tmp_path):
    """torchrun exits 1 whatever its worker returned; the summary it prints keeps the code."""
    script = tmp_path / "fail.py"
    script.write_text("import sys\nsys.exit(78)\n")
    result = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nnodes", "1", "--nproc-per-node", "1", "--master-port", "29631", str(script)],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 1
    # The kubelet keeps the log's tail (at most 80 lines / 2048 bytes) as the termination message.
    tail = "\n".join((result.stdout + result.stderr).splitlines()[-80:])[-2048:]
    assert torchrun_root_cause(tail).exit_code == 78


def test_labels_and_owner():
    view = view_pod(pod({"phase": "Running"}, ownerReferences=[{"controller": True, "uid": "job"}]))
    assert (view.rank, view.attempt, view.controller_uid, view.running) == (1, 2, "job", True)
    assert view_pod(pod({}, labels={"pinery.dev/node-rank": "x"})).rank is None


@pytest.mark.parametrize(
    "status, reason",
    [
        # a kubelet without the DisruptionTarget condition: a failure (disruption_policy)
        ({"phase": "Failed", "reason": "Evicted", "message": "low on memory"}, "Evicted"),
        # the kubelet's eviction manager writes both; the condition names the disruption
        ({"phase": "Failed", "reason": "Evicted", "message": "The node was low on resource: memory.",
          "conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "TerminationByKubelet"}]}, "TerminationByKubelet"),
        # a False condition (the scheduler's preemption attempt later undone) says nothing
        ({"phase": "Failed", "reason": "Evicted", "conditions": [{"type": "DisruptionTarget", "status": "False", "reason": "PreemptionByScheduler"}]},
         "Evicted"),
        ({"phase": "Unknown"}, "NodeLost"),
        ({"phase": "Failed", "conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]}, "PreemptionByScheduler"),
        ({"phase": "Failed", "initContainerStatuses": [{"name": "wait-for-rank0", "state": {"terminated": {"exitCode": 1}}}]}, "Rank0Unreachable"),
        ({"phase": "Failed", "containerStatuses": [{"name": "trainer", "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}]}, "OOMKilled"),
        ({"phase": "Pending", "initContainerStatuses": [{"name": "wait-for-rank0", "state": {"running": {}}}]}, "WaitingForRank0"),
        # the trainer waits while the init container runs; the wait is what to show
        ({"phase": "Pending", "initContainerStatuses": [{"name": "wait-for-rank0", "state": {"running": {}}}],
          "containerStatuses": [{"name": "trainer", "state": {"waiting": {"reason": "PodInitializing"}}}]}, "WaitingForRank0"),
        ({"phase": "Pending", "initContainerStatuses": [{"name": "wait-for-rank0", "state": {"terminated": {"exitCode": 0}}}],
          "containerStatuses": [{"name": "trainer", "state": {"waiting": {"reason": "PodInitializing"}}}]}, "PodInitializing"),
        ({"phase": "Pending", "initContainerStatuses": [{"name": "wait-for-rank0", "state": {"waiting": {"reason": "ErrImagePull"}}}]}, "ErrImagePull"),
        ({"phase": "Pending", "containerStatuses": [{"name": "trainer", "state": {"waiting": {"reason": "CreateContainerConfigError"}}}]},
         "CreateContainerConfigError"),
        ({"phase": "Succeeded", "containerStatuses": [{"name": "trainer", "state": {"terminated": {"exitCode": 0}}}]}, "Completed"),
    ],
)
def test_reasons(status, reason):
    assert view_pod(pod(status)).reason == reason


def test_when_a_pod_was_disrupted():
    """The DisruptionTarget condition's time, the disruption's start (disruption_policy orders
    the gang's failures by it); a condition that is not True says nothing."""
    cond = {"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI", "lastTransitionTime": "2026-01-01T12:00:05Z"}
    ended = {"name": "trainer", "state": {"terminated": {"exitCode": 143, "finishedAt": "2026-01-01T12:00:09Z"}}}
    view = view_pod(pod({"phase": "Failed", "conditions": [cond], "containerStatuses": [ended]}))
    assert (view.disrupted_at.isoformat(), view.finished_at.isoformat()) == ("2026-01-01T12:00:05+00:00", "2026-01-01T12:00:09+00:00")
    assert view_pod(pod({"phase": "Failed", "conditions": [{**cond, "status": "False"}]})).disrupted_at is None
    assert view_pod(pod({"phase": "Unknown"})).disrupted_at is None  # a node lost has no time of its own


WAITS = {"initContainers": [{"name": "wait-for-rank0"}], "containers": [{"name": "trainer"}]}


@pytest.mark.parametrize(
    "spec, status, joined",
    [
        (WAITS, {}, False),
        (WAITS, {"phase": "Pending", "initContainerStatuses": [{"name": "wait-for-rank0", "state": {"running": {}}}]}, False),
        (WAITS, {"phase": "Pending", "initContainerStatuses": [{"name": "wait-for-rank0", "state": {"waiting": {"reason": "ErrImagePull"}}}]}, False),
        (WAITS, {"phase": "Failed", "initContainerStatuses": [{"name": "wait-for-rank0", "state": {"terminated": {"exitCode": 1}}}]}, False),
        (WAITS, {"phase": "Pending", "initContainerStatuses": [{"name": "wait-for-rank0", "state": {"terminated": {"exitCode": 0}}}]}, True),
        (WAITS, {"phase": "Running", "containerStatuses": [{"name": "trainer", "state": {"running": {}}}]}, True),
        ({"containers": [{"name": "trainer"}]}, {}, True),  # rank 0 waits for nobody
    ],
)
def test_joined_means_past_the_wait_for_rank0(spec, status, joined):
    assert view_pod({**pod(status), "spec": spec}).joined is joined


RDZV_WAITS = {"initContainers": [{"name": "wait-for-rendezvous"}],
              "containers": [{"name": "trainer", "env": [{"name": "PET_RDZV_ID", "value": "uid-3"}]}]}


@pytest.mark.parametrize(
    "status, reason, joined",
    [
        ({"phase": "Pending", "initContainerStatuses": [{"name": "wait-for-rendezvous", "state": {"running": {}}}],
          "containerStatuses": [{"name": "trainer", "state": {"waiting": {"reason": "PodInitializing"}}}]}, "WaitingForRendezvous", False),
        ({"phase": "Failed", "initContainerStatuses": [{"name": "wait-for-rendezvous", "state": {"terminated": {"exitCode": 1}}}]},
         "RendezvousUnreachable", False),
        ({"phase": "Pending", "initContainerStatuses": [{"name": "wait-for-rendezvous", "state": {"terminated": {"exitCode": 0}}}],
          "containerStatuses": [{"name": "trainer", "state": {"waiting": {"reason": "PodInitializing"}}}]}, "PodInitializing", True),
    ],
)
def test_an_elastic_node_waits_for_the_rendezvous_store(status, reason, joined):
    view = view_pod({**pod(status), "spec": RDZV_WAITS})
    assert (view.reason, view.joined, view.rendezvous_id) == (reason, joined, "uid-3")
    if reason == "RendezvousUnreachable":
        assert view.detail == "wait-for-rendezvous exited with 1: the rendezvous store did not accept connections in time"


def test_a_static_node_has_no_rendezvous_run():
    assert view_pod({**pod({}), "spec": WAITS}).rendezvous_id is None
