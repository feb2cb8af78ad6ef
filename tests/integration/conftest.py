"""Fixtures of the integration tests; each component's fixtures live in their own module."""

from tests.support.control_plane import (  # noqa: F401
    control_plane,
    control_plane_module,
)
from tests.integration.conftest_podrunner import pod_runner  # noqa: F401
from tests.support.emulator import (  # noqa: F401
    make_pinecone_emulator,
    pinecone_admin,
    pinecone_client,
    pinecone_emulator,
)
from tests.support.vectorindex import (  # noqa: F401
    no_faults,
    vi_world,
)
