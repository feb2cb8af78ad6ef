"""examples/app against a VectorIndex made in local mode: the connection ConfigMap the operator
writes and the API key Secret are all the application needs (issue 9's end-to-end test)."""

from __future__ import annotations

import base64
import json

import pytest

from tests.e2e.conftest import example
from tests.support.example_app import APP, run_app

pytestmark = pytest.mark.e2e

def test_the_app_uses_an_index_created_by_the_operator(local_mode):
    kubectl = local_mode.kubectl
    kubectl.apply(example("vectorindex-serverless.yaml", metadata_name="articles",
                          spec_connectionConfigMap="articles-connection"))
    kubectl.wait_for("vectorindex/articles", "Ready", timeout=60)

    connection = kubectl.get("configmap/articles-connection")["data"]
    assert set(connection) == {"PINECONE_INDEX_NAME", "PINECONE_INDEX_HOST", "PINECONE_CONTROLLER_HOST", "PINECONE_WRITE_API", "PINECONE_DENSE_FIELD"}
    assert connection["PINECONE_WRITE_API"] == "vectors"
    assert connection["PINECONE_DENSE_FIELD"] == "_values"
    assert connection["PINECONE_INDEX_HOST"] == kubectl.get("vectorindex/articles")["status"]["host"]
    secret = kubectl.get("secret/pinecone-api-key", namespace="pinery-system")
    api_key = base64.b64decode(secret["data"]["api-key"]).decode()

    env = {**connection, "PINECONE_API_KEY": api_key, "APP_NAMESPACE": "tenant-a"}
    assert run_app(env, "load") == {"upserted": 5, "namespace": "tenant-a"}
    found = run_app(env, "search", "vector search", "--category", "search", "--since", "2024")
    assert {m["id"] for m in found["matches"]} == {"doc-1", "doc-5"}
    assert all(m["category"] == "search" and m["year"] >= 2024 for m in found["matches"])
    # Another namespace of the same index holds nothing.
    assert run_app({**env, "APP_NAMESPACE": "tenant-b"}, "search", "vector search")["matches"] == []

    # The same app as a pod: the ConfigMap through envFrom, the key from a Secret of its namespace.
    kubectl("create", "secret", "generic", "app-pinecone", f"--from-literal=api-key={api_key}")
    kubectl.apply({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "app-search"},
        "spec": {"restartPolicy": "Never", "containers": [{
            "name": "app", "image": "example/app", "command": ["python", str(APP), "search", "metadata filters", "--since", "2025"],
            "envFrom": [{"configMapRef": {"name": "articles-connection"}}],
            "env": [{"name": "PINECONE_API_KEY", "valueFrom": {"secretKeyRef": {"name": "app-pinecone", "key": "api-key"}}},
                    {"name": "APP_NAMESPACE", "value": "tenant-a"}],
        }]},
    })
    kubectl("wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/app-search", "--timeout=60s")
    from_pod = json.loads(kubectl("logs", "app-search").stdout)
    assert [m["id"] for m in from_pod["matches"]] == ["doc-5"]
