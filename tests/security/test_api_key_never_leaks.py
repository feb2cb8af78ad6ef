"""The Pinecone API key appears in no log line, Event, status or exception text.

The real operator runs with --verbose (every DEBUG line of Kopf, the SDK and the HTTP libraries
is kept) through the scenarios where a key is most likely to escape: a rejected key, errors whose
text quotes the key back, retries of 5xx answers, a missing Secret, deletion with a rejected key.
Then everything is searched: the operator's and the emulator's log records with their
tracebacks, every Event, every VectorIndex with its status and annotations, every ConfigMap, and
the text of the gateway's exceptions. The secret_scan plugin also searches what pytest captured.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from pinery.api.vectorindex import VectorIndexSpec
from pinery.gateways.pinecone import PineconeCallError, PineconeGateway
from pinery.local.pinecone import EmulatorAdmin
from pinery.vectorindex.desired import create_request
from tests.support.emulator import TEST_API_KEY
from tests.support.operator_harness import put_secret, running_operator
from tests.support.secret_scan import leaks
from tests.support.vectorindex import FAST  # retries in fractions of a second
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

WRONG_KEY = "pclocal-rejected-0000"
KEYS = (TEST_API_KEY, WRONG_KEY)


def vectorindex(name: str, **spec) -> dict:
    return {"apiVersion": "pinery.dev/v1alpha1", "kind": "VectorIndex", "metadata": {"name": name},
            "spec": {"dimension": 8, "serverless": {"cloud": "aws", "region": "us-east-1"}, **spec}}


def ready_reason(op, name: str) -> str | None:
    obj = op.get("VectorIndex", name) or {}
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond["type"] == "Ready":
            return cond["reason"]
    return None


def everything_the_cluster_keeps(plane) -> dict[str, str]:
    paths = {
        "events": "/api/v1/events",
        "events.k8s.io": "/apis/events.k8s.io/v1/events",
        "vectorindexes": "/apis/pinery.dev/v1alpha1/vectorindexes",
        "configmaps": "/api/v1/configmaps",
    }
    return {what: plane.http("GET", path).text for what, path in paths.items()}


def gateway_errors(url: str) -> list[str]:
    """The text of the exceptions the gateway raises, as handlers and logs would show them."""
    async def fail() -> list[str]:
        out = []
        for key in KEYS:
            try:
                await PineconeGateway(url).describe(key, "no-such-index")
                nowhere = VectorIndexSpec.model_validate({"dimension": 8, "serverless": {"cloud": "aws", "region": "mars-1"}})
                await PineconeGateway(url).create(key, create_request(nowhere, "x", {"team": "a"}))
            except PineconeCallError as exc:
                out += [str(exc), repr(exc), exc.failure.message]
        return out

    return asyncio.run(fail())


def test_api_key_is_in_no_log_event_status_or_error(control_plane, make_pinecone_emulator):
    emulator = make_pinecone_emulator()
    admin = EmulatorAdmin(emulator.url)
    with running_operator(control_plane, emulator.url, api_key=TEST_API_KEY, verbose=True, resync_seconds=3600, timing=FAST) as op:
        put_secret(control_plane, "default", "rejected-key", {"api-key": WRONG_KEY})
        op.create(vectorindex("good", connectionConfigMap="good-index"))
        op.create(vectorindex("denied", apiKeySecretRef={"name": "rejected-key"}))
        op.create(vectorindex("no-secret", apiKeySecretRef={"name": "absent"}))
        wait_for(lambda: ready_reason(op, "good") == "IndexReady", timeout=20, what="good Ready")
        wait_for(lambda: ready_reason(op, "denied") == "Unauthorized", timeout=20, what="denied Unauthorized")
        wait_for(lambda: ready_reason(op, "no-secret") == "SecretNotFound", timeout=20, what="no-secret SecretNotFound")

        # Answers that quote the key back (as a proxy or a careless server might).
        admin.add_fault("create_index", status=400, times=1, message=f"bad request from Api-Key {TEST_API_KEY}")
        op.create(vectorindex("echoed"))
        wait_for(lambda: ready_reason(op, "echoed") == "InvalidSpec", timeout=20, what="echoed InvalidSpec")
        admin.add_fault("describe_index", status=503, times=2, retry_after=0, message=f"upstream rejected {TEST_API_KEY}")
        op.create(vectorindex("flaky"))
        wait_for(lambda: ready_reason(op, "flaky") == "IndexReady", timeout=30, what="flaky Ready after 503s")

        # Deletion: one with the right key, one with the rejected key (retried, then given up).
        op.delete("VectorIndex", "good")
        op.delete("VectorIndex", "denied")
        wait_for(lambda: op.get("VectorIndex", "good") is None, timeout=20, what="good deleted")
        wait_for(lambda: op.get("VectorIndex", "denied") is None, timeout=20, what="denied released")
        kept = everything_the_cluster_keeps(control_plane)
        lines = list(op.logs.lines)

    errors = gateway_errors(emulator.url)
    # The scenarios happened: the checks below have something to look at.
    assert any("the API key was rejected" in line for line in lines)
    reasons = {e["reason"] for e in json.loads(kept["events"])["items"]}
    assert {"Unauthorized", "SecretNotFound", "InvalidSpec", "PineconeUnavailable", "Deleted", "IndexLeft"} <= reasons
    assert "***" in kept["vectorindexes"], "the echoed key was neither kept nor masked"
    assert any("Retry" in line or "503" in line for line in lines)
    assert len(lines) > 100, "verbose logging was not captured"

    assert [line for line in lines if leaks(line, KEYS)] == []
    for what, text in kept.items():
        assert leaks(text, KEYS) == [], f"a key is in the cluster's {what}"
    assert [e for e in errors if leaks(e, KEYS)] == [] and len(errors) == 6
