"""The VectorIndex operator when things go wrong: each error class becomes a condition and an
Event (never a crash loop), retries honour Retry-After, faults at a 20% rate still converge,
and the API key never shows up in logs, Events, status or error text."""

from __future__ import annotations

import base64
import json
import time

import pytest

from pinery.api.base import GROUP, VERSION
from tests.support.vectorindex import (
    API_KEY,
    NS,
    PLURAL,
    RESYNC,
    World,
    over_sweeps,
    settle,
    sweep_gap,
)
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

WRONG_KEY = "pcsk_wrong_0123456789abcdef"


def warnings_of(w: World, name: str) -> dict[str, str]:
    return {r: m for t, r, m in w.events(name) if t == "Warning"}


# --- errors that need a person: conditions, Events, phase Failed, and a quiet operator -----

def test_wrong_api_key_is_unauthorized_until_the_secret_is_fixed(vi_world: World):
    w = vi_world
    w.put_secret("wrong-key", NS, WRONG_KEY)
    w.create("unauthorized", apiKeySecretRef={"name": "wrong-key", "key": "api-key"})
    cond = w.wait_condition("unauthorized", "Ready", "False", "Unauthorized")
    assert "API key was rejected" in cond["message"] and w.status("unauthorized")["phase"] == "Failed"
    assert w.condition("unauthorized", "Synced")["reason"] == "Unauthorized"
    assert "Unauthorized" in w.wait_event("unauthorized", "Unauthorized", "Warning")[1]
    # the readiness gauge says so, whatever Pinecone state the index has (none here)
    not_ready = f'pinery_vectorindex_ready{{namespace="{NS}",vectorindex="unauthorized"}} 0.0'
    wait_for(lambda: not_ready in w.operator.metrics(), timeout=30, what="the object's readiness gauge at 0")
    # no crash loop: a terminal failure waits for the next sweep (one listing per sweep)
    calls = over_sweeps(w, 2, "describe_index", "create_index")
    assert calls == {"describe_index": 0, "create_index": 0}, calls
    assert len([r for _, r, _ in w.events("unauthorized") if r == "Unauthorized"]) == 1

    w.put_secret("wrong-key", NS, API_KEY)  # fixed: picked up by the next sweep
    w.wait_ready("unauthorized", timeout=3 * RESYNC + 5)
    assert ("Normal", "IndexReady") in {(t, r) for t, r, _ in w.events("unauthorized")}


def test_missing_secret_then_the_secret_appears(vi_world: World, no_faults):
    w = vi_world
    count = w.counting("create_index", "describe_index")
    w.create("keyless", apiKeySecretRef={"name": "late-secret", "key": "token"})
    cond = w.wait_condition("keyless", "Ready", "False", "SecretNotFound")
    assert f"Secret {NS}/late-secret with key 'token'" in cond["message"]
    w.wait_event("keyless", "SecretNotFound", "Warning")
    assert count() == {"create_index": 0, "describe_index": 0}  # nothing sent to Pinecone without a key
    w.put_secret("late-secret", NS, API_KEY, key="token")
    w.wait_ready("keyless", timeout=5)  # retried with backoff, not only at the next sweep
    assert count()["create_index"] == 1


def test_quota_exceeded_until_the_quota_is_raised(vi_world: World, no_faults):
    w = vi_world
    pc = w.pinecone()
    try:
        existing = len(pc.list_indexes())
    finally:
        pc.close()
    w.admin.configure(index_quota=existing)
    w.create("over-quota")
    cond = w.wait_condition("over-quota", "Ready", "False", "QuotaExceeded")
    assert "quota" in cond["message"] and "max indexes" in cond["message"]
    assert w.status("over-quota")["phase"] == "Failed"
    w.wait_event("over-quota", "QuotaExceeded", "Warning")
    w.admin.configure(index_quota=existing + 1)
    w.wait_ready("over-quota", timeout=3 * RESYNC + 5)


def test_payment_required(vi_world: World, no_faults):
    w = vi_world
    w.admin.add_fault("create_index", status=402)
    w.create("unpaid")
    cond = w.wait_condition("unpaid", "Ready", "False", "PaymentRequired")
    assert "account needs attention" in cond["message"] and "past due invoices" in cond["message"]
    w.wait_event("unpaid", "PaymentRequired", "Warning")
    assert w.index("unpaid") is None
    w.admin.clear_faults()
    w.wait_ready("unpaid", timeout=3 * RESYNC + 5)


