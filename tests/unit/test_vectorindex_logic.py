"""The pure VectorIndex decisions, table-driven."""

import json

import pytest

from pinery.api.vectorindex import VectorIndexSpec
from pinery.backoff import backoff
from pinery.vectorindex import accepted
from pinery.vectorindex.adoption import immutable_differences
from pinery.vectorindex.decisions import (
    Event,
    Identity,
    decide,
    decide_deletion,
    landing_deadline,
    pass_events,
    refuse_immutable_change,
)
from pinery.vectorindex.desired import configure_changes, connection_fields, create_request
from pinery.vectorindex.errors import PineconeFailure, classify, outcome_unknown, redact
from pinery.vectorindex.ownership import is_owned_by, owner_of, ownership_tags, tag_value
from pinery.vectorindex.schedule import Timing, current_sweep, next_sweep, readiness_delay
from pinery.vectorindex.status import condition_events, next_status, phase, status_changes

WHO = Identity("prod", "search", "docs")
OWNED = ownership_tags("prod", "search", "docs")


def spec(**kw):
    base = {"dimension": 8, "serverless": {"cloud": "aws", "region": "us-east-1"}}
    return VectorIndexSpec.model_validate({**base, **kw})


def pod_spec(**pod):
    return VectorIndexSpec.model_validate({"dimension": 8, "pod": {"environment": "us-east1-gcp", **pod}})


def dense(dimension=8, metric="cosine"):
    return {"type": "dense_vector", "dimension": dimension, "metric": metric, "description": None}


ON_DEMAND = {"mode": "OnDemand", "status": {"state": "Ready", "current_replicas": None, "current_shards": None, "error_message": None}}
SERVERLESS = {"deployment_type": "managed", "cloud": "aws", "region": "us-east-1", "environment": None}


def dedicated(replicas=1, shards=1, node_type="b1", state="Ready", current=None, error=None):
    now_replicas, now_shards = current or (replicas, shards)
    return {"mode": "Dedicated",
            "dedicated": {"node_type": node_type, "scaling": "Manual", "manual": {"replicas": replicas, "shards": shards}},
            "status": {"state": state, "current_replicas": now_replicas, "current_shards": now_shards, "error_message": error}}


def index(state="Ready", ready=True, tags=OWNED, fields=None, deployment=SERVERLESS, read_capacity=ON_DEMAND, **kw):
    """A 2026-07 IndexModel as the gateway hands it over (pinecone 10.x IndexModel, wire keys)."""
    base = {
        "name": "docs",
        "host": "docs-abc.svc.pinecone.io",
        "status": {"ready": ready, "state": state},
        "schema": {"fields": fields if fields is not None else {"_values": dense()}},
        "deployment": dict(deployment),
        "deletion_protection": "disabled",
        "read_capacity": read_capacity,
        "tags": dict(tags) or None,
        "private_host": None, "source_collection": None, "source_backup_id": None, "cmek_id": None,
    }
    base.update(kw)
    return base


def pod_index(metadata=(), **pod):
    placed = {"deployment_type": "pod", "environment": "us-east1-gcp", "pod_type": "p1.x1", "replicas": 1, "shards": 1, **pod}
    fields = {"_values": dense(), **{name: {"filterable": True} for name in metadata}}
    return index(deployment=placed, fields=fields, read_capacity=None)


# --- ownership -------------------------------------------------------------------------

def test_ownership_tags_and_checks():
    assert OWNED == {"pinery-cluster": "prod", "pinery-namespace": "search", "pinery-name": "docs"}
    assert is_owned_by(index(), "prod", "search", "docs")
    assert not is_owned_by(index(), "prod", "search", "other")
    assert not is_owned_by(index(tags={}), "prod", "search", "docs")
    assert owner_of(index()) == "prod/search/docs" and owner_of(index(tags={"a": "b"})) is None


def test_long_tag_values_are_shortened_uniquely():
    a, b = tag_value("x" * 200), tag_value("x" * 199 + "y")
    assert len(a) == 120 and a != b and tag_value("short") == "short"


# --- requests --------------------------------------------------------------------------

def test_create_request_serverless_goes_through_2026_07():
    req = create_request(spec(tags={"team": "a"}, deletionProtection=True), "docs", OWNED)
    assert req.route == "2026-07" and req.name == "docs"
    assert req.body == {
        "name": "docs", "deletion_protection": "enabled", "tags": {"team": "a", **OWNED},
        "schema": {"fields": {"_values": {"type": "dense_vector", "dimension": 8, "metric": "cosine"}}},
        "deployment": {"deployment_type": "managed", "cloud": "aws", "region": "us-east-1"},
    }


