"""The FSDPJob lifecycle decisions, pass by pass, with the test playing kubelet."""

from __future__ import annotations

import copy
import json

import pytest

from pinery.fsdpjob import phase_of, plan
from pinery.fsdpjob.naming import ANNOTATION_SPEC
from tests.unit.fsdpjob.cluster import (
    SETTINGS,
    T0,
    UID,
    Cluster,
    Crash,
    exited,
    job_object,
    reached_rank0,
    running,
    waiting,
    waiting_for_rank0,
)

TORCHRUN_78 = """[rank1]: pinery_trainer: spec.trainer.steps: must be positive
============================================================
pinery_trainer FAILED
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-01-01_12:00:00
  host      : train-node-1.train.ml.svc.cluster.local
  rank      : 3 (local_rank: 1)
  exitcode  : 78 (pid: 42)
  error_file: <N/A>
============================================================"""


def started(spec: dict, **kw) -> Cluster:
    """A job whose pods were created and are all running."""
    c = Cluster(job_object(spec, **kw))
    c.reconcile()
    c.run()
    c.reconcile()
    assert c.status["phase"] == "Running", c.status
    return c


def reasons(events) -> list[str]:
    return [e.reason for e in events]


# --- creation and the happy path ---------------------------------------------------------


def test_first_pass_creates_service_config_and_pods_and_says_pending():
    c = Cluster(job_object({"numNodes": 3, "nprocPerNode": 2}))
    p = c.reconcile()
    assert [(o["kind"], o["metadata"]["name"]) for o in p.create] == [
        ("Service", "train"), ("ConfigMap", "train-trainer"),
        ("Pod", "train-node-0"), ("Pod", "train-node-1"), ("Pod", "train-node-2"),
    ]
    assert c.status["phase"] == "Pending" and c.status["restarts"] == 0
    assert c.status["startTime"] == "2026-01-01T12:00:00Z" and c.status["observedGeneration"] == 1
    # Created follows what exists: nothing is reported before the pods are seen.
    assert c.condition("Created") == {}
    assert c.condition("Running")["status"] == "False" and c.condition("Running")["reason"] == "PodsPending"
    assert all(c["observedGeneration"] == 1 for c in c.status["conditions"])
    assert [n["attempt"] for n in c.status["nodes"]] == [0, 0, 0]
    assert reasons(p.events) == []
    assert c.attempts() == {0: 0, 1: 0, 2: 0}
    assert p.steps().__next__()[0] == "patch_status"
    p = c.reconcile()
    assert c.condition("Created")["status"] == "True" and c.condition("Created")["reason"] == "PodsCreated"
    assert reasons(p.events) == ["Created"] and p.events[0].message == "created pods train-node-0, train-node-1, train-node-2"


def test_a_second_pass_creates_nothing_and_a_third_is_idle():
    c = Cluster(job_object({"numNodes": 2}))
    c.reconcile()
    second = c.reconcile()
    assert second.create == () and second.delete_pods == ()
    assert [n["phase"] for n in c.status["nodes"]] == ["Pending", "Pending"]
    third = c.plan()
    assert third.idle and third.status_patch is None
    assert third.requeue_after == pytest.approx(600 - 0, abs=1)  # the startup deadline


def test_pending_until_every_pod_runs_then_running():
    c = Cluster(job_object({"numNodes": 2}))
    c.reconcile()
    c.run(0)
    c.reconcile()
    assert c.status["phase"] == "Pending"
    assert "node 1: Pending" in c.condition("Running")["message"]
    c.run(1)
    p = c.reconcile()
    assert c.status["phase"] == "Running" and reasons(p.events) == ["NodesRunning"]
    assert p.requeue_after == 30  # progress is read while training runs


def test_not_succeeded_while_any_node_still_runs():
    c = started({"numNodes": 3})
    c.succeed(0, 1)
    c.reconcile()
    assert c.status["phase"] == "Running" and c.condition("Succeeded") == {}
    c.succeed(2)
    p = c.reconcile()
    assert c.status["phase"] == "Succeeded" and c.condition("Running")["status"] == "False"
    assert c.condition("Succeeded")["message"] == "all 3 nodes exited 0"
    assert c.status["completionTime"] == "2026-01-01T12:00:00Z"
    assert [n["exitCode"] for n in c.status["nodes"]] == [0, 0, 0]
    assert "AllNodesSucceeded" in reasons(p.events) and p.delete_pods == ()
    assert c.plan().idle


def test_waiting_reasons_appear_in_nodes_and_in_the_condition():
    c = Cluster(job_object({"numNodes": 2}))
    c.reconcile()
    c.set_pod_status(0, waiting("ImagePullBackOff", "Back-off pulling image \"nope\""))
    c.set_pod_status(1, {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                                             "message": "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."}]})
    c.reconcile()
    assert [n["reason"] for n in c.status["nodes"]] == ["ImagePullBackOff", "Unschedulable"]
    assert "node 1: Unschedulable: 0/4 nodes are available" in c.condition("Running")["message"]


