"""The security tests run the operator against the local control plane and the emulator."""

from tests.support.control_plane import control_plane  # noqa: F401
from tests.support.emulator import make_pinecone_emulator  # noqa: F401
