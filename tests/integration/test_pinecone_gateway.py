"""The operator's Pinecone gateway against the emulator, through the real SDK."""

import asyncio

import pytest

from pinery.api.vectorindex import VectorIndexSpec
from pinery.gateways.pinecone import PineconeCallError, PineconeGateway
from pinery.vectorindex.desired import create_request
from pinery.vectorindex.errors import classify
from pinery.vectorindex.ownership import ownership_tags
from tests.support.emulator import TEST_API_KEY

OWNER = ownership_tags("local", "default", "docs")


def run(coro):
    return asyncio.run(coro)


def spec(**kw):
    return VectorIndexSpec.model_validate({"dimension": 8, "serverless": {"cloud": "aws", "region": "us-east-1"}, **kw})


def test_create_describe_configure_delete(pinecone_emulator):
    calls = []
    gw = PineconeGateway(pinecone_emulator.url, on_call=lambda op, outcome: calls.append((op, outcome)))

    async def scenario():
        assert await gw.describe(TEST_API_KEY, "docs") is None
        created = await gw.create(TEST_API_KEY, create_request(spec(tags={"team": "a"}), "docs", OWNER))
        assert created["name"] == "docs" and created["tags"] == {"team": "a", **OWNER}
        index = await gw.describe(TEST_API_KEY, "docs")
        assert index["deployment"]["cloud"] == "aws" and index["host"].startswith("http://")
        assert index["schema"] == {"fields": {"_values": {"type": "dense_vector", "dimension": 8, "metric": "cosine", "description": None}}}
        await gw.configure(TEST_API_KEY, "docs", {"deletion_protection": "enabled", "tags": {"team": ""}})
        index = await gw.describe(TEST_API_KEY, "docs")
        assert index["deletion_protection"] == "enabled" and "team" not in index["tags"]
        with pytest.raises(PineconeCallError) as info:
            await gw.delete(TEST_API_KEY, "docs")
        assert info.value.failure.status == 403
        await gw.configure(TEST_API_KEY, "docs", {"deletion_protection": "disabled"})
        await gw.delete(TEST_API_KEY, "docs")
        await gw.delete(TEST_API_KEY, "docs")  # already gone: not an error

    run(scenario())
    assert ("create_index", "ok") in calls and ("delete_index", "403") in calls


def test_pod_index_is_created_through_2026_04_and_read_through_2026_07(pinecone_emulator, pinecone_admin):
    """2026-07 refuses to create pod-based indexes; the gateway sends that one call as API
    2026-04 and reads the answer as the 2026-07 describe shows the index."""
    gw = PineconeGateway(pinecone_emulator.url)
    pod = VectorIndexSpec.model_validate({"dimension": 8, "pod": {"environment": "us-east1-gcp", "replicas": 2, "metadataConfig": {"indexed": ["a"]}}})

    async def scenario():
        created = await gw.create(TEST_API_KEY, create_request(pod, "pods", OWNER))
        index = await gw.describe(TEST_API_KEY, "pods")
        assert index["deployment"] == {"deployment_type": "pod", "environment": "us-east1-gcp", "pod_type": "p1.x1", "replicas": 2, "shards": 1}
        assert index["schema"]["fields"]["a"] == {"filterable": True}  # no SDK-internal tag
        for key in ("name", "schema", "deployment", "tags", "deletion_protection"):
            assert created[key] == index[key], key
        await gw.configure(TEST_API_KEY, "pods", {"deployment": {"replicas": 3}})
        assert (await gw.describe(TEST_API_KEY, "pods"))["deployment"]["replicas"] == 3

    run(scenario())
    versions = [(e["operation"], e["apiVersion"]) for e in pinecone_admin.requests()]
    assert ("create_index", "2026-04") in versions, versions
    assert {v for op, v in versions if op != "create_index"} == {"2026-07"}, versions


def test_one_listing_per_sweep_serves_every_index_of_the_key(pinecone_emulator, pinecone_admin):
    gw = PineconeGateway(pinecone_emulator.url)

    def count(op):
        return pinecone_admin.stats()["requests"].get(op, 0)

    async def scenario():
        await gw.create(TEST_API_KEY, create_request(spec(), "a", OWNER))
        await gw.create(TEST_API_KEY, create_request(spec(), "b", OWNER))
        lists, describes = count("list_indexes"), count("describe_index")
        found = await asyncio.gather(*(gw.describe_in_sweep(TEST_API_KEY, n, sweep=7) for n in ("a", "b") * 10))
        assert [f["name"] for f in found[:2]] == ["a", "b"]
        assert (count("list_indexes") - lists, count("describe_index") - describes) == (1, 0)

        # absent from the listing: confirmed with a describe, never assumed gone
        assert await gw.describe_in_sweep(TEST_API_KEY, "c", sweep=7) is None
        assert count("describe_index") - describes == 1
        # changed by the operator since the listing: described afresh
        await gw.configure(TEST_API_KEY, "a", {"tags": {"team": "x"}})
        assert (await gw.describe_in_sweep(TEST_API_KEY, "a", sweep=7))["tags"]["team"] == "x"
        assert count("describe_index") - describes == 2
        # an older sweep reuses the newer listing; the next sweep lists again
        await gw.describe_in_sweep(TEST_API_KEY, "b", sweep=6)
        assert count("list_indexes") - lists == 1
        assert (await gw.describe_in_sweep(TEST_API_KEY, "a", sweep=8))["tags"]["team"] == "x"
        assert count("list_indexes") - lists == 2

    run(scenario())


def test_errors_are_classified_and_never_carry_the_key(pinecone_emulator, pinecone_admin):
    gw = PineconeGateway(pinecone_emulator.url)

    async def failure(call):
        try:
            await call
        except PineconeCallError as exc:
            return exc.failure
        raise AssertionError("no error")

    wrong = run(failure(gw.describe("pcsk_wrong_key_123", "x")))
    assert classify(wrong).reason == "Unauthorized" and "pcsk_wrong_key_123" not in wrong.message
    bad = run(failure(gw.create(TEST_API_KEY, create_request(spec(serverless={"cloud": "aws", "region": "mars-1"}), "bad", OWNER))))
    assert classify(bad).reason == "InvalidSpec"
    pinecone_admin.add_fault("describe_index", status=503, times=5)
    down = run(failure(gw.describe(TEST_API_KEY, "x")))
    assert classify(down).reason == "PineconeUnavailable" and not classify(down).terminal


def test_a_429_is_left_to_the_operator_which_honours_its_retry_after(pinecone_emulator, pinecone_admin):
    """Found by the Pinecone fault suite: the SDK's own retry waits at most 2 s, sooner than a
    longer Retry-After. The gateway does not let it retry a 429: the failure carries the
    Retry-After to the operator's requeue. Other transient failures get one quick SDK retry."""
    gw = PineconeGateway(pinecone_emulator.url)
    pinecone_admin.add_fault("describe_index", status=429, retry_after=4, times=1)
    with pytest.raises(PineconeCallError) as err:
        run(gw.describe(TEST_API_KEY, "throttled"))
    assert (err.value.failure.status, err.value.failure.retry_after) == (429, 4.0)
    assert classify(err.value.failure).delay >= 4.0
    assert [e["status"] for e in pinecone_admin.requests()] == [429]  # no early retry
    pinecone_admin.reset_stats()
    pinecone_admin.add_fault("describe_index", status=503, times=1)
    assert run(gw.describe(TEST_API_KEY, "throttled")) is None
    assert [e["status"] for e in pinecone_admin.requests()] == [503, 404]
