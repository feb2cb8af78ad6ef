"""The fuzz suite uses the integration fixtures; its Hypothesis profiles are in profiles.py."""

from __future__ import annotations

import pytest

from tests.support.control_plane import control_plane, control_plane_module  # noqa: F401
from tests.support.emulator import make_pinecone_emulator, pinecone_admin, pinecone_emulator  # noqa: F401
from tests.support.profiles import FUZZ_EXAMPLES, time_limit


def pytest_collection_modifyitems(items):
    """Long fuzz runs get a time limit that grows with the number of examples."""
    if FUZZ_EXAMPLES:
        for item in items:
            if "/tests/fuzz/" in str(item.path) or "/tests/security/" in str(item.path):
                item.add_marker(pytest.mark.timeout(time_limit(300)))