@pytest.mark.parametrize(
    "the_spec, fields",
    [
        (spec(metric="euclidean"), {"_values": {"type": "dense_vector", "dimension": 8, "metric": "euclidean"}}),
        (spec(vectorType="hybrid"), {"_values": {"type": "dense_vector", "dimension": 8, "metric": "dotproduct"},
                                     "_sparse_values": {"type": "sparse_vector"}}),
        (VectorIndexSpec.model_validate({"vectorType": "sparse", "serverless": {"cloud": "gcp", "region": "x"}}),
         {"_sparse_values": {"type": "sparse_vector"}}),
    ],
)
def test_create_request_declares_the_reserved_vector_fields(the_spec, fields):
    assert create_request(the_spec, "i", OWNED).body["schema"] == {"fields": fields}


def test_create_request_byoc_and_read_capacity():
    byoc = VectorIndexSpec.model_validate({"dimension": 3, "byoc": {"environment": "aws-x"},
                                           "readCapacity": {"mode": "Dedicated", "nodeType": "t1", "replicas": 0, "shards": 2}})
    body = create_request(byoc, "b", OWNED).body
    assert body["deployment"] == {"deployment_type": "byoc", "environment": "aws-x"}
    assert body["read_capacity"] == {"mode": "Dedicated", "dedicated": {"node_type": "t1", "scaling": "Manual",
                                                                        "manual": {"replicas": 0, "shards": 2}}}
    assert "read_capacity" not in create_request(spec(), "s", OWNED).body


def test_pod_and_collection_indexes_are_created_through_2026_04():
    req = create_request(pod_spec(replicas=2, shards=2, podType="p2.x2", metadataConfig={"indexed": ["a"]}), "p", OWNED)
    assert req.route == "2026-04"
    assert req.body == {
        "name": "p", "dimension": 8, "metric": "cosine", "vector_type": "dense", "deletion_protection": "disabled", "tags": OWNED,
        "spec": {"pod": {"environment": "us-east1-gcp", "pod_type": "p2.x2", "pods": 4, "replicas": 2, "shards": 2,
                         "metadata_config": {"indexed": ["a"]}}},
    }
    from_collection = create_request(spec(serverless={"cloud": "aws", "region": "us-east-1", "sourceCollection": "c"},
                                          readCapacity={"mode": "OnDemand"}), "c", OWNED)
    assert from_collection.route == "2026-04"
    assert from_collection.body["spec"] == {"serverless": {"cloud": "aws", "region": "us-east-1", "source_collection": "c",
                                                           "read_capacity": {"mode": "OnDemand"}}}


@pytest.mark.parametrize(
    "the_spec, the_index, expected",
    [
        (spec(), index(), {}),
        (spec(deletionProtection=True), index(), {"deletion_protection": "enabled"}),
        (spec(tags={"team": "a"}), index(), {"tags": {"team": "a"}}),
        (spec(), index(tags={**OWNED, "old": "x"}), {"tags": {"old": ""}}),
        (spec(), index(tags={}), {"tags": OWNED}),
        (pod_spec(replicas=3), pod_index(), {"deployment": {"replicas": 3}}),
        (pod_spec(podType="p1.x2"), pod_index(), {"deployment": {"pod_type": "p1.x2"}}),
        # read capacity: left alone when the spec has none, else the whole setting when it differs
        (spec(), index(read_capacity=dedicated()), {}),
        (spec(readCapacity={"mode": "OnDemand"}), index(), {}),
        (spec(readCapacity={"mode": "OnDemand"}), index(read_capacity=dedicated()), {"read_capacity": {"mode": "OnDemand"}}),
        (spec(readCapacity={"mode": "Dedicated", "nodeType": "b1", "replicas": 1, "shards": 1}), index(read_capacity=dedicated()), {}),
        (spec(readCapacity={"mode": "Dedicated", "nodeType": "b1", "replicas": 0, "shards": 1}), index(read_capacity=dedicated()),
         {"read_capacity": {"mode": "Dedicated", "dedicated": dedicated(replicas=0)["dedicated"]}}),
        (spec(readCapacity={"mode": "Dedicated", "nodeType": "t1", "replicas": 1, "shards": 1}), index(),
         {"read_capacity": {"mode": "Dedicated", "dedicated": dedicated(node_type="t1")["dedicated"]}}),
        (spec(readCapacity={"mode": "Dedicated", "nodeType": "b1", "replicas": 1, "shards": 3}), index(read_capacity=dedicated()),
         {"read_capacity": {"mode": "Dedicated", "dedicated": dedicated(shards=3)["dedicated"]}}),
    ],
)
def test_configure_changes(the_spec, the_index, expected):
    assert configure_changes(the_spec, the_index, OWNED) == expected


