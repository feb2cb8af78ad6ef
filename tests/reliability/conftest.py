"""The reliability suites' options (tests/conftest.py adds them) as a fixture."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass
class Reliability:
    """The profile, seed and results folder chosen for the reliability suites."""

    profile: str
    seed: int
    results: Path
    # Appended to the result's name: the conditions of the run (`one-core-busy`), if any.
    label: str = ""

    def result_name(self, suite: str) -> str:
        name = f"{suite}-{self.profile}-seed{self.seed}"
        return f"{name}-{self.label}" if self.label else name


@pytest.fixture
def reliability(request: pytest.FixtureRequest, tmp_path: Path) -> Reliability:
    results = request.config.getoption("--reliability-results")
    return Reliability(request.config.getoption("--reliability-profile"), request.config.getoption("--reliability-seed"),
                       results.resolve() if results else tmp_path / "results",
                       request.config.getoption("--reliability-label"))
