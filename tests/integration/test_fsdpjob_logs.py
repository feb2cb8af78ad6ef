"""`pinery logs` and the log tail a failed attempt keeps, with the real operator against the local
control plane. The test is the kubelet (tests/support/fsdpjob.py) and writes the containers' log
files where the control plane serves them from (operator/pinery/local/apiserver/logs.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

from pinery.local.podrunner import crilog
from tests.conftest import REPO_ROOT
from tests.support import fsdpjob as h
from tests.support.secret_scan import leaks
from tests.support.waiting import wait_for


@pytest.fixture
def op(plane, ns, kubelet) -> Iterator[h.Operator]:
    with h.job_operator(plane, ns) as operator:
        yield operator


def log_file(plane, ns: str, pod: str) -> Path:
    path = plane.server.logs_dir / ns / pod / "trainer.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def write(plane, ns: str, pod: str, text: str) -> None:
    """Append `text` as the pod runner does (CRI records, with their times)."""
    with log_file(plane, ns, pod).open("ab") as fh:
        fh.write(crilog.record("stdout", text, time.time_ns()))


def pinery_logs(plane, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pinery", "logs", *args, "--kubeconfig", str(plane.kubeconfig)],
                          capture_output=True, text=True, cwd=REPO_ROOT, timeout=timeout, env=dict(os.environ))


def test_logs_prints_each_node_prefixed_and_follows_every_node_until_the_pods_finish(plane, ns, kubelet, op):
    h.create_job(plane, ns, "talk", numNodes=2, command=h.COMMAND)
    kubelet.wait_pods("talk", 2)
    result = pinery_logs(plane, "talk", "-n", ns)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert "node 0: pod talk-node-0 is Pending" in result.stderr and "no log yet" in result.stderr

    kubelet.run_all("talk", 2)
    op.wait_phase("talk", "Running")
    write(plane, ns, "talk-node-0", "rank 0 starts\nrank 0 step 1\n")
    write(plane, ns, "talk-node-1", "rank 1 starts\n")
    result = pinery_logs(plane, "talk", "-n", ns)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["[node-0] rank 0 starts", "[node-0] rank 0 step 1", "[node-1] rank 1 starts"]
    result = pinery_logs(plane, "talk", "-n", ns, "--node", "0", "--tail", "1", "--timestamps")
    (line,) = result.stdout.splitlines()
    stamp = line.removeprefix("[node-0] ").split(" ", 1)[0]
    assert line.startswith("[node-0] ") and line.endswith(" rank 0 step 1") and crilog.parse_time(stamp)

    follower = subprocess.Popen([sys.executable, "-m", "pinery", "logs", "talk", "-n", ns, "-f", "--kubeconfig", str(plane.kubeconfig)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT)
    try:
        with log_file(plane, ns, "talk-node-1").open("ab") as fh:  # a line sent in two pieces (a `P` record, then `F`)
            fh.write(b"2026-01-01T00:00:00.000000000Z stdout P half of \n")
            fh.flush()
            time.sleep(0.5)
            fh.write(b"2026-01-01T00:00:00.100000000Z stdout F a line\n")
        write(plane, ns, "talk-node-0", "rank 0 done\n")
        kubelet.exit("talk", 1, 0)
        kubelet.exit("talk", 0, 0)
        out, err = follower.communicate(timeout=60)
    finally:
        follower.kill()
    assert follower.returncode == 0, err
    lines = out.splitlines()
    assert [line for line in lines if line.startswith("[node-0]")] == ["[node-0] rank 0 starts", "[node-0] rank 0 step 1", "[node-0] rank 0 done"]
    assert [line for line in lines if line.startswith("[node-1]")] == ["[node-1] rank 1 starts", "[node-1] half of a line"]
    assert "Traceback" not in err


def test_a_job_that_does_not_exist_and_an_attempt_that_does_not(plane, ns, kubelet, op):
    result = pinery_logs(plane, "nope", "-n", ns)
    assert result.returncode == 1
    assert result.stderr.strip() == f"error: fsdpjob nope not found in namespace {ns}"
    h.create_job(plane, ns, "young", numNodes=1, command=h.COMMAND)
    kubelet.wait_pods("young", 1)
    result = pinery_logs(plane, "young", "-n", ns, "--attempt", "3")
    assert result.returncode == 1 and "fsdpjob young has no attempt 3 (its newest is 0)" in result.stderr


TRACEBACK = """step 10 loss 2.5
Traceback (most recent call last):
  File "/app/train.py", line 40, in <module>
    main()
  File "/app/train.py", line 33, in main
    raise RuntimeError("NCCL watchdog timeout")
