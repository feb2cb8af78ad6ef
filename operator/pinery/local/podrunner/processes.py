"""Container processes: start in their own process group, log to a file, stop gracefully.

stdout and stderr go through pipes that the runner copies to the container's log file in the
kubelet's format (`crilog`), each line with its time and stream.

A container on a real node is a cgroup: when it stops, everything in it stops. Locally a
container is a process group, but programs may leave their group: torchrun starts each worker in
a session of its own (and orphans the workers when it is SIGKILLed). So every process of a
container carries marker variables in its environment, inherited by all its descendants, and
stopping a container ends with a sweep of /proc for processes that still carry them (Linux; on
other systems only the process group is signalled).
"""

from __future__ import annotations

import asyncio
import errno
import functools
import os
import shutil
import signal
import time
from pathlib import Path

from pinery.local.podrunner import crilog

# Marker variables: the local-mode instance (its state directory), and the container.
OWNER_VARIABLE = "PINERY_LOCAL_OWNER"
CONTAINER_VARIABLE = "PINERY_LOCAL_CONTAINER"
PROC = Path("/proc")


def resolve_executable(name: str, path: str) -> str | None:
    if "/" in name:
        return name if os.access(name, os.X_OK) else None
    return shutil.which(name, path=path)


async def start(argv: list[str], env: dict[str, str], cwd: Path, log_path: Path) -> tuple[asyncio.subprocess.Process, "Output"]:
    """Start the container's process, its stdout and stderr going through pipes to `log_path`
    in the kubelet's format (see `Output`)."""
    output = Output(log_path)
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            env=env,
            cwd=str(cwd),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=output.stdout,
            stderr=output.stderr,
            start_new_session=True,  # its own process group, so that the whole tree can be stopped
        )
    except BaseException:
        output.abandon()
        raise
    await output.connect()
    return process, output


class Output:
    """A container's stdout and stderr, copied from pipes to its log file as CRI records
    (`crilog.LineSplitter`, stamped when read), as a runtime's log copier does.

    The copy ends when every process holding the pipes has closed them; programs the container
    started may hold them after it has ended (torchrun's workers), so `drain` is awaited once
    the container has been reaped, and gives up after `DRAIN_SECONDS`."""

    DRAIN_SECONDS = 5.0

    def __init__(self, log_path: Path):
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._pipes = [os.pipe(), os.pipe()]
        self.stdout, self.stderr = self._pipes[0][1], self._pipes[1][1]
        self._transports: list[asyncio.BaseTransport] = []
        # Both streams count from the start: a container that has already exited when the copy
        # connects ends stdout before stderr is connected, and that must not close the log.
        self._open = len(self._pipes)
        self._done: asyncio.Future | None = None

    async def connect(self) -> None:
        loop = asyncio.get_running_loop()
        self._done = loop.create_future()
        for (read_end, write_end), stream in zip(self._pipes, ("stdout", "stderr"), strict=True):
            os.close(write_end)  # the container's now; EOF comes once its processes close theirs
            transport, _ = await loop.connect_read_pipe(
                functools.partial(self._copier, stream), os.fdopen(read_end, "rb", buffering=0))
            self._transports.append(transport)

    def _copier(self, stream: str) -> _Copier:
        return _Copier(self, crilog.LineSplitter(stream))

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._log, view):]
        except OSError as exc:
            # A full disk loses output, as it would on a node, and the container goes on; any
            # other error (a closed descriptor) is a bug, not to be hidden.
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
                raise

    def stream_ended(self) -> None:
        self._open -= 1
        if self._open == 0:
            os.close(self._log)
            if self._done is not None and not self._done.done():
                self._done.set_result(None)

    async def drain(self) -> None:
        """Wait for the copy to end (the pipes closed); past DRAIN_SECONDS, stop copying."""
        if self._done is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(self._done), self.DRAIN_SECONDS)
        except asyncio.TimeoutError:
            for transport in self._transports:
                transport.close()  # what is left unread is lost
            await self._done

    def abandon(self) -> None:
        """The process did not start: close everything."""
        for read_end, write_end in self._pipes:
            os.close(read_end)
            os.close(write_end)
        os.close(self._log)


class _Copier(asyncio.Protocol):
    __slots__ = ("output", "splitter")

    def __init__(self, output: Output, splitter: crilog.LineSplitter):
        self.output, self.splitter = output, splitter

    def data_received(self, data: bytes) -> None:
        records = self.splitter.feed(data, time.time_ns())
        if records:
            self.output.write(records)

    def eof_received(self) -> bool:
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        rest = self.splitter.close(time.time_ns())
        if rest:
            self.output.write(rest)
        self.output.stream_ended()


def signal_group(pid: int, sig: int) -> bool:
    try:
        os.killpg(pid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def marked(variable: str, value: str) -> list[int]:
    """Pids of the processes whose environment has `variable=value` (empty without /proc)."""
    needle = f"{variable}={value}".encode()
    me = os.getpid()
    found = []
    try:
        entries = list(PROC.iterdir())
    except OSError:
        return []
    for entry in entries:
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:  # gone meanwhile, or another user's
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def kill_marked(variable: str, value: str, wait: float = 2.0) -> int:
    """SIGKILL every process marked `variable=value` and wait (up to `wait` seconds) until they
    have ended; how many there were. Scans again until none is found, so that a process forked
    during a scan is not missed."""
    killed: set[int] = set()
    deadline = time.monotonic() + wait
    while True:
        pids = [pid for pid in marked(variable, value) if not ended(pid)]
        # A dying process loses its environment (marked() no longer finds it) before it has
        # ended: wait for those already killed too, or one may still be exiting on return.
        exiting = [pid for pid in killed if not ended(pid)]
        if not (pids or exiting) or time.monotonic() > deadline:
            return len(killed)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.01)


def ended(pid: int) -> bool:
    """Gone, or a zombie (it has ended; only its parent has not collected it yet)."""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[0] in ("Z", "X")


async def stop(process: asyncio.subprocess.Process, grace_seconds: float, marker: tuple[str, str] | None = None) -> int | None:
    """SIGTERM the process group, wait up to the grace period, then SIGKILL what is left."""
    if process.returncode is None:
        signal_group(process.pid, signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), timeout=max(grace_seconds, 0.1))
        except asyncio.TimeoutError:
            pass
    await reap(process, marker)
    return process.returncode


async def reap(process: asyncio.subprocess.Process, marker: tuple[str, str] | None = None) -> None:
    """Leave nothing of a container behind: its group, and anything carrying its marker."""
    signal_group(process.pid, signal.SIGKILL)
    if process.returncode is None:
        await process.wait()
    if marker is not None:
        await asyncio.to_thread(kill_marked, *marker)


def exit_code(returncode: int) -> int:
    """Kubernetes reports a signal death as 128 + signal."""
    return 128 - returncode if returncode < 0 else returncode
