"""What the operator benchmarks share (imported as `harness`: scripts run as
`python benchmarks/<name>.py`).

- `Stage`: the local control plane and, optionally, the Pinecone emulator, served on this
  process's event loop, with pinery's CRDs, the operator's namespace and API key Secret, a
  kubeconfig and an HTTPS client. The operator runs as a child process, so the servers and the
  driver get one core and the operator the other.
- `Commits`: when objects were stored, read from the control plane's own commit stream (no
  watch client to load the server), on the same clock for every object.
- `OperatorProcess`: `pinery run` (or a floor operator) as a child process, measured from
  /proc: resident memory and CPU time.
- Results: percentiles, a short printed table, JSON under `benchmarks/results/`.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import signal
import ssl
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterable

import aiohttp

REPO = Path(__file__).resolve().parents[1]
RESULTS_DIR = Path(__file__).parent / "results"
OPERATOR_NAMESPACE = "pinery-system"
SECRET_NAME = "pinecone-api-key"
SECRET_KEY = "api-key"
API_KEY = "pclocal-benchmark-key"
GROUP_PATH = "/apis/pinery.dev/v1alpha1"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def percentiles(samples: Iterable[float], unit: float = 1000.0) -> dict[str, float]:
    """p50, p95 and max of `samples` (seconds), in milliseconds unless `unit` says otherwise."""
    ordered = sorted(samples)
    if not ordered:
        return {"p50_ms": None, "p95_ms": None, "max_ms": None}
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {"p50_ms": round(pick(0.5) * unit, 1), "p95_ms": round(pick(0.95) * unit, 1), "max_ms": round(ordered[-1] * unit, 1)}


def counter_delta(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {k: n - before.get(k, 0) for k, n in sorted(after.items()) if n != before.get(k, 0)}


class Client:
    """An HTTPS client of the local control plane with its bearer token."""

    def __init__(self, server: Any, limit: int = 64) -> None:
        self.base = server.url
        context = ssl.create_default_context(cafile=str(server.ca_cert))
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(ssl=context, limit=limit),
            headers={"Authorization": f"Bearer {server.token}"},
        )
        self.latencies: dict[str, list[float]] = {}

    async def call(self, what: str, method: str, path: str, body: Any = None, content_type: str = "application/json",
                   ok: tuple[int, ...] = ()) -> dict:
        started = time.perf_counter()
        data = json.dumps(body).encode() if body is not None else None
        async with self.session.request(method, self.base + path, data=data, headers={"Content-Type": content_type}) as response:
            payload = await response.json()
            if response.status >= 400 and response.status not in ok:
                raise RuntimeError(f"{method} {path}: {response.status} {payload.get('message')}")
        self.latencies.setdefault(what, []).append(time.perf_counter() - started)
        return payload

    async def close(self) -> None:
        await self.session.close()


async def gather_limited(coros: Iterable[Any], limit: int) -> list[Any]:
    gate = asyncio.Semaphore(limit)

    async def one(coro: Any) -> Any:
        async with gate:
            return await coro

    return await asyncio.gather(*(one(c) for c in coros))


class Commits:
    """First time (monotonic) each object of the watched resources was stored, and hooks on
    every change; fed by the store's listeners, so it costs a dict write per change."""

    def __init__(self, plurals: Iterable[str]) -> None:
        self.plurals = set(plurals)
        self.added: dict[tuple[str, str, str], float] = {}
        self.hooks: list[Callable[[str, str, dict], None]] = []

    def __call__(self, event: Any) -> None:
        plural = event.key[1]
        if plural not in self.plurals:
            return
        meta = event.obj["metadata"]
        if event.type == "ADDED":
            self.added.setdefault((plural, meta.get("namespace") or "", meta["name"]), time.monotonic())
        for hook in self.hooks:
            hook(event.type, plural, event.obj)

    def when(self, plural: str, namespace: str, name: str) -> float | None:
        return self.added.get((plural, namespace, name))