def test_nodes_waiting_for_the_same_reason_share_one_entry_and_long_messages_are_clipped():
    c = Cluster(job_object({"numNodes": 8}))
    c.reconcile()
    for rank in (0, 1, 2, 5):
        c.set_pod_status(rank, waiting("ImagePullBackOff", "Back-off"))
    c.run(3)
    c.reconcile()
    assert c.condition("Running")["message"] == "nodes 0-2, 5: ImagePullBackOff: Back-off; nodes 4, 6-7: Pending"
    c = Cluster(job_object({"numNodes": 100}))
    c.reconcile()
    for rank in range(100):
        c.set_pod_status(rank, waiting("ErrImagePull", f"rank {rank}: " + "x" * 100))
    c.reconcile()
    message = c.condition("Running")["message"]
    assert 4000 < len(message) <= 4096 and message.endswith("more characters)")


# --- gang restarts -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "break_node",
    [
        pytest.param(lambda c: c.fail(1, 3), id="non-zero exit"),
        pytest.param(lambda c: c.fail(1, 137, "OOMKilled"), id="oom"),
        pytest.param(lambda c: c.set_pod_status(1, {"phase": "Failed", "reason": "Evicted", "message": "The node was low on resource: memory."}),
                     id="eviction"),
        pytest.param(lambda c: c.pod(1)["metadata"].__setitem__("deletionTimestamp", "2026-01-01T12:00:30Z"), id="deleted by someone"),
        pytest.param(lambda c: c.objects.pop(("Pod", "train-node-1")), id="pod vanished"),
    ],
)
def test_any_failure_restarts_the_whole_gang(break_node):
    c = started({"numNodes": 3, "maxRestarts": 2})
    old_uids = {c.pod(i)["metadata"]["uid"] for i in range(3) if ("Pod", f"train-node-{i}") in c.objects}
    break_node(c)
    p = c.reconcile()
    assert c.status["restarts"] == 1 and c.status["phase"] == "Restarting"
    assert [n["attempt"] for n in c.status["nodes"]] == [1, 1, 1]
    assert [n["restarts"] for n in c.status["nodes"]] == [1, 1, 1]
    assert c.condition("Restarting")["reason"] == "GangRestart"
    assert "node 1 (pod train-node-1) failed" in c.condition("Restarting")["message"]
    assert "restart 1 of 2" in c.condition("Restarting")["message"]
    assert p.create == ()  # the old gang must be gone first
    live = {d.uid for d in p.delete_pods}
    assert live <= old_uids and len(live) >= 2
    assert reasons(p.events)[:2] == ["NodeFailed", "GangRestart"]
    # The old pods are still terminating: nothing new yet, and nothing counted twice.
    wait = c.reconcile()
    assert wait.create == () and c.status["restarts"] == 1 and wait.requeue_after == 5
    c.finish_deletions()
    c.objects.pop(("Pod", "train-node-1"), None)
    recreate = c.reconcile()
    assert [o["metadata"]["labels"]["pinery.dev/attempt"] for o in recreate.create] == ["1", "1", "1"]
    assert [e for e in recreate.create[0]["spec"]["containers"][0]["env"] if e["name"] == "PINERY_ATTEMPT"] == [{"name": "PINERY_ATTEMPT", "value": "1"}]
    c.run()
    back = c.reconcile()
    assert c.status["phase"] == "Running" and c.condition("Restarting")["status"] == "False"
    assert "Restarted" in reasons(back.events)


def test_restart_budget_exhausted_fails_with_the_first_failing_node_and_stops_survivors():
    c = started({"numNodes": 3, "maxRestarts": 0})
    c.fail(2, 3)
    c.tick(2)
    c.fail(0, 1)  # a consequence of node 2's failure, reported later
    p = c.reconcile()
    failed = c.condition("Failed")
    assert c.status["phase"] == "Failed" and failed["reason"] == "RestartLimitExceeded"
    assert failed["message"].startswith("node 2 (pod train-node-2) failed: exit code 3 (Error)")
    assert "no restarts left (0 of 0 used)" in failed["message"]
    assert [d.name for d in p.delete_pods] == ["train-node-1"]  # finished pods stay for their logs
    assert c.status["nodes"][1]["reason"] == "Stopped"
    assert c.status["completionTime"]
    assert c.reconcile().create == () and c.plan().idle


def test_restarts_count_across_attempts_and_never_reset():
    c = started({"numNodes": 2, "maxRestarts": 2})
    for expected in (1, 2):
        c.fail(0, 1)
        c.reconcile()
        c.finish_deletions()
        c.reconcile()
        c.run()
        c.reconcile()
        assert c.status["restarts"] == expected and c.attempts() == {0: expected, 1: expected}
    c.fail(1, 9)
    c.reconcile()
    assert c.status["phase"] == "Failed" and "(2 of 2 used)" in c.condition("Failed")["message"]


@pytest.mark.parametrize(
    "spec, code, message, expect",
    [
        ({"nonRetryableExitCodes": [42]}, 42, None, "NonRetryableExitCode"),
        ({}, 78, None, "NonRetryableExitCode"),  # the built-in trainer's configuration error
        ({"command": ["python", "train.py"]}, 78, None, "GangRestart"),  # a custom command's 78 is retried
        ({"command": ["python", "train.py"], "nonRetryableExitCodes": [78]}, 78, None, "NonRetryableExitCode"),
        ({}, 1, TORCHRUN_78, "NonRetryableExitCode"),  # torchrun exits 1; its worker exited 78
        ({}, 1, "Traceback ...\nRuntimeError: boom", "GangRestart"),
    ],
)
def test_non_retryable_exit_codes_fail_at_once(spec, code, message, expect):
    c = started({"numNodes": 2, "maxRestarts": 3, **spec})
    c.fail(1, code, message=message)
    c.reconcile()
    if expect == "NonRetryableExitCode":
        assert c.status["phase"] == "Failed" and c.status["restarts"] == 0
        assert c.condition("Failed")["reason"] == expect
        assert "exit code 78 is not retried" in c.condition("Failed")["message"] or "exit code 42" in c.condition("Failed")["message"]
    else:
        assert c.status["phase"] == "Restarting"


