"""The open progress protocol: what `pinery_trainer.report.step` and `.checkpoint` print is what
the operator reads into status.progress (pinery.fsdpjob.progress), and the module works as a
lone copy beside a user's script."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from datetime import datetime, timezone

import pytest

from pinery.fsdpjob.progress import progress_from_logs
from pinery_trainer import report
from tests.conftest import REPO_ROOT

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)


@pytest.fixture(autouse=True)
def rank0(monkeypatch):
    monkeypatch.setenv("RANK", "0")


def printed(*calls) -> str:
    out = io.StringIO()
    for fn, args, kwargs in calls:
        fn(*args, stream=out, **kwargs)
    return out.getvalue()


@pytest.mark.parametrize(
    "kwargs, progress",
    [
        ({}, {"step": 7}),
        ({"loss": 2.5, "total_steps": 100, "tokens_per_second": 512.0, "checkpoint_step": 5},
         {"step": 7, "loss": 2.5, "totalSteps": 100, "tokensPerSecond": 512.0, "lastCheckpointStep": 5}),
        # NaN has no JSON form: printed as null, and the operator leaves it out
        ({"loss": float("nan")}, {"step": 7}),
        # keys the operator does not know are printed for people and ignored
        ({"learning_rate": 3e-4, "gradNorm": 1.5}, {"step": 7}),
    ],
)
def test_what_step_prints_is_what_the_operator_reads(kwargs, progress):
    text = printed((report.step, (7,), kwargs))
    assert json.loads(text)["event"] == "progress"
    assert progress_from_logs(text, NOW) == {**progress, "updatedAt": "2026-01-01T12:00:00Z", "stepTime": "2026-01-01T12:00:00Z"}


def test_a_checkpoint_after_the_last_step_line_is_the_last_checkpoint():
    text = printed((report.step, (10,), {"loss": 1.0}), (report.checkpoint, (10,), {}))
    assert progress_from_logs(text, NOW)["lastCheckpointStep"] == 10


def test_only_rank_0_prints(monkeypatch):
    monkeypatch.setenv("RANK", "3")
    out = io.StringIO()
    assert report.step(1, loss=1.0, stream=out) is False and report.checkpoint(1, stream=out) is False
    assert out.getvalue() == ""


@pytest.mark.parametrize("bad", [-1, 1.5, True, "3"])
def test_a_step_that_is_not_a_count_is_refused(bad):
    with pytest.raises(ValueError, match="non-negative integer"):
        report.step(bad)
    with pytest.raises(ValueError):
        report.checkpoint(bad)


def test_a_copy_of_the_module_works_alone(tmp_path):
    """`import report` from a copy beside the script, in an isolated interpreter with nothing
    of pinery on its path: the module needs the standard library only."""
    shutil.copy(REPO_ROOT / "trainer" / "pinery_trainer" / "report.py", tmp_path / "report.py")
    script = "import report; report.step(3, loss=0.5, total_steps=9); report.checkpoint(3)"
    result = subprocess.run([sys.executable, "-I", "-S", "-c", f"import sys; sys.path.insert(0, {str(tmp_path)!r}); {script}"],
                            capture_output=True, text=True, env={"RANK": "0"}, timeout=30)
    assert result.returncode == 0, result.stderr
    assert progress_from_logs(result.stdout, NOW) == {"step": 3, "loss": 0.5, "totalSteps": 9, "lastCheckpointStep": 3,
                                                      "updatedAt": "2026-01-01T12:00:00Z", "stepTime": "2026-01-01T12:00:00Z"}
