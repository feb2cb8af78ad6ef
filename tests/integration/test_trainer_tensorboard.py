"""The built-in trainer writes TensorBoard scalars when report.tensorboardDir is set: rank 0
only, one per progress line, the same loss as the line."""

from __future__ import annotations

import pytest

from pinery_trainer.tensorboard import FILE_VERSION, read_events
from tests.support.trainer import FAST, cleanup, progress_losses, start_nodes, wait_all

pytestmark = pytest.mark.slow


def test_rank_0_writes_one_event_file_with_the_progress_scalars(tmp_path):
    board = tmp_path / "tb"
    nodes = start_nodes(1, 2, ["--set", "steps=4", *FAST, "--set", f"report.tensorboardDir={board}"], tmp_path)
    try:
        codes = wait_all(nodes, timeout=180)
    finally:
        cleanup(nodes)
    assert codes == [0], nodes[0].stderr[-3000:]
    (path,) = board.iterdir()  # two ranks, one file
    events = read_events(path)
    assert events[0]["file_version"] == FILE_VERSION
    losses = progress_losses(nodes[0])
    assert [e["step"] for e in events[1:]] == sorted(losses) == [1, 2, 3, 4]
    for e in events[1:]:
        assert set(e["scalars"]) == {"train/loss", "train/learning_rate", "train/tokens_per_second"}
        assert e["scalars"]["train/loss"] == pytest.approx(losses[e["step"]], rel=1e-6)
        assert e["scalars"]["train/tokens_per_second"] > 0
