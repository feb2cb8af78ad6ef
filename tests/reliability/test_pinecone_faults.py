"""Pinecone faults in local mode: VectorIndexes through their lifecycle while a fifth of the
emulator's answers are faults (tests/reliability/pinecone_faults.py). The reduced profile runs
in `make test`; `make faults` runs the full one and records its numbers."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.reliability.harness import start_local_mode, write_result
from tests.reliability.pinecone_faults import PROFILES, run_faults

pytestmark = pytest.mark.e2e


def test_pinecone_faults(tmp_path, reliability):
    cluster = start_local_mode(tmp_path / "local", with_pod_runner=False)
    try:
        result = asyncio.run(run_faults(cluster, PROFILES[reliability.profile], reliability.seed))
    finally:
        cluster.stop_thread()
    path = write_result(reliability.results, f"pinecone-faults-{reliability.profile}", {"profile": reliability.profile, **result})
    print(json.dumps(result, indent=2))
    assert result["faultsInjected"] > 0 and result["throttled"] > 0, f"no faults were injected: {path}"
    assert result["retryAfter"]["retriedAfterThrottle"] > 0, f"no throttled call was retried, so Retry-After went unchecked: {path}"
    assert result["violations"] == [], f"{len(result['violations'])} violations (details in {path}):\n" + "\n".join(result["violations"])
