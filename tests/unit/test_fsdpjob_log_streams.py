"""What `pinery logs` reads and prints (pinery.fsdpjob.log_streams): whole lines from partial
chunks, the prefix, kubectl's --since durations (kubectl pkg/cmd/logs/logs.go ToLogOptions),
which pods an attempt selects, and when a node's log can be read."""

from __future__ import annotations

import pytest

from pinery.fsdpjob import log_streams


@pytest.mark.parametrize("chunks, lines, rest", [
    pytest.param([b"a\nb\n"], ["a", "b"], [], id="whole lines"),
    pytest.param([b"hal", b"f\nne", b"xt\n"], ["half", "next"], [], id="a line in pieces is one line"),
    pytest.param([b"a\r\n", b"tail"], ["a"], ["tail"], id="CRLF; the unfinished end comes at close"),
    pytest.param([b"\xc3", b"\xa9\n"], ["é"], [], id="a character split between chunks"),
    pytest.param([b"\n"], [""], [], id="an empty line stays"),
])
def test_line_splitter(chunks, lines, rest):
    splitter = log_streams.LineSplitter()
    got = [line for chunk in chunks for line in splitter.feed(chunk)]
    assert got == lines and splitter.close() == rest and splitter.close() == []


def test_prefix():
    assert log_streams.prefix(3) + "x" == "[node-3] x"


@pytest.mark.parametrize("text, seconds", [("5s", 5), ("2m", 120), ("1h30m", 5400), ("1.5s", 1.5), ("0", 0), ("300ms", 0.3)])
def test_parse_duration(text, seconds):
    assert log_streams.parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "5", "m", "5x", "1h 2m", "-5s"])
def test_parse_duration_refuses(text):
    with pytest.raises(ValueError):
        log_streams.parse_duration(text)


@pytest.mark.parametrize("text, seconds", [("1.4s", 1), ("1.6s", 2), ("0s", None), ("0", None)])
def test_since_rounds_to_the_second_as_kubectl(text, seconds):
    assert log_streams.since_seconds(text) == seconds


def pod(rank, attempt):
    return {"metadata": {"name": f"j-node-{rank}", "labels": {"pinery.dev/node-rank": str(rank), "pinery.dev/attempt": str(attempt)}}}


def job(n, attempts=None):
    nodes = [{"index": i, "attempt": a} for i, a in enumerate(attempts)] if attempts else []
    return {"metadata": {"name": "j"}, "spec": {"numNodes": n}, "status": {"nodes": nodes}}


@pytest.mark.parametrize("the_job, pods, nodes, attempt, wanted, found, newest", [
    pytest.param(job(2, [1, 1]), [pod(0, 1), pod(1, 1)], None, None, {0: 1, 1: 1}, [0, 1], 1, id="current attempt, every node"),
    pytest.param(job(2, [1, 1]), [pod(0, 1), pod(1, 1)], [1], None, {1: 1}, [1], 1, id="one node"),
    pytest.param(job(2, [1, 1]), [pod(0, 1), pod(1, 1)], None, 0, {0: 0, 1: 0}, [], 1, id="an older attempt: its pods are gone"),
    pytest.param(job(2, [1, 1]), [pod(0, 0), pod(1, 1)], None, None, {0: 1, 1: 1}, [1], 1, id="a stale pod is not the current attempt's"),
    pytest.param(job(3, [0, 0, 2]), [pod(0, 0), pod(1, 0), pod(2, 2)], None, 2, {2: 2}, [2], 2, id="elastic: the nodes that had the attempt"),
    pytest.param(job(2), [pod(0, 1)], None, None, {0: 1, 1: 0}, [0], 1, id="no status yet: the pods' labels"),
    pytest.param(job(2, [0, 0]), [], None, None, {0: 0, 1: 0}, [], 0, id="no pods yet"),
])
def test_select(the_job, pods, nodes, attempt, wanted, found, newest):
    chosen = log_streams.select(the_job, pods, nodes, attempt)
    assert chosen.attempts == wanted and sorted(chosen.pods) == found and chosen.newest == newest


def status(phase, trainer=None, init=None, conditions=None):
    s = {"phase": phase}
    if trainer is not None:
        s["containerStatuses"] = [{"name": "trainer", "state": trainer}]
    if init is not None:
        s["initContainerStatuses"] = [{"name": "wait-for-rank0", "state": init}]
    if conditions:
        s["conditions"] = conditions
    return {"metadata": {"name": "j-node-1"}, "status": s}


@pytest.mark.parametrize("the_pod, over, ready, final, why", [
    pytest.param(None, False, False, False, "no pod j-node-1 yet", id="no pod yet"),
    pytest.param(None, True, False, True, "no pod j-node-1: the job is over", id="no pod, job over"),
    pytest.param(status("Running", {"running": {}}), False, True, False, "", id="running"),
    pytest.param(status("Failed", {"terminated": {"exitCode": 1}}), False, True, False, "", id="finished: its log is there"),
    pytest.param(status("Pending", {"waiting": {"reason": "PodInitializing"}}, {"running": {}}), False, False, False,
                 "pod j-node-1 is Pending (init container wait-for-rank0 is running)", id="waiting for rank 0"),
    pytest.param(status("Pending", conditions=[{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]), False, False, False,
                 "pod j-node-1 is Pending (Unschedulable)", id="unschedulable"),
    pytest.param(status("Pending", {"waiting": {"reason": "ImagePullBackOff"}}), False, False, False,
                 "pod j-node-1 is Pending (ImagePullBackOff)", id="image pull"),
    pytest.param(status("Failed", {"waiting": {}}), False, False, True,
                 "pod j-node-1 is Failed and its trainer container never started", id="ended without starting"),
])
def test_node_log(the_pod, over, ready, final, why):
    state = log_streams.node_log(the_pod, 1, "j", over)
    assert (state.ready, state.final, state.why) == (ready, final, why)
