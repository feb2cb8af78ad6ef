"""Two FSDPJob "nodes" (two torchrun processes on loopback, 2 processes each) train together."""

from __future__ import annotations

import re

import pytest

from tests.support.trainer import FAST, cleanup, progress_losses, start_nodes, wait_all

pytestmark = pytest.mark.slow

PROGRESS_KEYS = {"step", "totalSteps", "loss", "learningRate", "tokensPerSecond", "mfu", "lastCheckpointStep"}
FINISHED = re.compile(r"rank (\d+): finished step (\d+) of (\d+); world size (\d+); loss (\S+)")


def test_two_nodes_of_two_processes_train_20_steps_and_agree(tmp_path):
    # Only the environment the operator sets: no torchrun flags.
    nodes = start_nodes(2, 2, ["--set", "steps=20", *FAST], tmp_path)
    try:
        codes = wait_all(nodes, timeout=120)
    finally:
        cleanup(nodes)
    assert codes == [0, 0], [n.stderr[-3000:] for n in nodes]

    head, other = nodes
    progress = head.events("progress")
    assert [e["step"] for e in progress] == list(range(1, 21))
    for event in progress:
        assert PROGRESS_KEYS <= event.keys()
        assert event["totalSteps"] == 20 and event["mfu"] is None and event["lastCheckpointStep"] is None
    losses = progress_losses(head)
    assert losses[20] < losses[1] - 0.5, losses
    assert sum(losses[s] for s in range(16, 21)) < sum(losses[s] for s in range(1, 6)), losses

    start = head.events("start")[0]
    assert start["worldSize"] == 4 and start["resumedFrom"] is None
    done = head.events("done")
    assert len(done) == 1 and done[0]["step"] == 20 and done[0]["loss"] == losses[20]
    # Only rank 0 (on node 0) prints events.
    assert other.events() == []

    # Every rank took part in the same 4-process job and ended on the same global loss.
    finished = [FINISHED.search(line) for n in nodes for line in n.stderr.splitlines()]
    finished = [m.groups() for m in finished if m]
    assert sorted(int(rank) for rank, *_ in finished) == [0, 1, 2, 3]
    for _, step, total, world, loss in finished:
        assert (step, total, world) == ("20", "20", "4")
        assert float(loss) == pytest.approx(losses[20], abs=1e-6)
    # No worker died at exit (the gloo abort the clean shutdown avoids).
    for node in nodes:
        assert "terminate called" not in node.stderr and "SIGABRT" not in node.stderr
