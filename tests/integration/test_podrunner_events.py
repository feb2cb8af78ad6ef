"""What a kubelet shows about pods, seen through real clients: Events (kubectl get events,
kubectl describe, the kubernetes client, events.k8s.io/v1), waiting reasons, and the refusal
of exec, attach and port-forward."""

from __future__ import annotations

import json

import pytest

from tests.integration.conftest_podrunner import (
    container_status,
    create,
    pod_manifest,
    wait_for_phase,
    wait_for_pod,
)
from tests.support.waiting import wait_for


def state_of(pod: dict, name: str = "main", init: bool = False) -> dict:
    """The container's state, {} before the runner has reported it."""
    key = "initContainerStatuses" if init else "containerStatuses"
    found = [c for c in (pod.get("status") or {}).get(key) or [] if c["name"] == name]
    return found[0]["state"] if found else {}

DEADLINE = 30  # generous: two shared cores


def events_of(plane, pod: str) -> list[dict]:
    out = plane.kubectl("get", "events", "--field-selector", f"involvedObject.name={pod}", "-o", "json").stdout
    return json.loads(out)["items"]


def wait_for_event(plane, pod: str, reason: str, timeout: float = DEADLINE) -> dict:
    def found():
        return next((e for e in events_of(plane, pod) if e["reason"] == reason), None)
    return wait_for(found, timeout=timeout, interval=0.3, what=f"event {reason} of {pod}")


def test_a_pod_that_runs_records_the_kubelets_events(pod_runner):
    plane = pod_runner.plane
    create(plane, pod_manifest("hello", ["sh", "-c", "echo hi"], image="busybox:1.36"))
    pod = wait_for_phase(plane, "hello", "Succeeded", timeout=DEADLINE)
    wait_for_event(plane, "hello", "Started")
    by_reason = {e["reason"]: e for e in events_of(plane, "hello")}
    assert set(by_reason) >= {"Scheduled", "Pulled", "Created", "Started"}
    scheduled = by_reason["Scheduled"]
    assert scheduled["message"] == "Successfully assigned default/hello to pinery-local"
    assert scheduled["source"]["component"] == "default-scheduler" and scheduled["type"] == "Normal"
    assert "fieldPath" not in scheduled["involvedObject"]
    for reason, message in [("Pulled", 'Container image "busybox:1.36" already present on machine'),
                            ("Created", "Created container: main"), ("Started", "Started container main")]:
        event = by_reason[reason]
        assert event["message"] == message and event["type"] == "Normal"
        assert event["source"] == {"component": "kubelet", "host": "pinery-local"}
        assert event["involvedObject"]["fieldPath"] == "spec.containers{main}"
        assert event["involvedObject"]["uid"] == pod["metadata"]["uid"]

    described = plane.kubectl("describe", "pod", "hello").stdout
    events_section = described.split("Events:", 1)[1]
    assert "Successfully assigned default/hello to pinery-local" in events_section
    assert "default-scheduler" in events_section and "Started container main" in events_section

    # With the kubernetes client, and as events.k8s.io/v1 objects through kubectl (the kubelet's
    # legacy recorder sets no eventTime, which that client's model of events.k8s.io/v1 requires).
    from kubernetes import client as k8s
    items = k8s.CoreV1Api(plane.api_client()).list_namespaced_event("default", field_selector="involvedObject.name=hello").items
    assert {"Scheduled", "Pulled", "Created", "Started"} <= {e.reason for e in items}
    new_api = json.loads(plane.kubectl("get", "events.v1.events.k8s.io", "-o", "json").stdout)["items"]
    mine = [e for e in new_api if e["regarding"]["name"] == "hello"]
    assert {e["reportingController"] for e in mine} == {"default-scheduler", "kubelet"}
    assert {e["note"] for e in mine} >= {"Started container main"}


def test_restarts_repeat_back_off_as_one_event_with_a_count(pod_runner):
    plane = pod_runner.plane
    create(plane, pod_manifest("crash", ["sh", "-c", "exit 1"], restart_policy="Always"))
    pod = wait_for_pod(plane, "crash", lambda p: state_of(p) and container_status(p)["restartCount"] >= 2, "two restarts", timeout=DEADLINE)
    back_off = wait_for_event(plane, "crash", "BackOff")
    uid = pod["metadata"]["uid"]
    assert back_off["type"] == "Warning"
    assert back_off["message"] == f"Back-off restarting failed container main in pod crash_default({uid})"
    assert back_off["involvedObject"]["fieldPath"] == "spec.containers{main}"
    wait_for(lambda: next(e for e in events_of(plane, "crash") if e["reason"] == "BackOff")["count"] >= 2,
             timeout=DEADLINE, interval=0.3, what="BackOff counted twice")
    assert len([e for e in events_of(plane, "crash") if e["reason"] == "BackOff"]) == 1
    waiting = wait_for_pod(plane, "crash", lambda p: "waiting" in state_of(p), "waiting", timeout=DEADLINE)
    state = container_status(waiting)["state"]["waiting"]
    assert state["reason"] == "CrashLoopBackOff"
    assert state["message"].startswith("back-off ") and f"restarting failed container=main pod=crash_default({uid})" in state["message"]
    assert "BackOff" in plane.kubectl("describe", "pod", "crash").stdout.split("Events:", 1)[1]


