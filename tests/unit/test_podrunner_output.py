"""The copy of a container's stdout and stderr into its log file (`processes.Output`)."""

import subprocess

from pinery.local.podrunner import crilog, processes


async def test_a_stream_that_ends_before_the_other_is_connected_loses_nothing(tmp_path):
    # The container has exited before the copy connects (a loaded machine): stdout is at its
    # end at once, while stderr still holds what was printed.
    log = tmp_path / "main.log"
    output = processes.Output(log)
    subprocess.run(["sh", "-c", "echo first >&2"], stdout=output.stdout, stderr=output.stderr, check=True)
    await output.connect()
    await output.drain()
    assert crilog.text_of(log.read_bytes()) == b"first\n"


async def test_drain_returns_once_both_streams_are_in_the_file(tmp_path):
    log = tmp_path / "main.log"
    output = processes.Output(log)
    process = subprocess.Popen(["sh", "-c", "echo out; sleep 0.2; echo err >&2"], stdout=output.stdout, stderr=output.stderr)
    await output.connect()
    process.wait()
    await output.drain()
    entries = [crilog.parse_line(line) for line in crilog.split_lines(log.read_bytes())]
    assert [(e.stream, e.text) for e in entries] == [("stdout", b"out\n"), ("stderr", b"err\n")]


def test_kill_marked_waits_for_the_processes_it_killed_to_end(monkeypatch):
    # A killed process is no longer found by its marker while it is still exiting.
    states = iter([False, False, False, True])
    killed = []
    monkeypatch.setattr(processes, "marked", lambda variable, value: [] if killed else [4242])
    monkeypatch.setattr(processes, "ended", lambda pid: next(states) if killed else False)
    monkeypatch.setattr(processes.os, "kill", lambda pid, sig: killed.append(pid))
    assert processes.kill_marked("V", "x") == 1
    assert next(states, "all used") == "all used"  # it returned only once the process had ended
