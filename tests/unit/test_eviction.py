"""Table tests of apiserver/eviction.py from upstream's own cases: kubernetes
`pkg/registry/core/pod/storage/eviction_test.go` (TestEviction, TestEvictionIgnorePDB,
TestEvictionDryRun, TestAddConditionAndDelete), `pkg/api/pod/util.go` (`UpdatePodCondition`),
and a protobuf Eviction as a Go client configured for protobuf sends it (k8s.io/api policy/v1
generated.proto).

The PDB cases of those tests do not apply: this server serves no PodDisruptionBudgets, so every
pod is in upstream's "no matching PDB" case (TestEviction "non-matching pdbs": deleted)."""

from __future__ import annotations

import pytest

from pinery.local.apiserver import eviction as e
from pinery.local.apiserver.errors import ApiError
from pinery.local.apiserver.operations import DeleteOptions
from pinery.local.apiserver.protobuf import decode
from tests.unit.test_protobuf import body, field


def _pod(phase: str | None = "Running", deleting: bool = False, uid: str = "u-1", rv: str = "7") -> dict:
    meta = {"name": "t1", "namespace": "default", "uid": uid, "resourceVersion": rv}
    if deleting:
        meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    return {"metadata": meta, "status": {"phase": phase} if phase else {}}


# TestEviction / TestEvictionIgnorePDB: which pods skip the PDB check (canIgnorePDB) and which
# deletions carry the pod's resourceVersion (shouldEnforceResourceVersion).
@pytest.mark.parametrize("pod, ignore_pdb, enforce_rv", [
    (_pod("Running"), False, True),    # "pod running": checked against its PDBs
    (_pod("Pending"), True, True),     # "pod pending": deleted, racing a pod that turns Running is caught
    (_pod("Succeeded"), True, False),  # "pod succeeded"
    (_pod("Failed"), True, False),     # "pod failed"
    (_pod("Running", deleting=True), True, False),  # "pod terminating"
    (_pod(None), False, True),         # no phase yet: not one of canIgnorePDB's phases
])
def test_can_ignore_pdb_and_resource_version(pod, ignore_pdb, enforce_rv):
    assert e.can_ignore_pdb(pod) is ignore_pdb
    assert e.should_enforce_resource_version(pod) is enforce_rv


# TestEviction "bad name in Url", and the create handler's checks of the body.
@pytest.mark.parametrize("url_name, body, error", [
    ("t1", {"metadata": {"name": "t1"}}, None),
    ("t1", {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "t1", "namespace": "default"}}, None),
    ("t1bad-name", {"metadata": {"name": "t1"}}, "name in URL does not match name in Eviction object"),
    ("t1", {}, "name in URL does not match name in Eviction object"),
    ("t1", None, "name in URL does not match name in Eviction object"),
    ("t1", {"apiVersion": "policy/v1beta1", "metadata": {"name": "t1"}},
     "the API version in the data (policy/v1beta1) does not match the expected API version (policy/v1)"),
    ("t1", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "t1"}},
     "the API version in the data (v1) does not match the expected API version (policy/v1)"),
    ("t1", {"metadata": {"name": "t1", "namespace": "other"}},
     "the namespace of the provided object does not match the namespace sent on the request"),
    ("t1", [], "the body of the request must be an Eviction object"),
])
def test_read_eviction(url_name, body, error):
    if error is None:
        read = e.read_eviction(url_name, "default", body)
        assert (read["apiVersion"], read["kind"], read["metadata"]["namespace"]) == ("policy/v1", "Eviction", "default")
        return
    with pytest.raises(ApiError) as refused:
        e.read_eviction(url_name, "default", body)
    assert (refused.value.code, refused.value.reason, refused.value.message) == (400, "BadRequest", error)


