"""What the reliability suites share: local mode with an operator that can be killed, a small
API facade, waiting, and the JSON results."""

from __future__ import annotations

import asyncio
import json
import platform
import random
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, TypeVar

from pinery.gateways.kube import path_for
from pinery.local.cluster import LocalCluster
from pinery.local.kubeclient import ApiError, KubeClient
from pinery.local.podrunner import processes

T = TypeVar("T")



class Api:
    """The calls the suites make, by kind and name, in one namespace."""

    def __init__(self, client: KubeClient, namespace: str):
        self.client, self.namespace = client, namespace

    def path(self, kind: str, name: str = "") -> str:
        if kind == "Event":  # the operator posts Events through Kopf: pinery.gateways.kube has no path for them
            return f"/api/v1/namespaces/{self.namespace}/events" + (f"/{name}" if name else "")
        return path_for(kind, self.namespace, name or None)

    async def create_namespace(self) -> None:
        try:
            await self.client.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                             "metadata": {"name": self.namespace}})
        except ApiError as exc:
            if exc.status != 409:
                raise

    async def create(self, obj: dict) -> dict:
        return await self.client.create(self.path(obj["kind"]), obj)

    async def get(self, kind: str, name: str) -> dict | None:
        return await self.client.get_or_none(self.path(kind, name))

    async def list(self, kind: str, selector: str | None = None) -> list[dict]:
        params = {"labelSelector": selector} if selector else {}
        return (await self.client.get(self.path(kind), **params))["items"]

    async def patch(self, kind: str, name: str, body: dict) -> dict:
        return await self.client.merge_patch(self.path(kind, name), body)

    async def delete(self, kind: str, name: str) -> None:
        await self.client.delete(self.path(kind, name))