def test_a_failure_keeps_the_end_of_the_failed_nodes_log_through_the_restarts():
    c = started({"numNodes": 2, "maxRestarts": 3})
    report = "=" * 60 + "\ntrain.py FAILED\n" + "=" * 60
    c.failure_logs = {"train-node-1": f"step 1\nTraceback (most recent call last):\nRuntimeError: boom\n{report}\n"}
    c.fail(1, 1, message=report)
    c.reconcile()
    (kept,) = c.status["failures"]
    assert kept == {"attempt": 0, "node": 1, "pod": "train-node-1", "reason": "Error", "exitCode": 1, "time": kept["time"],
                    "logTail": "step 1\nTraceback (most recent call last):\nRuntimeError: boom"}
    assert c.condition("Restarting")["message"].endswith("its log ends: step 1 | Traceback (most recent call last): | RuntimeError: boom")
    assert any(e.reason == "NodeFailed" and e.message.endswith("RuntimeError: boom") for e in c.events)
    # without a log read, the termination message stands in; each attempt keeps its own, 3 at most
    c.failure_logs = {}
    for attempt in range(1, 4):
        c.finish_deletions()
        c.reconcile()
        c.run()
        c.reconcile()
        c.fail(0, 1, message=f"RuntimeError: attempt {attempt}")
        c.reconcile()
    assert [(f["attempt"], f["node"]) for f in c.status["failures"]] == [(1, 0), (2, 0), (3, 0)]
    assert c.status["failures"][-1]["logTail"] == "RuntimeError: attempt 3"
    assert c.condition("Failed")["message"].endswith("no restarts left (3 of 3 used); its log ends: RuntimeError: attempt 3")


def test_torchrun_summary_gives_the_workers_exit_code():
    c = started({"numNodes": 2})
    c.fail(1, 1, message=TORCHRUN_78)
    c.reconcile()
    node = c.status["nodes"][1]
    assert node["exitCode"] == 78 and node["phase"] == "Failed"
    assert "torchrun exited with 1 because worker rank 3 exited with 78" in c.condition("Failed")["message"]


# --- crash safety ------------------------------------------------------------------------


def converge(c: Cluster, passes: int = 6) -> None:
    for _ in range(passes):
        c.reconcile()
        c.finish_deletions()


@pytest.mark.parametrize("crash_after", range(0, 8))
def test_a_crash_at_any_step_of_a_gang_restart_counts_it_once(crash_after):
    c = started({"numNodes": 3, "maxRestarts": 5})
    c.fail(1, 1)
    p = c.plan()
    assert len(list(p.steps())) >= 5
    try:
        c.apply(p, crash_after=crash_after)
    except Crash:
        pass
    before = c.created_pods
    converge(c)
    assert c.status["restarts"] == 1
    assert c.attempts() == {0: 1, 1: 1, 2: 1}
    assert c.created_pods - before == 3  # exactly one new gang
    assert sum(1 for e in c.events if e.reason == "GangRestart") <= 1


@pytest.mark.parametrize("crash_after", range(0, 6))
def test_a_crash_during_creation_never_makes_a_second_set_of_pods(crash_after):
    c = Cluster(job_object({"numNodes": 4}))
    try:
        c.apply(c.plan(), crash_after=crash_after)
    except Crash:
        pass
    converge(c)
    assert c.created_pods == 4 and c.attempts() == {0: 0, 1: 0, 2: 0, 3: 0}
    assert c.status["restarts"] == 0


def test_replaying_the_same_plan_changes_nothing_more():
    c = started({"numNodes": 2, "maxRestarts": 3})
    c.fail(0, 1)
    p = c.plan()
    c.apply(p)
    c.apply(p)  # the handler retried the whole plan
    assert c.status["restarts"] == 1
    again = c.plan()
    assert again.status["restarts"] == 1 and again.create == ()


def test_pod_attempt_labels_repair_a_lost_count():
    c = started({"numNodes": 2, "maxRestarts": 5})
    for rank in (0, 1):
        c.pod(rank)["metadata"]["labels"]["pinery.dev/attempt"] = "2"
    c.job["status"] = {}  # status lost (restored from a backup without it)
    p = c.reconcile()
    assert c.status["restarts"] == 2 and all(o["kind"] != "Pod" for o in p.create)
    assert [n["attempt"] for n in c.status["nodes"]] == [2, 2]


def test_pods_stuck_terminating_on_a_lost_node_are_force_deleted():
    c = started({"numNodes": 2, "maxRestarts": 1})
    c.set_pod_status(1, {"phase": "Unknown"})
    c.reconcile()
    c.pod(0)["status"] = exited(143, c.now)
    c.objects.pop(("Pod", "train-node-0"))  # the healthy node's pod went away
    c.tick(60)
    assert all(not d.force for d in c.reconcile().delete_pods)
    c.tick(31)
    p = c.reconcile()
    assert [(d.name, d.force) for d in p.delete_pods] == [("train-node-1", True)]
    assert c.reconcile().create  # the new gang starts


