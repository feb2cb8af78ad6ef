"""Local mode end to end: `pinery run` as its own process against the local control plane and the
Pinecone emulator, driven by kubectl with the example manifest, as a user would."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from pinery.local.cluster import LocalCluster
from tests.conftest import REPO_ROOT

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

EXAMPLE = REPO_ROOT / "examples" / "vectorindex-serverless.yaml"


@pytest.fixture
def local_mode(tmp_path: Path):
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not installed")
    cluster = LocalCluster(tmp_path / "local", with_pod_runner=False, pinecone_ready_delay=1.0)
    cluster.start_in_thread()
    yield cluster
    cluster.stop_thread()


def test_example_index_becomes_ready_with_a_host(local_mode: LocalCluster, tmp_path: Path):
    env = {**os.environ, "KUBECONFIG": str(local_mode.kubeconfig), "HOME": str(tmp_path)}

    def kubectl(*args: str) -> str:
        done = subprocess.run(["kubectl", *args], capture_output=True, text=True, env=env, timeout=90)
        assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stdout}\n{done.stderr}"
        return done.stdout

    kubectl("apply", "-f", str(EXAMPLE))
    kubectl("wait", "--for=condition=Ready", "vi/docs-search", "--timeout=60s")
    obj = json.loads(kubectl("get", "vi", "docs-search", "-o", "json"))
    host = obj["status"]["host"]
    assert host.startswith(local_mode.pinecone_url) and obj["status"]["phase"] == "Ready"
    data = json.loads(kubectl("get", "configmap", "docs-search-connection", "-o", "json"))["data"]
    assert data["PINECONE_INDEX_HOST"] == host and data["PINECONE_INDEX_NAME"] == "docs-search"

    # the data plane at that host answers the SDK with the local key, as an application's would
    from pinecone import Pinecone

    pc = Pinecone(api_key=local_mode.state.api_key, host=local_mode.pinecone_url)
    try:
        index = pc.Index(host=host)
        index.upsert(vectors=[("a", [0.1] * 384)])
        assert pc.describe_index("docs-search").tags["team"] == "search"
    finally:
        pc.close()

    kubectl("delete", "-f", str(EXAMPLE), "--timeout=60s")
    assert "docs-search" not in kubectl("get", "vi", "-o", "name")