def test_deletion_records_killing(pod_runner):
    plane = pod_runner.plane
    create(plane, pod_manifest("sleeper", ["sleep", "60"], terminationGracePeriodSeconds=1))
    wait_for_phase(plane, "sleeper", "Running", timeout=DEADLINE)
    plane.kubectl("delete", "pod", "sleeper", "--wait=false")
    killing = wait_for_event(plane, "sleeper", "Killing")
    assert killing["message"] == "Stopping container main" and killing["type"] == "Normal"
    assert killing["involvedObject"]["fieldPath"] == "spec.containers{main}"


def test_a_missing_config_map_volume_is_failed_mount_and_the_pod_waits_creating(pod_runner):
    plane = pod_runner.plane
    manifest = pod_manifest("mounts", ["sh", "-c", "true"], volumeMounts=[{"name": "cfg", "mountPath": "/cfg"}])
    manifest["spec"]["volumes"] = [{"name": "cfg", "configMap": {"name": "absent"}}]
    create(plane, manifest)
    event = wait_for_event(plane, "mounts", "FailedMount")
    assert event["type"] == "Warning" and "fieldPath" not in event["involvedObject"]
    assert event["message"] == 'MountVolume.SetUp failed for volume "cfg" : configmap "absent" not found'
    pod = wait_for_pod(plane, "mounts", lambda p: state_of(p), "statuses", timeout=DEADLINE)
    assert container_status(pod)["state"]["waiting"]["reason"] == "ContainerCreating"


def test_a_missing_env_key_is_create_container_config_error_with_a_failed_event(pod_runner):
    plane = pod_runner.plane
    env = [{"name": "X", "valueFrom": {"secretKeyRef": {"name": "nope", "key": "k"}}}]
    create(plane, pod_manifest("config", ["sh", "-c", "true"], env=env))
    event = wait_for_event(plane, "config", "Failed")
    assert event["message"] == 'Error: secret "nope" not found'
    assert event["involvedObject"]["fieldPath"] == "spec.containers{main}"
    wait_for_pod(plane, "config", lambda p: state_of(p).get("waiting", {}).get("reason") == "CreateContainerConfigError",
                 "CreateContainerConfigError", timeout=DEADLINE)
    assert "CreateContainerConfigError" in plane.kubectl("get", "pod", "config").stdout


def test_a_command_that_cannot_start_is_a_failed_event(pod_runner):
    plane = pod_runner.plane
    create(plane, pod_manifest("nocmd", ["no-such-command-here"]))
    event = wait_for_event(plane, "nocmd", "Failed")
    assert event["type"] == "Warning" and event["message"].startswith("Error: failed to start container main")
    assert "executable file not found" in event["message"]


def test_main_containers_wait_with_pod_initializing_while_init_containers_run(pod_runner, tmp_path):
    plane = pod_runner.plane
    gate = tmp_path / "go"
    manifest = pod_manifest("initpod", ["sh", "-c", "true"])
    manifest["spec"]["initContainers"] = [{"name": "setup", "image": "busybox", "command": ["sh", "-c", f"while [ ! -f {gate} ]; do sleep 0.05; done"]}]
    create(plane, manifest)
    pod = wait_for_pod(plane, "initpod", lambda p: "running" in state_of(p, "setup", init=True),
                       "init running", timeout=DEADLINE)
    assert container_status(pod)["state"]["waiting"]["reason"] == "PodInitializing"
    assert "Init:0/1" in plane.kubectl("get", "pod", "initpod").stdout
    refused = plane.kubectl("logs", "initpod", "-c", "main", check=False)
    assert 'container "main" in pod "initpod" is waiting to start: PodInitializing' in refused.stderr
    gate.write_text("")
    wait_for_phase(plane, "initpod", "Succeeded", timeout=DEADLINE)
    assert "spec.initContainers{setup}" in {e["involvedObject"].get("fieldPath") for e in events_of(plane, "initpod")}


# --- exec, attach, port-forward ----------------------------------------------------------------

@pytest.fixture
def running(pod_runner):
    plane = pod_runner.plane
    create(plane, pod_manifest("svc", ["sleep", "60"], terminationGracePeriodSeconds=1))
    wait_for_phase(plane, "svc", "Running", timeout=DEADLINE)
    return plane


@pytest.mark.parametrize("args, what", [
    (["exec", "svc", "--", "ls"], "so exec is not available"),
    (["attach", "svc"], "so attach is not available"),
    (["port-forward", "pod/svc", "0:8080"], "so port-forward is not available"),
])
def test_exec_attach_and_port_forward_say_local_mode_lacks_them(running, args, what):
    result = running.kubectl(*args, check=False, timeout=60)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "local mode runs containers as local processes, not in a container runtime" in output, output
    assert what in output, output