def test_the_plan_wakes_when_a_stuck_pod_is_due_for_force_deletion():
    c = started({"numNodes": 2, "maxRestarts": 1})
    c.set_pod_status(1, {"phase": "Unknown"})
    c.reconcile()  # both pods deleted: their deadline is now + 30 s, forced 60 s after that
    c.tick(88)
    assert c.plan().requeue_after == pytest.approx(2)


# --- creations the API server refuses -----------------------------------------------------


def quota(name: str) -> str:
    return f'pods "{name}" is forbidden: exceeded quota: gpu, requested: nvidia.com/gpu=1, used: nvidia.com/gpu=8, limited: nvidia.com/gpu=8'


def refusing(c: Cluster, *names: str, refused: dict | None = None):
    """One pass in which the API server refuses to create the objects named `names`; returns
    the plan and what the handler passes to the next pass."""
    p = plan(
        copy.deepcopy(c.job), c.pods(), c.now,
        service=c.objects.get(("Service", c.name)), config_map=c.objects.get(("ConfigMap", "train-trainer")),
        settings=SETTINGS, refused=refused,
    )
    c.apply(p)
    answers = {}
    for obj in p.create:
        name = obj["metadata"]["name"]
        if name in names:
            c.objects.pop((obj["kind"], name))
            answers[f"{obj['kind']}/{name}"] = quota(name) if obj["kind"] == "Pod" else f'services "{name}" is forbidden'
    return p, answers


def test_refused_pod_creation_is_a_warning_a_condition_and_retried():
    c = Cluster(job_object({"numNodes": 2, "startupTimeoutSeconds": 60}))
    _, refused = refusing(c, "train-node-1")
    c.tick(1)
    p, refused = refusing(c, "train-node-1", refused=refused)
    # reported in the node, the conditions and one Warning with the API server's answer
    assert [(e.type, e.reason, e.message) for e in p.events] == [
        ("Warning", "FailedCreate", f"node 1: the API server refused to create pod train-node-1: {quota('train-node-1')}")
    ]
    assert c.status["nodes"][1]["reason"] == "FailedCreate"
    running = c.condition("Running")
    assert running["reason"] == "FailedCreate" and f"node 1: FailedCreate: {quota('train-node-1')}" in running["message"]
    assert c.condition("Created")["status"] == "False" and c.condition("Created")["reason"] == "FailedCreate"
    assert [o["metadata"]["name"] for o in p.create] == ["train-node-1"]  # tried again
    p, refused = refusing(c, "train-node-1", refused=refused)
    assert p.events == ()  # still refused: no second Warning
    # accepted at last: the job is Created, and its pods pend as usual
    refusing(c, refused=refused)
    c.reconcile()
    assert c.condition("Created")["status"] == "True" and c.condition("Running")["reason"] == "PodsPending"
    assert c.status["nodes"][1]["phase"] == "Pending"


def test_startup_timeout_counts_from_the_first_refused_creation():
    c = Cluster(job_object({"numNodes": 1, "startupTimeoutSeconds": 30}))
    _, refused = refusing(c, "train-node-0")
    assert c.status["startTime"] == "2026-01-01T12:00:00Z"
    for _ in range(3):
        c.tick(10)
        p, refused = refusing(c, "train-node-0", refused=refused)
    failed = c.condition("Failed")
    assert failed["reason"] == "StartupTimeout" and quota("train-node-0") in failed["message"]
    assert c.status["phase"] == "Failed" and p.create == ()


def test_refused_service_is_a_created_condition_with_a_warning():
    c = Cluster(job_object({"numNodes": 1, "command": ["python", "x.py"]}))
    _, refused = refusing(c, "train")
    p, _ = refusing(c, "train", refused=refused)
    created = c.condition("Created")
    assert created["status"] == "False" and 'Service train: services "train" is forbidden' in created["message"]
    assert [(e.type, e.reason) for e in p.events] == [("Warning", "FailedCreate")]
    assert [o["kind"] for o in p.create] == ["Service"]


def test_someone_elses_pod_holding_a_name_blocks_creation():
    c = Cluster(job_object({"numNodes": 2}))
    c.objects[("Pod", "train-node-1")] = {
        "kind": "Pod",
        "metadata": {"name": "train-node-1", "uid": "old", "labels": {"pinery.dev/job-name": "train", "pinery.dev/node-rank": "1"},
                     "ownerReferences": [{"controller": True, "uid": "previous-job"}]},
        "status": {"phase": "Running"},
    }
    p = c.reconcile()
    assert [o["metadata"]["name"] for o in p.create if o["kind"] == "Pod"] == ["train-node-0"]
    assert p.delete_pods == () and c.status["nodes"][1]["reason"] == "WaitingForOldPod"


# --- rank 0 exits before the others joined ------------------------------------------------
# The others wait for rank 0's port, which will never open again: waiting out the startup
# timeout would only delay the verdict. It is rank 0's failure.

GRACE = 10  # lifecycle.RANK0_EXIT_GRACE


