"""The FSDPJob operator (real Kopf, real handlers) against the local control plane; the test is
the kubelet: it writes pod statuses and removes deleted pods (see tests/support/fsdpjob.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Iterator

import pytest
import yaml

from pinery.api.conditions import parse_time
from pinery.fsdpjob.naming import LABEL_ATTEMPT
from tests.conftest import REPO_ROOT
from tests.support import fsdpjob as h
from tests.support.waiting import wait_for


@pytest.fixture
def op(plane, ns, kubelet) -> Iterator[h.Operator]:
    with h.job_operator(plane, ns) as operator:
        yield operator


def assert_rendered(expected, actual, path="") -> None:
    """Every field the renderer printed is in the created object with the same value (the
    server adds its defaults, uid and status beside them)."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: {actual!r} is not an object"
        for key, value in expected.items():
            assert key in actual, f"{path}.{key} missing from the created object"
            assert_rendered(value, actual[key], f"{path}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), f"{path}: {actual!r} != {expected!r}"
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            assert_rendered(e, a, f"{path}[{i}]")
    else:
        assert expected == actual, f"{path}: {actual!r} != {expected!r}"


def render(job: dict, uid: str, ns: str, tmp_path) -> list[dict]:
    source = tmp_path / "job.yaml"
    source.write_text(yaml.safe_dump(job))
    env = {**os.environ, "PINERY_OPERATOR_IMAGE": h.SETTINGS.operator_image, "PINERY_TRAINER_IMAGE": h.SETTINGS.trainer_image}
    result = subprocess.run([sys.executable, "-m", "pinery", "render", "-f", str(source), "--uid", uid, "-n", ns],
                            capture_output=True, text=True, env=env, cwd=REPO_ROOT, timeout=60)
    assert result.returncode == 0, result.stderr
    return list(yaml.safe_load_all(result.stdout))


def test_children_are_what_render_prints_and_the_job_succeeds_only_when_every_node_exited_0(plane, ns, kubelet, op, tmp_path):
    trainer = {"model": {"preset": "tiny"}, "steps": 10}
    created = h.create_job(plane, ns, "tiny", numNodes=2, trainer=trainer, command=None)
    uid = created["metadata"]["uid"]
    pods = kubelet.wait_pods("tiny", 2)
    job = op.wait_phase("tiny", "Pending")

    expected = render(h.job_body("tiny", numNodes=2, trainer=trainer), uid, ns, tmp_path)
    assert [o["kind"] for o in expected] == ["Service", "ConfigMap", "Pod", "Pod"]
    service = plane.http("GET", f"/api/v1/namespaces/{ns}/services/tiny").json()
    config_map = plane.http("GET", f"/api/v1/namespaces/{ns}/configmaps/tiny-trainer").json()
    pods = [kubelet.pod(p["metadata"]["name"]) for p in pods]
    for want, got in zip(expected, [service, config_map, *pods], strict=True):
        assert_rendered(want, got, f"{want['kind']}/{want['metadata']['name']}")
    assert service["spec"]["clusterIP"] == "None" and service["spec"]["publishNotReadyAddresses"] is True
    for rank, pod in enumerate(pods):
        assert pod["metadata"]["name"] == f"tiny-node-{rank}"
        assert pod["spec"]["hostname"] == f"tiny-node-{rank}" and pod["spec"]["subdomain"] == "tiny"
        assert pod["metadata"]["labels"]["pinery.dev/node-rank"] == str(rank)
        assert pod["metadata"]["labels"][LABEL_ATTEMPT] == "0"
        (owner,) = pod["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["uid"], owner["controller"]) == ("FSDPJob", uid, True)
    assert [n["phase"] for n in h.status(job)["nodes"]] == ["Pending", "Pending"]
    wait_for(lambda: op.phase_gauge("Pending") == 1, what="the gauge counts the pending job")
    job = op.wait_condition("tiny", "Created", "True", "PodsCreated")
    assert h.condition(job, "Created")["message"] == "created the headless Service and 2 pods"

    kubelet.run("tiny", 0)
    op.wait("tiny", lambda j: h.status(j)["nodes"][0].get("phase") == "Running")
    assert h.status(h.get_job(plane, ns, "tiny"))["phase"] == "Pending"  # one node is not the gang
    kubelet.run("tiny", 1)
    job = op.wait_phase("tiny", "Running")
    assert h.condition(job, "Running")["reason"] == "NodesRunning"
    wait_for(lambda: op.phase_gauge("Running") == 1 and op.phase_gauge("Pending") == 0, what="the gauge follows the phase")

    kubelet.exit("tiny", 0, 0)
    op.wait("tiny", lambda j: h.status(j)["nodes"][0].get("phase") == "Succeeded")
    job = h.get_job(plane, ns, "tiny")
    assert h.status(job)["phase"] == "Running"  # rank 1 still runs: not Succeeded yet
    assert not h.condition(job, "Succeeded")
    kubelet.exit("tiny", 1, 0)
    job = op.wait_phase("tiny", "Succeeded")
    assert h.condition(job, "Succeeded")["reason"] == "AllNodesSucceeded"
    assert h.status(job)["completionTime"] and h.status(job)["restarts"] == 0
    assert [(n["phase"], n["exitCode"]) for n in h.status(job)["nodes"]] == [("Succeeded", 0), ("Succeeded", 0)]
    wait_for(lambda: op.phase_gauge("Succeeded") == 1 and op.phase_gauge("Running") == 0, what="the gauge follows the phase")
    wait_for(lambda: h.reasons(plane, ns, "tiny")[-1:] == ["AllNodesSucceeded"], what="the success event")
    assert h.reasons(plane, ns, "tiny") == ["Created", "NodesRunning", "AllNodesSucceeded"]
    # finished pods stay for their logs; nothing was created twice
    assert len(kubelet.pods("tiny")) == 2
    assert [r.name for r in kubelet.created("tiny")] == ["tiny-node-0", "tiny-node-1"]


def started(plane, ns, kubelet, op, name: str, nodes: int = 2, **spec) -> dict:
    """A job whose pods all run."""
    h.create_job(plane, ns, name, numNodes=nodes, **spec)
    kubelet.wait_pods(name, nodes)
    kubelet.run_all(name, nodes)
    return op.wait_phase(name, "Running")


def attempts(pods: list[dict]) -> list[int]:
    return [int(p["metadata"]["labels"][LABEL_ATTEMPT]) for p in pods]


def test_a_failure_restarts_the_whole_gang_once_and_then_it_succeeds(plane, ns, kubelet, op):
    started(plane, ns, kubelet, op, "gang", maxRestarts=2)
    first = {p["metadata"]["name"]: p["metadata"]["uid"] for p in kubelet.pods("gang")}
    kubelet.held.add("gang-node-0")  # node 0 takes its time to stop
    kubelet.exit("gang", 1, 3)
    job = op.wait_phase("gang", "Restarting")
    assert h.status(job)["restarts"] == 1
    assert h.condition(job, "Restarting")["reason"] == "GangRestart"
    assert "node 1 (pod gang-node-1) failed: exit code 3 (Error)" in h.condition(job, "Restarting")["message"]
    # every pod of the failed gang is deleted; no new pod while the old node 0 still stops
    wait_for(lambda: (p := kubelet.pod("gang-node-0")) and p["metadata"].get("deletionTimestamp"), what="node 0 marked for deletion")
    wait_for(lambda: kubelet.pod("gang-node-1") is None, what="the failed pod removed")
    op.wait("gang", lambda j: h.status(j)["nodes"][1].get("reason") == "WaitingForOldPods")
    assert [p["metadata"]["uid"] for p in kubelet.pods("gang")] == [first["gang-node-0"]]
    kubelet.release("gang-node-0")
    pods = kubelet.wait_pods("gang", 2, attempt=1)
    assert attempts(pods) == [1, 1] and not {p["metadata"]["uid"] for p in pods} & set(first.values())
    env = {e["name"]: e.get("value") for e in pods[1]["spec"]["containers"][0]["env"]}
    assert env["PINERY_ATTEMPT"] == "1"

    kubelet.run_all("gang", 2)
    job = op.wait_phase("gang", "Running")
    assert h.condition(job, "Restarting")["status"] == "False" and h.condition(job, "Restarting")["reason"] == "Restarted"
    kubelet.exit("gang", 0, 0)
    kubelet.exit("gang", 1, 0)
    job = op.wait_phase("gang", "Succeeded")
    assert h.status(job)["restarts"] == 1
    assert [(n["attempt"], n["restarts"]) for n in h.status(job)["nodes"]] == [(1, 1), (1, 1)]
    assert op.restarts_counter() == 1
    wait_for(lambda: "AllNodesSucceeded" in h.reasons(plane, ns, "gang"), what="the success event")
    assert h.reasons(plane, ns, "gang") == [
        "Created", "NodesRunning", "NodeFailed", "GangRestart", "PodsCreated", "NodesRunning", "Restarted", "AllNodesSucceeded"
    ]
    # one set of pods per attempt, the new one only after the old one was gone
    history = [(r.type, r.name, r.attempt) for r in kubelet.history]
    assert [r for r in history if r[0] == "ADDED"] == [
        ("ADDED", "gang-node-0", 0), ("ADDED", "gang-node-1", 0), ("ADDED", "gang-node-0", 1), ("ADDED", "gang-node-1", 1)
    ]
    first_new = history.index(("ADDED", "gang-node-0", 1))
    assert {r[1] for r in history[:first_new] if r[0] == "DELETED"} == {"gang-node-0", "gang-node-1"}


def test_restart_budget_exhausted_fails_naming_the_first_failing_node_and_stops_the_rest(plane, ns, kubelet, op):
    started(plane, ns, kubelet, op, "spent", nodes=3, maxRestarts=0)
    kubelet.exit("spent", 2, 137, "OOMKilled")
    job = op.wait_phase("spent", "Failed")
    failed = h.condition(job, "Failed")
    assert failed["reason"] == "RestartLimitExceeded"
    assert failed["message"] == "node 2 (pod spent-node-2) failed: exit code 137 (OOMKilled); no restarts left (0 of 0 used)"
    assert h.status(job)["restarts"] == 0 and h.status(job)["completionTime"]
    # the survivors are stopped; the failed pod stays for its logs
    wait_for(lambda: [p["metadata"]["name"] for p in kubelet.pods("spent")] == ["spent-node-2"], what="survivors stopped")
    job = h.get_job(plane, ns, "spent")
    assert [n.get("reason") for n in h.status(job)["nodes"]][2] == "OOMKilled"
    wait_for(lambda: op.phase_gauge("Failed") == 1, what="the gauge counts the failed job")
    assert op.restarts_counter() == 0
    wait_for(lambda: "RestartLimitExceeded" in h.reasons(plane, ns, "spent"), what="the Failed event")
    assert ("Warning", "NodeFailed", "node 2 (pod spent-node-2) failed: exit code 137 (OOMKilled)") in h.events(plane, ns, "spent")


TORCHRUN_SUMMARY = """============================================================
train.py FAILED
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-01-01_12:00:00
  host      : code-node-1
  rank      : 1 (local_rank: 0)
  exitcode  : 42 (pid: 77)
  error_file: <N/A>
============================================================"""


@pytest.mark.parametrize(
    "spec, code, message, expected",
    [
        pytest.param({"nonRetryableExitCodes": [42]}, 42, None, "exit code 42 (Error)", id="listed code"),
        pytest.param({"nonRetryableExitCodes": [42]}, 1, TORCHRUN_SUMMARY,
                     "exit code 42 (Error): torchrun exited with 1 because worker rank 1 exited with 42", id="worker code under torchrun"),
        pytest.param({"trainer": {"steps": 50}, "command": None}, 78, None, "exit code 78 (Error)", id="trainer config error"),
    ],
)
def test_non_retryable_exit_codes_fail_at_once(plane, ns, kubelet, op, spec, code, message, expected):
    started(plane, ns, kubelet, op, "code", maxRestarts=3, **spec)
    kubelet.exit("code", 1, code, message=message)
    job = op.wait_phase("code", "Failed")
    failed = h.condition(job, "Failed")
    assert failed["reason"] == "NonRetryableExitCode" and h.status(job)["restarts"] == 0
    assert failed["message"].startswith(f"node 1 (pod code-node-1) failed: {expected}")
    assert failed["message"].endswith(f"exit code {42 if code != 78 else 78} is not retried")
    wait_for(lambda: [p["metadata"]["name"] for p in kubelet.pods("code")] == ["code-node-1"], what="node 0 stopped")
    assert len(kubelet.created("code")) == 2
    wait_for(lambda: "NonRetryableExitCode" in h.reasons(plane, ns, "code"), what="the Failed event")
    assert "GangRestart" not in h.reasons(plane, ns, "code")


def preempt(kubelet: h.TestKubelet, name: str) -> None:
    """What the scheduler does to make room: mark the pod as a disruption target and delete it;
    its containers take their grace period to stop."""
    disruption = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler", "message": "preempted by a higher-priority pod"}
    kubelet.held.add(name)
    kubelet.set_status(name, {**h.running(), "conditions": [disruption]})
    kubelet.plane.http("DELETE", f"/api/v1/namespaces/{kubelet.namespace}/pods/{name}")
    job = name.rsplit("-node-", 1)[0]
    wait_for(lambda: h.status(h.get_job(kubelet.plane, kubelet.namespace, job)).get("phase") == "Restarting", what="the restart")
    kubelet.release(name)


@pytest.mark.parametrize(
    "break_node, reason, disruption",
    [
        # a kubelet that writes no DisruptionTarget condition: a failure (disruption_policy)
        pytest.param(lambda k: k.set_status("lost-node-1", h.evicted("The node was low on resource: memory.")), "Evicted", False,
                     id="kubelet eviction"),
        pytest.param(lambda k: k.remove("lost-node-1"), "PodDeleted", False, id="deleted at once by someone"),
        pytest.param(lambda k: k.plane.http("DELETE", f"/api/v1/namespaces/{k.namespace}/pods/lost-node-1"), "PodDeleted", False,
                     id="deleted gracefully by someone"),
        # disruptions: the gang restarts without spending maxRestarts
        pytest.param(lambda k: k.set_status("lost-node-1", h.node_lost()), "NodeLost", True, id="node lost"),
        pytest.param(lambda k: preempt(k, "lost-node-1"), "PreemptionByScheduler", True, id="preemption"),
    ],
)
def test_losing_a_node_any_way_restarts_the_gang(plane, ns, kubelet, op, break_node, reason, disruption):
    started(plane, ns, kubelet, op, "lost", maxRestarts=1)
    break_node(kubelet)
    pods = kubelet.wait_pods("lost", 2, attempt=1)
    job = h.get_job(plane, ns, "lost")
    assert h.status(job)["phase"] == "Restarting"
    assert (h.status(job)["restarts"], h.status(job).get("disruptions", 0)) == ((0, 1) if disruption else (1, 0))
    event = "NodeDisrupted" if disruption else "NodeFailed"
    failed = [m for t, r, m in h.events(plane, ns, "lost") if r == event]
    assert len(failed) == 1 and failed[0].startswith("node 1 (pod lost-node-1) failed: ") and f"({reason})" in failed[0]
    assert len(kubelet.created("lost")) == 4 and attempts(pods) == [1, 1]
    assert op.restarts_counter() == (0 if disruption else 1)
    if disruption:
        assert h.condition(job, "Restarting")["reason"] == "Disrupted"
        assert h.status(job)["lastDisruption"]["reason"] == reason


def test_a_gang_restart_backs_off_and_the_status_says_until_when(plane, ns, kubelet, op):
    started(plane, ns, kubelet, op, "slow", maxRestarts=2, restartBackoffSeconds=2)
    kubelet.exit("slow", 1, 1)
    job = op.wait(("slow"), lambda j: h.status(j).get("nextAttemptAfter"), what="the backoff in status")
    due = parse_time(h.status(job)["nextAttemptAfter"])
    assert "backoff, restartBackoffSeconds" in h.condition(job, "Restarting")["message"]
    pods = kubelet.wait_pods("slow", 2, attempt=1)
    created = [parse_time(p["metadata"]["creationTimestamp"]) for p in pods]
    # creationTimestamp has whole seconds; the backoff's end does too
    assert all(t >= due for t in created), (created, due)


def test_a_pod_stuck_terminating_on_a_lost_node_is_force_deleted(plane, ns, kubelet, op):
    from dataclasses import replace

    op.services.fsdpjob_timing = replace(op.services.fsdpjob_timing, force_delete_after=1.0)
    started(plane, ns, kubelet, op, "stuck", maxRestarts=1, podTemplate={"terminationGracePeriodSeconds": 1})
    kubelet.held.add("stuck-node-1")  # its kubelet is gone: nobody will confirm the deletion
    kubelet.set_status("stuck-node-1", h.node_lost())
    op.wait_phase("stuck", "Restarting")
    assert kubelet.pod("stuck-node-1")["metadata"]["deletionTimestamp"]
    pods = kubelet.wait_pods("stuck", 2, attempt=1)
    assert attempts(pods) == [1, 1]


@pytest.mark.parametrize(
    "stuck, shown",
    [
        pytest.param(h.waiting("ImagePullBackOff", 'Back-off pulling image "trainer:nope"'),
                     'node 1: ImagePullBackOff: Back-off pulling image "trainer:nope"', id="ImagePullBackOff"),
        pytest.param(h.waiting("ErrImagePull", "manifest unknown"), "node 1: ErrImagePull: manifest unknown", id="ErrImagePull"),
        pytest.param(h.unschedulable("0/4 nodes are available: 4 Insufficient nvidia.com/gpu."),
                     "node 1: Unschedulable: 0/4 nodes are available", id="Unschedulable"),
    ],
)
def test_pods_not_running_within_the_startup_timeout_fail_the_job(plane, ns, kubelet, op, stuck, shown):
    h.create_job(plane, ns, "slow", numNodes=2, startupTimeoutSeconds=2, maxRestarts=3)
    kubelet.wait_pods("slow", 2)
    kubelet.run("slow", 0)
    kubelet.set_status("slow-node-1", stuck)
    job = op.wait("slow", lambda j: shown in h.condition(j, "Running").get("message", ""))
    assert h.status(job)["phase"] == "Pending" and h.status(job)["nodes"][1]["reason"] == shown.split(":")[1].strip()
    job = op.wait_phase("slow", "Failed")
    failed = h.condition(job, "Failed")
    assert failed["reason"] == "StartupTimeout" and h.status(job)["restarts"] == 0
    assert failed["message"].startswith("the pods were not all running within startupTimeoutSeconds (2s): ") and shown in failed["message"]
    kubelet.wait_no_pods("slow")  # neither was finished: both are stopped
    wait_for(lambda: "StartupTimeout" in h.reasons(plane, ns, "slow"), what="the StartupTimeout event")


def test_active_deadline_fails_the_job_and_stops_its_pods_and_can_be_changed_while_it_runs(plane, ns, kubelet, op):
    started(plane, ns, kubelet, op, "late", activeDeadlineSeconds=3600)
    h.patch_job(plane, ns, "late", {"activeDeadlineSeconds": 1})
    job = op.wait_phase("late", "Failed")
    failed = h.condition(job, "Failed")
    assert (failed["reason"], failed["message"]) == ("DeadlineExceeded", "the job ran longer than activeDeadlineSeconds (1s)")
    assert h.condition(job, "Synced")["status"] == "True"  # a mutable field: nothing to complain about
    kubelet.wait_no_pods("late")
    assert [n["reason"] for n in h.status(h.get_job(plane, ns, "late"))["nodes"]] == ["Stopped", "Stopped"]
    wait_for(lambda: "DeadlineExceeded" in h.reasons(plane, ns, "late"), what="the DeadlineExceeded event")


def test_ttl_after_finished_deletes_the_job_and_its_children(plane, ns, kubelet, op):
    # A TTL long enough to see Succeeded first: a pass that notices the finish late may write
    # Succeeded and, the TTL already past, delete the job in the same pass.
    started(plane, ns, kubelet, op, "brief", ttlSecondsAfterFinished=3, command=None, trainer={"steps": 20})
    assert plane.http("GET", f"/api/v1/namespaces/{ns}/configmaps/brief-trainer").status_code == 200
    kubelet.exit("brief", 0, 0)
    kubelet.exit("brief", 1, 0)
    op.wait_phase("brief", "Succeeded")
    wait_for(lambda: h.get_job(plane, ns, "brief") is None, timeout=10, what="the job deleted")
    kubelet.wait_no_pods("brief")
    for path in ("services/brief", "configmaps/brief-trainer"):
        wait_for(lambda path=path: plane.http("GET", f"/api/v1/namespaces/{ns}/{path}").status_code == 404, what=f"{path} collected")
    assert "Deleting" in h.reasons(plane, ns, "brief")
    wait_for(lambda: op.phase_gauge("Succeeded") == 0, what="a deleted job leaves the gauge")


def test_suspend_removes_the_pods_keeping_status_and_resume_recreates_them(plane, ns, kubelet, op):
    started(plane, ns, kubelet, op, "pause", maxRestarts=3)
    kubelet.exit("pause", 0, 1)
    kubelet.wait_pods("pause", 2, attempt=1)
    kubelet.run_all("pause", 2)
    op.wait_phase("pause", "Running")
    before = {p["metadata"]["uid"] for p in kubelet.pods("pause")}

    h.patch_job(plane, ns, "pause", {"suspend": True})
    kubelet.wait_no_pods("pause")
    job = op.wait_phase("pause", "Suspended")
    # the resumed job will be the next attempt (not a restart), told apart from the one suspended
    assert h.status(job)["restarts"] == 1 and [n["attempt"] for n in h.status(job)["nodes"]] == [2, 2]
    assert h.condition(job, "Suspended")["reason"] == "Suspended"
    wait_for(lambda: op.phase_gauge("Suspended") == 1, what="the gauge counts the suspended job")

    h.patch_job(plane, ns, "pause", {"suspend": False})
    pods = kubelet.wait_pods("pause", 2)
    assert attempts(pods) == [2, 2] and not {p["metadata"]["uid"] for p in pods} & before  # a resume is not a restart
    kubelet.run_all("pause", 2)
    job = op.wait_phase("pause", "Running")
    assert h.status(job)["restarts"] == 1 and h.condition(job, "Suspended")["reason"] == "Resumed"
    assert op.restarts_counter() == 1
    wait_for(lambda: "Resumed" in h.reasons(plane, ns, "pause"), what="the Resumed event")
    assert [r for r in h.reasons(plane, ns, "pause") if r in ("Suspended", "Resumed", "PodsCreated")] == ["PodsCreated", "Suspended", "Resumed", "PodsCreated"]


def test_elastic_replaces_a_failed_node_while_the_others_train_on(plane, ns, kubelet, op):
    started(plane, ns, kubelet, op, "flex", nodes=3, elastic={"minNodes": 2}, maxRestarts=2)
    keep = {p["metadata"]["name"]: p["metadata"]["uid"] for p in kubelet.pods("flex") if not p["metadata"]["name"].endswith("-2")}
    kubelet.exit("flex", 2, 1)
    wait_for(lambda: [attempts([p]) for p in kubelet.pods("flex") if p["metadata"]["name"] == "flex-node-2"] == [[1]], what="node 2 replaced")
    job = h.get_job(plane, ns, "flex")
    assert h.status(job)["phase"] == "Running" and h.status(job)["restarts"] == 1
    assert {p["metadata"]["name"]: p["metadata"]["uid"] for p in kubelet.pods("flex") if not p["metadata"]["name"].endswith("-2")} == keep
    kubelet.run("flex", 2)
    job = op.wait("flex", lambda j: h.status(j)["nodes"][2].get("phase") == "Running")
    assert [(n["attempt"], n["restarts"]) for n in h.status(job)["nodes"]] == [(0, 0), (0, 0), (1, 1)]
    wait_for(lambda: "PodsCreated" in h.reasons(plane, ns, "flex"), what="the PodsCreated event")
    assert h.reasons(plane, ns, "flex") == ["Created", "NodesRunning", "NodeFailed", "NodeReplaced", "PodsCreated"]
    assert ("Normal", "PodsCreated", "created pods flex-node-2 (attempt 1)") in h.events(plane, ns, "flex")
    assert op.restarts_counter() == 1


def test_a_gang_whose_step_stops_advancing_is_restarted_as_stalled_by_the_operators_own_wakeup(plane, ns, kubelet, op):
    """progressDeadlineSeconds: no pod changes while the job hangs; the operator reads rank 0's
    log before it decides, and comes back at the deadline by itself."""
    import time
    from dataclasses import replace

    from pinery.local.podrunner import crilog

    op.services.fsdpjob_timing = replace(op.services.fsdpjob_timing, progress=0.5)
    started(plane, ns, kubelet, op, "hang", maxRestarts=2, progressDeadlineSeconds=3, firstProgressDeadlineSeconds=60)
    log = plane.server.logs_dir / ns / "hang-node-0" / "trainer.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_bytes(crilog.record("stdout", '{"event": "progress", "step": 5, "totalSteps": 100}\n', time.time_ns()))
    job = op.wait("hang", lambda j: h.status(j).get("restarts") == 1, timeout=30, what="a Stalled restart")
    restarting = h.condition(job, "Restarting")
    assert restarting["reason"] == "Stalled"
    assert restarting["message"].startswith("stalled: step 5 has not advanced for 3s (progressDeadlineSeconds): unchanged since ")
    assert h.status(job)["progress"]["step"] == 5 and h.status(job)["progress"]["stepTime"]
    wait_for(lambda: "Stalled" in h.reasons(plane, ns, "hang"), what="the Stalled event")
    assert h.reasons(plane, ns, "hang").count("Stalled") == 1
    assert op.sample("pinery_fsdpjob_stalls_total", {"namespace": ns}) == 1 and op.restarts_counter() == 1


def test_progress_from_rank0s_log_and_kubectl_get_wait_describe(plane, ns, kubelet, op):
    from dataclasses import replace

    # read the log often, to keep the test short
    op.services.fsdpjob_timing = replace(op.services.fsdpjob_timing, progress=0.5)
    started(plane, ns, kubelet, op, "learn", command=None, trainer={"steps": 100})
    log = plane.server.logs_dir / ns / "learn-node-0" / "trainer.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(
        "W1130 torch.distributed.run: Setting OMP_NUM_THREADS environment variable for each process\n"
        '{"event": "progress", "step": 10, "totalSteps": 100, "loss": 4.5, "learningRate": 0.0003, "tokensPerSecond": 1200.0, "mfu": 0.1}\n'
    )
    job = op.wait("learn", lambda j: (h.status(j).get("progress") or {}).get("step") == 10, what="progress at step 10")
    progress = h.status(job)["progress"]
    assert {k: progress[k] for k in ("step", "totalSteps", "loss", "tokensPerSecond")} == {
        "step": 10, "totalSteps": 100, "loss": 4.5, "tokensPerSecond": 1200.0}
    assert progress["updatedAt"]
    with log.open("a") as fh:
        fh.write('{"event": "progress", "step": 20, "totalSteps": 100, "loss": 3.25, "tokensPerSecond": 1300.0}\n{"event": "checkpoint", "step": 20}\n')
    job = op.wait("learn", lambda j: h.status(j)["progress"].get("lastCheckpointStep") == 20, what="progress at step 20")
    assert h.status(job)["progress"]["step"] == 20 and h.status(job)["progress"]["loss"] == 3.25

    # `pinery progress` draws both progress lines from the same log, under the status' summary
    drawn = subprocess.run([sys.executable, "-m", "pinery", "progress", "learn", "-n", ns, "--kubeconfig", str(plane.kubeconfig),
                            "--width", "40", "--height", "4"], capture_output=True, text=True, timeout=60, cwd=REPO_ROOT,
                           env={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert drawn.returncode == 0, drawn.stderr
    lines = drawn.stdout.splitlines()
    assert lines[0] == "fsdpjob " + ns + "/learn: Running, step 20/100, loss 3.25, 1300 tokens/s, last checkpoint at step 20, restarts 0/3"
    assert lines[1] == "loss over 2 progress lines of rank 0, steps 10 to 20:"
    assert lines[2] == " 4.5 |*" and lines[5].startswith("3.25 |") and lines[5].endswith("*")  # no UTF-8 out: ASCII
    assert lines[-1] == "tokens/s: last 1300, mean 1250, min 1200, max 1300"
    missing = subprocess.run([sys.executable, "-m", "pinery", "progress", "nope", "-n", ns, "--kubeconfig", str(plane.kubeconfig)],
                             capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
    assert missing.returncode == 1 and f"fsdpjob nope not found in namespace {ns}" in missing.stderr

    table = plane.kubectl("get", "fsdpjobs", "-n", ns).stdout.splitlines()
    assert table[0].split() == ["NAME", "NODES", "PROCS", "PHASE", "RESTARTS", "STEP", "AGE"]
    assert table[1].split()[:6] == ["learn", "2", "1", "Running", "0", "20"]
    wide = plane.kubectl("get", "fj", "learn", "-n", ns, "-o", "wide").stdout.splitlines()
    assert wide[0].split()[-2:] == ["LOSS", "DISRUPTIONS"] and wide[1].split()[-2:] == ["3.25", "0"]

    waiter = subprocess.Popen(
        [__import__("shutil").which("kubectl"), "wait", "--for=condition=Succeeded", "fj/learn", "-n", ns, "--timeout=20s"],
        env={**os.environ, "KUBECONFIG": str(plane.kubeconfig), "KUBECACHEDIR": str(plane.state_dir / "kubectl-cache"), "HOME": str(plane.state_dir)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    kubelet.exit("learn", 1, 0)
    kubelet.exit("learn", 0, 0)
    out, err = waiter.communicate(timeout=30)
    assert waiter.returncode == 0, err
    assert out.strip() == "fsdpjob.pinery.dev/learn condition met"
    wait_for(lambda: "AllNodesSucceeded" in h.reasons(plane, ns, "learn"), what="the success event")
    described = plane.kubectl("describe", "fj/learn", "-n", ns).stdout
    assert "Events:" in described
    for reason in ("Created", "NodesRunning", "AllNodesSucceeded"):
        assert reason in described.split("Events:")[1]
    assert "all 2 nodes exited 0" in described


def test_refused_pod_creation_is_a_warning_and_the_startup_timeout_still_ends_the_job(plane, ns, kubelet, op):
    # The API server refuses the pods: annotations within the CRD's limits one by one, but over
    # the 256 KiB that pod metadata may hold together (the CRD does not add them up).
    notes = {f"example.com/note-{i}": "x" * 60000 for i in range(5)}
    h.create_job(plane, ns, "denied", numNodes=2, startupTimeoutSeconds=3, podTemplate={"annotations": notes})
    # Generous waits: pods of 300 KB of annotations are slow to refuse on a busy machine.
    job = op.wait_condition("denied", "Running", "False", "FailedCreate", timeout=30)
    running = h.condition(job, "Running")["message"]
    assert "node 0: FailedCreate: " in running and "must have at most 262144 bytes" in running
    assert h.condition(job, "Created")["reason"] == "FailedCreate"
    assert [n["reason"] for n in h.status(job)["nodes"]] == ["FailedCreate", "FailedCreate"]
    def warnings():
        return [m for t, r, m in h.events(plane, ns, "denied") if (t, r) == ("Warning", "FailedCreate")]

    wait_for(lambda: len(warnings()) == 2, what="a FailedCreate event per node")
    assert warnings()[0].startswith("node 0: the API server refused to create pod denied-node-0: ")
    job = op.wait_phase("denied", "Failed", timeout=30)
    failed = h.condition(job, "Failed")
    assert failed["reason"] == "StartupTimeout" and "must have at most 262144 bytes" in failed["message"]
    # counted from the first attempt: started before, and at most a few seconds later
    assert h.status(job)["startTime"] <= failed["lastTransitionTime"]
    assert kubelet.pods("denied") == [] and kubelet.created("denied") == []
    assert len([r for r in h.reasons(plane, ns, "denied") if r == "FailedCreate"]) == 2  # once per node, not per retry


def without_transition_rules(schema):
    """The schema with every rule that compares against oldSelf removed (an old API server, a
    CRD edited by hand): immutable fields are then only guarded by the operator."""
    if isinstance(schema, dict):
        rules = [r for r in schema.get("x-kubernetes-validations", []) if "oldSelf" not in r["rule"]]
        out = {k: without_transition_rules(v) for k, v in schema.items() if k != "x-kubernetes-validations"}
        if rules:
            out["x-kubernetes-validations"] = rules
        return out
    if isinstance(schema, list):
        return [without_transition_rules(v) for v in schema]
    return schema


def test_an_immutable_change_that_reaches_the_operator_is_refused_by_condition(control_plane, tmp_path):
    from pinery.api.fsdpjob import FSDP_JOB
    from pinery.generate.crds import build_crd

    plane = control_plane
    crd = without_transition_rules(build_crd(FSDP_JOB))
    assert "oldSelf" not in str(crd)
    assert plane.http("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd).status_code == 201
    wait_for(lambda: plane.http("GET", h.jobs_path("default")).status_code == 200, what="the CRD served")
    with h.TestKubelet(plane, "default") as kubelet, h.job_operator(plane, "default") as op:
        started(plane, "default", kubelet, op, "fixed", maxRestarts=1)
        uids = [p["metadata"]["uid"] for p in kubelet.pods("fixed")]
        h.patch_job(plane, "default", "fixed", {"numNodes": 3, "masterPort": 23456, "activeDeadlineSeconds": 3600})
        job = op.wait_condition("fixed", "Synced", "False", "ImmutableFieldChanged")
        message = h.condition(job, "Synced")["message"]
        assert message.startswith("spec.numNodes, spec.masterPort changed after the job was created") or message.startswith(
            "spec.masterPort, spec.numNodes changed after the job was created"
        )
        assert h.status(job)["phase"] == "Running" and len(h.status(job)["nodes"]) == 2
        assert [p["metadata"]["uid"] for p in kubelet.pods("fixed")] == uids  # the pods keep the created spec
        wait_for(lambda: "ImmutableFieldChanged" in h.reasons(plane, "default", "fixed"), what="the Warning event")
        # the pods still run the spec the job was created with: a failure restarts 2 nodes on port 29500
        kubelet.exit("fixed", 1, 1)
        pods = kubelet.wait_pods("fixed", 2, attempt=1)
        env = {e["name"]: e.get("value") for e in pods[0]["spec"]["containers"][0]["env"]}
        assert (env["NNODES"], env["MASTER_PORT"]) == ("2", "29500")
        h.patch_job(plane, "default", "fixed", {"numNodes": 2, "masterPort": 29500})
        op.wait_condition("fixed", "Synced", "True", "SpecApplied")


def test_deleting_a_job_stops_its_pods_and_forgets_it(plane, ns, kubelet, op):
    started(plane, ns, kubelet, op, "gone")
    # the gauge follows the status write that the phase above was read from, a moment later
    wait_for(lambda: op.phase_gauge("Running") == 1, what="the gauge counts the running job")
    assert plane.http("DELETE", h.jobs_path(ns, "gone")).status_code == 200
    wait_for(lambda: h.get_job(plane, ns, "gone") is None, what="the job gone (the operator lets it go)")
    kubelet.wait_no_pods("gone")
    wait_for(lambda: plane.http("GET", f"/api/v1/namespaces/{ns}/services/gone").status_code == 404, what="the Service collected")
    wait_for(lambda: op.phase_gauge("Running") == 0, what="the gauge forgets the job")


def test_progress_and_restart_budget_are_gauges_of_the_job_until_it_is_deleted(plane, ns, kubelet, op):
    from dataclasses import replace

    op.services.fsdpjob_timing = replace(op.services.fsdpjob_timing, progress=0.5)
    started(plane, ns, kubelet, op, "seen", maxRestarts=4)
    labels = {"namespace": ns, "fsdpjob": "seen"}

    def gauge(name):
        return op.metrics.registry.get_sample_value(f"pinery_fsdpjob_{name}", labels)

    wait_for(lambda: gauge("max_restarts") == 4, what="the job's budget gauge")
    assert (gauge("status_restarts"), gauge("disruptions"), gauge("stalled")) == (0, 0, 0)
    assert gauge("step") is None  # nothing reported yet
    log = plane.server.logs_dir / ns / "seen-node-0" / "trainer.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text('{"event": "progress", "step": 30, "loss": 2.75, "tokensPerSecond": 900.5}\n{"event": "checkpoint", "step": 30}\n')
    wait_for(lambda: gauge("step") == 30, what="the step gauge")
    assert (gauge("loss"), gauge("tokens_per_second"), gauge("last_checkpoint_step")) == (2.75, 900.5, 30)
    assert h.status(h.get_job(plane, ns, "seen"))["progress"]["step"] == 30  # what the gauges show is the status

    kubelet.exit("seen", 1, 1)
    wait_for(lambda: gauge("status_restarts") == 1, what="the restart in the gauge")
    assert op.restarts_counter() == 1

    assert plane.http("DELETE", h.jobs_path(ns, "seen")).status_code == 200
    wait_for(lambda: h.get_job(plane, ns, "seen") is None, what="the job gone")
    wait_for(lambda: all(gauge(g) is None for g in ("step", "loss", "max_restarts", "status_restarts", "stalled")),
             what="the job's gauges removed")


def test_a_spec_only_the_operator_can_judge_fails_the_job_without_pods(plane, ns, kubelet, op):
    # The CRD accepts it; the trainer's own cross-field rules do not.
    h.create_job(plane, ns, "odd", numNodes=2, command=None, trainer={"steps": 50, "microBatchSize": 4, "globalBatchSize": 10})
    job = op.wait_phase("odd", "Failed")
    failed = h.condition(job, "Failed")
    assert failed["reason"] == "InvalidSpec" and failed["message"].startswith("spec.trainer: ")
    assert "globalBatchSize: must be a multiple of microBatchSize (4)" in failed["message"]
    assert kubelet.pods("odd") == [] and plane.http("GET", f"/api/v1/namespaces/{ns}/services/odd").status_code == 404
    wait_for(lambda: ("Warning", "InvalidSpec") in [(t, r) for t, r, _ in h.events(plane, ns, "odd")], what="the Warning")


def test_the_operator_carries_on_after_the_api_server_was_away(tmp_path):
    """The API server restarts (same address, same state) while a job runs and the operator
    is in the middle of its passes: it retries, and a failure after the restart still restarts
    the gang exactly once."""
    import time
    from dataclasses import replace

    from pinery.local.apiserver.server import LocalApiServer
    from pinery.local.cluster import free_port
    from tests.support.control_plane import ControlPlane

    port = free_port()

    def server() -> ControlPlane:
        api = LocalApiServer(tmp_path, token="restart-token", port=port).start_in_thread()
        return ControlPlane(api, tmp_path, api.write_kubeconfig(tmp_path / "kubeconfig"), "restart-token")

    plane = server()
    plane.install_crds()
    op = h.new_operator(plane, "default")
    # passes keep coming while it is away
    op.services.fsdpjob_timing = replace(op.services.fsdpjob_timing, progress=0.2)
    op.start()
    try:
        with h.TestKubelet(plane, "default") as kubelet:
            started(plane, "default", kubelet, op, "steady", maxRestarts=2)
        plane.server.stop_thread()
        wait_for(lambda: op.sample("pinery_reconciles_total", {"resource": "FSDPJob", "outcome": "error"}) >= 1, what="a failed pass")
        time.sleep(0.5)
        plane = server()
        with h.TestKubelet(plane, "default") as kubelet:
            kubelet.exit("steady", 1, 1)
            kubelet.wait_pods("steady", 2, attempt=1)
            job = op.wait_phase("steady", "Restarting")
            assert h.status(job)["restarts"] == 1
    finally:
        op.stop()
        plane.server.stop_thread()
