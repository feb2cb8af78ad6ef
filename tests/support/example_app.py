"""The example application (examples/app), run as a separate process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import REPO_ROOT, without_pythonpath

APP = REPO_ROOT / "examples" / "app" / "app.py"


def run_app(env: dict[str, str], *args: str, python: str = sys.executable) -> dict:
    """Run the app with `python`; another interpreter (a client venv's) gets no PYTHONPATH (tests.conftest)."""
    base = dict(os.environ) if python == sys.executable else without_pythonpath()
    result = subprocess.run([python, str(APP), *args], env={**base, **env},
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)
