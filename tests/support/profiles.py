"""Hypothesis profiles of every property-based test (loaded by tests/conftest.py).

CI (and `make test`) runs the `pinery-ci` profile: derandomized (the same examples every run),
no example database, a few dozen examples per property. `PINERY_FUZZ_EXAMPLES=N` (what
`make fuzz` sets) switches to `pinery-fuzz`: N examples per property, random, with the example
database under .hypothesis/ so that failures found once are tried first next time.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

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


def time_limit(default: int) -> int:
    """pytest-timeout's limit for a property test: longer runs get more time."""
    return max(default, 3 * int(FUZZ_EXAMPLES)) if FUZZ_EXAMPLES else default