def rank0_exits_first(spec: dict, code: int = 0, *, node1=waiting_for_rank0) -> Cluster:
    """Rank 0 ran and exited `code` while node 1 was still in `node1`'s state."""
    c = Cluster(job_object(spec))
    c.reconcile()
    c.run(0)
    c.set_pod_status(1, node1())
    c.reconcile()
    assert c.status["restarts"] == 0 and c.condition("Failed") == {}
    c.tick(3)
    if code == 0:
        c.succeed(0)
    else:
        c.fail(0, code)
    return c


def test_a_node_waiting_for_rank0_shows_that_reason():
    c = rank0_exits_first({"numNodes": 2})
    assert c.status["nodes"][1]["reason"] == "WaitingForRank0"
    assert c.condition("Running")["message"] == "node 1: WaitingForRank0"


def test_rank0_exiting_0_before_the_others_joined_restarts_the_gang_after_a_grace():
    c = rank0_exits_first({"numNodes": 2, "maxRestarts": 1})
    p = c.reconcile()
    # a node that reached rank 0 just before it exited gets a moment to say so
    assert c.status["restarts"] == 0 and p.delete_pods == () and p.requeue_after == pytest.approx(GRACE)
    assert c.status["phase"] == "Pending" and reasons(p.events) == []
    c.tick(GRACE - 1)
    assert c.plan().requeue_after == pytest.approx(1) and c.reconcile().delete_pods == ()
    c.tick(1)
    p = c.reconcile()
    assert c.status["restarts"] == 1 and c.status["phase"] == "Restarting"
    message = c.condition("Restarting")["message"]
    assert message == (
        "node 0 (pod train-node-0) failed: exit code 0 (ExitedBeforeNodesJoined): rank 0 exited before the other "
        "nodes joined: node 1 never joined (WaitingForRank0); restarting all 2 nodes (restart 1 of 1)"
    )
    assert reasons(p.events)[:2] == ["NodeFailed", "GangRestart"]
    assert [d.name for d in p.delete_pods] == ["train-node-0", "train-node-1"]
    c.finish_deletions()
    assert [o["metadata"]["labels"]["pinery.dev/attempt"] for o in c.reconcile().create] == ["1", "1"]
    c.run()
    c.reconcile()
    c.succeed()
    c.reconcile()
    assert c.status["phase"] == "Succeeded" and c.status["restarts"] == 1


def test_rank0_exiting_0_before_the_others_joined_without_budget_fails_saying_so():
    c = rank0_exits_first({"numNodes": 3, "maxRestarts": 0})
    c.set_pod_status(2, {"phase": "Pending"})  # not even initialized
    c.tick(GRACE)
    p = c.reconcile()
    failed = c.condition("Failed")
    assert c.status["phase"] == "Failed" and failed["reason"] == "RestartLimitExceeded"
    assert failed["message"] == (
        "node 0 (pod train-node-0) failed: exit code 0 (ExitedBeforeNodesJoined): rank 0 exited before the other "
        "nodes joined: nodes 1-2 never joined (node 1: WaitingForRank0; node 2: Pending); no restarts left (0 of 0 used)"
    )
    assert [(n["exitCode"], n["reason"]) for n in c.status["nodes"][:1]] == [(0, "ExitedBeforeNodesJoined")]
    assert [n["reason"] for n in c.status["nodes"][1:]] == ["Stopped", "Stopped"]
    assert sorted(d.name for d in p.delete_pods) == ["train-node-1", "train-node-2"]  # rank 0's pod stays for its log
    assert c.condition("Succeeded") == {} and c.status["completionTime"]
    assert c.reconcile().create == () and c.plan().idle


@pytest.mark.parametrize("code, reason", [(1, "Error"), (137, "Error")])
def test_rank0_failing_before_the_others_joined_restarts_at_once_and_says_who_never_joined(code, reason):
    c = rank0_exits_first({"numNodes": 2, "maxRestarts": 1}, code)
    c.reconcile()
    assert c.status["restarts"] == 1
    assert c.condition("Restarting")["message"].startswith(
        f"node 0 (pod train-node-0) failed: exit code {code} ({reason}): node 1 never joined (WaitingForRank0); restarting"
    )


@pytest.mark.parametrize(
    "node1",
    [pytest.param(reached_rank0, id="wait container exited 0"), pytest.param(running, id="running"),
     pytest.param(lambda: exited(0, T0), id="exited 0")],
)
def test_rank0_exiting_0_after_the_others_joined_is_no_failure(node1):
    c = rank0_exits_first({"numNodes": 2, "maxRestarts": 1}, node1=node1)
    c.tick(GRACE * 10)
    c.reconcile()
    assert c.status["restarts"] == 0 and c.condition("Failed") == {} and c.condition("Restarting") == {}
    c.succeed(1)
    c.reconcile()
    assert c.status["phase"] == "Succeeded"


def test_rank0_exiting_0_while_another_node_has_no_pod_is_a_failure():
    c = Cluster(job_object({"numNodes": 2, "maxRestarts": 0}))
    c.reconcile()
    c.objects.pop(("Pod", "train-node-1"))  # never made (a creation the API server refused, say)
    c.succeed(0)
    c.tick(GRACE)
    c.reconcile()
    assert c.condition("Failed")["reason"] == "RestartLimitExceeded"
    assert "exit code 0 (ExitedBeforeNodesJoined)" in c.condition("Failed")["message"]
    assert "node 1 never joined" in c.condition("Failed")["message"]


