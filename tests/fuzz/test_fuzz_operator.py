"""The real operator on generated objects that the API server accepts: each one is handled to a
stable, honest status, no handler crashes, every child it creates is a valid Kubernetes object,
and every request it sends to Pinecone conforms to the official 2025-10 spec (and is not
refused as invalid by the emulator either).

One operator runs for the module; each example creates a few objects at once, waits until the
operator has settled each, deletes them and waits until they are gone.
"""

from __future__ import annotations

import copy
import itertools
import time

import pytest
from hypothesis import event, example, given
from hypothesis import strategies as st

from pinery.api.vectorindex import INDEX_NAME_MAX, MAX_USER_TAGS
from pinery.fsdpjob.naming import LABEL_JOB, LABEL_ROLE, ROLE_RENDEZVOUS
from pinery.local.pinecone import PineconeEmulator
from tests.conftest import shared_path
from tests.support.budget import share
from tests.support.emulator import TEST_API_KEY
from tests.support.k8s import assert_valid
from tests.support.manifests import MODEL_ONLY_RULES, OPERATOR_TEST_SECRET, fsdpjob_rule, operator_overrides, valid_manifests
from tests.support.operator_harness import put_secret, running_operator
from tests.support.pinecone_openapi import load_spec, openapi, request_problem
from tests.support.vectorindex import FAST
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

SETTLE_SECONDS = 30
# Reasons a VectorIndex keeps while the operator is still working on it.
WORKING = {"Creating", "Pending", "Configuring"}


@pytest.fixture(scope="module")
def spec_api():
    return openapi(load_spec(shared_path("pinecone-api", "2025-10"), "control"))


@pytest.fixture(scope="module")
def emulator(tmp_path_factory):
    emu = PineconeEmulator(
        tmp_path_factory.mktemp("pinecone"), api_key=TEST_API_KEY, ready_delay=0.0, record_exchanges=True
    ).start_in_thread()
    yield emu
    emu.stop_thread()


@pytest.fixture(scope="module")
def operator(control_plane_module, emulator):
    with running_operator(control_plane_module, emulator.url, api_key=TEST_API_KEY, resync_seconds=3600, timing=FAST) as op:
        put_secret(control_plane_module, "default", OPERATOR_TEST_SECRET["name"], {OPERATOR_TEST_SECRET["key"]: TEST_API_KEY})
        yield op
    assert op.runner.exception is None


@st.composite
def model_only_invalid_jobs(draw) -> dict:
    """FSDPJobs the API server accepts but the trainer's rules refuse (see test_fuzz_control_plane)."""
    doc = copy.deepcopy(draw(valid_manifests("FSDPJob", operator_overrides("FSDPJob"))))
    return draw(fsdpjob_rule(doc, MODEL_ONLY_RULES)).doc


objects = st.one_of(
    valid_manifests("VectorIndex", operator_overrides("VectorIndex")),
    valid_manifests("FSDPJob", operator_overrides("FSDPJob")),
    model_only_invalid_jobs(),
)
_numbers = itertools.count()


def renamed(doc: dict) -> dict:
    """A unique name (and index name), so that examples never meet each other's leftovers."""
    name = f"fz{next(_numbers)}-{doc['kind'].lower()}"
    doc = {**doc, "metadata": {"name": name}}
    if doc["kind"] == "VectorIndex" and "indexName" in doc["spec"]:
        doc["spec"] = {**doc["spec"], "indexName": name[:INDEX_NAME_MAX]}
    return doc


def settled(op, doc: dict) -> dict | None:
    obj = op.get(doc["kind"], doc["metadata"]["name"])
    status = (obj or {}).get("status") or {}
    if status.get("observedGeneration") != (obj or {}).get("metadata", {}).get("generation"):
        return None
    conditions = {c["type"]: c for c in status.get("conditions") or []}
    if doc["kind"] == "VectorIndex":
        ready = conditions.get("Ready")
        return obj if ready and (ready["status"] == "True" or ready["reason"] not in WORKING) else None
    if conditions.get("Failed", {}).get("status") == "True" or doc["spec"].get("suspend"):
        return obj if status.get("phase") else None
    if conditions.get("Created", {}).get("reason") == "GangSchedulerMissing":
        # spec.gang names a scheduler whose PodGroup API this API server lacks: no pods until
        # it is installed, and the condition says so
        return obj
    # the nodes only: an elastic job also has its rendezvous store pod (labelled with its role)
    selector = f"{LABEL_JOB}={doc['metadata']['name']},{LABEL_ROLE}!={ROLE_RENDEZVOUS}"
    pods = op.plane.http("GET", "/api/v1/namespaces/default/pods", params={"labelSelector": selector})
    return obj if len(pods.json()["items"]) == doc["spec"]["numNodes"] and status.get("phase") else None


def check_vectorindex(obj: dict) -> None:
    conditions = {c["type"]: c for c in obj["status"]["conditions"]}
    ready = conditions["Ready"]
    assert ready["message"], obj["status"]
    event(f"VectorIndex {obj['status'].get('type')}: Ready {ready['status']} ({ready['reason']})")
    if ready["status"] == "True":
        assert obj["status"]["phase"] == "Ready" and obj["status"]["host"]
    elif (obj["spec"].get("readCapacity") or {}).get("replicas") == 0:
        # 0 dedicated replicas: Pinecone's Disabled state, its own phase, nothing wrong
        assert ready["reason"] == "Disabled" and obj["status"]["phase"] == "Disabled" and obj["status"]["state"] == "Disabled", obj["status"]
    else:
        # Only Pinecone's own judgement of a valid request may refuse it (a region it lacks).
        assert ready["reason"] == "InvalidSpec" and "rejected the request" in ready["message"], obj["status"]


