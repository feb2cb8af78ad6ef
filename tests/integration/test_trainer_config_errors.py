"""An invalid configuration exits 78 (non-retryable) with a message naming the field."""

from __future__ import annotations

import json
import subprocess

import pytest

from pinery_trainer import exit_codes
from tests.support.trainer import LAUNCHER, TRAINER, base_env, cleanup, parse_events, start_nodes


def run(command, env=None, timeout=60):
    return subprocess.run(command, env={**base_env(), **(env or {})}, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("entry", [TRAINER, LAUNCHER], ids=["worker", "launcher"])
@pytest.mark.parametrize(
    "content, field, words",
    [
        ("steps: 0\n", "steps", "greater than or equal to 1"),
        ("model: {preset: huge}\n", "model.preset", "'tiny'"),
        ("optim: {lr: 0.1, betas: [0.9, 0.99]}\n", "optim.betas", "Extra inputs"),
        ("model: {heads: 3}\n", "model.heads", "must divide the model width (128)"),
        ("steps: [1\n", "--config", "not valid YAML"),
    ],
)
def test_invalid_file_exits_78_naming_the_field(tmp_path, entry, content, field, words):
    config = tmp_path / "trainer.yaml"
    config.write_text(content)
    result = run([*entry, "--config", str(config)])
    assert result.returncode == exit_codes.CONFIG_ERROR, result.stderr
    assert f"{field}: " in result.stderr and words in result.stderr
    (error,) = parse_events(result.stdout)
    assert error["event"] == "error" and error["exitCode"] == 78 and error["reason"] == "InvalidConfiguration"
    assert error["problems"][0]["field"] == field


def test_bad_checkpoint_interval_variable_is_named(tmp_path):
    result = run([*TRAINER, "--check"], env={"PINERY_CHECKPOINT_INTERVAL": "often"})
    assert result.returncode == 78
    assert "PINERY_CHECKPOINT_INTERVAL: must be a whole number of steps, not 'often'" in result.stderr


def test_environment_overrides_the_file_and_set_overrides_both(tmp_path):
    config = tmp_path / "trainer.yaml"
    config.write_text("checkpoint: {dir: /from-file, intervalSteps: 5}\nsteps: 10\n")
    env = {"PINERY_CHECKPOINT_DIR": "/from-env", "PINERY_CHECKPOINT_INTERVAL": "7"}
    result = run([*TRAINER, "--config", str(config), "--set", "steps=20", "--check"], env=env)
    assert result.returncode == 0, result.stderr
    checked = json.loads(result.stdout)
    assert checked["checkpoint"]["dir"] == "/from-env" and checked["checkpoint"]["intervalSteps"] == 7
    assert checked["steps"] == 20


@pytest.mark.slow
def test_error_found_by_the_workers_reaches_the_node_exit_code(tmp_path):
    # Valid on its own, but 6 sequences cannot be split over 2 ranks x 2 per micro-batch: only
    # the workers know the world size. Plain torchrun would exit 1; the launcher passes 78 on.
    args = ["--set", "globalBatchSize=6", "--set", "microBatchSize=2"]
    nodes = start_nodes(1, 2, args, tmp_path, launcher=True)
    try:
        code = nodes[0].wait(timeout=120)
    finally:
        cleanup(nodes)
    assert code == exit_codes.CONFIG_ERROR, nodes[0].stderr[-3000:]
    (error,) = nodes[0].events("error")
    assert error["problems"] == [
        {"field": "globalBatchSize", "message": "must be a multiple of microBatchSize x world size (2 x 2 = 4)"}
    ]
