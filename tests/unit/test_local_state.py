"""Local mode's state directory: the lock that keeps a second `up` out, and local.json."""

import os

from pinery.local.cluster import LocalState, StateLock


def test_one_holder_at_a_time(tmp_path):
    first, second = StateLock(tmp_path), StateLock(tmp_path)
    assert first.holder() is None
    assert first.acquire() and first.held
    assert not second.acquire() and second.holder() == os.getpid()
    first.release()
    assert second.holder() is None and second.acquire()
    second.release()


def test_state_survives_a_save_and_defaults_when_unreadable(tmp_path):
    state = LocalState(apiserver_port=40001, pinecone_port=40002)
    state.save(tmp_path)
    assert LocalState.load(tmp_path) == state
    assert (tmp_path / "local.json").stat().st_mode & 0o777 == 0o600  # it holds the token and API key
    (tmp_path / "local.json").write_text("{not json")
    fresh = LocalState.load(tmp_path)
    assert fresh.apiserver_port == 0 and fresh.token.startswith("local-") and fresh.token != state.token