def check_fsdpjob(op, doc: dict, obj: dict) -> None:
    conditions = {c["type"]: c for c in obj["status"]["conditions"]}
    failed = conditions.get("Failed", {})
    event(f"FSDPJob: {obj['status']['phase']}" + (f" ({failed['reason']})" if failed else ""))
    if failed.get("status") == "True":
        assert failed["reason"] == "InvalidSpec" and "spec.trainer" in failed["message"], obj["status"]
        return
    name = doc["metadata"]["name"]
    for kind, plural in (("Pod", "pods"), ("Service", "services"), ("ConfigMap", "configmaps")):
        listing = op.plane.http("GET", f"/api/v1/namespaces/default/{plural}", params={"labelSelector": f"{LABEL_JOB}={name}"})
        for child in listing.json()["items"]:
            assert_valid({"apiVersion": "v1", "kind": kind, **child})


def check_pinecone_requests(emulator, spec_api, since: int) -> int:
    exchanges = emulator.exchanges[since:]
    for ex in exchanges:
        event(f"Pinecone {ex['operation']} -> {ex['status']}")
    # The official spec is 2025-10's, which 2026-04 equals (the version pod-based creates use);
    # no 2026-07 spec is published, so 2026-07 requests are checked by the emulator's own request
    # validation, from the 10.x SDK's closed request models: a 400 or 422 fails below.
    problems = [p for ex in exchanges if _api_version(ex) in ("2025-10", "2026-04") and (p := request_problem(spec_api, ex))]
    refused = [f"{ex['method']} {ex['path']} -> {ex['status']}: {ex['body'][:300]!r} {ex['response'][:300]!r}"
               for ex in exchanges if ex["status"] in (400, 422)]
    assert problems == [] and refused == [], "\n".join(problems + refused)
    return len(emulator.exchanges)


def _api_version(exchange: dict) -> str | None:
    return next((v for k, v in exchange["headers"].items() if k.lower() == "x-pinecone-api-version"), None)


def _manifest(kind: str, spec: dict) -> dict:
    return {"apiVersion": "pinery.dev/v1alpha1", "kind": kind, "metadata": {"name": "x"}, "spec": spec}


# At the limits: as many tags as Pinecone keeps beside the ownership tags; a pod-based index with
# every field; a job with every kind of pod setting a real API server checks.
BOUNDARIES = [
    _manifest("VectorIndex", {"dimension": 8, "serverless": {"cloud": "aws", "region": "us-east-1"},
                              "tags": {f"tag-{i}": f"value {i}" for i in range(MAX_USER_TAGS)}}),
    _manifest("VectorIndex", {"dimension": 20000, "metric": "dotproduct", "deletionPolicy": "Retain",
                              "pod": {"environment": "us-east1-gcp", "podType": "p2.x8", "replicas": 3, "shards": 2, "pods": 6,
                                      "metadataConfig": {"indexed": ["genre", "year"]}}}),
    _manifest("FSDPJob", {"numNodes": 2, "nprocPerNode": 2, "shmSize": "1Gi",
                          "env": [{"name": "LR", "value": "1e-4"}, {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                          "resources": {"limits": {"cpu": 2, "memory": "4Gi", "nvidia.com/gpu": 0}},
                          "podTemplate": {"labels": {"team": "ml", "example.com/tier": "gold"}, "annotations": {"example.com/note": "any text: ok"},
                                          "nodeSelector": {"kubernetes.io/arch": "amd64"}, "schedulerName": "volcano",
                                          "volumes": [{"name": "data", "emptyDir": {}}],
                                          "volumeMounts": [{"name": "data", "mountPath": "/data", "subPath": "run/1"}]}}),
]


@share(0.1)
@example(docs=BOUNDARIES)
@given(st.lists(objects, min_size=1, max_size=4))
def test_operator_settles_every_accepted_object(operator, emulator, spec_api, docs):
    op = operator
    since_log, since_calls = len(op.logs.records), len(emulator.exchanges)
    docs = [renamed(d) for d in docs]
    for doc in docs:
        op.create(doc)
    results = {d["metadata"]["name"]: wait_for(lambda d=d: settled(op, d), timeout=SETTLE_SECONDS, interval=0.2,
                                                what=f"{d['kind']} {d['metadata']['name']} to settle") for d in docs}
    for doc in docs:
        obj = results[doc["metadata"]["name"]]
        if doc["kind"] == "VectorIndex":
            check_vectorindex(obj)
        else:
            check_fsdpjob(op, doc, obj)
    for doc in docs:
        op.delete(doc["kind"], doc["metadata"]["name"])
    for doc in docs:
        wait_for(lambda d=doc: op.get(d["kind"], d["metadata"]["name"]) is None, timeout=SETTLE_SECONDS, interval=0.2,
                 what=f"{doc['kind']} {doc['metadata']['name']} to be deleted")
    time.sleep(0.2)  # a last Pinecone call of a finished handler is recorded
    assert op.crashes(since_log) == []
    check_pinecone_requests(emulator, spec_api, since_calls)