class Stage:
    """The local control plane (and the Pinecone emulator) on this process's loop."""

    def __init__(self, state_dir: Path, *, pinecone: bool = False, ready_delay: float = 2.0, watched: Iterable[str] = ()):
        self.state_dir = Path(state_dir)
        self.with_pinecone = pinecone
        self.ready_delay = ready_delay
        self.commits = Commits(watched)
        self.server: Any = None
        self.pinecone: Any = None
        self.client: Client | None = None
        self.kubeconfig = self.state_dir / "kubeconfig"

    async def __aenter__(self) -> "Stage":
        from pinery.api import RESOURCES
        from pinery.generate.crds import build_crd
        from pinery.local.apiserver.server import LocalApiServer

        self.server = LocalApiServer(self.state_dir / "apiserver", token="benchmark")
        await self.server.start()
        self.server.store.hub.listeners.append(self.commits)
        self.server.write_kubeconfig(self.kubeconfig)
        self.client = Client(self.server)
        for res in RESOURCES:
            await self.client.call("create crd", "POST", CRDS, build_crd(res))
        while not all([await self._served(res.plural) for res in RESOURCES]):
            await asyncio.sleep(0.05)
        await self.namespace(OPERATOR_NAMESPACE)
        if self.with_pinecone:
            from pinery.local.pinecone import PineconeEmulator

            # No state directory: the records stay in memory, as nothing here restarts.
            self.pinecone = PineconeEmulator(None, api_key=API_KEY, ready_delay=self.ready_delay)
            await self.pinecone.start()
            secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": SECRET_NAME},
                      "data": {SECRET_KEY: base64.b64encode(API_KEY.encode()).decode()}}
            await self.client.call("create secret", "POST", f"/api/v1/namespaces/{OPERATOR_NAMESPACE}/secrets", secret)
        return self

    async def _served(self, plural: str) -> bool:
        listing = await self.client.call("discovery", "GET", GROUP_PATH, ok=(404,))
        return any(r.get("name") == plural for r in listing.get("resources", []))

    async def __aexit__(self, *exc: Any) -> None:
        if self.client is not None:
            await self.client.close()
        if self.pinecone is not None:
            await self.pinecone.stop()
        if self.server is not None:
            await self.server.stop()

    async def namespace(self, name: str) -> None:
        await self.client.call("create namespace", "POST", "/api/v1/namespaces", {"metadata": {"name": name}}, ok=(409,))

    def requests(self) -> dict[str, int]:
        return self.server.request_counts()

    def pinecone_requests(self) -> dict[str, int]:
        return dict(self.pinecone.faults.requests) if self.pinecone is not None else {}

    def operator_env(self, **settings: Any) -> dict[str, str]:
        """The environment of an operator child process: pinery's settings for this stage."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("PINERY_") and k != "KUBECONFIG"}
        env.update({
            "PINERY_OPERATOR_NAMESPACE": OPERATOR_NAMESPACE,
            "PINERY_METRICS_PORT": "0",
            "PINERY_HEALTH_PORT": "0",
            "PINERY_CLUSTER_NAME": "benchmark",
            "PYTHONUNBUFFERED": "1",
        })
        if self.pinecone is not None:
            env["PINERY_PINECONE_HOST"] = self.pinecone.url
        env.update({f"PINERY_{k.upper()}": str(v) for k, v in settings.items()})
        return env

    async def wait_watching(self, plurals: Iterable[str], timeout: float = 60.0) -> None:
        """Until the operator watches every resource it handles (it is then ready to work)."""
        wanted = [f"watch {p}" for p in plurals]
        await until(lambda: all(self.requests().get(w) for w in wanted), timeout, f"the operator to watch {', '.join(plurals)}")


async def until(predicate: Callable[[], bool], timeout: float, what: str, interval: float = 0.02) -> float:
    """Poll `predicate` on the loop (letting the servers work); the monotonic time it held."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")
        await asyncio.sleep(interval)
    return time.monotonic()


