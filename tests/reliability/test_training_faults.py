"""Training faults in local mode: a real torchrun worker (or a pod's main process) of a running
FSDPJob with the built-in trainer SIGKILLed mid-run; the gang restarts once and training
resumes from the last checkpoint with the loss continuing (tests/reliability/training_faults.py).
The reduced profile runs in `make test`; `make faults` runs the full one and records its numbers."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.reliability.harness import start_local_mode, write_result
from tests.reliability.training_faults import PROFILES, run_training_faults

pytestmark = pytest.mark.e2e


def test_training_faults(tmp_path, reliability):
    profile = PROFILES[reliability.profile]
    cluster = start_local_mode(tmp_path / "local")
    try:
        result = asyncio.run(run_training_faults(cluster, profile, reliability.seed))
    finally:
        cluster.stop_thread()
    path = write_result(reliability.results, f"training-faults-{reliability.profile}", {"profile": reliability.profile, **result})
    print(json.dumps(result, indent=2))
    assert result["kills"] == len(profile.victims), f"not every run could be killed: {path}"
    assert result["violations"] == [], f"{len(result['violations'])} violations (details in {path}):\n" + "\n".join(result["violations"])
