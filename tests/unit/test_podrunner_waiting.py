"""Waiting reasons by kubelet_pods.go convertToAPIContainerStatuses, and doBackOff's message."""

import pytest

from pinery.local.podrunner import waiting


@pytest.mark.parametrize("has_init, cached, expected", [
    (False, "", "ContainerCreating"),
    (True, "", "PodInitializing"),          # the default when the pod has init containers
    (False, "CrashLoopBackOff", "CrashLoopBackOff"),
    (True, "CreateContainerConfigError", "CreateContainerConfigError"),  # a cached reason wins
    (False, "CreateContainerError", "CreateContainerError"),
])
def test_waiting_reason(has_init, cached, expected):
    assert waiting.waiting_reason(has_init, cached) == expected


@pytest.mark.parametrize("seconds, shown", [(1, "1s"), (10, "10s"), (80, "1m20s"), (300, "5m0s"), (3600, "1h0m0s")])
def test_delays_print_as_go_durations(seconds, shown):
    assert waiting.go_duration(seconds) == shown


def test_crash_loop_message():
    assert waiting.crash_loop_message(20, "main", "p_ns(u)") == "back-off 20s restarting failed container=main pod=p_ns(u)"