def test_elastic_rank0_exiting_0_alone_is_a_success_when_enough_nodes_succeeded():
    c = rank0_exits_first({"numNodes": 3, "elastic": {"minNodes": 1}, "maxRestarts": 1})
    c.tick(GRACE)
    c.reconcile()
    assert c.status["phase"] == "Succeeded" and c.status["restarts"] == 0


def test_elastic_nodes_wait_for_the_store_so_rank0_exiting_first_fails_no_one_early():
    """Elastic nodes wait for the rendezvous store, not for rank 0: rank 0's exit is no failure of
    its own (ExitedBeforeNodesJoined is static only). Nodes that then find the rendezvous closed
    fail, and the elastic rules judge them."""
    c = rank0_exits_first({"numNodes": 3, "elastic": {"minNodes": 2}, "maxRestarts": 1})
    c.tick(GRACE)
    c.reconcile()
    assert c.status["restarts"] == 0 and c.condition("Failed") == {} and c.condition("Restarting") == {}
    assert c.status["nodes"][0]["phase"] == "Succeeded"
    c.fail(1)
    c.fail(2)
    c.reconcile()
    assert c.status["restarts"] == 1 and c.condition("Restarting")["status"] == "True"


# --- deadlines and TTL -------------------------------------------------------------------


@pytest.mark.parametrize(
    "status",
    [waiting("ImagePullBackOff", "Back-off pulling image"), waiting("ErrImagePull"),
     {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}, {"phase": "Pending"}],
    ids=["ImagePullBackOff", "ErrImagePull", "Unschedulable", "Pending"],
)
def test_startup_timeout_fails_a_job_that_never_starts(status):
    c = Cluster(job_object({"numNodes": 2, "startupTimeoutSeconds": 120, "maxRestarts": 5}))
    c.reconcile()
    c.run(0)
    c.set_pod_status(1, status)
    c.tick(119)
    p = c.reconcile()
    assert c.status["phase"] == "Pending" and p.requeue_after == pytest.approx(1)
    c.tick(1)
    p = c.reconcile()
    failed = c.condition("Failed")
    assert failed["reason"] == "StartupTimeout" and c.status["restarts"] == 0
    assert "startupTimeoutSeconds (120s)" in failed["message"] and "node 1: " in failed["message"]
    assert "node 0" not in failed["message"]
    assert sorted(d.name for d in p.delete_pods) == ["train-node-0", "train-node-1"]


def test_startup_window_restarts_with_each_gang_restart():
    c = started({"numNodes": 2, "startupTimeoutSeconds": 100, "maxRestarts": 2})
    c.tick(500)
    c.fail(1)
    c.reconcile()
    c.finish_deletions()
    c.reconcile()
    c.tick(90)
    c.reconcile()
    assert c.status["phase"] == "Restarting"
    c.tick(10)
    c.reconcile()
    assert c.condition("Failed")["reason"] == "StartupTimeout"


def test_active_deadline_fails_and_stops_the_pods():
    c = started({"numNodes": 2, "activeDeadlineSeconds": 3600})
    c.tick(1800)
    assert c.reconcile().requeue_after == 30
    c.tick(1800)
    p = c.reconcile()
    assert c.condition("Failed")["reason"] == "DeadlineExceeded" and len(p.delete_pods) == 2
    assert "activeDeadlineSeconds (3600s)" in c.condition("Failed")["message"]


def test_ttl_after_finished_deletes_the_job():
    c = started({"numNodes": 1, "ttlSecondsAfterFinished": 100})
    c.succeed()
    c.reconcile()
    c.tick(40)
    p = c.reconcile()
    assert not p.delete_job and p.requeue_after == pytest.approx(60)
    c.tick(60)
    p = c.reconcile()
    assert p.delete_job and reasons(p.events) == ["Deleting"]


def test_deadline_can_be_extended_while_running():
    c = started({"numNodes": 1, "activeDeadlineSeconds": 10})
    c.job["spec"]["activeDeadlineSeconds"] = 1000
    c.job["metadata"]["generation"] = 2
    c.tick(20)
    c.reconcile()
    assert c.status["phase"] == "Running" and c.status["observedGeneration"] == 2


# --- suspend -----------------------------------------------------------------------------


def test_suspend_removes_pods_keeps_count_and_resume_recreates_without_counting():
    c = started({"numNodes": 2, "maxRestarts": 3})
    c.fail(0)
    converge(c)
    c.run()
    c.reconcile()
    assert c.status["restarts"] == 1
    c.job["spec"]["suspend"] = True
    p = c.reconcile()
    assert len(p.delete_pods) == 2 and c.status["phase"] == "Suspended"
    assert c.condition("Suspended")["reason"] == "Suspended" and "Suspended" in reasons(p.events)
    # Resumed before the pods are gone: their SIGTERM exits are not failures.
    for rank in (0, 1):
        c.pod(rank)["status"] = exited(143, c.now)
    c.job["spec"]["suspend"] = False
    p = c.reconcile()
    assert c.status["phase"] == "Suspended" and c.condition("Suspended")["reason"] == "Resuming" and p.create == ()
    c.finish_deletions()
    p = c.reconcile()
    assert c.status["phase"] == "Pending" and c.status["restarts"] == 1
    # a new attempt, not a restart: told apart from the pods before the suspension
    assert [o["metadata"]["labels"]["pinery.dev/attempt"] for o in p.create] == ["2", "2"]
    assert "Resumed" in reasons(p.events)