async def wait_until(check: Callable[[], Awaitable[T]], timeout: float, interval: float = 0.3) -> T | None:
    """Poll `check` until it returns something truthy (returned), or None after `timeout`.
    API errors while polling count as "not yet" (the server is busy, the object is changing)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = await check()
        except (ApiError, OSError, asyncio.TimeoutError):
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            return None
        await asyncio.sleep(interval)


@dataclass
class Driver:
    """Acts as a user would (patch, delete) and waits for the operator, by kind and name. A wait
    that times out is recorded as a stall and returns False: the suite goes on, and its final
    checks say whether anything stayed wrong."""

    api: Api
    step_timeout: float
    stalls: list[str] = field(default_factory=list)
    waits: list[tuple[float, str]] = field(default_factory=list)  # (seconds, what) of every wait
    started: float = field(default_factory=time.monotonic)

    def say(self, line: str) -> None:
        """Progress on stdout (shown with `pytest -s`)."""
        print(f"[{time.monotonic() - self.started:7.1f}s] {line}", flush=True)

    def stall(self, what: str) -> None:
        self.stalls.append(what)
        self.say(f"stall: {what}")

    async def _wait(self, check: Callable[[], Awaitable[Any]], what: str, kind: str | None = None,
                    name: str | None = None, extra: float = 0.0) -> bool:
        """Wait up to the step timeout, plus `extra` seconds where the operator waits by design."""
        began, timeout = time.monotonic(), self.step_timeout + extra
        done = await wait_until(check, timeout)
        self.waits.append((round(time.monotonic() - began, 1), what))
        if done:
            return True
        # What the object showed when the wait gave up, to tell a slow operator from a stuck one.
        obj = await self.api.get(kind, name) if kind and name else None
        shown = f"; status then: {json.dumps((obj or {}).get('status'), sort_keys=True)[:800]}" if obj else ""
        self.stall(f"{what} within {timeout:.0f}s{shown}")
        return False

    def slowest_waits(self, count: int = 5) -> list[dict]:
        return [{"seconds": seconds, "step": what} for seconds, what in sorted(self.waits, reverse=True)[:count]]

    async def synced(self, name: str, reason: str | None = None) -> bool:
        """Until the VectorIndex is Ready and Synced at its current generation (with `reason`:
        until its Ready condition says that reason)."""
        async def check():
            obj = await self.api.get("VectorIndex", name)
            if obj is None:
                return False
            status = obj.get("status") or {}
            conditions = {c["type"]: c for c in status.get("conditions") or []}
            if status.get("observedGeneration") != obj["metadata"].get("generation"):
                return False
            if reason is not None:
                return conditions.get("Ready", {}).get("reason") == reason
            return all(conditions.get(t, {}).get("status") == "True" for t in ("Ready", "Synced"))

        return await self._wait(check, f"VectorIndex {name}: not {reason or 'synced'}", "VectorIndex", name)

    async def job_phase(self, name: str, *phases: str) -> bool:
        async def check():
            job = await self.api.get("FSDPJob", name)
            return job is not None and (job.get("status") or {}).get("phase") in phases

        return await self._wait(check, f"FSDPJob {name}: not {'/'.join(phases)}", "FSDPJob", name)

    async def job_started(self, name: str) -> bool:
        """Until the FSDPJob runs or has already finished. Running alone may never be seen: a
        pass of the operator can find the pods already done (it was down while they ran) and
        go from Pending to Succeeded at once, and a poll can miss a short Running."""
        return await self.job_phase(name, "Running", "Succeeded", "Failed")

    async def patch_spec(self, kind: str, name: str, spec: dict) -> None:
        await self.api.patch(kind, name, {"spec": spec})

    async def delete(self, kind: str, name: str) -> bool:
        """Delete and wait until the object is gone. True when a finalizer held it, i.e. the
        operator had taken it on: an object it never saw goes at once, and nothing is cleaned up."""
        answer = await self.api.client.delete(self.api.path(kind, name))
        held = bool(isinstance(answer, dict) and (answer.get("metadata") or {}).get("finalizers"))

        async def check():
            return await self.api.get(kind, name) is None

        await self._wait(check, f"{kind} {name}: not gone", kind, name)
        return held


@dataclass
class OperatorKiller:
    """SIGKILLs the operator at seeded random moments and starts a new one after a seeded
    pause, until stopped. The moments are drawn from `rng` alone, so a seed fixes them."""

    cluster: LocalCluster
    rng: random.Random
    interval: tuple[float, float]
    down: tuple[float, float] = (0.0, 1.0)
    kills: int = 0
    uptimes: list[float] = field(default_factory=list)
    say: Callable[[str], None] = lambda line: None

    async def run(self, stop: asyncio.Event) -> None:
        started = time.monotonic()
        while True:
            try:
                await asyncio.wait_for(stop.wait(), self.rng.uniform(*self.interval))
                return
            except asyncio.TimeoutError:
                pass
            down = self.rng.uniform(*self.down)
            self.uptimes.append(round(time.monotonic() - started, 2))
            self.kills += 1
            self.say(f"kill {self.kills}: operator SIGKILLed, down {down:.1f}s")
            await asyncio.to_thread(self.cluster.run_coroutine, self.cluster.restart_operator(signal.SIGKILL, down))
            started = time.monotonic() - down


def start_local_mode(state_dir: Path, *, ready_delay: float = 0.5, **options: Any) -> LocalCluster:
    return LocalCluster(state_dir, pinecone_ready_delay=ready_delay, **options).start_in_thread(timeout=120)


def operators_running(cluster: LocalCluster) -> int:
    """How many operator processes of this local mode are alive (never more than one)."""
    return sum(1 for pid in processes.marked(processes.OWNER_VARIABLE, cluster.operator_marker) if not processes.ended(pid))


def pod_processes(cluster: LocalCluster) -> list[int]:
    """Pod processes of this local mode still alive."""
    pids = processes.marked(processes.OWNER_VARIABLE, str((cluster.state_dir / "pods").resolve()))
    return [pid for pid in pids if not processes.ended(pid)]


def secret_leaks(secret: str, texts: dict[str, str]) -> list[str]:
    """Where the secret appears: the names of the texts that contain it."""
    return sorted(where for where, text in texts.items() if secret in text)


def write_result(results_dir: Path, name: str, result: dict[str, Any]) -> Path:
    """The suite's result as JSON, with the machine it ran on."""
    results_dir.mkdir(parents=True, exist_ok=True)
    path = results_dir / f"{name}.json"
    document = {
        "suite": name,
        "recordedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"python": platform.python_version(), "cpus": _cpus(), "system": platform.system()},
        **result,
    }
    path.write_text(json.dumps(document, indent=2, sort_keys=False) + "\n")
    return path


def _cpus() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 0)
