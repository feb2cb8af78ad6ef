"""The accepted spec of an FSDPJob: immutable fields stay as accepted, mutable ones follow."""

from __future__ import annotations

import json

import pytest

from pinery.api.fsdpjob import FSDPJobSpec
from pinery.fsdpjob.accepted_spec import effective_spec, synced_condition
from pinery.fsdpjob.naming import ANNOTATION_SPEC


def service(record) -> dict:
    return {"metadata": {"annotations": {ANNOTATION_SPEC: record}}}


ACCEPTED = FSDPJobSpec.model_validate({"numNodes": 2, "maxRestarts": 1}).to_api()


@pytest.mark.parametrize(
    "now, record, nodes, deadline, changed",
    [
        ({"numNodes": 2, "maxRestarts": 1}, None, 2, None, []),  # no Service yet
        ({"numNodes": 2, "maxRestarts": 1}, json.dumps(ACCEPTED), 2, None, []),
        ({"numNodes": 3, "maxRestarts": 1}, json.dumps(ACCEPTED), 2, None, ["numNodes"]),  # immutable: kept
        ({"numNodes": 3, "maxRestarts": 1, "activeDeadlineSeconds": 60}, json.dumps(ACCEPTED), 2, 60, ["numNodes"]),  # mutable: follows
        ({"numNodes": 3, "maxRestarts": 1}, "{not json", 3, None, []),  # unreadable record
    ],
)
def test_effective_spec(now, record, nodes, deadline, changed):
    spec, got = effective_spec(FSDPJobSpec.model_validate(now), service(record) if record else None)
    assert (spec.num_nodes, spec.active_deadline_seconds, got) == (nodes, deadline, changed)


@pytest.mark.parametrize(
    "changed, status, reason, start",
    [
        ([], "True", "SpecApplied", "the pods run the job's spec"),
        (["numNodes", "image"], "False", "ImmutableFieldChanged", "spec.numNodes, spec.image changed after the job was created"),
    ],
)
def test_synced_condition(changed, status, reason, start):
    got = synced_condition(changed)
    assert got[:2] == (status, reason) and got[2].startswith(start)
