"""The security tests run the operator against the local control plane and the emulator."""

from tests.integration.conftest_apiserver import control_plane  # noqa: F401
from tests.integration.conftest_pinecone import make_pinecone_emulator  # noqa: F401