def test_invalid_spec_carries_pinecones_message(vi_world: World):
    w = vi_world
    w.create("nowhere", serverless={"cloud": "aws", "region": "mars-1"})
    cond = w.wait_condition("nowhere", "Ready", "False", "InvalidSpec")
    assert "region: mars-1 not found" in cond["message"]
    w.wait_event("nowhere", "InvalidSpec", "Warning")
    w.delete("nowhere")  # its retries at each sweep would count in the tests below
    w.wait_gone("nowhere")

    # a change Pinecone refuses (pod size down): Ready turns False with Pinecone's reason, so that
    # whatever waits on Ready (kubectl wait, GitOps health) does not pass with the change refused
    w.create("shrinking", pod={"environment": "us-east1-gcp", "podType": "p1.x2"})
    w.wait_ready("shrinking")
    sweep_gap()  # no resync sweep during the next second
    count = w.counting("configure_index")
    w.patch_spec("shrinking", {"pod": {"podType": "p1.x1"}})
    cond = w.wait_condition("shrinking", "Ready", "False", "InvalidSpec")
    assert "Cannot scale down the pod size" in cond["message"]
    assert w.condition("shrinking", "Synced")["reason"] == "InvalidSpec" and w.status("shrinking")["phase"] == "Failed"
    assert w.index("shrinking")["status"]["ready"]  # the index itself goes on serving
    settle(0.3)
    assert count()["configure_index"] == 1  # terminal: not retried before the spec changes or a sweep
    w.update("shrinking", {"pod": {"podType": "p1.x4"}})
    assert w.index("shrinking")["deployment"]["pod_type"] == "p1.x4"


def test_initialization_failed_is_terminal(vi_world: World, no_faults):
    w = vi_world
    w.admin.configure(fail_initialization=["doomed"])
    w.create("doomed")
    cond = w.wait_condition("doomed", "Ready", "False", "InitializationFailed")
    assert "could not initialize" in cond["message"] and w.status("doomed")["phase"] == "Failed"
    assert w.status("doomed")["state"] == "InitializationFailed"
    w.wait_event("doomed", "InitializationFailed", "Warning")
    calls = over_sweeps(w, 1, "describe_index", "create_index", "delete_index")
    assert calls == {"describe_index": 0, "create_index": 0, "delete_index": 0}, calls
    # deleting the object deletes the failed index with it
    w.delete("doomed")
    w.wait_gone("doomed")
    assert w.index("doomed") is None


# --- Pinecone unavailable: retried with backoff, Retry-After honoured --------------------

def test_rate_limits_are_retried_honouring_retry_after(vi_world: World, no_faults):
    w = vi_world
    # The SDK does not retry a 429 (it would wait less than a long Retry-After): one 429 makes
    # one failed pass, and the operator's retry waits out Retry-After.
    w.admin.add_fault("create_index", status=429, retry_after=1.5, times=1)
    count = w.counting("create_index")
    w.create("throttled")
    cond = w.wait_condition("throttled", "Ready", "False", "PineconeUnavailable", timeout=10)
    assert "HTTP 429" in cond["message"] and w.status("throttled")["phase"] == "Error"
    failed_at = time.monotonic()
    assert count()["create_index"] == 1
    wait_for(lambda: count()["create_index"] == 2, timeout=10, what="the retry")
    assert time.monotonic() - failed_at >= 1.2  # not before Retry-After (minus polling slack)
    w.wait_ready("throttled")
    assert "HTTP 429" in warnings_of(w, "throttled")["PineconeUnavailable"]


def test_server_errors_are_retried(vi_world: World, no_faults):
    w = vi_world
    w.create("flaky")
    w.wait_ready("flaky")
    # three failed passes (the SDK retries each once): the condition shows it for 0.7 s (FAST)
    w.admin.add_fault("configure_index", status=503, times=6)
    w.patch_spec("flaky", {"tags": {"team": "x"}})
    cond = w.wait_condition("flaky", "Synced", "False", "PineconeUnavailable", timeout=10)
    assert "HTTP 503" in cond["message"]
    assert w.condition("flaky", "Ready")["status"] == "True"  # it still serves
    w.wait_condition("flaky", "Synced", "True", "InSync", timeout=10)
    assert w.index("flaky")["tags"]["team"] == "x"
    assert 'pinery_pinecone_calls_total{operation="configure_index",outcome="503"} 3.0' in w.operator.metrics()