@pytest.mark.parametrize(
    "the_spec, the_index, fields",
    [
        (spec(), index(), []),
        (spec(dimension=9), index(), ["dimension"]),
        (spec(metric="euclidean"), index(), ["metric"]),
        (spec(serverless={"cloud": "gcp", "region": "us-east-1"}), index(), ["serverless.cloud"]),
        (spec(serverless={"cloud": "aws", "region": "eu-west-1"}), index(), ["serverless.region"]),
        (pod_spec(), index(), ["deployment type"]),
        (pod_spec(shards=2), pod_index(), ["pod.shards"]),
        (pod_spec(environment="eu-west1-gcp"), pod_index(), ["pod.environment"]),
        (pod_spec(metadataConfig={"indexed": ["a"]}), pod_index(), ["pod.metadataConfig.indexed"]),
        (pod_spec(metadataConfig={"indexed": ["b", "a"]}), pod_index(metadata=("a", "b")), []),
        (pod_spec(), pod_index(metadata=("a",)), ["pod.metadataConfig.indexed"]),
        (pod_spec(metadataConfig={"indexed": []}), pod_index(), []),  # found by the operator fuzz test
        (spec(vectorType="hybrid"), index(fields={"_values": dense(metric="dotproduct")}), ["vectorType"]),
        (spec(vectorType="hybrid"), index(fields={"_values": dense(metric="dotproduct"), "_sparse_values": {"type": "sparse_vector"}}), []),
        (spec(metric="dotproduct"), index(fields={"_values": dense(metric="dotproduct"), "_sparse_values": {"type": "sparse_vector"}}),
         ["vectorType"]),
        (VectorIndexSpec.model_validate({"vectorType": "sparse", "serverless": {"cloud": "aws", "region": "us-east-1"}}),
         index(fields={"_sparse_values": {"type": "sparse_vector", "description": None}}), []),
        (spec(), index(fields={"_sparse_values": {"type": "sparse_vector"}}), ["vectorType", "dimension", "metric"]),
        (VectorIndexSpec.model_validate({"dimension": 8, "byoc": {"environment": "aws-x"}}),
         index(deployment={"deployment_type": "byoc", "environment": "aws-y"}), ["byoc.environment"]),
        (pod_spec(podType="s1.x1"), pod_index(), ["pod.podType family"]),
        (pod_spec(podType="p1.x4", replicas=5), pod_index(), []),
    ],
)
def test_immutable_differences(the_spec, the_index, fields):
    assert [d.split(":")[0] for d in immutable_differences(the_spec, the_index)] == fields


# --- decide ----------------------------------------------------------------------------

DEDICATED_0 = {"mode": "Dedicated", "nodeType": "b1", "replicas": 0, "shards": 1}


def test_a_disabled_index_is_its_own_phase_not_creating():
    """Dedicated read capacity at 0 replicas: Pinecone's Disabled state (2025-10 spec,
    ScalingConfigManual.replicas), not ready and nothing to wait for."""
    disabled = index(state="Disabled", ready=False, read_capacity=dedicated(replicas=0))
    step = decide(spec(readCapacity=DEDICATED_0), WHO, disabled)
    assert step.action == "none" and step.requeue is None
    assert step.ready[:2] == ("False", "Disabled") and step.synced[:2] == ("True", "InSync")
    assert step.state == "Disabled" and step.read_capacity == {"mode": "Dedicated", "nodeType": "b1", "state": "Ready",
                                                               "currentReplicas": 0, "currentShards": 1}
    conditions = next_status(None, 1, step.ready, step.synced)["conditions"]
    assert phase(conditions) == "Disabled"
    # re-enabling it is a configure, shown as Updating until Pinecone has replicas again
    step = decide(spec(readCapacity={**DEDICATED_0, "replicas": 2}), WHO, disabled)
    assert step.action == "configure" and step.request == {"read_capacity": {"mode": "Dedicated", "dedicated": dedicated(2)["dedicated"]}}
    assert step.events[0].message == "configuring index docs: readCapacity Dedicated b1 0x1 -> Dedicated b1 2x1"
    assert phase(next_status(None, 1, step.ready, step.synced)["conditions"]) == "Updating"


@pytest.mark.parametrize("moving", ["Scaling", "Migrating"])
def test_read_capacity_being_applied_is_waited_for_while_serving(moving):
    applying = index(read_capacity=dedicated(replicas=3, state=moving, current=(1, 1)))
    step = decide(spec(readCapacity={"mode": "Dedicated", "nodeType": "b1", "replicas": 3, "shards": 1}), WHO, applying, polls=2)
    assert step.action == "wait" and step.requeue == readiness_delay(2)
    assert step.ready[0] == "True" and step.synced[:2] == ("False", "Configuring")
    assert step.synced[2] == f"Pinecone is applying read capacity to index docs ({moving}: 1 replicas, 1 shards serving)"
    assert step.read_capacity["state"] == moving and step.read_capacity["currentReplicas"] == 1


