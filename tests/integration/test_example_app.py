"""The example application (examples/app) against the emulator, as a separate process."""

from __future__ import annotations

import functools
import sys

import pytest
from pinecone import ServerlessSpec

from tests.conftest import compat_python
from tests.support.emulator import TEST_API_KEY
from tests.support.example_app import run_app


@pytest.fixture(params=[pytest.param("pinecone-9", marks=pytest.mark.sdk9), "pinecone-10"])
def app_python(request) -> str:
    """The app under the 9.x SDK (API 2025-10: this process's `pinecone`, the 9.1.0 overlay in
    `make test`'s sdk9 run) and under 10.x (API 2026-07, its client venv)."""
    return sys.executable if request.param == "pinecone-9" else str(compat_python(request.param))


def test_app_upserts_and_searches_with_a_filter_and_a_namespace(pinecone_client, pinecone_emulator, app_python):
    run = functools.partial(run_app, python=app_python)
    host = pinecone_client.create_index(name="articles", dimension=64, timeout=5,
                                        spec=ServerlessSpec(cloud="aws", region="us-east-1")).host
    tenant_a = {"PINECONE_API_KEY": TEST_API_KEY, "PINECONE_INDEX_HOST": host, "APP_NAMESPACE": "tenant-a"}
    assert run(tenant_a, "load") == {"upserted": 5, "namespace": "tenant-a"}

    found = run(tenant_a, "search", "vector search", "--category", "search", "--since", "2024")
    assert {m["id"] for m in found["matches"]} == {"doc-1", "doc-5"}
    assert all(m["category"] == "search" and m["year"] >= 2024 for m in found["matches"])
    assert all(isinstance(m["year"], float) for m in found["matches"])  # Pinecone returns numbers as floats
    training = run(tenant_a, "search", "training state", "--category", "training")
    assert training["matches"][0]["id"] == "doc-4"

    # The index can also be found by name through the control plane; another namespace is empty.
    by_name = {"PINECONE_API_KEY": TEST_API_KEY, "PINECONE_CONTROLLER_HOST": pinecone_emulator.url,
               "PINECONE_INDEX_NAME": "articles", "APP_NAMESPACE": "tenant-b"}
    assert run(by_name, "search", "vector search")["matches"] == []
    stats = pinecone_client.Index(host=host).describe_index_stats()
    assert stats.namespaces["tenant-a"].vector_count == 5 and "tenant-b" not in stats.namespaces
