"""Container processes: start in their own process group, log to a file, stop gracefully.

torchrun forwards SIGTERM to its workers but orphans them on SIGKILL, so stopping sends SIGTERM
to the whole group, waits the grace period, then SIGKILLs the group.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
from pathlib import Path


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


async def stop(process: asyncio.subprocess.Process, grace_seconds: float) -> int | None:
    """SIGTERM the process group, wait up to the grace period, then SIGKILL it."""
    if process.returncode is None:
        signal_group(process.pid, signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), timeout=max(grace_seconds, 0.1))
        except asyncio.TimeoutError:
            pass
    # Whatever the leader did, leave no child of the group behind.
    signal_group(process.pid, signal.SIGKILL)
    if process.returncode is None:
        await process.wait()
    return process.returncode


def exit_code(returncode: int) -> int:
    """Kubernetes reports a signal death as 128 + signal."""
    return 128 - returncode if returncode < 0 else returncode
