"""The accepted spec of an FSDPJob: immutable fields stay as accepted, mutable ones follow."""

from __future__ import annotations

import json

import pytest

from pinery.api.fsdpjob import FSDPJobSpec
from pinery.fsdpjob.accepted_spec import effective_spec, synced_condition
from pinery.fsdpjob.children import accepted_spec
from pinery.fsdpjob.naming import ANNOTATION_SPEC


def service(record) -> dict:
    return {"metadata": {"annotations": {ANNOTATION_SPEC: record}}}


ACCEPTED = FSDPJobSpec.model_validate({"numNodes": 2, "maxRestarts": 1}).to_api()
# The record the Service carries (children.build_service): the immutable fields only.
RECORDED = json.dumps(accepted_spec(FSDPJobSpec.model_validate({"numNodes": 2, "maxRestarts": 1})), sort_keys=True)


@pytest.mark.parametrize(
    "now, record, nodes, deadline, changed",
    [
        ({"numNodes": 2, "maxRestarts": 1}, None, 2, None, []),  # no Service yet
        ({"numNodes": 2, "maxRestarts": 1}, json.dumps(ACCEPTED), 2, None, []),
        ({"numNodes": 3, "maxRestarts": 1}, json.dumps(ACCEPTED), 2, None, ["numNodes"]),  # immutable: kept
        ({"numNodes": 3, "maxRestarts": 1, "activeDeadlineSeconds": 60}, json.dumps(ACCEPTED), 2, 60, ["numNodes"]),  # mutable: follows
        ({"numNodes": 3, "maxRestarts": 1}, "{not json", 3, None, []),  # unreadable record
        ({"numNodes": 2, "maxRestarts": 1}, RECORDED, 2, None, []),  # as recorded
        ({"numNodes": 2, "maxRestarts": 1, "activeDeadlineSeconds": 9}, RECORDED, 2, 9, []),  # a mutable field only
        ({"numNodes": 5, "maxRestarts": 1}, RECORDED, 2, None, ["numNodes"]),
        ({"numNodes": 2}, json.dumps({"numNodes": 2}), 2, None, []),  # a record without the defaults: the same spec
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


def test_a_spec_as_recorded_is_not_compared_field_by_field(monkeypatch):
    """Every pass of a job plans on its accepted spec: the common case, an unchanged record, is
    one dict comparison (the field walk defaults both specs through the CRD schema)."""
    def walk(*_):
        raise AssertionError("compared field by field")

    monkeypatch.setattr("pinery.fsdpjob.accepted_spec.changed_immutable_fields", walk)
    spec = FSDPJobSpec.model_validate({"numNodes": 2, "maxRestarts": 1, "activeDeadlineSeconds": 9})
    assert effective_spec(spec, service(RECORDED)) == (spec, [])