def test_read_capacity_error_needs_a_person_but_the_index_still_serves():
    broken = index(read_capacity=dedicated(replicas=9, state="Error", error="not enough capacity in region"))
    wanted = spec(readCapacity={"mode": "Dedicated", "nodeType": "b1", "replicas": 9, "shards": 1})
    step = decide(wanted, WHO, broken)
    assert step.action == "refuse" and step.ready[0] == "True"
    assert step.synced[:2] == ("False", "ReadCapacityFailed") and "not enough capacity in region" in step.synced[2]
    assert phase(next_status(None, 1, step.ready, step.synced)["conditions"]) == "Failed"
    # a new spec is sent, not refused
    fixed = decide(spec(readCapacity={"mode": "Dedicated", "nodeType": "b1", "replicas": 2, "shards": 1}), WHO, broken)
    assert fixed.action == "configure"


def test_pod_indexes_report_no_read_capacity():
    step = decide(pod_spec(), WHO, pod_index())
    assert step.action == "none" and step.read_capacity is None


def test_absent_index_is_created_with_ownership_tags():
    step = decide(spec(), WHO, None)
    assert step.action == "create" and step.request.body["tags"] == OWNED
    assert step.ready[1] == "Creating" and step.events[0].reason == "Creating"
    assert step.requeue == readiness_delay(0)


def test_index_deleted_behind_our_back_is_recreated_with_a_warning():
    step = decide(spec(), WHO, None, known_index_name="docs")
    assert step.action == "create" and step.events[0].type == "Warning" and step.events[0].reason == "Recreating"


def test_waiting_for_readiness_backs_off():
    step = decide(spec(), WHO, index(state="Initializing", ready=False), polls=3)
    assert step.action == "wait" and step.ready[0] == "False" and step.requeue == readiness_delay(3)
    assert readiness_delay(0) < readiness_delay(3) <= readiness_delay(100) == 30.0


def test_ready_index_in_sync():
    step = decide(spec(), WHO, index())
    assert step.action == "none" and step.ready[:2] == ("True", "IndexReady")
    assert step.synced[:2] == ("True", "InSync") and step.host == "docs-abc.svc.pinecone.io"
    assert step.requeue is None and step.events == ()


def test_drift_is_repaired_with_one_configure_call():
    step = decide(spec(deletionProtection=True, tags={"team": "a"}), WHO, index())
    assert step.action == "configure"
    assert step.request == {"deletion_protection": "enabled", "tags": {"team": "a"}}
    assert step.ready[0] == "True" and step.synced[:2] == ("False", "Configuring")
    assert "deletion protection enabled" in step.events[0].message


def test_scaling_keeps_ready_but_not_synced():
    step = decide(pod_spec(replicas=2), WHO, pod_index(replicas=2) | {"status": {"ready": True, "state": "ScalingUp"}})
    assert step.action == "wait" and step.ready[0] == "True" and step.synced[1] == "Configuring"


def test_foreign_index_is_not_touched_without_adoption():
    step = decide(spec(), WHO, index(tags={"pinery-cluster": "prod", "pinery-namespace": "other", "pinery-name": "docs"}))
    assert step.action == "refuse" and step.synced[1] == "NotOwned"
    assert "prod/other/docs" in step.synced[2] and step.request == {} and step.requeue is None
    # the refusal announces itself through the condition change, as a Warning, once
    new = next_status({}, 1, step.ready, step.synced)["conditions"]
    assert pass_events(step.events, [], new) == [Event("Warning", "NotOwned", step.synced[2])]
    assert pass_events(step.events, new, new) == []


THEIRS = {"pinery-cluster": "prod", "pinery-namespace": "other", "pinery-name": "docs"}


@pytest.mark.parametrize(
    "tags, says",
    [
        # owned by another VectorIndex: its name, and that this object does not manage it
        (THEIRS, "index named docs already exists and is managed by the VectorIndex prod/other/docs "
                 "(cluster/namespace/name), not by this object; set adoptExisting"),
        # made outside pinery: nobody here manages it
        ({"team": "x"}, "index named docs already exists and is not managed by this object (its tags name no pinery owner)"),
        # only part of the ownership tags: no owner can be named
        ({"pinery-cluster": "prod"}, "already exists and is not managed by this object (its tags name no pinery owner)"),
    ],
)
def test_not_owned_says_who_manages_the_index(tags, says):
    step = decide(spec(), WHO, index(tags=tags))
    assert step.synced[1] == "NotOwned" and says in step.synced[2]
    assert "is not managed by prod/other" not in step.synced[2]
    left = decide_deletion(spec(), WHO, index(tags=tags))
    assert left.action == "release" and left.event.reason == "NotOwned"
    assert says.split("; set")[0].split("already exists and ")[1] in left.event.message


def test_adoption_tags_the_index_when_allowed_and_matching():
    step = decide(spec(adoptExisting=True), WHO, index(tags={"team": "x"}))
    assert step.action == "configure" and step.request["tags"] == {**OWNED, "team": ""}
    assert [e.reason for e in step.events] == ["Adopted", "Configuring"]


def test_adoption_waits_for_readiness_before_tagging():
    step = decide(spec(adoptExisting=True), WHO, index(tags={}, state="Initializing", ready=False))
    assert step.action == "wait" and "adopting" in step.ready[2]