# TestEvictionDryRun: "just request-options", "just eviction-options", "both options"; and
# propagateDryRun's refusal of two different lists.
@pytest.mark.parametrize("options, request_dry_run, want", [
    ({}, ["All"], {"dryRun": ["All"]}),
    (None, ["All"], {"dryRun": ["All"]}),
    ({"dryRun": ["All"]}, [], {"dryRun": ["All"]}),
    ({"dryRun": ["All"]}, ["All"], {"dryRun": ["All"]}),
    ({"gracePeriodSeconds": 5}, [], {"gracePeriodSeconds": 5}),
    (None, [], {}),
    ({"dryRun": ["All", "All"]}, ["All"], "Non-matching dry-run options in request and content: [All] and [All All]"),
])
def test_propagate_dry_run(options, request_dry_run, want):
    if isinstance(want, str):
        with pytest.raises(ApiError) as refused:
            e.propagate_dry_run(options, request_dry_run)
        assert (refused.value.code, refused.value.message) == (500, want)
        return
    assert e.propagate_dry_run(options, request_dry_run) == want
    assert DeleteOptions.from_body(want, {}).dry_run is bool(request_dry_run or (options or {}).get("dryRun"))


# TestAddConditionAndDelete: "simple", "valid uid", "invalid uid", "valid resourceVersion",
# "invalid resourceVersion" ("missing" is the 404 before it, in evict_pod).
@pytest.mark.parametrize("options, expected", [
    (DeleteOptions(), None),
    (DeleteOptions(uid="u-1"), None),
    (DeleteOptions(uid="u-11"), "The object might have been deleted and then recreated"),
    (DeleteOptions(resource_version="7"), None),
    (DeleteOptions(resource_version="71"), "The object might have been modified"),
])
def test_preconditions(options, expected):
    conflict = e.precondition_conflict(_pod(), options)
    if expected is None:
        assert conflict is None
        return
    assert conflict is not None and (conflict.code, conflict.reason) == (409, "Conflict")
    assert conflict.message.startswith('Operation cannot be fulfilled on Pod "t1": the ') and conflict.message.endswith(expected)
    assert conflict.details == {"name": "t1", "kind": "Pod"}


_READY = {"type": "Ready", "status": "True", "lastProbeTime": None, "lastTransitionTime": "2025-01-01T00:00:00Z"}
_OLD_TARGET = {"type": "DisruptionTarget", "status": "True", "lastProbeTime": None, "lastTransitionTime": "2025-01-01T00:00:00Z",
               "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting"}
_NOW = "2025-06-01T12:00:00Z"
_NEW_TARGET = {**_OLD_TARGET, "lastTransitionTime": _NOW}


# UpdatePodCondition: added; unchanged (lastTransitionTime kept, nothing changed); the same
# status with another reason (time kept, changed); another status (time now, changed).
@pytest.mark.parametrize("before, after, changed", [
    ([_READY], [_READY, _NEW_TARGET], True),
    ([], [_NEW_TARGET], True),
    ([_READY, _OLD_TARGET], [_READY, _OLD_TARGET], False),
    ([{**_OLD_TARGET, "reason": "DeletionByTaintManager", "message": "Taint manager: deleting due to NoExecute taint"}],
     [_OLD_TARGET], True),
    ([{**_OLD_TARGET, "status": "False", "reason": "", "message": ""}], [_NEW_TARGET], True),
])
def test_update_pod_condition(before, after, changed):
    assert e.update_pod_condition(before, e.disruption_target(), _NOW) == (after, changed)


def test_namespace_terminating_refusal():
    refused = e.namespace_terminating("going", "p")
    assert (refused.code, refused.reason) == (403, "Forbidden")
    assert refused.message == 'pods "p" is forbidden: unable to create new content in namespace going because it is being terminated'
    assert refused.details["causes"] == [{"reason": "NamespaceTerminating", "message": "namespace going is being terminated", "field": "metadata.namespace"}]


def test_a_protobuf_eviction():
    meta = field(1, "web") + field(3, "default")
    options = field(1, 0) + field(2, field(1, "u-1"))
    decoded = decode(body("Eviction", field(1, meta) + field(2, options), "policy/v1"))
    assert decoded == {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web", "namespace": "default"},
                       "deleteOptions": {"gracePeriodSeconds": 0, "preconditions": {"uid": "u-1"}}}
    assert e.read_eviction("web", "default", decoded)["deleteOptions"]["gracePeriodSeconds"] == 0