def test_a_job_created_suspended_starts_at_attempt_0_and_a_suspension_of_running_pods_moves_it_once():
    c = Cluster(job_object({"numNodes": 2, "command": ["python", "train.py"], "suspend": True}))
    c.reconcile()
    c.reconcile()
    assert [n["attempt"] for n in c.status["nodes"]] == [0, 0]
    c.job["spec"]["suspend"] = False
    converge(c)
    assert {o["metadata"]["labels"]["pinery.dev/attempt"] for o in c.pods()} == {"0"}
    c.run()
    c.reconcile()
    c.job["spec"]["suspend"] = True
    c.reconcile()
    c.reconcile()  # the old pods still stopping: the attempt moves once only
    assert [n["attempt"] for n in c.status["nodes"]] == [1, 1]
    c.finish_deletions()
    c.reconcile()
    c.job["spec"]["suspend"] = False
    converge(c)
    assert {o["metadata"]["labels"]["pinery.dev/attempt"] for o in c.pods()} == {"1"}
    assert c.status["restarts"] == 0


def test_a_job_created_suspended_creates_nothing():
    c = Cluster(job_object({"numNodes": 2, "suspend": True}))
    p = c.reconcile()
    assert p.create == () and c.status["phase"] == "Suspended"


def test_suspension_does_not_use_up_the_deadline():
    c = started({"numNodes": 1, "activeDeadlineSeconds": 100})
    c.job["spec"]["suspend"] = True
    c.reconcile()
    c.finish_deletions()
    c.tick(500)
    c.reconcile()
    assert c.status["phase"] == "Suspended"
    c.job["spec"]["suspend"] = False
    c.reconcile()
    c.run()
    c.tick(50)
    c.reconcile()
    assert c.status["phase"] == "Running"
    c.tick(50)
    c.reconcile()
    assert c.condition("Failed")["reason"] == "DeadlineExceeded"


# --- elastic -----------------------------------------------------------------------------

ELASTIC = {"numNodes": 4, "elastic": {"minNodes": 2}, "maxRestarts": 3}


def test_elastic_replaces_a_failed_node_and_keeps_the_others():
    c = started(ELASTIC)
    others = {i: c.pod(i)["metadata"]["uid"] for i in (0, 1, 3)}
    c.fail(2, 1)
    p = c.reconcile()
    assert [d.name for d in p.delete_pods] == ["train-node-2"]
    assert c.status["restarts"] == 1 and c.status["phase"] == "Running"
    assert [n["attempt"] for n in c.status["nodes"]] == [0, 0, 1, 0]
    assert [n["restarts"] for n in c.status["nodes"]] == [0, 0, 1, 0]
    assert "NodeReplaced" in reasons(p.events) and c.condition("Restarting") == {}
    c.finish_deletions()
    p = c.reconcile()
    assert [(o["metadata"]["name"], o["metadata"]["labels"]["pinery.dev/attempt"]) for o in p.create] == [("train-node-2", "1")]
    assert {i: c.pod(i)["metadata"]["uid"] for i in (0, 1, 3)} == others
    c.run(2)
    c.reconcile()
    assert c.status["nodes"][2]["phase"] == "Running" and c.status["phase"] == "Running"


def test_elastic_loss_of_rank0_replaces_it_and_loss_of_too_many_nodes_restarts_the_gang():
    c = started(ELASTIC)
    others = {i: c.pod(i)["metadata"]["uid"] for i in (1, 2, 3)}
    c.fail(0, 1)
    p = c.reconcile()
    # Rank 0 hosts nothing (the store has a pod of its own): it is replaced like any node.
    assert c.condition("Restarting") == {} and [n["attempt"] for n in c.status["nodes"]] == [1, 0, 0, 0]
    assert [d.name for d in p.delete_pods] == ["train-node-0"] and "NodeReplaced" in reasons(p.events)
    c.finish_deletions()
    p = c.reconcile()
    (new,) = [o for o in p.create if o["kind"] == "Pod"]
    env = {e["name"]: e["value"] for e in new["spec"]["containers"][0]["env"]}
    # It joins the run its peers are in, not one of its own attempt.
    assert new["metadata"]["name"] == "train-node-0" and env["PINERY_ATTEMPT"] == "1" and env["PET_RDZV_ID"] == f"{UID}-0"
    assert {i: c.pod(i)["metadata"]["uid"] for i in (1, 2, 3)} == others
    c = started(ELASTIC)
    c.fail(1)
    c.fail(2)
    c.fail(3)
    c.reconcile()
    assert c.condition("Restarting")["status"] == "True" and c.status["restarts"] == 1


def test_elastic_without_budget_trains_on_without_the_node_and_says_so_once():
    c = started({**ELASTIC, "maxRestarts": 0})
    c.fail(3, 1)
    p = c.reconcile()
    assert reasons(p.events) == ["NodeFailed", "NodeNotReplaced"] and p.delete_pods == ()
    assert c.status["phase"] == "Running" and c.status["nodes"][3]["phase"] == "Failed"
    assert c.plan().events == ()
    c.succeed(0, 1, 2)
    c.reconcile()
    assert c.status["phase"] == "Succeeded"
    assert c.condition("Succeeded")["message"] == "3 of 4 nodes exited 0 (elastic, at least 2 needed)"


