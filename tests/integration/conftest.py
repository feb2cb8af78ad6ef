"""Fixtures of the integration tests, from tests/support (and the pod runner's, which only these
tests use, from conftest_podrunner.py)."""

from tests.integration.conftest_podrunner import pod_runner  # noqa: F401
from tests.support.control_plane import control_plane, control_plane_module  # noqa: F401
from tests.support.emulator import make_pinecone_emulator, pinecone_admin, pinecone_client, pinecone_emulator  # noqa: F401
from tests.support.fsdpjob import kubelet, ns, plane  # noqa: F401 (test_fsdpjob_operator*.py)
from tests.support.vectorindex import no_faults, vi_world  # noqa: F401
