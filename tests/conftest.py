"""Fixtures shared by every test layer."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# The Hypothesis profile of every property test (CI's, or `make fuzz`'s with PINERY_FUZZ_EXAMPLES).
import tests.support.profiles  # noqa: E402,F401

# Every test fails when a Pinecone API key shows up in its captured output (tests/security).
from tests.support.secret_scan import pytest_runtest_makereport  # noqa: E402,F401

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


COMPAT_VENVS = Path(os.environ.get("PINERY_COMPAT_VENV_DIR", REPO_ROOT / ".compat-venvs"))


def compat_python(name: str) -> Path:
    """The python of the client venv `.compat-venvs/<name>` (compat/clients.py).

    `make test` makes the venvs its tests use (the Makefile's COMPAT_TEST_CLIENTS); run alone,
    a test whose venv is missing skips, and in CI it fails."""
    python = COMPAT_VENVS / name / "bin" / "python"
    if not python.exists():
        hint = f"`make compat-venvs COMPAT_ARGS=--clients={name}` makes it"
        if IN_CI:
            pytest.fail(f"the client venv {python} is missing, and CI must not skip tests that need it; {hint}")
        pytest.skip(f"no client venv {python}: {hint}")
    return python


def without_pythonpath(env: dict[str, str] | None = None) -> dict[str, str]:
    """`env` (default os.environ) without PYTHONPATH, for a client venv's python: in `make test`'s
    sdk9 run PYTHONPATH puts the 9.x SDK overlay before that venv's own `pinecone`."""
    return {k: v for k, v in (os.environ if env is None else env).items() if k != "PYTHONPATH"}


# --- the 9.x SDK tests (marker `sdk9`; compat/overlay.py, docs/architecture.md "Tests") --------

SDK9_HINT = ("`make test` runs the sdk9 tests in a second run with the 9.1.0 overlay: "
             "`python compat/overlay.py`, then `PYTHONPATH=.compat-venvs/pinecone-9-overlay python -m pytest -m sdk9`")


def _sdk9_process() -> bool:
    import pinecone

    return str(getattr(pinecone, "__version__", "")).split(".")[0] == "9"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """In the sdk9 run (the 9.x SDK imported), a test module that never names the sdk9 marker is
    not collected: all its tests would be deselected anyway, and a module written for the 10.x SDK
    may import names 9.x lacks (FailedPreconditionError, say)."""
    if collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    if not _sdk9_process():
        return None
    return "sdk9" not in collection_path.read_text(encoding="utf-8")


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked sdk9 needs the 9.x `pinecone` SDK in this process: without it the test skips,
    and in CI it fails (nothing is skipped there for lack of a tool)."""
    if item.get_closest_marker("sdk9") is None:
        return
    import pinecone

    if _sdk9_process():
        return
    version = getattr(pinecone, "__version__", "unknown")
    reason = f"marked sdk9: needs the pinecone 9.x SDK, this process imports {version}; {SDK9_HINT}"
    if IN_CI:
        pytest.fail(reason + "; CI must not skip it", pytrace=False)
    pytest.skip(reason)


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


# --- the reliability suites' profiles (tests/reliability, docs/reliability.md) -----------------

def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("reliability", "reliability suites (chaos, Pinecone faults, training faults)")
    group.addoption("--reliability-profile", choices=("reduced", "full"), default="reduced",
                    help="reduced: the quick form `make test` runs; full: `make chaos` and `make faults`")
    group.addoption("--reliability-seed", type=int, default=1, help="seed of the suites' random choices")
    group.addoption("--reliability-results", type=Path, default=None,
                    help="folder for the suites' JSON results (default: the test's temporary folder)")
    group.addoption("--reliability-label", default="",
                    help="appended to the result's name, for runs under other conditions (e.g. one-core-busy)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The full profile is long: such runs are slow tests, and get the time they need.
    if config.getoption("--reliability-profile") == "full":
        for item in items:
            if "reliability" in getattr(item, "fixturenames", ()):
                item.add_marker(pytest.mark.slow)
                item.add_marker(pytest.mark.timeout(3600))
