"""`pinery wait-for` against real sockets."""

import socket
import subprocess
import sys
import time

import pytest

from pinery.cli.wait_for import split_target
from tests.conftest import REPO_ROOT, run_pinery
from tests.support.ports import free_port


def test_listening_port_is_reachable_at_once():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        result = run_pinery("wait-for", f"localhost:{port}", "--timeout", "5")
    assert result.returncode == 0, result.stderr
    assert f"waiting up to 5s for localhost:{port}" in result.stdout
    assert f"localhost:{port} accepts connections" in result.stdout


def test_closed_port_times_out_with_a_clear_message():
    port = free_port()
    start = time.monotonic()
    result = run_pinery("wait-for", f"127.0.0.1:{port}", "--timeout", "1", "--interval", "0.2")
    assert result.returncode == 1 and time.monotonic() - start < 30
    assert f"pinery wait-for: timed out after 1s: 127.0.0.1 resolves, but port {port} does not accept connections yet" in result.stderr


def test_unresolvable_host_times_out_saying_so():
    result = run_pinery("wait-for", "no-such-host.invalid:80", "--timeout", "0.5", "--interval", "0.1")
    assert result.returncode == 1
    assert "no-such-host.invalid does not resolve yet" in result.stderr


def test_waits_for_a_port_that_opens_later():
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "pinery", "wait-for", f"127.0.0.1:{port}", "--timeout", "30", "--interval", "0.1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT,
    )
    server = socket.socket()
    try:
        time.sleep(1.0)
        assert proc.poll() is None  # still waiting
        server.bind(("127.0.0.1", port))
        server.listen()
        out, err = proc.communicate(timeout=30)
    finally:
        server.close()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "does not accept connections yet" in out and "accepts connections" in out


@pytest.mark.parametrize("target", ["host", "host:", ":80", "host:0", "host:70000", "host:http"])
def test_bad_targets_are_rejected(target):
    with pytest.raises(ValueError, match="HOST:PORT"):
        split_target(target)
    assert run_pinery("wait-for", target, "--timeout", "0").returncode == 2


def test_ipv6_brackets():
    assert split_target("[::1]:29500") == ("::1", 29500)
