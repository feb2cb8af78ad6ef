"""The example application (examples/app) against the emulator, as a separate process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from pinecone import ServerlessSpec

from tests.conftest import REPO_ROOT
from tests.integration.conftest_pinecone import TEST_API_KEY

APP = REPO_ROOT / "examples" / "app" / "app.py"


def run_app(env: dict[str, str], *args: str) -> dict:
    result = subprocess.run([sys.executable, str(APP), *args], env={**os.environ, **env},
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_app_upserts_and_searches_with_a_filter_and_a_namespace(pinecone_client, pinecone_emulator):
    host = pinecone_client.create_index(name="articles", dimension=64, timeout=5,
                                        spec=ServerlessSpec(cloud="aws", region="us-east-1")).host
    tenant_a = {"PINECONE_API_KEY": TEST_API_KEY, "PINECONE_INDEX_HOST": host, "APP_NAMESPACE": "tenant-a"}
    assert run_app(tenant_a, "load") == {"upserted": 5, "namespace": "tenant-a"}

    found = run_app(tenant_a, "search", "vector search", "--category", "search", "--since", "2024")
    assert {m["id"] for m in found["matches"]} == {"doc-1", "doc-5"}
    assert all(m["category"] == "search" and m["year"] >= 2024 for m in found["matches"])
    training = run_app(tenant_a, "search", "training state", "--category", "training")
    assert training["matches"][0]["id"] == "doc-4"

    # The index can also be found by name through the control plane; another namespace is empty.
    by_name = {"PINECONE_API_KEY": TEST_API_KEY, "PINECONE_CONTROLLER_HOST": pinecone_emulator.url,
               "PINECONE_INDEX_NAME": "articles", "APP_NAMESPACE": "tenant-b"}
    assert run_app(by_name, "search", "vector search")["matches"] == []
    stats = pinecone_client.Index(host=host).describe_index_stats()
    assert stats.namespaces["tenant-a"].vector_count == 5 and "tenant-b" not in stats.namespaces
