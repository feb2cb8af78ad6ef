"""A local emulator of Pinecone's 2025-10 control and data plane (see docs/local-mode.md)."""

from pinery.local.pinecone.admin_client import EmulatorAdmin
from pinery.local.pinecone.faults import FaultRule
from pinery.local.pinecone.server import API_VERSION, PineconeEmulator

__all__ = ["API_VERSION", "EmulatorAdmin", "FaultRule", "PineconeEmulator"]
