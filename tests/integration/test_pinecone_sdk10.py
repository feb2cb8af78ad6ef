"""The real `pinecone` 10.x SDK (API 2026-07) against the emulator, in its own venv.

10.x cannot share a venv with the 9.x SDK the other tests import, so the flow
(tests/integration/sdk10_flow.py) runs in `.compat-venvs/pinecone-10` as a subprocess against an
emulator started here. Without that venv the test skips; with CI=true and
PINERY_COMPAT_VENVS=required it fails instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.conftest_pinecone import TEST_API_KEY

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / ".compat-venvs" / "pinecone-10" / "bin" / "python"
FLOW = Path(__file__).with_name("sdk10_flow.py")


def _venv_or_skip() -> Path:
    if PYTHON.exists():
        return PYTHON
    message = f"the pinecone 10.x venv is missing ({PYTHON}); `make compat` creates it"
    if os.environ.get("CI") == "true" and os.environ.get("PINERY_COMPAT_VENVS") == "required":
        pytest.fail(message)
    pytest.skip(message)


def test_sdk10_ordinary_flow(make_pinecone_emulator):
    python = _venv_or_skip()
    emulator = make_pinecone_emulator(ready_delay=0.0)
    result = subprocess.run([str(python), str(FLOW), emulator.url, TEST_API_KEY], capture_output=True,
                            text=True, timeout=300, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    sys.stdout.write(result.stdout)
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
    assert result.stdout.rstrip().endswith("done")
