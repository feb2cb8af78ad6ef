"""Fixtures for the Pinecone emulator: a running emulator, an SDK client and the admin helper.

`pinecone_emulator` starts a fresh emulator (zero delays, a state directory under tmp_path,
API key TEST_API_KEY) in a thread for each test. `make_pinecone_emulator(**options)` starts one
with other options (delays, quota, a shared state directory for restart tests); everything it
started is stopped at the end of the test.

`clock_ahead(emulator, seconds)` moves every timed state machine of an emulator on as if that much
time had passed, without waiting; `api_call(emulator, method, path, ...)` sends one plain HTTP
request in a chosen API version and returns (status, JSON body).
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

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


def clock_ahead(emulator: PineconeEmulator, seconds: float) -> None:
    """Settle every transition of `emulator` as it stands `seconds` from now (on its own loop)."""
    emulator.call(emulator.store.refresh, time.time() + seconds)


def api_call(emulator: PineconeEmulator, method: str, path: str, body: Any = None, version: str = "2025-10",
             api_key: str = TEST_API_KEY) -> tuple[int, Any]:
    """One request to the emulator without an SDK (no retries): (status, decoded JSON body or None)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(emulator.url + path, data=data, method=method, headers={
        "Api-Key": api_key, "Content-Type": "application/json", "X-Pinecone-Api-Version": version})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            raw = response.read()
            return response.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as err:
        raw = err.read()
        return err.code, json.loads(raw) if raw else None