async def until_async(read: Callable[[], Awaitable[Any]], check: Callable[[Any], bool], timeout: float, what: str,
                      interval: float = 0.5) -> float:
    """`until` for a state read with a request: `check(await read())`, every `interval` seconds."""
    deadline = time.monotonic() + timeout
    while not check(await read()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")
        await asyncio.sleep(interval)
    return time.monotonic()


async def quiet(counts: Callable[[], dict[str, int]], seconds: float, timeout: float) -> float:
    """Wait until no request has been counted for `seconds` (at most `timeout`); how long it took."""
    started = time.monotonic()
    last, since = counts(), time.monotonic()
    while time.monotonic() - since < seconds and time.monotonic() - started < timeout:
        await asyncio.sleep(0.1)
        now = counts()
        if now != last:
            last, since = now, time.monotonic()
    return time.monotonic() - started


def sample_this_process(label: str) -> subprocess.Popen | None:
    """With BENCHMARK_PYSPY set (a file), py-spy samples this process (the control plane and the
    driver) into `<file>.<label>` until `stop_sampling`."""
    sampled = os.environ.get("BENCHMARK_PYSPY")
    return _py_spy(f"{sampled}.{label}", os.getpid()) if sampled else None


def _py_spy(out: str, pid: int) -> subprocess.Popen:
    """py-spy recording process `pid` into `out` (collapsed stacks), until SIGINT."""
    return subprocess.Popen([str(Path(sys.executable).parent / "py-spy"), "record", "--format", "raw", "--rate", "250",
                             "--nonblocking", "-o", out, "--pid", str(pid)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop_sampling(sampler: subprocess.Popen | None) -> None:
    if sampler is not None:  # it writes its samples on SIGINT
        sampler.send_signal(signal.SIGINT)
        sampler.wait(30)


class OperatorProcess:
    """An operator as a child process, measured from /proc."""

    def __init__(self, argv: list[str], env: dict[str, str], log_path: Path) -> None:
        self.argv, self.env, self.log_path = argv, env, log_path
        self.process: subprocess.Popen | None = None
        self.sampler: subprocess.Popen | None = None

    @classmethod
    def pinery(cls, stage: Stage, log_path: Path, **settings: Any) -> "OperatorProcess":
        argv = [sys.executable, "-m", "pinery", "run", "--standalone", "--kubeconfig", str(stage.kubeconfig)]
        profile = os.environ.get("BENCHMARK_PROFILE")  # a file: the operator runs under cProfile
        if profile:
            argv[1:1] = ["-m", "cProfile", "-o", profile]
        return cls(argv, stage.operator_env(**settings), log_path)

    @classmethod
    def floor(cls, stage: Stage, log_path: Path, mode: str, **settings: Any) -> "OperatorProcess":
        argv = [sys.executable, str(Path(__file__).parent / "floor_operator.py"), mode, "--kubeconfig", str(stage.kubeconfig)]
        return cls(argv, stage.operator_env(**settings), log_path)

    def __enter__(self) -> "OperatorProcess":
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(self.argv, env=self.env, stdout=log, stderr=subprocess.STDOUT, cwd=REPO)
        sampled = os.environ.get("BENCHMARK_PYSPY")  # a file: py-spy samples the operator (collapsed stacks)
        if sampled and "pinery" in self.argv:
            self.sampler = _py_spy(sampled, self.process.pid)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def stop(self, timeout: float = 20.0) -> None:
        stop_sampling(self.sampler)
        self.sampler = None
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def check_alive(self) -> None:
        if self.process is None or self.process.poll() is not None:
            tail = self.log_path.read_text(errors="replace")[-3000:] if self.log_path.exists() else ""
            raise RuntimeError(f"the operator exited ({self.process and self.process.returncode}):\n{tail}")

    def _status(self) -> dict[str, str]:
        lines = Path(f"/proc/{self.process.pid}/status").read_text().splitlines()
        return dict(line.split(":", 1) for line in lines if ":" in line)

    def rss_mb(self) -> float:
        """Resident memory now (VmRSS), in MiB."""
        return round(int(self._status()["VmRSS"].split()[0]) / 1024, 1)

    def peak_rss_mb(self) -> float:
        """The most resident memory so far (VmHWM), in MiB."""
        return round(int(self._status()["VmHWM"].split()[0]) / 1024, 1)

    def cpu_seconds(self) -> float:
        """User plus system CPU time of the process (all its threads)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def arguments(doc: str, quick: str) -> argparse.ArgumentParser:
    """A benchmark's command line, with the options every one has."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=quick)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for convergence")
    parser.add_argument("--out", type=Path, help="where to write the JSON (default: benchmarks/results/)")
    return parser


def machine() -> dict[str, Any]:
    return {"python": sys.version.split()[0], "cpus": os.cpu_count(), "load_average_at_start": [round(x, 2) for x in os.getloadavg()]}


def write_results(name: str, results: dict[str, Any], out: Path | None = None) -> Path:
    path = out or RESULTS_DIR / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n")
    return path


def print_table(title: str, header: list[str], rows: list[list[Any]]) -> None:
    cells = [header] + [["" if c is None else str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    print(f"\n{title}")
    for i, row in enumerate(cells):
        print("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
        if i == 0:
            print("  " + "  ".join("-" * w for w in widths))


def top(counts: dict[str, int], divisor: float = 1.0, limit: int = 12) -> dict[str, float]:
    """The largest entries of a request breakdown, each divided by `divisor` (per object)."""
    return {k: round(n / divisor, 2) for k, n in Counter(counts).most_common(limit)}
