"""Fixtures for the Pinecone emulator: a running emulator, an SDK client and the admin helper.

`pinecone_emulator` starts a fresh emulator (zero delays, a state directory under tmp_path,
API key TEST_API_KEY) in a thread for each test. `make_pinecone_emulator(**options)` starts one
with other options (delays, quota, a shared state directory for restart tests); everything it
started is stopped at the end of the test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from pinery.local.pinecone import EmulatorAdmin, PineconeEmulator

TEST_API_KEY = "pclocal-test-key"


@pytest.fixture
def make_pinecone_emulator(tmp_path) -> Iterator[Callable[..., PineconeEmulator]]:
    started: list[PineconeEmulator] = []

    def make(**options) -> PineconeEmulator:
        options.setdefault("state_dir", tmp_path / "pinecone-state")
        options.setdefault("api_key", TEST_API_KEY)
        options.setdefault("ready_delay", 0.0)
        emulator = PineconeEmulator(**options).start_in_thread()
        started.append(emulator)
        return emulator

    yield make
    for emulator in reversed(started):
        emulator.stop_thread()


@pytest.fixture
def pinecone_emulator(make_pinecone_emulator) -> PineconeEmulator:
    return make_pinecone_emulator()


@pytest.fixture
def pinecone_admin(pinecone_emulator) -> EmulatorAdmin:
    return EmulatorAdmin(pinecone_emulator.url)


@pytest.fixture
def pinecone_client(pinecone_emulator):
    from pinecone import Pinecone

    client = Pinecone(api_key=TEST_API_KEY, host=pinecone_emulator.url)
    yield client
    client.close()
