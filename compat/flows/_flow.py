"""What every flow script shares (standard library only: flows run in the client's own venv).

The driver (compat/run.py) passes the emulator through the environment:
PINERY_COMPAT_HOST (its control-plane URL), PINECONE_API_KEY, PINERY_COMPAT_INDEX (the index
name to use), PINERY_COMPAT_HYBRID ("1" where the flow runs a sparse+dense query) and
PINERY_COMPAT_RESULT (the file the JSON result is written to); PINERY_COMPAT_GRPC_ADVICE is the
message the emulator gives gRPC clients (pinecone_grpc.py checks it).

A flow is a sequence of steps. A failed step records its error and the flow goes on, so one
run shows every step that fails; a step marked `critical` (the index, the first upsert) skips
the remaining steps when it fails, since they would only fail for the same reason. The step
`cleanup` steps (deleting the index) run whatever happened after the first step (which makes the
index). A step the client has no
API for raises NotApplicable: recorded as "not applicable", not as a failure.

    flow = Flow("pinecone")

    @flow.step("create_index", critical=True)
    def _():
        ...

    sys.exit(flow.write())
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
import traceback
from importlib import metadata

HOST = os.environ.get("PINERY_COMPAT_HOST", "http://127.0.0.1:5080")
API_KEY = os.environ.get("PINECONE_API_KEY", "pclocal")
INDEX = os.environ.get("PINERY_COMPAT_INDEX", "compat")
HYBRID = os.environ.get("PINERY_COMPAT_HYBRID", "1") == "1"
RESULT = os.environ.get("PINERY_COMPAT_RESULT")
NAMESPACE = "films"
DIMENSION = 8


class FlowFailed(AssertionError):
    pass


def check(condition: bool, message: str) -> None:
    """An assertion that survives `python -O` and says what was wrong."""
    if not condition:
        raise FlowFailed(message)


def one_hot(i: int, scale: float = 1.0) -> list[float]:
    values = [0.0] * DIMENSION
    values[i % DIMENSION] = scale
    return values


def near(i: int) -> list[float]:
    """A vector closest to one_hot(i) under cosine and dot product."""
    values = [0.01] * DIMENSION
    values[i % DIMENSION] = 1.0
    return values


def wait_for(what: str, predicate, timeout: float = 60.0, interval: float = 0.2):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise FlowFailed(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


def error_text(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/compat/flows/" in f.filename.replace("\\", "/")]
    where = f" (at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno})" if frames else ""
    return (text[:3000] + where) if text else type(exc).__name__ + where


class NotApplicable(Exception):
    """Raised by a step that the client has no API for (recorded, not a failure)."""


class Flow:
    def __init__(self, *distributions: str) -> None:
        self.steps: list[dict] = []
        self.aborted: str | None = None
        self.packages = {}
        for name in distributions:
            try:
                self.packages[name] = metadata.version(name)
            except metadata.PackageNotFoundError:
                self.packages[name] = None

    def step(self, name: str, *, critical: bool = False, cleanup: bool = False):
        """Decorator that runs the function at once as the step `name` and records the outcome."""
        def run(fn):
            entry = {"name": name, "status": "passed"}
            self.steps.append(entry)
            if self.aborted and (not cleanup or self.aborted == self.steps[0]["name"]):
                entry.update(status="skipped", error=f"skipped: {self.aborted} failed")
                return fn
            started = time.monotonic()
            try:
                fn()
            except NotApplicable as why:
                entry.update(status="not applicable", error=str(why))
            except Exception as exc:  # a flow reports every failure, whatever its type
                entry.update(status="failed", error=error_text(exc))
                if critical:
                    self.aborted = name
            entry["seconds"] = round(time.monotonic() - started, 3)
            return fn
        return run

    def write(self) -> int:
        failed = [s for s in self.steps if s["status"] in ("failed", "skipped")]
        result = {"python": platform.python_version(), "packages": self.packages, "steps": self.steps}
        text = json.dumps(result, indent=2)
        if RESULT:
            with open(RESULT, "w") as out:
                out.write(text + "\n")
        for s in self.steps:
            print(f"{s['status']:>14}  {s['name']}" + (f": {s['error']}" if s.get("error") else ""))
        return 1 if failed else 0


def main(flow: Flow, body) -> None:
    """Run `body(flow)`, then write the result and exit 1 if a step failed. An exception out of
    the body itself (outside any step, e.g. the client failing to import) is a failed step."""
    try:
        body(flow)
    except Exception as exc:
        flow.steps.append({"name": "setup", "status": "failed", "error": error_text(exc)})
    sys.exit(flow.write())
