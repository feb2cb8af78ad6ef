"""changed_immutable_fields: the operator's own reading of the x-pinery-immutable markers."""

import pytest

from pinery.api import FSDPJobSpec, VectorIndexSpec
from pinery.api.immutability import changed_immutable_fields, mutable_fields

JOB = {"numNodes": 2, "image": "a:1", "trainer": {"steps": 20}}
POD = {"dimension": 8, "pod": {"environment": "e", "podType": "p1.x1", "replicas": 1}}


@pytest.mark.parametrize(
    "model, old, new, changed",
    [
        (FSDPJobSpec, JOB, JOB, []),
        (FSDPJobSpec, JOB, {**JOB, "suspend": True, "activeDeadlineSeconds": 9, "ttlSecondsAfterFinished": 1,
                                  "progressDeadlineSeconds": 60, "firstProgressDeadlineSeconds": 600}, []),
        (FSDPJobSpec, JOB, {**JOB, "numNodes": 3}, ["numNodes"]),
        (FSDPJobSpec, JOB, {**JOB, "image": "a:2", "masterPort": 1}, ["image", "masterPort"]),
        (FSDPJobSpec, JOB, {**JOB, "trainer": {"steps": 21}}, ["trainer"]),
        (FSDPJobSpec, JOB, {k: v for k, v in JOB.items() if k != "image"}, ["image"]),
        # an omitted field equals its default, as the API server stores it
        (FSDPJobSpec, JOB, {**JOB, "masterPort": 29500, "maxRestarts": 3}, []),
        (FSDPJobSpec, JOB, {**JOB, "trainer": {"steps": 20, "seed": 0}}, []),
        (VectorIndexSpec, POD, {**POD, "pod": {**POD["pod"], "replicas": 4, "podType": "p1.x2"}}, []),
        (VectorIndexSpec, POD, {**POD, "pod": {**POD["pod"], "environment": "f"}}, ["pod.environment"]),
        (VectorIndexSpec, POD, {**POD, "dimension": 9}, ["dimension"]),
        (VectorIndexSpec, POD, {"dimension": 8, "serverless": {"cloud": "aws", "region": "r"}}, ["serverless", "pod"]),
        (VectorIndexSpec, POD, {**POD, "tags": {"a": "b"}, "deletionProtection": True}, []),
    ],
)
def test_changed_immutable_fields(model, old, new, changed):
    assert changed_immutable_fields(model, old, new) == changed


def test_mutable_fields_are_the_unmarked_ones():
    assert mutable_fields(FSDPJobSpec) == (
        "suspend", "activeDeadlineSeconds", "progressDeadlineSeconds", "firstProgressDeadlineSeconds", "ttlSecondsAfterFinished",
        "maxDisruptions", "nodeAvoidance", "restartBackoffSeconds",
    )
    assert "deletionProtection" in mutable_fields(VectorIndexSpec) and "dimension" not in mutable_fields(VectorIndexSpec)
