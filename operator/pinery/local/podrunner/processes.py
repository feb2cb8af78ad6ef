"""Container processes: start in their own process group, log to a file, stop gracefully.

A container on a real node is a cgroup: when it stops, everything in it stops. Locally a
container is a process group, but programs may leave their group: torchrun starts each worker in
a session of its own (and orphans the workers when it is SIGKILLed). So every process of a
container carries marker variables in its environment, inherited by all its descendants, and
stopping a container ends with a sweep of /proc for processes that still carry them (Linux; on
other systems only the process group is signalled).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import time
from pathlib import Path

# Marker variables: the local-mode instance (its state directory), and the container.
OWNER_VARIABLE = "PINERY_LOCAL_OWNER"
CONTAINER_VARIABLE = "PINERY_LOCAL_CONTAINER"
PROC = Path("/proc")


def resolve_executable(name: str, path: str) -> str | None:
    if "/" in name:
        return name if os.access(name, os.X_OK) else None
    return shutil.which(name, path=path)


async def start(argv: list[str], env: dict[str, str], cwd: Path, log_path: Path) -> asyncio.subprocess.Process:
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab", buffering=0) as log:
        return await asyncio.create_subprocess_exec(
            *argv,
            env=env,
            cwd=str(cwd),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=log,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,  # its own process group, so that the whole tree can be stopped
        )


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
        if not pids or time.monotonic() > deadline:
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
