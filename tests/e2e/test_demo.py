"""`make demo` as users run it: `python -m pinery.local.demo`, start to clean shutdown."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT
from tests.support.kubectl import kubectl_binary
from tests.support.ports import free_port

pytestmark = pytest.mark.e2e


def test_the_demo_creates_an_index_trains_a_job_and_stops_cleanly():
    kubectl_binary()
    result = subprocess.run([sys.executable, "-m", "pinery.local.demo", "--master-port", str(free_port()), "--timeout", "120"],
                            capture_output=True, text=True, cwd=REPO_ROOT, timeout=300)
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    lines = [line.strip() for line in out.splitlines()]
    assert [line.split("]")[0] for line in lines if line.startswith("[")] == ["[1/5", "[2/5", "[3/5", "[4/5", "[5/5"]
    assert "vectorindex.pinery.dev/docs-search created" in lines
    assert any(line.endswith("phase Ready, Pinecone state Ready") for line in lines)
    assert any(line.startswith("host http://127.0.0.1:") and line.endswith("/index/default/docs-search") for line in lines)
    assert any("PINECONE_INDEX_HOST=http://127.0.0.1:" in line for line in lines)
    # Training progress, as rank 0 printed it and as the operator put it in the status.
    steps = [line.split("rank 0: step ")[1].split("/")[0] for line in lines if "rank 0: step " in line]
    assert steps == ["5", "10", "15", "20"]
    assert any(line.endswith("phase Succeeded, status.progress step 20/20") for line in lines)
    # kubectl get pinery: both resources with their columns.
    table = out[out.index("[4/5]"):out.index("[5/5]")]
    index_row = next(line.split() for line in table.splitlines() if "vectorindex.pinery.dev/docs-search" in line)
    job_row = next(line.split() for line in table.splitlines() if "fsdpjob.pinery.dev/tiny-fsdp" in line)
    assert index_row[1:4] == ["docs-search", "serverless", "Ready"]
    assert job_row[1:6] == ["2", "2", "Succeeded", "0", "20"]
    assert "stopped: no operator, no pod processes, no listening ports left" in lines
