"""Example budgets relative to the active profile (see tests/fuzz/profiles.py)."""

from __future__ import annotations

from hypothesis import settings


def share(fraction: float) -> settings:
    """The active profile with `fraction` of its examples (at least one): for properties whose
    examples start processes or wait for an operator."""
    current = settings.default
    return settings(current, max_examples=max(1, round(current.max_examples * fraction)))
