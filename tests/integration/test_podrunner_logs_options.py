"""`kubectl logs --timestamps`, `--since` and `--since-time` on pods the runner runs, and the
Python client's read_namespaced_pod_log with timestamps and since_seconds.

Times are kept apart by construction, not by waiting for them: the pod prints its first lines,
then waits for a file; the test takes as boundary the next whole second after it has seen those
lines (sinceTime travels in whole seconds), creates the file only once the clock has passed the
boundary, and the pod prints its last lines after that. However slow the machine, the first
lines are older than the boundary and the last ones newer."""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import time
from datetime import datetime, timezone

import pytest

from pinery.local.podrunner import crilog
from tests.integration.conftest_podrunner import create, pod_manifest, wait_for_phase
from tests.support.waiting import wait_for

DEADLINE = 30  # generous: two shared cores
STAMPED = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z) (.*)$")
EARLY, LATE = {"early-out", "early-err"}, {"late-out", "late-err"}


def two_phase(name: str, go: str) -> dict:
    script = (f"echo early-out; echo early-err >&2; while [ ! -e {go} ]; do sleep 0.05; done; "
              "echo late-out; echo late-err >&2")
    return pod_manifest(name, ["sh", "-c", script])


def log_so_far(plane, name: str) -> str:
    """The pod's log, "" before its container has started."""
    response = plane.http("GET", f"/api/v1/namespaces/default/pods/{name}/log")
    return response.text if response.status_code == 200 else ""


