"""State survives restarts: indexes, their hosts, vectors, collections, backups and pending transitions (seen
through the `pinecone` 9.x SDK, API 2025-10)."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time

import pytest
from pinecone import Pinecone, PodSpec, ServerlessSpec

from tests.conftest import REPO_ROOT
from tests.support.emulator import TEST_API_KEY

# The 9.x SDK against API 2025-10: `make test` runs this with the 9.1.0 overlay (compat/overlay.py).
pytestmark = pytest.mark.sdk9


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_restart_keeps_indexes_hosts_vectors_and_snapshots(make_pinecone_emulator, tmp_path):
    port = free_port()
    first = make_pinecone_emulator(port=port, state_dir=tmp_path / "state")
    pc = Pinecone(api_key=TEST_API_KEY, host=first.url)
    model = pc.create_index(name="keep", dimension=3, metric="dotproduct", spec=ServerlessSpec(cloud="aws", region="us-east-1"),
                            tags={"k": "v"}, deletion_protection="enabled", timeout=5)
    idx = pc.Index(host=model.host)
    idx.upsert(vectors=[{"id": "a", "values": [1, 0, 0], "metadata": {"n": 1}},
                        {"id": "b", "values": [0, 1, 0], "sparse_values": {"indices": [2], "values": [0.5]}}],
               namespace="ns")
    pc.create_index(name="pods", dimension=3, spec=PodSpec(environment="us-east-1-aws"), timeout=5)
    pc.create_collection(name="col", source="pods")
    backup = pc.create_backup(index_name="keep", backup_name="b1")
    first.stop_thread()

    second = make_pinecone_emulator(port=port, state_dir=tmp_path / "state")
    pc = Pinecone(api_key=TEST_API_KEY, host=second.url)
    again = pc.describe_index("keep")
    assert again.host == model.host  # the host the operator published stays valid
    assert again.tags == {"k": "v"} and again.deletion_protection == "enabled" and again.status.ready
    idx = pc.Index(host=again.host)
    fetched = idx.fetch(ids=["a", "b"], namespace="ns").vectors
    assert fetched["a"].metadata == {"n": 1} and fetched["b"].sparse_values.indices == [2]
    assert idx.query(vector=[1, 0, 0], top_k=1, namespace="ns").matches[0].id == "a"
    assert [c.name for c in pc.list_collections()] == ["col"]
    assert pc.describe_backup(backup_id=backup.backup_id).name == "b1"


def test_transitions_continue_across_a_restart(make_pinecone_emulator, tmp_path):
    first = make_pinecone_emulator(ready_delay=0.4, state_dir=tmp_path / "state")
    pc = Pinecone(api_key=TEST_API_KEY, host=first.url)
    pc.create_index(name="later", dimension=2, spec=ServerlessSpec(cloud="aws", region="us-east-1"), timeout=-1)
    first.stop_thread()
    time.sleep(0.5)  # the emulator is down while the index's initialization deadline passes
    second = make_pinecone_emulator(ready_delay=0.4, state_dir=tmp_path / "state")
    assert Pinecone(api_key=TEST_API_KEY, host=second.url).describe_index("later").status.state == "Ready"


def test_cli_serves_and_persists_on_sigterm(tmp_path):
    port = free_port()
    command = [sys.executable, "-m", "pinery", "local", "pinecone", "--port", str(port), "--api-key", "cli-key",
               "--state-dir", str(tmp_path / "state"), "--ready-delay", "0"]

    def start() -> subprocess.Popen:
        proc = subprocess.Popen(command, cwd=REPO_ROOT, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        for line in proc.stderr:
            if "serving API versions" in line:
                return proc
            assert time.monotonic() < deadline, "the emulator did not start"
        raise AssertionError(f"the emulator exited with {proc.wait()}")

    proc = start()
    try:
        pc = Pinecone(api_key="cli-key", host=f"http://127.0.0.1:{port}")
        host = pc.create_index(name="cli", dimension=2, spec=ServerlessSpec(cloud="aws", region="us-east-1"),
                               timeout=5).host
        pc.Index(host=host).upsert(vectors=[("v", [0.5, 0.5])])
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    proc = start()
    try:
        pc = Pinecone(api_key="cli-key", host=f"http://127.0.0.1:{port}")
        assert pc.describe_index("cli").host == f"http://127.0.0.1:{port}/index/default/cli"
        assert pc.Index(host=host).fetch(ids=["v"]).vectors["v"].values == [0.5, 0.5]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)


def test_cli_reports_a_busy_port(tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "pinery", "local", "pinecone", "--port", str(port)],
                                cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and f"cannot listen on 127.0.0.1:{port}" in result.stderr
