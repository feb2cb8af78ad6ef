"""The operator benchmarks still run: each script in a tiny mode (a few objects), and the JSON
it writes has what docs/performance.md reports. Numbers are not judged here (see benchmarks/).
The ones that start pinery and the floor as processes several times are `long` (`make
test-long`): what they measure is tested as behaviour elsewhere (the FSDPJob steady state in
test_fsdpjob_steady_state.py, memory's parts in tests/unit)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.slow


def run_benchmark(script: str, out: Path, *args: str) -> dict:
    result = subprocess.run(
        [sys.executable, str(REPO_ROOT / "benchmarks" / script), "--out", str(out), *args],
        capture_output=True, text=True, timeout=180, cwd=REPO_ROOT,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert f"written to {out}" in result.stdout
    return json.loads(out.read_text())


@pytest.mark.long
def test_fsdpjob_convergence(tmp_path):
    results = run_benchmark("fsdpjob_convergence.py", tmp_path / "fj.json", "--single", "1", "--burst", "3", "--timeout", "60")
    assert results["minimum_requests_per_job"] == 5  # 2 pods, the Service, the ConfigMap, one status write
    for operator in ("pinery", "floor"):
        r = results[operator]
        assert r["single"]["jobs"] == 1 and set(r["single"]["create_to_children"]) == {"p50_ms", "p95_ms", "max_ms"}
        burst = r["burst"]
        assert burst["jobs"] == 3 and burst["jobs_per_second"] > 0 and burst["create_to_children"]["p95_ms"] > 0
        assert burst["requests_by_kind_per_job"]["create pods"] == 2.0
        assert burst["requests_per_job"] >= results["minimum_requests_per_job"]
        assert r["idle_rss_mb"] > 0 and r["rss_mb_after_burst"] > 0
    assert results["floor"]["burst"]["requests_by_kind_per_job"]["patch fsdpjobs/status"] == 1.0


@pytest.mark.long
def test_fsdpjob_steady_state(tmp_path):
    results = run_benchmark("fsdpjob_steady_state.py", tmp_path / "steady.json", "--jobs", "2", "--progress", "2",
                            "--window", "6", "--timeout", "60")
    assert results["floor_requests_per_job_per_minute"] == 60.0  # a log read and a status write every 2 s
    for operator in ("pinery", "floor"):
        running = results[operator]["running"]["requests_by_kind_per_job_per_minute"]
        assert running.get("get pods/log", 0) > 0, running
        assert set(running) <= {"get pods/log", "patch fsdpjobs/status"}, running  # nothing but progress
    assert results["pinery"]["finished"]["requests_per_job_per_minute"] == 0.0
    assert results["pinery"]["passes_ended_when_settled"] == 2


def test_vectorindex_convergence(tmp_path):
    results = run_benchmark("vectorindex_convergence.py", tmp_path / "vi.json", "--single", "1", "--burst", "3",
                            "--ready-delay", "0.5", "--resync", "4", "--timeout", "60")
    assert results["floor"] == {"latency_ms": 500.0, "pinecone_calls": 3, "describes_after_create": 1, "least_pinecone_calls": 3}
    r = results["pinery"]
    for phase in ("single", "burst"):
        assert r[phase]["pinecone_calls"]["create_index"] == r[phase]["indexes"]
        assert set(r[phase]["ready_latency"]) == {"p50_ms", "p95_ms", "max_ms"} and r[phase]["pinecone_calls_per_index"] >= 2
    sweep = r["sweep"]
    assert sweep["objects"] == 4 and sweep["list_indexes"] == 1 and sweep["describes"] == 0
    assert sweep["requests_by_kind"]["get vectorindexes"] == 4 and sweep["seconds"] > 0


@pytest.mark.long
def test_operator_memory(tmp_path):
    results = run_benchmark("operator_memory.py", tmp_path / "mem.json", "--indexes", "3", "--jobs", "3", "--warmup", "1", "--hold", "1",
                            "--every", "0.5", "--restart-hold", "0", "--timeout", "180")
    for operator in ("pinery", "floor"):
        r = results[operator]
        assert r["objects"] == 6
        assert 0 < r["idle_rss_mb"] <= r["peak_rss_mb"] and r["rss_mb_after_hold"] > 0
        # RSS sampled through the warm-up and the hold (every 0.5 s, less often on a loaded machine)
        times = [t for t, _ in r["rss_samples"]]
        assert times[0] == 0 and times == sorted(times) and len(times) >= 3 and times[-1] >= 2.0, times
        assert r["rss_mb_after_warmup"] in [mb for t, mb in r["rss_samples"] if 0.9 <= t < 2.0]  # read as the hold began
        assert r["last_minus_first_mb_over_hold"] == round(r["rss_mb_after_hold"] - r["rss_mb_after_warmup"], 1)
        assert "growth_mb_over_hold" in r
        assert "kib_per_object" in r and r["converged_seconds"] >= 0
        assert r["restarted_rss_mb"] > 0 and "restarted_kib_per_object" in r  # the operator started again over them


@pytest.mark.long
def test_operator_memory_traced(tmp_path):
    results = run_benchmark("operator_memory.py", tmp_path / "traced.json", "--trace", "--indexes", "2", "--jobs", "2", "--hold", "0",
                            "--timeout", "180")  # a bound on a loaded machine, not a measure
    assert "floor" not in results
    r = results["pinery"]
    for when in ("traced_idle", "traced_converged"):
        assert 0 < r[when]["traced_mb"] <= r[when]["traced_peak_mb"]
        assert r[when]["top"] and all(t["mb"] > 0 and t["blocks"] > 0 and t["where"] for t in r[when]["top"])


def test_pinecone_dataplane(tmp_path):
    results = run_benchmark("pinecone_dataplane.py", tmp_path / "dp.json", "--sizes", "300", "--queries", "3",
                            "--sparse-sizes", "200")
    (run,) = results["runs"]
    assert run["vectors"] == 300 and run["dimension"] == 768 and run["batch"] == 100
    for part in ("query", "query_with_filter"):
        assert run["emulator"][part]["n"] == 3 and run["emulator"][part]["p95_ms"] > 0
    assert run["emulator"]["upsert_vectors_per_s"] > 0 and run["numpy_floor"]["query"]["n"] == 3
    (sparse,) = results["sparse_runs"]
    assert sparse["records"] == 200 and sparse["emulator"]["query"]["n"] == 3
    assert sparse["emulator"]["first_query_after_writes_ms"] > 0 and sparse["numpy_floor"]["query"]["n"] == 3
    # 300 dense vectors of 768 floats fit only 100 to a request; then 2 requests of sparse records
    assert results["emulator_requests"]["upsertVectors"] == 3 + 2
