"""Local mode's state directory: the lock that keeps a second `up` out, local.json, and the
ports a second `up` takes again."""

import os
import socket

from pinery.local.cluster import LocalState, StateLock, free_port


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


def test_the_last_port_is_taken_again_unless_something_listens_on_it():
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    assert free_port(port) != port  # in use: another port
    client = socket.create_connection(("127.0.0.1", port))
    accepted, _ = listener.accept()
    accepted.close()  # the server side closes first, as a server stopping with clients connected
    listener.close()  # ... which leaves the port in TIME_WAIT
    client.close()
    assert free_port(port) == port