def test_mismatched_index_is_refused_naming_the_differences():
    step = decide(spec(adoptExisting=True, dimension=16), WHO, index(tags={}))
    assert step.action == "refuse" and step.synced[1] == "SpecMismatch"
    assert "dimension: spec wants 16, index has 8" in step.synced[2]
    # not this object's index until it matches: Ready must not send applications to it
    assert step.ready[:2] == ("False", "SpecMismatch") and step.request == {}


def test_immutable_change_after_creation_is_named_so():
    step = decide(spec(metric="dotproduct"), WHO, index(), known_index_name="docs")
    assert step.synced[1] == "ImmutableFieldChanged"


def test_index_name_change_never_creates_a_second_index():
    step = decide(spec(indexName="renamed"), WHO, None, known_index_name="docs")
    assert step.action == "refuse" and step.synced[1] == "ImmutableFieldChanged" and step.request == {}


def test_initialization_failed_is_terminal():
    step = decide(spec(), WHO, index(state="InitializationFailed", ready=False))
    assert step.action == "refuse" and step.ready[:2] == ("False", "InitializationFailed") and step.requeue is None


def test_index_terminating_outside_is_waited_for():
    step = decide(spec(), WHO, index(state="Terminating", ready=False))
    assert step.action == "wait" and step.ready[0] == "False"


# --- deletion --------------------------------------------------------------------------

@pytest.mark.parametrize(
    "the_spec, the_index, action, reason",
    [
        (spec(), None, "release", "Deleted"),
        (spec(deletionPolicy="Retain"), index(), "release", "Retained"),
        (spec(), index(tags={}), "release", "NotOwned"),
        (spec(), index(deletion_protection="enabled"), "release", "DeletionProtected"),
        # protection turned on in the spec, the object deleted before it reached Pinecone
        (spec(deletionProtection=True), index(deletion_protection="disabled"), "release", "DeletionProtected"),
        (spec(), index(state="Terminating", ready=False), "wait", None),
        (spec(), index(), "delete", "Deleting"),
    ],
)
def test_deletion(the_spec, the_index, action, reason):
    step = decide_deletion(the_spec, WHO, the_index)
    assert step.action == action
    assert (step.event.reason if step.event else None) == reason


def test_a_create_without_an_answer_is_waited_for_before_release():
    timing = Timing(poll_first=1.0, create_landing=60.0)
    sent = landing_deadline({"createSentAt": "2026-11-30T12:00:00Z"}, timing)
    assert sent == 1_796_040_000 + 60.0
    early = decide_deletion(spec(), WHO, None, timing=timing, landing_until=sent, now=sent - 50)
    assert early.action == "wait" and early.event.reason == "AwaitingCreate" and early.requeue == 1.0
    assert decide_deletion(spec(), WHO, None, timing=timing, landing_until=sent, now=sent - 0.2).requeue == pytest.approx(0.2)
    # The index landed meanwhile: it is deleted like any other; none came in time: released.
    assert decide_deletion(spec(), WHO, index(), landing_until=sent, now=sent - 50).action == "delete"
    assert decide_deletion(spec(), WHO, None, landing_until=sent, now=sent).action == "release"
    # Nothing to wait for when the index would be kept anyway.
    assert decide_deletion(spec(deletionPolicy="Retain"), WHO, None, landing_until=sent, now=0).action == "release"
    assert decide_deletion(spec(deletionProtection=True), WHO, None, landing_until=sent, now=0).action == "release"
    assert landing_deadline({}) is None and landing_deadline({"createSentAt": "soon"}) is None


@pytest.mark.parametrize("status, unknown", [(None, True), (408, True), (500, True), (503, True),
                                             (400, False), (403, False), (409, False), (429, False)])
def test_which_failures_leave_a_create_in_doubt(status, unknown):
    assert outcome_unknown(PineconeFailure("create_index", status, None, "x")) is unknown


def test_next_status_clears_the_fields_named():
    old = {"createSentAt": "2026-11-30T12:00:00Z", "host": "h"}
    new = next_status(old, 1, ("True", "IndexReady", "ok"), ("True", "InSync", "ok"), cleared=("createSentAt", "state"))
    assert new["createSentAt"] is None and "state" not in new  # only what was there is removed
    assert status_changes(old, new)["createSentAt"] is None


def test_protected_deletion_is_a_warning():
    assert decide_deletion(spec(), WHO, index(deletion_protection="enabled")).event.type == "Warning"


# --- errors and phase ------------------------------------------------------------------