RuntimeError: NCCL watchdog timeout
[rank1]: token in use HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123
E0101 12:00:00.000000 42 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: 1) local_rank: 0 (pid: 77) of binary: python
Traceback (most recent call last):
  File "/usr/bin/torchrun", line 8, in <module>
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
train.py FAILED
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-01-01_12:00:00
  host      : crash-node-1
  rank      : 1 (local_rank: 0)
  exitcode  : 1 (pid: 77)
  error_file: <N/A>
============================================================
"""


def test_a_failed_attempt_keeps_the_end_of_its_log_for_describe_and_pinery_logs(plane, ns, kubelet, op):
    h.create_job(plane, ns, "crash", numNodes=2, command=h.COMMAND, maxRestarts=1)
    kubelet.wait_pods("crash", 2)
    kubelet.run_all("crash", 2)
    op.wait_phase("crash", "Running")
    write(plane, ns, "crash-node-1", TRACEBACK)
    # the kubelet's termination message would be the last 2 KiB: torchrun's report
    kubelet.exit("crash", 1, 1, message=TRACEBACK[TRACEBACK.index("E0101"):])
    job = op.wait("crash", lambda j: h.status(j).get("restarts") == 1, what="the gang restart")
    (kept,) = h.status(job)["failures"]
    assert {k: kept[k] for k in ("attempt", "node", "pod", "reason", "exitCode")} == {
        "attempt": 0, "node": 1, "pod": "crash-node-1", "reason": "Error", "exitCode": 1}
    assert kept["logTail"].splitlines() == [*TRACEBACK.splitlines()[:7], "[rank1]: token in use HF_TOKEN=***"]
    assert "its log ends: raise RuntimeError(\"NCCL watchdog timeout\") | RuntimeError: NCCL watchdog timeout | [rank1]: token in use" \
        in h.condition(job, "Restarting")["message"]
    wait_for(lambda: "NodeFailed" in h.reasons(plane, ns, "crash"), what="the NodeFailed event")
    (failed,) = [m for _, r, m in h.events(plane, ns, "crash") if r == "NodeFailed"]
    assert failed.startswith("node 1 (pod crash-node-1) failed: exit code 1 (Error)") and "RuntimeError: NCCL watchdog timeout" in failed

    pods = kubelet.wait_pods("crash", 2, attempt=1)
    kubelet.run_all("crash", 2)
    job = op.wait_phase("crash", "Running")
    assert h.condition(job, "Restarting")["reason"] == "Restarted"  # the condition moved on; status.failures stays
    described = plane.kubectl("describe", "fj/crash", "-n", ns).stdout
    assert "RuntimeError: NCCL watchdog timeout" in described and "Log Tail" in described
    assert not leaks(described, ["hf_abcdefghijklmnopqrstuvwxyz0123"])

    result = pinery_logs(plane, "crash", "-n", ns, "--attempt", "0")
    assert result.returncode == 0, result.stderr
    assert "the pods of attempt 0 are gone" in result.stderr
    assert "node 1 failed at" in result.stderr and "Error, exit code 1" in result.stderr
    assert result.stdout.splitlines()[-2:] == ["[node-1] RuntimeError: NCCL watchdog timeout", "[node-1] [rank1]: token in use HF_TOKEN=***"]
    result = pinery_logs(plane, "crash", "-n", ns, "--attempt", "0", "--node", "0")
    assert result.returncode == 1 and "keeps no log of attempt 0" in result.stderr
    assert [p["metadata"]["labels"]["pinery.dev/attempt"] for p in pods] == ["1", "1"]
