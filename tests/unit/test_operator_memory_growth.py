"""The memory benchmark's growth over the hold (benchmarks/operator_memory.py `growth`): the
trend of the RSS samples, which one sample caught in the middle of a sweep does not make."""

from __future__ import annotations

import pytest

from tests.conftest import REPO_ROOT


@pytest.fixture
def growth(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO_ROOT / "benchmarks"))
    import operator_memory

    return operator_memory.growth


@pytest.mark.parametrize("held, expected", [
    ((100, 100, 100, 100, 100, 100, 100, 100, 100, 100), 0.0),  # flat
    ((100, 100, 100, 100, 100, 100, 100, 100, 100, 102), 0.0),  # the last sample mid-sweep
    ((102, 100, 100, 100, 100, 100, 100, 100, 100, 100), 0.0),  # the first one
    ((100, 101, 102, 103, 104, 105, 106, 107, 108, 109), 5.0),  # steady growth shows
    ((100, 100.5, 101, 101.5, 102, 102.5, 103), 1.0),  # windows that overlap
    ((100, 100.3), 0.0),  # as many samples as there are, the same ones at both ends
])
def test_growth_is_the_difference_of_the_medians_of_the_first_and_last_samples(growth, held, expected):
    assert growth(list(held)) == expected