def test_timeouts_and_dropped_connections_are_retried_without_a_second_index(vi_world: World, no_faults):
    w = vi_world
    # slower than the SDK's timeout, twice (the SDK retries once itself): the pass fails
    # One failed pass each, retried after 0.1 s (FAST): the condition says so only that long, so
    # the failure is read from its Warning Event, which stays.
    w.admin.add_fault("describe_index", kind="delay", seconds=1.5, times=2)
    w.create("slow")
    w.wait_ready("slow", timeout=15)
    assert "describe_index failed (no response)" in wait_for(lambda: warnings_of(w, "slow").get("PineconeUnavailable"), timeout=10, interval=0.2)
    w.admin.add_fault("create_index", kind="drop", times=2)
    w.create("dropped")
    w.wait_ready("dropped", timeout=15)
    assert "create_index failed (no response)" in wait_for(lambda: warnings_of(w, "dropped").get("PineconeUnavailable"), timeout=10, interval=0.2)
    pc = w.pinecone()
    try:
        names = [i.name for i in pc.list_indexes()]
    finally:
        pc.close()
    assert names.count("slow") == 1 and names.count("dropped") == 1
    assert w.index("dropped")["tags"]["pinery-name"] == "dropped"
    assert len(warnings_of(w, "slow")) == len(warnings_of(w, "dropped")) == 1  # one Warning, not one per retry


def test_faults_at_a_twenty_percent_rate_every_object_converges(vi_world: World, no_faults):
    w = vi_world
    rules = [
        {"operation": "*", "kind": "status", "status": 429, "retry_after": 0.2, "rate": 0.06},
        {"operation": "*", "kind": "status", "status": 503, "rate": 0.06},
        {"operation": "*", "kind": "delay", "seconds": 0.3, "rate": 0.06},
        {"operation": "*", "kind": "drop", "rate": 0.06},
    ]
    w.admin.set_faults(rules, seed=4)
    names = [f"storm-{i}" for i in range(6)]
    for i, name in enumerate(names):
        spec = {"pod": {"environment": "us-east1-gcp"}} if i == 0 else {}
        w.create(name, tags={"n": str(i)}, **spec)
    for name in names:
        w.wait_ready(name, timeout=60)
    for i, name in enumerate(names[:3]):
        w.update(name, {"tags": {"n": f"changed-{i}"}})
    for name in names:
        w.delete(name)
    for name in names:
        w.wait_gone(name, timeout=60)
    stats = w.admin.stats()
    assert sum(stats["injected"].values()) >= 5, stats["injected"]
    w.admin.clear_faults()
    pc = w.pinecone()
    try:
        left = [i.name for i in pc.list_indexes() if i.name.startswith("storm-")]
    finally:
        pc.close()
    assert left == []


# --- secrets ------------------------------------------------------------------------------

def test_the_api_key_never_appears_in_logs_events_status_or_errors(vi_world: World):
    """Runs last: every scenario above, the failing ones included, went through these logs."""
    w = vi_world
    secrets = [API_KEY, WRONG_KEY]
    secrets += [base64.b64encode(s.encode()).decode() for s in secrets]
    logs = w.operator.logs.text()
    assert "API key was rejected" in logs  # the failures were logged...
    # ...as the operator's own warnings: no handler failures, retries or crash loops in Kopf's log
    for noise in ("failed temporarily", "failed with an exception", "Traceback"):
        assert noise not in logs, noise
    events = w.plane.core_v1().list_event_for_all_namespaces().items
    event_text = "\n".join(f"{e.reason} {e.message}" for e in events)
    assert "PineconeUnavailable" in event_text
    statuses = json.dumps(w.api.list_cluster_custom_object(GROUP, VERSION, PLURAL))
    for secret in secrets:
        assert secret not in logs, f"a key is in the operator's log output: {secret[:6]}..."
        assert secret not in event_text and secret not in statuses