@pytest.mark.parametrize(
    "status, code, reason, terminal",
    [
        (401, "UNAUTHENTICATED", "Unauthorized", True),
        (402, "PAYMENT_REQUIRED", "PaymentRequired", True),
        (403, "QUOTA_EXCEEDED", "QuotaExceeded", True),
        (403, "FORBIDDEN", "Forbidden", True),
        (400, "INVALID_ARGUMENT", "InvalidSpec", True),
        (422, None, "InvalidSpec", True),
        (404, "NOT_FOUND", "InvalidSpec", True),
        (412, "FAILED_PRECONDITION", "FailedPrecondition", False),
        (429, "RESOURCE_EXHAUSTED", "PineconeUnavailable", False),
        (500, None, "PineconeUnavailable", False),
        (503, None, "PineconeUnavailable", False),
        (None, None, "PineconeUnavailable", False),
        (418, None, "PineconeError", False),
    ],
)
def test_classify(status, code, reason, terminal):
    result = classify(PineconeFailure("create_index", status, code, "msg"))
    assert (result.reason, result.terminal) == (reason, terminal)
    assert "create_index" in result.message
    # terminal failures wait for the next resync sweep; the others retry with backoff
    assert result.delay is None if terminal else result.delay > 0


def test_retry_after_is_a_floor_and_backoff_is_capped():
    assert classify(PineconeFailure("x", 429, None, "slow down", retry_after=17)).delay == 17
    assert backoff(0) == 2 and backoff(3) == 16 and backoff(50) == 300
    assert backoff(0, retry_after=1) == 2


def test_redact_removes_secrets():
    assert redact("bad key pcsk_secret123 here", ["pcsk_secret123"]) == "bad key *** here"
    assert redact("abc", ["", "ab"]) == "abc"


@pytest.mark.parametrize(
    "conditions, deleting, expected",
    [
        ([], False, "Pending"),
        ([], True, "Terminating"),
        ([{"type": "Ready", "status": "False", "reason": "Creating"}], False, "Creating"),
        ([{"type": "Ready", "status": "True", "reason": "IndexReady"}, {"type": "Synced", "status": "True", "reason": "InSync"}], False, "Ready"),
        ([{"type": "Ready", "status": "True", "reason": "IndexReady"}, {"type": "Synced", "status": "False", "reason": "Configuring"}], False, "Updating"),
        ([{"type": "Ready", "status": "True", "reason": "IndexReady"}, {"type": "Synced", "status": "False", "reason": "SpecMismatch"}], False, "Failed"),
        ([{"type": "Ready", "status": "False", "reason": "Unauthorized"}], False, "Failed"),
        ([{"type": "Ready", "status": "False", "reason": "PineconeUnavailable"}], False, "Error"),
    ],
)
def test_phase(conditions, deleting, expected):
    assert phase(conditions, deleting) == expected


def test_terminal_failures_keep_pinecones_words_and_no_key():
    result = classify(PineconeFailure("create_index", 403, "FORBIDDEN", "Request failed. You've reached the max indexes allowed"))
    assert result.reason == "QuotaExceeded" and "max indexes" in result.message


def test_retries_use_the_timing_given():
    fast = Timing(retry_first=0.1, retry_max=1.0)
    assert classify(PineconeFailure("x", 503, None, "down"), attempt=2, timing=fast).delay == pytest.approx(0.4)
    assert classify(PineconeFailure("x", 503, None, "down"), attempt=9, timing=fast).delay == 1.0
    assert classify(PineconeFailure("x", 429, None, "slow", retry_after=3), attempt=0, timing=fast).delay == 3
    assert fast.secret_retry(10) == 1.0 and Timing().secret_retry(10) == 60.0


# --- schedule --------------------------------------------------------------------------

def test_readiness_polls_start_fast_and_are_capped():
    t = Timing(poll_first=1.0, poll_max=30.0)
    delays = [t.poll(n) for n in range(12)]
    assert delays[0] == 1.0 and delays == sorted(delays) and delays[-1] == 30.0
    # an index that takes a minute to initialize costs about ten describes, not sixty
    assert sum(1 for total in [sum(delays[: n + 1]) for n in range(12)] if total <= 60) <= 10


def test_sweeps_start_at_the_same_instants_for_every_object():
    a = next_sweep(1000.5, 300, "ns/a")
    b = next_sweep(1199.0, 300, "ns/b")
    assert a[0] == b[0] == 4 and 1200 <= a[1] < 1230 and 1200 <= b[1] < 1230
    assert next_sweep(1000.5, 300, "ns/a") == a  # stable per object
    assert len({next_sweep(0, 300, f"ns/{i}")[1] for i in range(50)}) > 40  # spread out
    assert next_sweep(1200.0, 300, "ns/a")[0] == 5 and current_sweep(1200.0, 300) == 4


# --- accepted spec ---------------------------------------------------------------------

def test_accepted_spec_records_only_immutable_fields():
    record = json.loads(accepted.record(pod_spec(replicas=2, podType="p1.x2"), "docs"))
    assert record["indexName"] == "docs" and record["dimension"] == 8 and record["pod"]["environment"] == "us-east1-gcp"
    assert "tags" not in record and "deletionProtection" not in record and "adoptExisting" not in record


