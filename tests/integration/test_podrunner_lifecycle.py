"""Pod status, restart policies, deletion, logs, and a restart of the pod runner itself."""

from __future__ import annotations

import subprocess
import time

import pytest

from tests.integration.conftest_podrunner import (
    alive,
    container_processes,
    container_status,
    create,
    get_pod,
    pod_log,
    pod_manifest,
    wait_for,
    wait_for_phase,
    wait_for_pod,
    wait_gone,
)


@pytest.fixture
def volume_pod():
    def make(name, script, policy):
        pod = pod_manifest(name, ["sh", "-c", script], restart_policy=policy,
                           volumeMounts=[{"name": "work", "mountPath": "/work"}])
        pod["spec"]["volumes"] = [{"name": "work", "emptyDir": {}}]
        return pod
    return make


def test_status_follows_a_container_from_running_to_its_exit_code(pod_runner, volume_pod):
    plane = pod_runner.plane
    create(plane, volume_pod("worker", "while [ ! -f /work/go ]; do sleep 0.05; done; exit 3", "Never"))
    running = wait_for_phase(plane, "worker", "Running")
    cs = container_status(running)
    assert cs["ready"] and cs["started"] and "running" in cs["state"] and cs["restartCount"] == 0
    assert {c["type"]: c["status"] for c in running["status"]["conditions"]}["Ready"] == "True"
    ready_since = next(c["lastTransitionTime"] for c in running["status"]["conditions"] if c["type"] == "Ready")

    work = next((pod_runner.state_dir / "pods" / "default").glob("worker-*")) / "volumes" / "work"
    (work / "go").touch()
    failed = wait_for_phase(plane, "worker", "Failed")
    terminated = container_status(failed)["state"]["terminated"]
    assert terminated["exitCode"] == 3 and terminated["reason"] == "Error"
    assert terminated["startedAt"] <= terminated["finishedAt"]
    assert not container_status(failed)["ready"]
    ready = next(c for c in failed["status"]["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "False" and ready["lastTransitionTime"] >= ready_since
    scheduled = next(c for c in failed["status"]["conditions"] if c["type"] == "PodScheduled")
    assert scheduled["lastTransitionTime"] <= ready_since


def test_a_condition_the_runner_does_not_own_survives_its_status_writes(pod_runner, volume_pod):
    """As a kubelet keeps DisruptionTarget (the eviction's, the scheduler's) when it writes the
    container's end: its status patch merges conditions by type."""
    plane = pod_runner.plane
    create(plane, volume_pod("marked", "while [ ! -f /work/go ]; do sleep 0.05; done; exit 137", "Never"))
    wait_for_phase(plane, "marked", "Running")
    target = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler", "message": "preempted",
              "lastTransitionTime": "2026-01-01T00:00:00Z"}
    response = plane.http("PATCH", "/api/v1/namespaces/default/pods/marked/status", json={"status": {"conditions": [target]}},
                          headers={"Content-Type": "application/strategic-merge-patch+json"})
    assert response.status_code == 200, response.text
    work = next((pod_runner.state_dir / "pods" / "default").glob("marked-*")) / "volumes" / "work"
    (work / "go").touch()
    failed = wait_for_phase(plane, "marked", "Failed")
    conditions = {c["type"]: c for c in failed["status"]["conditions"]}
    assert conditions["DisruptionTarget"]["reason"] == "PreemptionByScheduler"
    assert conditions["Ready"]["status"] == "False"


def test_restart_policy_on_failure_restarts_until_success(pod_runner, volume_pod):
    plane = pod_runner.plane
    # Fails on its first run, succeeds on its second (the emptyDir survives container restarts).
    create(plane, volume_pod("flaky", "if [ -f /work/seen ]; then echo second; exit 0; fi; touch /work/seen; echo first; exit 7", "OnFailure"))
    done = wait_for_phase(plane, "flaky", "Succeeded")
    cs = container_status(done)
    assert cs["restartCount"] == 1
    assert cs["lastState"]["terminated"]["exitCode"] == 7
    assert cs["state"]["terminated"]["exitCode"] == 0
    assert pod_log(plane, "flaky") == "second\n"
    previous = plane.http("GET", "/api/v1/namespaces/default/pods/flaky/log", params={"previous": "true"})
    assert previous.text == "first\n"


def test_restart_policy_on_failure_shows_crash_loop_back_off(pod_runner, volume_pod):
    plane = pod_runner.plane
    create(plane, volume_pod("crashing", "exit 1", "OnFailure"))
    looping = wait_for_pod(plane, "crashing", lambda p: "CrashLoopBackOff" in str(p["status"].get("containerStatuses")),
                           "CrashLoopBackOff")
    cs = container_status(looping)
    assert cs["state"]["waiting"]["reason"] == "CrashLoopBackOff" and cs["restartCount"] >= 1
    assert cs["lastState"]["terminated"]["exitCode"] == 1
    assert looping["status"]["phase"] == "Running"


def test_restart_policy_always_restarts_even_after_success(pod_runner, volume_pod):
    plane = pod_runner.plane
    create(plane, volume_pod("always", "echo run >> /work/runs; exit 0", "Always"))
    pod = wait_for_pod(plane, "always", lambda p: p["status"].get("containerStatuses")
                       and container_status(p)["restartCount"] >= 2, "two restarts", timeout=30)
    assert pod["status"]["phase"] == "Running"
    assert container_status(pod)["lastState"]["terminated"]["reason"] == "Completed"


def test_restart_policy_never_fails_at_once(pod_runner, volume_pod):
    plane = pod_runner.plane
    create(plane, volume_pod("once", "exit 9", "Never"))
    failed = wait_for_phase(plane, "once", "Failed")
    assert container_status(failed)["restartCount"] == 0
    assert container_status(failed)["state"]["terminated"]["exitCode"] == 9


# A container that traps SIGTERM, and leaves a child in a session of its own (as torchrun's
# workers are): deletion must stop both.
GRACEFUL = "trap 'echo got-sigterm; exit 0' TERM; setsid sleep 300 & echo started; while true; do sleep 0.05; done"
STUBBORN = "trap 'echo ignoring-sigterm' TERM; setsid sleep 300 & echo started; while true; do sleep 0.05; done"


def started(plane, name):
    wait_for_phase(plane, name, "Running")
    wait_for(lambda: "started" in pod_log(plane, name), timeout=20, what=f"{name} to start")
    return get_pod(plane, name)


def test_delete_sends_sigterm_and_leaves_nothing_running(pod_runner):
    plane = pod_runner.plane
    create(plane, pod_manifest("graceful", ["bash", "-c", GRACEFUL]))
    pod = started(plane, "graceful")
    pids = container_processes(pod)
    assert len(pids) >= 2  # the shell and its escaped child, at least
    log_file = plane.server.logs_dir / "default" / "graceful" / "main.log"

    begin = time.monotonic()
    assert plane.http("DELETE", "/api/v1/namespaces/default/pods/graceful").ok
    # The pod is marked, then removed by the runner once its processes have stopped.
    wait_gone(plane, "graceful")
    assert time.monotonic() - begin < 10
    assert not any(alive(pid) for pid in pids)
    assert container_processes(pod) == []
    wait_for(lambda: not log_file.exists(), timeout=20, what="its logs to go with it")


def test_delete_kills_what_ignores_sigterm_after_the_grace_period(pod_runner):
    plane = pod_runner.plane
    create(plane, pod_manifest("stubborn", ["bash", "-c", STUBBORN]))
    pod = started(plane, "stubborn")
    pids = container_processes(pod)
    log_file = plane.server.logs_dir / "default" / "stubborn" / "main.log"

    begin = time.monotonic()
    assert plane.http("DELETE", "/api/v1/namespaces/default/pods/stubborn", json={"gracePeriodSeconds": 2}).ok
    marked = get_pod(plane, "stubborn")
    assert marked["metadata"]["deletionGracePeriodSeconds"] == 2
    wait_for(lambda: "ignoring-sigterm" in log_file.read_text(), timeout=20, what="SIGTERM to arrive")
    assert get_pod(plane, "stubborn") is not None
    wait_gone(plane, "stubborn")
    assert 1.8 < time.monotonic() - begin < 10
    assert not any(alive(pid) for pid in pids)


def test_kubectl_logs_follow_tail_and_container(pod_runner):
    plane = pod_runner.plane
    pod = pod_manifest("chatty", ["sh", "-c", "for i in 1 2 3 4 5; do echo main-$i; sleep 0.2; done"])
    pod["spec"]["containers"].append({"name": "side", "image": "busybox", "command": ["sh", "-c", "echo side-1; echo side-2"]})
    pod["spec"]["initContainers"] = [{"name": "prep", "image": "busybox", "command": ["sh", "-c", "echo prepared"]}]
    create(plane, pod)
    wait_for_phase(plane, "chatty", "Running")

    followed = plane.kubectl("logs", "-f", "chatty", "-c", "main", timeout=30).stdout
    assert followed.split() == [f"main-{i}" for i in range(1, 6)]
    assert plane.kubectl("logs", "chatty", "-c", "main", "--tail", "2").stdout.split() == ["main-4", "main-5"]
    assert plane.kubectl("logs", "chatty", "-c", "side").stdout.split() == ["side-1", "side-2"]
    assert plane.kubectl("logs", "chatty", "-c", "prep").stdout.strip() == "prepared"
    defaulted = plane.kubectl("logs", "chatty")
    assert defaulted.stdout.split()[0] == "main-1" and 'Defaulted container "main"' in defaulted.stderr
    wrong = plane.kubectl("logs", "chatty", "-c", "nope", check=False)
    assert wrong.returncode != 0 and "container nope is not valid" in wrong.stderr


def test_a_restarted_runner_reports_lost_pods_and_restarts_others(pod_runner):
    plane = pod_runner.plane
    never = pod_manifest("never", ["bash", "-c", STUBBORN])
    never["spec"]["terminationGracePeriodSeconds"] = 1  # it ignores SIGTERM: do not wait long
    create(plane, never)
    create(plane, pod_manifest("always", ["bash", "-c", GRACEFUL], restart_policy="Always"))
    create(plane, pod_manifest("finished", ["true"]))
    never, always = started(plane, "never"), started(plane, "always")
    wait_for_phase(plane, "finished", "Succeeded")
    pids = container_processes(never) + container_processes(always)

    # A runner that dies without stopping its pods leaves their processes behind; its successor
    # kills them. Here the runner stops cleanly (as `pinery local down`): processes end too.
    pod_runner.stop()
    left = [pid for pid in pids if alive(pid)]
    assert not left, f"processes outlived the runner: {left}"
    # A process left by a runner that died (same marker) is found and killed at the next start.
    leftover = subprocess.Popen(["sleep", "300"], env={"PATH": "/usr/bin:/bin", "PINERY_LOCAL_OWNER": pod_runner.owner},
                                start_new_session=True)
    pod_runner.start()
    wait_for(lambda: leftover.poll() is not None, timeout=10, what="the leftover process to be killed")

    lost = wait_for_phase(plane, "never", "Failed")
    assert lost["status"]["reason"] == "NodeLost"
    terminated = container_status(lost)["state"]["terminated"]
    assert terminated["reason"] == "Unknown" and terminated["exitCode"] == 137

    again = wait_for_pod(plane, "always", lambda p: p["status"]["phase"] == "Running"
                         and container_status(p)["restartCount"] == 1 and "running" in container_status(p)["state"],
                         "running again, restart counted")
    assert container_processes(again) and not set(container_processes(again)) & set(pids)
    assert get_pod(plane, "finished")["status"]["phase"] == "Succeeded"

    # Pods deleted while no runner ran are removed at once by the next one.
    pod_runner.stop()
    assert plane.http("DELETE", "/api/v1/namespaces/default/pods/always").ok
    assert get_pod(plane, "always")["metadata"].get("deletionTimestamp")
    pod_runner.start()
    wait_gone(plane, "always")