def rfc3339(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_in_two_phases(plane, tmp_path, name: str) -> int:
    """Start the pod and take it through both phases; the boundary (seconds since the epoch)."""
    go = tmp_path / f"{name}.go"
    create(plane, two_phase(name, str(go)))
    wait_for(lambda: set(log_so_far(plane, name).split()) == EARLY, timeout=DEADLINE, what="the first lines")
    boundary = math.floor(time.time()) + 1
    while time.time() <= boundary:
        time.sleep(boundary - time.time() + 0.01)
    go.touch()
    wait_for_phase(plane, name, "Succeeded", timeout=DEADLINE)
    return boundary


def stamped(text: str) -> list[tuple[int, str]]:
    """(time in ns, text) of every line of `kubectl logs --timestamps` output."""
    lines = []
    for line in text.splitlines():
        match = STAMPED.match(line)
        assert match, f"no RFC3339Nano prefix: {line!r}"
        lines.append((crilog.parse_time(match.group(1)), match.group(2)))
    return lines


def test_kubectl_logs_timestamps_since_and_since_time(pod_runner, tmp_path):
    plane = pod_runner.plane
    boundary = run_in_two_phases(plane, tmp_path, "phases")
    plain = plane.kubectl("logs", "phases").stdout
    assert set(plain.splitlines()) == EARLY | LATE and len(plain.splitlines()) == 4  # stderr lines included

    lines = stamped(plane.kubectl("logs", "phases", "--timestamps").stdout)
    assert {text for _, text in lines} == EARLY | LATE
    assert all(t < boundary * 10**9 for t, text in lines if text in EARLY)
    assert all(t > boundary * 10**9 for t, text in lines if text in LATE)
    assert {text for _, text in lines[:2]} == EARLY  # in the order written

    assert set(plane.kubectl("logs", "phases", "--since=1h").stdout.splitlines()) == EARLY | LATE
    assert set(plane.kubectl("logs", "phases", f"--since-time={rfc3339(boundary)}").stdout.splitlines()) == LATE
    assert set(plane.kubectl("logs", "phases", f"--since-time={rfc3339(boundary - 3600)}").stdout.splitlines()) == EARLY | LATE
    assert plane.kubectl("logs", "phases", "--since-time=2099-01-01T00:00:00Z").stdout == ""
    # Options together, applied in the kubelet's order: tail, then since, then prefixes, then bytes.
    assert plane.kubectl("logs", "phases", "--tail=2", f"--since-time={rfc3339(boundary - 3600)}").stdout.count("late-") == 2
    assert plane.kubectl("logs", "phases", "--tail=3", f"--since-time={rfc3339(boundary)}").stdout.count("\n") == 2
    first = plane.kubectl("logs", "phases", "--timestamps", "--limit-bytes=31").stdout
    assert STAMPED.match(first + "x") and len(first) == 31
    followed = stamped(plane.kubectl("logs", "-f", "phases", "--timestamps", f"--since-time={rfc3339(boundary)}", timeout=DEADLINE).stdout)
    assert {text for _, text in followed} == LATE


def test_since_and_since_time_together_are_refused(pod_runner, tmp_path):
    plane = pod_runner.plane
    create(plane, pod_manifest("both", ["sh", "-c", "echo hello"]))
    wait_for_phase(plane, "both", "Succeeded", timeout=DEADLINE)
    refused = plane.kubectl("logs", "both", "--since=1h", "--since-time=2020-01-01T00:00:00Z", check=False)
    assert refused.returncode != 0
    assert refused.stderr == "error: at most one of `sinceTime` or `sinceSeconds` may be specified\n"
    # The server refuses it too, as kube-apiserver does (kubectl never sends both).
    response = plane.http("GET", "/api/v1/namespaces/default/pods/both/log",
                          params={"sinceSeconds": "3600", "sinceTime": "2020-01-01T00:00:00Z"})
    assert response.status_code == 422
    status = response.json()
    assert status["reason"] == "Invalid"
    assert status["message"] == 'PodLogOptions "both" is invalid: : Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified'
    assert status["details"]["kind"] == "PodLogOptions"
    for params, message in [({"sinceSeconds": "0"}, "sinceSeconds: Invalid value: 0: must be greater than 0"),
                            ({"tailLines": "-2"}, "tailLines: Invalid value: -2: must be greater than or equal to 0"),
                            ({"limitBytes": "0"}, "limitBytes: Invalid value: 0: must be greater than 0")]:
        response = plane.http("GET", "/api/v1/namespaces/default/pods/both/log", params=params)
        assert (response.status_code, response.json()["message"]) == (422, f'PodLogOptions "both" is invalid: {message}')
    assert plane.http("GET", "/api/v1/namespaces/default/pods/both/log", params={"sinceTime": "yesterday"}).status_code == 400


def test_kubectl_logs_follow_with_timestamps_while_the_pod_runs(pod_runner, tmp_path):
    plane = pod_runner.plane
    go = tmp_path / "follow.go"
    create(plane, two_phase("follower", str(go)))
    wait_for(lambda: set(log_so_far(plane, "follower").split()) == EARLY, timeout=DEADLINE, what="the first lines")
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    env = {**os.environ, "KUBECONFIG": str(plane.kubeconfig), "KUBECACHEDIR": str(plane.state_dir / "kubectl-cache"),
           "HOME": str(plane.state_dir)}
    follower = subprocess.Popen([kubectl, "logs", "-f", "follower", "--timestamps"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env)
    try:
        go.touch()
        out, err = follower.communicate(timeout=DEADLINE * 2)
    finally:
        follower.kill()
    assert follower.returncode == 0, err
    assert {text for _, text in stamped(out)} == EARLY | LATE


def test_python_client_timestamps_and_since_seconds(pod_runner, tmp_path):
    plane = pod_runner.plane
    run_in_two_phases(plane, tmp_path, "client")
    v1 = plane.core_v1()
    text = v1.read_namespaced_pod_log("client", "default", timestamps=True, since_seconds=3600)
    lines = stamped(text)
    assert {text for _, text in lines} == EARLY | LATE
    assert all(abs(t - time.time_ns()) < 3600 * 10**9 for t, _ in lines)
    assert set(v1.read_namespaced_pod_log("client", "default", since_seconds=3600).split()) == EARLY | LATE
    assert [s for _, s in stamped(v1.read_namespaced_pod_log("client", "default", timestamps=True, tail_lines=1))] in (["late-out"], ["late-err"])


def test_previous_attempt_keeps_its_times(pod_runner, tmp_path):
    plane = pod_runner.plane
    marker = tmp_path / "ran-once"
    script = f"if [ -e {marker} ]; then echo second; sleep 600; else touch {marker}; echo first >&2; exit 1; fi"
    create(plane, pod_manifest("again", ["sh", "-c", script], restart_policy="OnFailure"))
    wait_for(lambda: "second" in log_so_far(plane, "again"), timeout=DEADLINE, what="the second attempt")
    previous = stamped(plane.kubectl("logs", "again", "--previous", "--timestamps").stdout)
    assert [text for _, text in previous] == ["first"]
    current = stamped(plane.kubectl("logs", "again", "--timestamps").stdout)
    assert [text for _, text in current] == ["second"] and current[0][0] > previous[0][0]
