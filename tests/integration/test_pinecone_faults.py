"""Fault injection through the admin endpoint, observed through the real SDK's behaviour."""

from __future__ import annotations

import time

import pytest
from pinecone import Pinecone, RetryConfig, ServerlessSpec
from pinecone.errors.exceptions import (
    PineconeConnectionError,
    PineconeTimeoutError,
    RateLimitError,
    ServiceError,
)

from pinery.local.pinecone.admin_client import AdminError
from tests.support.emulator import TEST_API_KEY

FAST_RETRIES = RetryConfig(backoff_factor=0.01, max_wait=0.05)


@pytest.fixture
def fast_client(pinecone_emulator):
    """An SDK client whose backoff is short (retries without Retry-After otherwise wait up to seconds)."""
    client = Pinecone(api_key=TEST_API_KEY, host=pinecone_emulator.url, retry_config=FAST_RETRIES)
    yield client
    client.close()


def test_429_retry_after_is_honoured_by_the_sdk(pinecone_client, pinecone_admin):
    pinecone_admin.add_fault("list_indexes", status=429, retry_after=1, times=1)
    started = time.monotonic()
    assert pinecone_client.list_indexes().names() == []
    # The SDK's own backoff would wait 0.25-0.75 s; waiting at least a second shows it read Retry-After.
    assert time.monotonic() - started >= 1.0
    stats = pinecone_admin.stats()
    assert stats["requests"]["list_indexes"] == 2
    assert stats["responses"]["list_indexes"] == {"429": 1, "200": 1}


def test_the_request_log_shows_when_a_client_came_back_after_a_429(pinecone_client, pinecone_admin):
    pinecone_admin.add_fault("create_index", status=429, retry_after=0.5, times=1)
    pinecone_client.create_index(name="logged", dimension=4, spec=ServerlessSpec(cloud="aws", region="us-east-1"), timeout=-1)
    pinecone_client.describe_index("logged")
    log = pinecone_admin.requests()
    assert [(e["operation"], e["index"], e["status"], e["retryAfter"]) for e in log] == [
        ("create_index", "logged", 429, 0.5), ("create_index", "logged", 201, None), ("describe_index", "logged", 200, None)]
    assert log[1]["arrived"] - log[0]["answered"] >= 0.5  # the SDK waited out Retry-After
    assert all(e["arrived"] <= e["answered"] for e in log)
    assert [e["index"] for e in pinecone_admin.requests(since=log[1]["seq"])] == ["logged"]
    pinecone_admin.reset_stats()
    assert pinecone_admin.requests() == []


def test_persistent_429_surfaces_as_rate_limit_error_with_retry_after(pinecone_client, pinecone_admin):
    pinecone_admin.add_fault("describe_index", status=429, retry_after=0.05)
    with pytest.raises(RateLimitError) as err:
        pinecone_client.describe_index("any")
    assert err.value.retry_after == pytest.approx(0.05)
    assert err.value.body == {"status": 429, "error": {"code": "RESOURCE_EXHAUSTED",
                                                       "message": "Too many requests. Please retry shortly."}}
    assert pinecone_admin.stats()["requests"]["describe_index"] == 4  # one try and three retries


def test_5xx_is_retried_then_raised(fast_client, pinecone_admin):
    pinecone_client = fast_client
    pinecone_admin.add_fault("list_indexes", status=503, times=2)
    assert pinecone_client.list_indexes().names() == []
    pinecone_admin.set_faults([{"operation": "*", "status": 500}])
    with pytest.raises(ServiceError) as err:
        pinecone_client.list_collections()
    assert err.value.status_code == 500


def test_slow_responses_time_out_and_recover(pinecone_emulator, pinecone_admin):
    pc = Pinecone(api_key=TEST_API_KEY, host=pinecone_emulator.url, timeout=0.3, retry_config=FAST_RETRIES)
    pinecone_admin.add_fault("list_indexes", kind="delay", seconds=1.0, times=1)
    assert pc.list_indexes().names() == []  # the first try timed out, the retry was fast
    assert pinecone_admin.stats()["requests"]["list_indexes"] == 2
    pinecone_admin.add_fault("list_indexes", kind="delay", seconds=1.0)
    with pytest.raises(PineconeTimeoutError):
        pc.list_indexes()


def test_dropped_connections(fast_client, pinecone_admin):
    pinecone_client = fast_client
    pinecone_admin.add_fault("list_indexes", kind="drop", times=1)
    assert pinecone_client.list_indexes().names() == []
    pinecone_admin.add_fault("list_indexes", kind="drop")
    with pytest.raises(PineconeConnectionError):
        pinecone_client.list_indexes()
    assert pinecone_admin.stats()["injected"]["list_indexes drop:drop"] == 5


def test_rate_based_faults_on_the_data_plane_use_its_error_shape(fast_client, pinecone_admin):
    pinecone_client = fast_client
    host = pinecone_client.create_index(name="f", dimension=2, timeout=5,
                                        spec=ServerlessSpec(cloud="aws", region="us-east-1")).host
    idx = pinecone_client.Index(host=host)
    pinecone_admin.set_faults([{"operation": "queryVectors", "status": 429, "rate": 1.0, "retry_after": 0}], seed=3)
    with pytest.raises(RateLimitError) as err:
        idx.query(vector=[1, 0], top_k=1)
    assert err.value.body["code"] == 8 and "message" in err.value.body
    pinecone_admin.clear_faults()
    pinecone_admin.set_faults([{"operation": "queryVectors", "status": 503, "rate": 0.5, "retry_after": 0}], seed=3)
    outcomes = []
    for _ in range(30):
        try:
            idx.query(vector=[1, 0], top_k=1)
            outcomes.append("ok")
        except ServiceError:
            outcomes.append("failed")
    responses = pinecone_admin.stats()["responses"]["queryVectors"]
    assert 0 < responses["503"] and 0 < responses["200"]  # about half of the tries fail, and retries recover most
    assert outcomes.count("ok") > outcomes.count("failed")


def test_admin_rejects_bad_rules_and_settings(pinecone_admin):
    with pytest.raises(AdminError, match="fault kind"):
        pinecone_admin.add_fault(kind="explode")
    with pytest.raises(AdminError, match="rate"):
        pinecone_admin.add_fault(rate=2)
    with pytest.raises(AdminError, match="unknown setting"):
        pinecone_admin.configure(ready_dely=1)
    assert pinecone_admin.configure(index_quota=3)["index_quota"] == 3