@pytest.mark.parametrize(
    "now, name, changed",
    [
        (pod_spec(replicas=5, podType="p1.x4"), "docs", []),  # mutable fields may change
        (pod_spec(shards=2), "docs", ["pod.shards"]),
        (pod_spec(environment="eu-west1-gcp"), "docs", ["pod.environment"]),
        (pod_spec(), "renamed", ["indexName"]),
        (spec(), "docs", ["serverless", "pod"]),
        (VectorIndexSpec.model_validate({"dimension": 9, "metric": "euclidean", "pod": {"environment": "us-east1-gcp"}}), "docs",
         ["dimension", "metric"]),
    ],
)
def test_changes_to_the_accepted_spec(now, name, changed):
    annotations = {accepted.ANNOTATION: accepted.record(pod_spec(), "docs")}
    assert accepted.changed_fields(annotations, now, name) == changed


def test_no_or_unreadable_record_means_no_verdict():
    assert accepted.changed_fields({}, spec(), "docs") == []
    assert accepted.changed_fields({accepted.ANNOTATION: "{not json"}, spec(), "docs") == []
    assert accepted.changed_fields({accepted.ANNOTATION: "[1]"}, spec(), "docs") == []


def test_immutable_change_is_refused_naming_the_fields():
    step = refuse_immutable_change("docs", ["dimension", "pod.shards"])
    assert step.action == "refuse" and step.request == {}
    assert step.ready[:2] == step.synced[:2] == ("False", "ImmutableFieldChanged")
    assert "spec.dimension, spec.pod.shards cannot change" in step.ready[2] and "index docs keeps" in step.ready[2]


# --- status and events -----------------------------------------------------------------

def test_next_status_keeps_facts_and_transition_times():
    first = next_status({}, 1, ("False", "Creating", "creating"), ("False", "Creating", "creating"),
                        indexName="docs", host=None, type="serverless")
    assert first["phase"] == "Creating" and first["observedGeneration"] == 1 and "host" not in first
    assert [c["observedGeneration"] for c in first["conditions"]] == [1, 1]
    ready = next_status({**first, "host": "h"}, 2, ("True", "IndexReady", "ok"), ("True", "InSync", "ok"))
    assert ready["phase"] == "Ready" and ready.get("host") is None  # facts not given are left to the old status
    assert status_changes({**first, "host": "h"}, ready).keys() == {"conditions", "phase", "observedGeneration"}
    again = next_status({**first, **ready}, 2, ("True", "IndexReady", "ok"), ("True", "InSync", "ok"))
    assert status_changes({**first, **ready}, again) == {}
    # a merge patch merges objects: keys readCapacity lost are sent as null
    dedicated_status = {"mode": "Dedicated", "nodeType": "b1", "state": "Ready", "currentReplicas": 1}
    on_demand = next_status(again, 2, ("True", "IndexReady", "ok"), ("True", "InSync", "ok"), readCapacity={"mode": "OnDemand", "state": "Ready"})
    assert status_changes({**again, "readCapacity": dedicated_status}, on_demand) == {
        "readCapacity": {"mode": "OnDemand", "state": "Ready", "nodeType": None, "currentReplicas": None}}


def test_condition_events_name_each_change_once():
    creating = next_status({}, 1, ("False", "Creating", "creating docs"), ("False", "Creating", "creating docs"))
    assert condition_events([], creating["conditions"]) == [Event("Normal", "Creating", "creating docs")]
    ready = next_status(creating, 1, ("True", "IndexReady", "ready"), ("True", "InSync", "in sync"))
    assert [(e.type, e.reason) for e in condition_events(creating["conditions"], ready["conditions"])] == [
        ("Normal", "IndexReady"), ("Normal", "InSync")]
    failing = next_status(ready, 1, ("True", "IndexReady", "ready"), ("False", "PineconeUnavailable", "down"))
    assert condition_events(ready["conditions"], failing["conditions"]) == [Event("Warning", "PineconeUnavailable", "down")]
    # a new message alone is no state change
    reworded = next_status(failing, 1, ("True", "IndexReady", "ready"), ("False", "PineconeUnavailable", "down again"))
    assert condition_events(failing["conditions"], reworded["conditions"]) == []


def test_an_actions_event_replaces_the_condition_event_of_the_same_reason():
    step = decide(spec(), WHO, None)
    new = next_status({}, 1, step.ready, step.synced)["conditions"]
    assert [(e.type, e.reason) for e in pass_events(step.events, [], new)] == [("Normal", "Creating")]
    step = decide(spec(), WHO, None, known_index_name="docs")
    assert [(e.type, e.reason) for e in pass_events(step.events, [], new)] == [("Warning", "Recreating"), ("Normal", "Creating")]


def test_deletion_names_the_index_the_object_manages():
    step = decide_deletion(spec(indexName="renamed"), WHO, None, index_name="docs")
    assert step.event.message == "index docs is gone"


# --- integrated inference (embed) --------------------------------------------------------

