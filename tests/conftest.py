"""Fixtures shared by every test layer."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# Every test fails when a Pinecone API key shows up in its captured output (tests/security).
from tests.security.secret_scan import pytest_runtest_makereport  # noqa: E402,F401

# The Hypothesis profile of every property test (CI's, or `make fuzz`'s with PINERY_FUZZ_EXAMPLES).
import tests.fuzz.profiles  # noqa: E402,F401

REPO_ROOT = Path(__file__).resolve().parents[1]
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def shared_path(*parts: str) -> Path:
    """A file under ../shared: skipped when absent on a user's clone, a failure in CI."""
    base = Path(os.environ.get("PINERY_SHARED_DIR", REPO_ROOT.parent / "shared"))
    path = base.joinpath(*parts)
    if not path.exists():
        if IN_CI:
            pytest.fail(f"{path} is missing, and CI must not skip tests that need it")
        pytest.skip(f"{path} is not present (it is only in the project's development checkout)")
    return path


def run_pinery(*args: str, stdin: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run the `pinery` CLI as a user would, in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "pinery", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd or REPO_ROOT,
        timeout=120,
    )
