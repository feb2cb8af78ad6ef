"""SIGTERM checkpoints before exit (143); corrupt and partial checkpoints are skipped on resume."""

from __future__ import annotations

import json
import shutil
import signal

import pytest

from pinery_trainer import exit_codes
from pinery_trainer.checkpoint_layout import MARKER, step_dir
from tests.support.trainer import FAST, TRAINER, base_env, cleanup, start, start_nodes

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sigtermed(tmp_path_factory):
    """1 node x 2 processes under the launcher, sent SIGTERM (as the kubelet does) mid-run.

    It trains in bfloat16 (FSDP2 mixed precision), which the later resume, in float32, must not mind.
    """
    logs = tmp_path_factory.mktemp("sigterm")
    ckpt = logs / "checkpoints"
    args = ["--set", "steps=100000", *FAST, "--set", "fsdp.mixedPrecision.paramDtype=bfloat16",
            "--set", f"checkpoint.dir={ckpt}", "--set", "checkpoint.intervalSteps=100000"]
    nodes = start_nodes(1, 2, args, logs, launcher=True)
    (node,) = nodes
    try:
        node.wait_for_event(lambda e: e["event"] == "progress" and e["step"] >= 3, timeout=120)
        node.proc.send_signal(signal.SIGTERM)
        code = node.wait(timeout=60)
    finally:
        cleanup(nodes)
    return node, code, ckpt


def test_sigterm_writes_a_checkpoint_then_exits_143(sigtermed):
    node, code, ckpt = sigtermed
    assert code == exit_codes.TERMINATED, node.stderr[-3000:]
    (stopped,) = node.events("stopped")
    step = stopped["step"]
    assert step >= 3 and stopped["lastCheckpointStep"] == step and stopped["exitCode"] == 143
    (saved,) = node.events("checkpoint")
    assert saved["step"] == step and saved["reason"] == "sigterm"
    manifest = json.loads((step_dir(ckpt, step) / MARKER).read_text())
    assert manifest["step"] == step and manifest["worldSize"] == 2 and manifest["reason"] == "sigterm"
    assert {".metadata", "__0_0.distcp", "__1_0.distcp"} <= set(manifest["files"])
    assert not node.events("done")


def _copy_as(ckpt, source_step, step, keep_marker=True):
    target = step_dir(ckpt, step)
    shutil.copytree(step_dir(ckpt, source_step), target)
    marker = target / MARKER
    if keep_marker:
        manifest = json.loads(marker.read_text())
        manifest["step"] = step
        marker.write_text(json.dumps(manifest))
    else:
        marker.unlink()
    return target


def test_corrupt_and_partial_checkpoints_are_skipped_and_rotated(sigtermed, tmp_path):
    _, _, ckpt = sigtermed
    good = max(int(p.name.split("-")[1]) for p in ckpt.glob("step-*"))
    # Newer than the good one: a truncated shard, shards overwritten with zeros (same sizes,
    # so only loading finds out), and a checkpoint whose marker was never written.
    truncated = _copy_as(ckpt, good, good + 1)
    with (truncated / "__1_0.distcp").open("r+b") as f:
        f.truncate(100)
    zeroed = _copy_as(ckpt, good, good + 2)
    for shard in zeroed.glob("*.distcp"):
        shard.write_bytes(b"\0" * shard.stat().st_size)
    _copy_as(ckpt, good, good + 3, keep_marker=False)

    args = ["--set", f"steps={good + 2}", *FAST, "--set", f"checkpoint.dir={ckpt}", "--set", "checkpoint.keep=3"]
    run = start([*TRAINER, *args], base_env(), tmp_path, "resume")
    try:
        assert run.wait(timeout=120) == 0, run.stderr[-3000:]
    finally:
        cleanup([run])
    start_event = run.events("start")[0]
    assert start_event["resumedFrom"] == good
    reasons = {s["step"]: s["reason"] for s in start_event["skippedCheckpoints"]}
    assert set(reasons) == {good + 1, good + 2, good + 3}
    assert "__1_0.distcp has 100 bytes" in reasons[good + 1]
    assert reasons[good + 2].startswith("failed to load")
    assert reasons[good + 3].startswith("incomplete")
    assert [e["step"] for e in run.events("progress")] == [good + 1, good + 2]
    # The final checkpoint replaced the zeroed one; rotation removed the older truncated one and
    # left the newer partial one alone.
    remaining = sorted(p.name for p in ckpt.glob("step-*"))
    assert remaining == [step_dir(ckpt, s).name for s in (good, good + 2, good + 3)]
    assert json.loads((step_dir(ckpt, good + 2) / MARKER).read_text())["reason"] == "final"
