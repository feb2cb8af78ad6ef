"""A subset of the client compatibility suite (`make compat`, compat/run.py) inside `make test`.

The subset is the pinecone SDK 7.x (API 2025-04) and 10.x (API 2026-07): the driver runs each
one's application flow in its own venv against a fresh emulator and must report every step
passed, with the API version that SDK sends on the wire.

`make test` makes their venvs first (the Makefile's COMPAT_TEST_CLIENTS); run alone, a client
whose venv is missing is skipped, and in CI it fails (tests.conftest.compat_python).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from compat.clients import BY_NAME
from tests.conftest import REPO_ROOT, compat_python

SUBSET = ("pinecone-7", "pinecone-10")


@pytest.mark.parametrize("name", SUBSET)
def test_client_flow_passes_against_the_emulator(name, tmp_path):
    client = BY_NAME[name]
    python = compat_python(name)
    venvs = python.parents[2]
    args = [sys.executable, str(REPO_ROOT / "compat" / "run.py"), "--clients", name, "--results", str(tmp_path),
            "--no-install"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=280, cwd=REPO_ROOT,
                          env={**os.environ, "PINERY_COMPAT_VENV_DIR": str(venvs)})
    result_file = tmp_path / f"{name}.json"
    assert result_file.exists(), f"no result from the driver:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    result = json.loads(result_file.read_text())
    failed = {s["name"]: s.get("error", "") for s in result.get("steps", []) if s["status"] != "passed"
              and s["status"] != "not applicable"}
    assert result["passed"] and done.returncode == 0, (
        f"{name} failed: {result.get('error', '')}\n" + "\n".join(f"{k}: {v[:800]}" for k, v in failed.items())
        + f"\nrequests the emulator refused: {json.dumps(result.get('http_errors', []), indent=1)[:3000]}")
    assert result["api_versions_sent"] == [client.api_version]
    assert result["packages"]["pinecone"] == client.sdk
    assert len(result["steps"]) >= 10
