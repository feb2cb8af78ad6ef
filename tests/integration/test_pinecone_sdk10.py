"""The real `pinecone` 10.x SDK (API 2026-07) against the emulator, in its own venv.

The flow (tests/integration/sdk10_flow.py) runs in `.compat-venvs/pinecone-10`, the exact pins a
user's application would have, as a subprocess against an emulator started here (`make test`
makes that venv; tests.conftest.compat_python). The operator itself runs on 10.x in .venv.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import compat_python
from tests.support.emulator import TEST_API_KEY

FLOW = Path(__file__).with_name("sdk10_flow.py")


def run_flow(script: Path, make_pinecone_emulator) -> None:
    """Run a 10.x flow script in the 10.x venv against a fresh emulator; it must end with `done`."""
    python = compat_python("pinecone-10")
    emulator = make_pinecone_emulator(ready_delay=0.0)
    result = subprocess.run([str(python), str(script), emulator.url, TEST_API_KEY], capture_output=True,
                            text=True, timeout=300, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    sys.stdout.write(result.stdout)
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
    assert result.stdout.rstrip().endswith("done")


def test_sdk10_ordinary_flow(make_pinecone_emulator):
    run_flow(FLOW, make_pinecone_emulator)


INFERENCE_FLOW = Path(__file__).with_name("sdk10_inference_flow.py")


def test_sdk10_integrated_inference_flow(make_pinecone_emulator):
    """pc.inference, create_for_model + upsert_records + search, and document indexes with
    embed / sparse_embed / full_text_search, through the 10.x SDK (sdk10_inference_flow.py)."""
    run_flow(INFERENCE_FLOW, make_pinecone_emulator)
