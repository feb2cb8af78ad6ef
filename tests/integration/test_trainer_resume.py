"""Data-parallel equivalence and resuming after SIGKILL at another world size.

Three runs share the work: a reference on 2 nodes x 1 process; a run on 1 node x 2 processes
killed with SIGKILL (torchrun and every worker) after a checkpoint; and a resume of that run as
a single process. The global batch is fixed (globalBatchSize), so gradient accumulation makes
up for the world size and every run takes the same steps on the same samples.

The runs also differ in FSDP options that must not change the numbers: the reference uses
activation checkpointing and keeps parameters gathered after forward, the killed run offloads
parameters and optimizer state to the CPU, the resumed run uses the defaults.
"""

from __future__ import annotations

import pytest

from tests.support.trainer import (
    FAST,
    TRAINER,
    base_env,
    cleanup,
    kill_tree,
    progress_losses,
    start,
    start_nodes,
    wait_all,
)

pytestmark = pytest.mark.slow

STEPS = 12
ARGS = ["--set", f"steps={STEPS}", "--set", "globalBatchSize=8", "--set", "microBatchSize=2", "--set", "seed=7", *FAST]
TOLERANCE = dict(rel=1e-4, abs=1e-4)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """2 nodes x 1 process, uninterrupted."""
    options = ["--set", "fsdp.activationCheckpointing=true", "--set", "fsdp.reshardAfterForward=false"]
    nodes = start_nodes(2, 1, [*ARGS, *options], tmp_path_factory.mktemp("reference"))
    try:
        codes = wait_all(nodes, timeout=120)
    finally:
        cleanup(nodes)
    assert codes == [0, 0], nodes[0].stderr[-3000:]
    losses = progress_losses(nodes[0])
    assert sorted(losses) == list(range(1, STEPS + 1))
    return losses


@pytest.fixture(scope="module")
def killed(tmp_path_factory):
    """1 node x 2 processes, checkpointing every 4 steps, SIGKILLed after the step-4 checkpoint."""
    logs = tmp_path_factory.mktemp("killed")
    ckpt = logs / "checkpoints"
    options = ["--set", "fsdp.cpuOffload=true", "--set", f"checkpoint.dir={ckpt}", "--set", "checkpoint.intervalSteps=4"]
    nodes = start_nodes(1, 2, [*ARGS, *options], logs)
    (node,) = nodes
    try:
        node.wait_for_event(lambda e: e["event"] == "checkpoint" and e["step"] >= 4, timeout=120)
        kill_tree(node)
        node.wait(timeout=10)
    finally:
        cleanup(nodes)
    assert not node.events("done"), "the run finished before it could be killed"
    return node, ckpt


def test_same_seed_gives_the_same_losses_on_1x2_and_2x1(reference, killed):
    node, _ = killed
    losses = progress_losses(node)
    assert len(losses) >= 4
    for step, loss in losses.items():
        assert loss == pytest.approx(reference[step], **TOLERANCE), step


def test_resume_after_sigkill_at_another_world_size_continues_exactly(reference, killed, tmp_path):
    node, ckpt = killed
    saved = max(e["step"] for e in node.events("checkpoint"))
    # A single process (world size 1) loads the 2-process checkpoint.
    resumed = start([*TRAINER, *ARGS, "--set", f"checkpoint.dir={ckpt}"], base_env(), tmp_path, "resume")
    try:
        assert resumed.wait(timeout=120) == 0, resumed.stderr[-3000:]
    finally:
        cleanup([resumed])
    start_event = resumed.events("start")[0]
    assert start_event["resumedFrom"] == saved and start_event["worldSize"] == 1
    assert start_event["gradAccumSteps"] == 4  # 8 sequences = 2 per micro-batch x 4 on one rank
    losses = progress_losses(resumed)
    assert sorted(losses) == list(range(saved + 1, STEPS + 1))
    for step, loss in losses.items():
        assert loss == pytest.approx(reference[step], **TOLERANCE), step
    assert resumed.events("progress")[0]["lastCheckpointStep"] == saved