def test_elastic_starts_once_min_nodes_run():
    c = Cluster(job_object(ELASTIC))
    c.reconcile()
    c.run(0, 1)
    c.reconcile()
    assert c.status["phase"] == "Running"


# --- spec changes, invalid and deleted jobs ----------------------------------------------


def test_changed_immutable_field_is_a_condition_and_the_pods_keep_the_created_spec():
    c = started({"numNodes": 2, "image": "a:1"})
    c.job["spec"].update(numNodes=3, image="a:2")
    c.job["metadata"]["generation"] = 2
    p = c.reconcile()
    synced = c.condition("Synced")
    assert synced["status"] == "False" and synced["reason"] == "ImmutableFieldChanged"
    assert synced["message"].startswith("spec.numNodes, spec.image changed after the job was created")
    assert [e.reason for e in p.events] == ["ImmutableFieldChanged"]
    assert p.create == () and len(c.status["nodes"]) == 2
    c.fail(0)
    converge(c)
    assert sorted(c.attempts()) == [0, 1] and c.pod(0)["spec"]["containers"][0]["image"] == "a:1"
    c.job["spec"].update(numNodes=2, image="a:1")
    c.reconcile()
    assert c.condition("Synced")["status"] == "True"


def test_service_records_the_immutable_spec_only():
    c = Cluster(job_object({"numNodes": 2, "suspend": False, "activeDeadlineSeconds": 5}))
    c.reconcile()
    record = json.loads(c.objects[("Service", "train")]["metadata"]["annotations"][ANNOTATION_SPEC])
    assert record["numNodes"] == 2 and "suspend" not in record and "activeDeadlineSeconds" not in record


def test_invalid_spec_fails_without_creating_anything():
    c = Cluster(job_object({"numNodes": 0}))
    p = c.reconcile()
    assert p.create == () and c.condition("Failed")["reason"] == "InvalidSpec"
    assert "spec.numNodes" in c.condition("Failed")["message"]


def test_a_job_being_deleted_is_left_to_the_garbage_collector():
    job = job_object({"numNodes": 2})
    job["metadata"]["deletionTimestamp"] = "2026-01-01T12:00:00Z"
    assert plan(job, [], T0, settings=SETTINGS).idle


def test_phase_is_derived_from_conditions():
    def cond(t, s="True"):
        return {"type": t, "status": s}

    assert phase_of([]) == "Pending"
    assert phase_of([cond("Created"), cond("Running")]) == "Running"
    assert phase_of([cond("Running", "False"), cond("Restarting")]) == "Restarting"
    assert phase_of([cond("Running"), cond("Failed")]) == "Failed"
    assert phase_of([cond("Suspended"), cond("Succeeded")]) == "Succeeded"
    assert phase_of([cond("Suspended"), cond("Running", "False")]) == "Suspended"


def test_status_validates_against_the_status_model():
    from pinery.api import FSDPJobStatus

    c = started({"numNodes": 2, "maxRestarts": 1})
    c.fail(1, 1, message=TORCHRUN_78)
    c.reconcile()
    FSDPJobStatus.model_validate(c.status)


@pytest.mark.parametrize(
    "spec",
    [
        {"numNodes": 1},
        {"numNodes": 8, "nprocPerNode": 4, "shmSize": "2Gi", "checkpoint": {"volumeClaimName": "c"}},
        {"numNodes": 3, "elastic": {"minNodes": 2}, "command": ["torchrun", "t.py"]},
    ],
)
def test_every_object_a_plan_creates_is_valid_kubernetes(spec):
    from tests.support.k8s import assert_valid

    c = started(spec)
    c.fail(0)
    converge(c)
    for obj in c.objects.values():
        created = {k: v for k, v in obj.items() if k != "status"}
        created["metadata"] = {k: v for k, v in obj["metadata"].items() if k not in ("uid", "creationTimestamp")}
        assert_valid(created)


def test_steps_write_the_status_before_deleting_and_create_last():
    c = started({"numNodes": 2, "maxRestarts": 1})
    c.fail(1)
    actions = [a for a, _ in c.plan().steps()]
    assert actions == ["patch_status", "event", "event", "delete_pod", "delete_pod"]
    c = Cluster(job_object({"numNodes": 1}))
    assert [a for a, _ in c.plan().steps()] == ["patch_status", "create", "create", "create"]
    c.reconcile()
    c.set_pod_status(0, {"phase": "Failed", "reason": "Evicted"})
    assert [a for a, _ in c.plan().steps()] == ["patch_status", "event", "event", "event", "delete_pod"]


def test_status_patch_is_a_merge_patch_that_keeps_foreign_keys():
    from pinery.fsdpjob.plan import merge_patch

    assert merge_patch({"a": 1, "b": 2}, {"a": 1, "c": 3}) == {"c": 3, "b": None}
    assert merge_patch({"a": 1}, {"a": 1}) is None
    c = Cluster(job_object({"numNodes": 1}, status={"kopf": {"progress": {}}, "progress": {"step": 5}}))
    p = c.reconcile()
    assert "kopf" not in p.status_patch and c.status["kopf"] == {"progress": {}} and c.status["progress"] == {"step": 5}
