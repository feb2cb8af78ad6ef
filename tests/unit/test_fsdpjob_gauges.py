"""The per-job gauges of an FSDPJob, from its status and spec."""

from __future__ import annotations

import pytest

from pinery.fsdpjob.gauges import job_gauges
from pinery.metrics import JOB_GAUGES

PROGRESS = {"step": 40, "totalSteps": 100, "loss": 2.5, "tokensPerSecond": 1200.0, "lastCheckpointStep": 30,
            "updatedAt": "2025-01-01T00:00:00Z"}
BUDGET = {"status_restarts": 0.0, "disruptions": 0.0, "max_restarts": 3.0, "stalled": 0.0, "finished": 0.0}


def cond(type_, status, reason):
    return {"type": type_, "status": status, "reason": reason, "message": "", "lastTransitionTime": "2025-01-01T00:00:00Z"}


@pytest.mark.parametrize(
    "status, spec, want",
    [
        ({}, {}, BUDGET),  # nothing reported yet: no progress gauges at all, not zeros
        (None, None, BUDGET),
        ({"progress": PROGRESS}, {},
         {**BUDGET, "step": 40.0, "loss": 2.5, "tokens_per_second": 1200.0, "last_checkpoint_step": 30.0}),
        ({"progress": {"step": 5, "updatedAt": "2025-01-01T00:00:00Z"}}, {}, {**BUDGET, "step": 5.0}),
        ({"restarts": 2, "disruptions": 1}, {"maxRestarts": 5},
         {**BUDGET, "status_restarts": 2.0, "disruptions": 1.0, "max_restarts": 5.0}),
        ({}, {"maxRestarts": 0}, {**BUDGET, "max_restarts": 0.0}),
        # Stalled: a restart or a failure for that reason, while the condition holds.
        ({"conditions": [cond("Restarting", "True", "Stalled")]}, {}, {**BUDGET, "stalled": 1.0}),
        ({"phase": "Failed", "conditions": [cond("Failed", "True", "Stalled")]}, {}, {**BUDGET, "stalled": 1.0, "finished": 1.0}),
        ({"phase": "Succeeded"}, {}, {**BUDGET, "finished": 1.0}),
        ({"phase": "Restarting"}, {}, BUDGET),
        ({"conditions": [cond("Restarting", "False", "Stalled")]}, {}, BUDGET),
        ({"conditions": [cond("Restarting", "True", "NodeFailed")]}, {}, BUDGET),
        ({"conditions": [cond("Running", "True", "Stalled")]}, {}, BUDGET),
    ],
)
def test_job_gauges(status, spec, want):
    assert job_gauges(status, spec) == want


def test_every_gauge_is_one_the_exporter_knows():
    got = job_gauges({"progress": PROGRESS, "conditions": [cond("Failed", "True", "Stalled")]}, {"maxRestarts": 1})
    assert set(got) == set(JOB_GAUGES)
