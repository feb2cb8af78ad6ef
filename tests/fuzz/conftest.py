"""Hypothesis profiles of the fuzz suite.

CI (and `make test`) runs the `pinery-ci` profile: derandomized (the same examples every run),
no example database, a few dozen examples per property. `PINERY_FUZZ_EXAMPLES=N` (what
`make fuzz` sets) switches to `pinery-fuzz`: N examples per property, random, with the example
database under .hypothesis/ so that failures found once are tried first next time.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

from tests.integration.conftest_apiserver import control_plane, control_plane_module  # noqa: F401
from tests.integration.conftest_pinecone import make_pinecone_emulator, pinecone_admin, pinecone_emulator  # noqa: F401

CI_EXAMPLES = 60
FUZZ_EXAMPLES = os.environ.get("PINERY_FUZZ_EXAMPLES")

_common = dict(
    deadline=None,
    # Specs are big and shaped after generation; these checks would only slow the suite down.
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    print_blob=True,
)
settings.register_profile("pinery-ci", max_examples=CI_EXAMPLES, derandomize=True, database=None, **_common)
settings.register_profile("pinery-fuzz", max_examples=int(FUZZ_EXAMPLES or CI_EXAMPLES), **_common)
settings.load_profile("pinery-fuzz" if FUZZ_EXAMPLES else "pinery-ci")


def pytest_collection_modifyitems(items):
    """Long fuzz runs get a time limit that grows with the number of examples."""
    if not FUZZ_EXAMPLES:
        return
    import pytest

    for item in items:
        if "tests/fuzz/" in str(item.fspath):
            item.add_marker(pytest.mark.timeout(max(300, 3 * int(FUZZ_EXAMPLES))))
