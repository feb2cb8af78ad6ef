"""Hybrid sharding (HSDP, fsdp.strategy hybrid) on two "nodes" of two processes.

One uninterrupted hybrid run (2 x 2: shard within a node, replicate across the two) saves
checkpoints at steps 4 and 8. A full-sharding run with the same seeds must take the same
steps (same losses and gradient norms, so clipping, loss and data order are unchanged). Then
the step-4 checkpoint is resumed under full sharding on 3 processes and under hybrid on 4
processes of one node (a (1, 4) mesh): DCP reshards, and with globalBatchSize set the resumed
steps repeat the uninterrupted run's losses.
"""

from __future__ import annotations

import shutil

import pytest

from tests.support.trainer import FAST, TRAINER, base_env, cleanup, progress_losses, start, start_nodes, wait_all

pytestmark = pytest.mark.slow

STEPS = 8
# 12 sequences: 1 per micro-batch x 3 micro-steps on 4 ranks, x 4 on 3 ranks.
ARGS = ["--set", f"steps={STEPS}", "--set", "globalBatchSize=12", "--set", "microBatchSize=1", "--set", "seed=7", *FAST]
HYBRID = ["--set", "fsdp.strategy=hybrid"]
TOLERANCE = dict(rel=1e-4, abs=1e-4)


def run_nodes(num_nodes, nproc, args, logs):
    nodes = start_nodes(num_nodes, nproc, args, logs)
    try:
        codes = wait_all(nodes, timeout=240)
    finally:
        cleanup(nodes)
    assert codes == [0] * num_nodes, [n.stderr[-3000:] for n in nodes]
    return nodes[0]


def grad_norms(node):
    return {e["step"]: e["gradNorm"] for e in node.events("progress")}


@pytest.fixture(scope="module")
def hybrid(tmp_path_factory):
    logs = tmp_path_factory.mktemp("hybrid")
    ckpt = logs / "checkpoints"
    options = ["--set", f"checkpoint.dir={ckpt}", "--set", "checkpoint.intervalSteps=4"]
    return run_nodes(2, 2, [*ARGS, *HYBRID, *options], logs), ckpt


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    return run_nodes(2, 2, ARGS, tmp_path_factory.mktemp("full"))


@pytest.mark.long  # two 4-process runs and two resumes, 40 s (the mesh: tests/unit/test_trainer_mesh.py)
def test_hybrid_takes_the_same_steps_as_full_sharding(hybrid, full):
    head, _ = hybrid
    assert head.events("start")[0]["mesh"] == {"strategy": "hybrid", "shape": [2, 2], "dims": ["replicate", "shard"]}
    assert full.events("start")[0]["mesh"] == {"strategy": "full", "shape": [4], "dims": ["shard"]}
    losses, reference = progress_losses(head), progress_losses(full)
    assert sorted(losses) == sorted(reference) == list(range(1, STEPS + 1))
    assert losses[STEPS] < losses[1]
    norms, reference_norms = grad_norms(head), grad_norms(full)
    for step in reference:
        assert losses[step] == pytest.approx(reference[step], **TOLERANCE), step
        # The gradient norm, computed over DTensor gradients, is the one clipping used.
        assert norms[step] == pytest.approx(reference_norms[step], **TOLERANCE), step


def resume_from_step_4(hybrid, tmp_path, nproc, args):
    head, ckpt = hybrid
    assert 4 in {e["step"] for e in head.events("checkpoint")}
    target = tmp_path / "checkpoints"
    shutil.copytree(ckpt / "step-00000004", target / "step-00000004")
    node = run_nodes(1, nproc, [*ARGS, *args, "--set", f"checkpoint.dir={target}"], tmp_path)
    start_event = node.events("start")[0]
    assert start_event["resumedFrom"] == 4 and start_event["worldSize"] == nproc
    losses, reference = progress_losses(node), progress_losses(head)
    assert sorted(losses) == list(range(5, STEPS + 1))
    for step, loss in losses.items():
        assert loss == pytest.approx(reference[step], **TOLERANCE), step
    return start_event


@pytest.mark.long  # two 4-process runs and two resumes, 40 s (the mesh: tests/unit/test_trainer_mesh.py)
def test_hybrid_checkpoint_resumes_under_full_sharding_on_3_processes(hybrid, tmp_path):
    start_event = resume_from_step_4(hybrid, tmp_path, 3, [])
    assert start_event["mesh"]["shape"] == [3] and start_event["gradAccumSteps"] == 4


@pytest.mark.long  # two 4-process runs and two resumes, 40 s (the mesh: tests/unit/test_trainer_mesh.py)
def test_hybrid_checkpoint_resumes_under_hybrid_on_4_processes_of_one_node(hybrid, tmp_path):
    start_event = resume_from_step_4(hybrid, tmp_path, 4, HYBRID)
    assert start_event["mesh"]["shape"] == [1, 4] and start_event["gradAccumSteps"] == 3


def test_a_shard_group_that_does_not_divide_the_world_is_a_configuration_error(tmp_path):
    node = start([*TRAINER, "--set", "fsdp.strategy=hybrid", "--set", "fsdp.shardGroupSize=2"], base_env(), tmp_path, "bad")
    try:
        assert node.wait(timeout=120) == 78, node.stderr[-3000:]
    finally:
        cleanup([node])
    [error] = node.events("error")
    assert error["problems"] == [{"field": "fsdp.shardGroupSize", "message": "2 exceeds the world size (1)"}]
