"""The kept tail of a failed rank's log (pinery.fsdpjob.log_tail): torchrun's report dropped,
credentials masked, clipped at line boundaries to the kubelet's FallbackToLogsOnError bounds
(kuberuntime_container.go: 80 lines, 2048 bytes), at most 3 attempts kept."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from pinery.fsdpjob import log_tail
from pinery.fsdpjob.observe import PodView
from tests.support.secret_scan import leaks

WORKER = ["step 3 loss 2.0", "Traceback (most recent call last):", '  File "t.py", line 2, in <module>', "RuntimeError: boom"]
AGENT = [
    "E1202 18:27:34.684000 11224 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: 1) local_rank: 0 (pid: 1) of binary: python",
    "Traceback (most recent call last):",
    '  File "/usr/bin/torchrun", line 8, in <module>',
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
]
SIGTERM = "W1202 18:27:34.600000 11224 torch/distributed/elastic/multiprocessing/api.py:900] Sending process 2 closing signal SIGTERM"
SUMMARY = ["=" * 60, "t.py FAILED", "-" * 60, "Root Cause (first observed failure):", "[0]:", "  exitcode  : 1 (pid: 1)", "=" * 60]


@pytest.mark.parametrize("lines, kept", [
    pytest.param(WORKER, WORKER, id="no launcher report: kept as is"),
    pytest.param(WORKER + AGENT + SUMMARY, WORKER, id="torchrun's agent line, traceback and summary dropped"),
    pytest.param(WORKER + AGENT[1:] + SUMMARY, WORKER, id="without the agent line: from ChildFailedError's traceback"),
    pytest.param(["[rank1]: config: steps must be positive"] + SUMMARY, ["[rank1]: config: steps must be positive"], id="summary alone"),
    pytest.param(WORKER + [SIGTERM, ""] + AGENT, WORKER, id="the agent's own log lines at the end go too"),
    pytest.param(AGENT + SUMMARY, [], id="nothing but torchrun: nothing kept"),
])
def test_drop_launcher_report(lines, kept):
    assert log_tail.drop_launcher_report(lines) == kept


@pytest.mark.parametrize("lines, max_lines, max_bytes, kept", [
    pytest.param(["a", "b", "c"], 2, 100, ["b", "c"], id="last lines"),
    pytest.param(["aaaa", "bbbb", "cc"], 80, 8, ["bbbb", "cc"], id="bytes: whole lines only (newlines count)"),
    pytest.param(["x" * 50], 80, 20, ["..." + "x" * 16], id="one line too long keeps its end"),
    pytest.param(["é" * 10], 80, 12, ["...éééé"], id="never cuts inside a character"),
    pytest.param([], 80, 2048, [], id="empty"),
])
def test_clip(lines, max_lines, max_bytes, kept):
    assert log_tail.clip(lines, max_lines, max_bytes) == kept


def test_failure_tail_follows_the_kubelets_bounds():
    text = "\n".join(f"line {i} " + "y" * 10 for i in range(500)) + "\n"
    tail = log_tail.failure_tail(text)
    assert len(tail.encode()) + 1 <= 2048 and tail.endswith("line 499 yyyyyyyyyy") and tail.split("\n")[0].startswith("line ")
    assert len(log_tail.failure_tail("\n".join(map(str, range(200)))).split("\n")) == 80


@pytest.mark.parametrize("line, masked", [
    ("PINECONE_API_KEY=pcsk_abc123_defghijkl", "PINECONE_API_KEY=***"),
    ("using key pclocal-0123abcd in tests", "using key *** in tests"),
    ("hf token hf_abcdefghijklmnopqrstuvwx", "hf token ***"),
    ('{"password": "hunter22"}', '{"password": "***"}'),
    ("Authorization: Bearer abcdefghijklmnop", "Authorization: Bearer ***"),
    ("aws AKIAABCDEFGHIJKLMNOP", "aws ***"),
    ("step 5 loss 1.25 tokens 4096", "step 5 loss 1.25 tokens 4096"),
])
def test_mask_secrets(line, masked):
    assert log_tail.mask_secrets(line) == masked


def test_no_key_the_secret_scan_knows_survives_the_tail():
    tail = log_tail.failure_tail("connecting with api_key=pcsk_0123456789abcdef\nValueError: pclocal-feedbeef rejected\n")
    assert not leaks(tail) and tail.endswith("ValueError: *** rejected")


def test_last_lines_for_events_and_conditions():
    assert log_tail.last_lines("a\n\nb\nc\nd") == "b | c | d"
    assert log_tail.last_lines("x" * 500, max_chars=10) == "..." + "x" * 7


def record(attempt, node=1):
    return log_tail.FailureRecord(attempt, node, f"j-node-{node}", "Error", 1, "2026-01-01T00:00:00Z", f"tail {attempt}")


def test_keep_is_bounded_and_a_replayed_pass_adds_nothing():
    kept = []
    for attempt in range(5):
        kept = log_tail.keep(kept, [record(attempt)])
        kept = log_tail.keep(kept, [record(attempt)])
    assert [r["attempt"] for r in kept] == [2, 3, 4]
    assert kept[-1] == {"attempt": 4, "node": 1, "pod": "j-node-1", "reason": "Error", "exitCode": 1,
                        "time": "2026-01-01T00:00:00Z", "logTail": "tail 4"}
    assert log_tail.kept_for(kept + [record(4, 0).to_status()], 4) == [record(4, 0).to_status(), kept[-1]]


def view(rank, attempt=0, phase="Failed", minute=0):
    at = datetime(2026, 1, 1, 0, minute, tzinfo=timezone.utc)
    return PodView(name=f"j-node-{rank}", uid=f"u{rank}", rank=rank, attempt=attempt, controller_uid="j", phase=phase,
                   terminating=False, deletion_timestamp=None, created_at=at, started=True, joined=True, exit_code=1,
                   container_exit_code=1, reason="Error", detail="", finished_at=at)


@pytest.mark.parametrize("status, pods, read", [
    pytest.param({}, [view(0, phase="Running"), view(1)], ["j-node-1"], id="a failed pod of the current attempt"),
    pytest.param({}, [view(i, minute=9 - i) for i in range(6)], ["j-node-5", "j-node-4", "j-node-3"], id="the first to fail, a few at most"),
    pytest.param({"nodes": [{"index": 1, "attempt": 1}]}, [view(1, attempt=0)], [], id="a stale pod: its failure was acted on"),
    pytest.param({"failures": [{"attempt": 0, "node": 1}]}, [view(1)], [], id="already kept"),
    pytest.param({"conditions": [{"type": "Failed", "status": "True"}]}, [view(1)], [], id="the job is over"),
    pytest.param({}, [view(1, phase="Succeeded")], [], id="no failure"),
])
def test_logs_to_read(status, pods, read):
    assert log_tail.logs_to_read(status, pods) == read