EMBED = {"model": "llama-text-embed-v2", "fieldMap": {"text": "chunk"}}


def embed_spec(**embed):
    return VectorIndexSpec.model_validate({"serverless": {"cloud": "aws", "region": "us-east-1"}, "embed": {**EMBED, **embed}})


def semantic(model="llama-text-embed-v2", metric="cosine", read=None, write=None, name="chunk"):
    """An integrated index as 2026-07 describes it: a semantic_text field named after field_map's
    text entry, without a dimension (v10-2026-07-db-control.md, create_index_for_model)."""
    return index(fields={name: {"type": "semantic_text", "model": model, "metric": metric, "description": None,
                                "read_parameters": read, "write_parameters": write}})


def test_embed_is_created_for_model_with_only_what_the_spec_sets():
    req = create_request(embed_spec(metric="dotproduct", dimension=512, writeParameters={"input_type": "passage"}), "e", OWNED)
    assert req.route == "for-model"
    assert req.body == {"name": "e", "deletion_protection": "disabled", "tags": OWNED, "cloud": "aws", "region": "us-east-1",
                        "embed": {"model": "llama-text-embed-v2", "field_map": {"text": "chunk"}, "metric": "dotproduct",
                                  "dimension": 512, "write_parameters": {"input_type": "passage"}}}
    with_capacity = VectorIndexSpec.model_validate({**embed_spec().to_api(), "readCapacity": {"mode": "OnDemand"}})
    assert create_request(with_capacity, "e", OWNED).body["read_capacity"] == {"mode": "OnDemand"}


@pytest.mark.parametrize(
    "the_spec, the_index, fields",
    [
        (embed_spec(), semantic(), []),
        (embed_spec(dimension=1024), semantic(), []),  # 2026-07 reports no dimension to compare
        (embed_spec(metric="dotproduct"), semantic(), ["embed.metric"]),
        (embed_spec(model="multilingual-e5-large"), semantic(), ["embed.model"]),
        (embed_spec(), semantic(name="text"), ["embed.fieldMap.text"]),
        (embed_spec(), index(), ["embed"]),
        (spec(), semantic(), ["embed"]),
    ],
)
def test_embed_adoption_differences(the_spec, the_index, fields):
    assert [d.split(":")[0] for d in immutable_differences(the_spec, the_index)] == fields


@pytest.mark.parametrize(
    "the_spec, the_index, expected",
    [
        (embed_spec(), semantic(read={"input_type": "query"}), {}),  # parameters the spec leaves out are left alone
        (embed_spec(readParameters={"input_type": "query"}), semantic(read={"input_type": "query"}), {}),
        (embed_spec(readParameters={"input_type": "query", "truncate": "END"}), semantic(read={"input_type": "query"}),
         {"schema": {"fields": {"chunk": {"type": "semantic_text", "read_parameters": {"input_type": "query", "truncate": "END"}}}}}),
        (embed_spec(readParameters={"a": 1}, writeParameters={"b": 2}), semantic(),
         {"schema": {"fields": {"chunk": {"type": "semantic_text", "read_parameters": {"a": 1}, "write_parameters": {"b": 2}}}}}),
    ],
)
def test_embed_parameters_change_in_place(the_spec, the_index, expected):
    assert configure_changes(the_spec, the_index, OWNED) == expected


def test_embed_parameter_change_is_one_configure_with_an_event():
    step = decide(embed_spec(writeParameters={"input_type": "passage"}), WHO, semantic())
    assert step.action == "configure" and step.events[0].message == "configuring index docs: embed writeParameters of field chunk"


@pytest.mark.parametrize(
    "extra, path",
    [
        ({"dimension": 8}, "spec.embed"),
        ({"metric": "cosine"}, "spec.embed"),
        ({"vectorType": "hybrid"}, "spec.vectorType"),
    ],
)
def test_embed_rules(extra, path):
    with pytest.raises(ValueError, match=path.replace(".", r"\.")):
        VectorIndexSpec.model_validate({**embed_spec().to_api(), **extra})
    with pytest.raises(ValueError, match="needs a serverless index"):
        VectorIndexSpec.model_validate({"byoc": {"environment": "aws-x"}, "embed": EMBED})


@pytest.mark.parametrize(
    "the_spec, fields",
    [
        (spec(), {"PINECONE_DENSE_FIELD": "_values"}),
        (spec(vectorType="hybrid"), {"PINECONE_DENSE_FIELD": "_values", "PINECONE_SPARSE_FIELD": "_sparse_values"}),
        (VectorIndexSpec.model_validate({"vectorType": "sparse", "serverless": {"cloud": "aws", "region": "x"}}),
         {"PINECONE_SPARSE_FIELD": "_sparse_values"}),
        (pod_spec(), {"PINECONE_DENSE_FIELD": "_values"}),
    ],
)
def test_connection_fields(the_spec, fields):
    assert connection_fields(the_spec) == {"PINECONE_WRITE_API": "vectors", **fields}
