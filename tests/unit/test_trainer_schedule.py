"""Warm-up and cosine decay of the learning rate; exit codes; MFU."""

from __future__ import annotations

import math
import signal
from itertools import pairwise

import pytest

from pinery_trainer.exit_codes import CONFIG_ERROR, FAILURE, OK, TERMINATED, launcher_exit_code
from pinery_trainer.report import clean, mfu, peak_tflops
from pinery_trainer.schedule import lr_factor


def test_linear_warm_up_reaches_the_peak_on_its_last_step():
    assert [lr_factor(s, 100, 4, 0.1) for s in range(4)] == [0.25, 0.5, 0.75, 1.0]


def test_cosine_decays_monotonically_towards_the_floor():
    factors = [lr_factor(s, 100, 10, 0.1) for s in range(10, 100)]
    assert factors[0] == 1.0
    assert all(a >= b for a, b in pairwise(factors))
    assert factors[-1] == pytest.approx(0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * 89 / 90)))
    assert lr_factor(100, 100, 10, 0.1) == pytest.approx(0.1)
    assert lr_factor(150, 100, 10, 0.1) == pytest.approx(0.1)


def test_halfway_through_the_decay_is_halfway_between_peak_and_floor():
    assert lr_factor(55, 100, 10, 0.2) == pytest.approx(0.6)


def test_no_warm_up_and_a_warm_up_as_long_as_the_run():
    assert lr_factor(0, 10, 0, 0.0) == 1.0
    assert [lr_factor(s, 3, 3, 0.0) for s in range(3)] == pytest.approx([1 / 3, 2 / 3, 1.0])


@pytest.mark.parametrize(
    "codes, expected",
    [
        ([], OK),
        ([1], FAILURE),
        ([78, 78], CONFIG_ERROR),
        ([1, 78], CONFIG_ERROR),
        ([143, 143], TERMINATED),
        ([143, -signal.SIGTERM], TERMINATED),
        ([143, 1], FAILURE),
        ([-signal.SIGKILL], FAILURE),
    ],
)
def test_launcher_exit_code(codes, expected):
    assert launcher_exit_code(codes) == expected


def test_peak_flops_are_looked_up_by_device_name():
    assert peak_tflops("NVIDIA H100 80GB HBM3") == 989.4
    assert peak_tflops("NVIDIA H100 PCIe") == 756.0
    assert peak_tflops("NVIDIA H200") == 989.4
    assert peak_tflops("NVIDIA A100-SXM4-80GB") == 312.0
    assert peak_tflops("NVIDIA L4") == 121.0
    assert peak_tflops("Some Future GPU") is None


def test_mfu():
    # 8 GPUs at 989.4 TFLOP/s; 6 GFLOP per token; 660k tokens/s -> 50 %.
    assert mfu(659_600, 6e9, 8, 989.4) == pytest.approx(0.5)
    assert mfu(1000.0, 6e9, 8, None) is None


def test_non_finite_numbers_become_null():
    assert clean(float("nan")) is None and clean(float("inf")) is None and clean(1.5) == 1.5
