"""VectorIndex convergence: from the Pinecone index being Ready to the object being Ready, the
Pinecone calls that took, and a resync sweep of many objects sharing one API key.

    flock /tmp/pinery-heavy.lock .venv/bin/python benchmarks/vectorindex_convergence.py [--quick]

`pinery run` against the local control plane and the Pinecone emulator (indexes turn Ready
`--ready-delay` seconds after their creation; the operator's own clocks are the defaults):

- single: serverless VectorIndexes created one at a time, each waited for;
- burst: `--burst` of them created at once (32 requests in flight), all with the default key;
- sweep: once everything is Ready and the operator quiet, the next drift-repair sweep
  (`--resync` seconds apart): Pinecone calls, control-plane requests and how long it takes.

Ready latency is the object's Ready condition turning True (the control plane's commit time)
minus the moment the emulator turns the index Ready (its creation time plus the ready delay).
The floor is computed from the operator's own readiness backoff: a poller that describes the
index on that schedule from the moment it was created sees Ready at the first poll at or after
the ready delay; it needs one describe before creating (to find none), the create, and the
describes of that schedule. Whatever the schedule, no operator converges an index with fewer
than 3 calls (one describe finding none, the create, one describe finding it Ready). Writes `benchmarks/results/vectorindex_convergence.json`.
"""

from __future__ import annotations

import asyncio
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import harness

PLURAL = "vectorindexes"


def index_body(name: str) -> dict:
    return {
        "apiVersion": "pinery.dev/v1alpha1", "kind": "VectorIndex", "metadata": {"name": name},
        "spec": {"dimension": 8, "metric": "cosine", "serverless": {"cloud": "aws", "region": "us-east-1"},
                 "deletionPolicy": "Delete", "connectionConfigMap": f"{name}-connection"},
    }


def readiness_floor(ready_delay: float) -> dict[str, float]:
    """What a poller on the operator's readiness schedule needs: its latency and its calls."""
    from pinery.vectorindex.schedule import Timing

    timing = Timing()
    # The pass that creates looks again after poll(0); the n-th pass that finds the index
    # still initializing looks again after poll(n), counting from 0.
    at, polls = timing.poll(0), 1
    while at < ready_delay:
        at += timing.poll(polls - 1)
        polls += 1
    # Fewer calls are possible only by looking later: one describe finding none, the create
    # and one describe finding it Ready.
    return {"latency_ms": round((at - ready_delay) * 1000, 1), "pinecone_calls": 2 + polls, "describes_after_create": polls,
            "least_pinecone_calls": 3}


def ready(obj: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in (obj.get("status") or {}).get("conditions") or [])


class Indexes:
    def __init__(self, stage: harness.Stage, ready_delay: float) -> None:
        self.stage, self.ready_delay = stage, ready_delay
        self.ready_at: dict[str, float] = {}  # wall clock, like the emulator's
        stage.commits.hooks.append(self._seen)

    def _seen(self, kind: str, plural: str, obj: dict) -> None:
        if plural == PLURAL and ready(obj):
            self.ready_at.setdefault(obj["metadata"]["name"], time.time())

    async def create(self, name: str) -> None:
        await self.stage.client.call("create index", "POST", f"{harness.GROUP_PATH}/namespaces/default/{PLURAL}", index_body(name))

    def latency(self, name: str) -> float:
        record = self.stage.pinecone.store.indexes[("default", name)]
        return self.ready_at[name] - (record.created_at + self.ready_delay)


async def measure(state_dir: Path, single: int, burst: int, ready_delay: float, resync: float, timeout: float) -> dict[str, Any]:
    async with harness.Stage(state_dir, pinecone=True, ready_delay=ready_delay, watched=(PLURAL,)) as stage:
        indexes = Indexes(stage, ready_delay)
        with harness.OperatorProcess.pinery(stage, state_dir / "operator.log", resync_seconds=resync) as proc:
            await stage.wait_watching([PLURAL])
            result: dict[str, Any] = {"idle_rss_mb": proc.rss_mb()}

            before = stage.pinecone_requests()
            names = [f"single-{i:03d}" for i in range(single)]
            for name in names:
                await indexes.create(name)
                await harness.until(lambda name=name: name in indexes.ready_at, timeout, f"{name} Ready")
                proc.check_alive()
            calls = harness.counter_delta(stage.pinecone_requests(), before)
            result["single"] = {
                "indexes": single,
                "ready_latency": harness.percentiles(indexes.latency(n) for n in names),
                "pinecone_calls_per_index": round(sum(calls.get(k, 0) for k in ("describe_index", "create_index")) / single, 2),
                "pinecone_calls": calls,
            }
            await harness.quiet(stage.requests, 1.0, 30)

            names = [f"burst-{i:04d}" for i in range(burst)]
            before, kube_before, cpu_before = stage.pinecone_requests(), stage.requests(), proc.cpu_seconds()
            started = time.time()
            await harness.gather_limited((indexes.create(n) for n in names), 32)
            await harness.until(lambda: all(n in indexes.ready_at for n in names), timeout, f"{burst} indexes Ready", interval=0.2)
            proc.check_alive()
            calls = harness.counter_delta(stage.pinecone_requests(), before)
            kube = harness.counter_delta(stage.requests(), kube_before)
            kube["create vectorindexes"] -= burst  # the benchmark's own
            kube = {k: n for k, n in kube.items() if n}
            result["burst"] = {
                "indexes": burst,
                "ready_latency": harness.percentiles(indexes.latency(n) for n in names),
                "all_ready_seconds": round(max(indexes.ready_at[n] for n in names) - started, 1),
                "pinecone_calls_per_index": round(sum(calls.get(k, 0) for k in ("describe_index", "create_index")) / burst, 2),
                "pinecone_calls": calls,
                "requests_per_index": round(sum(kube.values()) / burst, 2),
                "requests_by_kind_per_index": harness.top(kube, burst, limit=12),
                "operator_cpu_seconds": round(proc.cpu_seconds() - cpu_before, 1),
            }
            await harness.quiet(stage.requests, 1.0, 60)
            result["sweep"] = await sweep(stage, proc, single + burst, resync, timeout)
            result["rss_mb"] = proc.rss_mb()
            result["peak_rss_mb"] = proc.peak_rss_mb()
        return result


async def sweep(stage: harness.Stage, proc: harness.OperatorProcess, objects: int, resync: float, timeout: float) -> dict[str, Any]:
    """The next drift-repair sweep: every object looks at its index once, on one shared listing."""
    boundary = math.ceil(time.time() / resync) * resync
    if boundary - time.time() < 1.0:
        boundary += resync
    await asyncio.sleep(boundary - time.time() - 0.5)
    before, kube_before, cpu_before = stage.pinecone_requests(), stage.requests(), proc.cpu_seconds()
    reads = lambda: stage.requests().get(f"get {PLURAL}", 0) - kube_before.get(f"get {PLURAL}", 0)  # noqa: E731
    await harness.until(lambda: reads() >= objects, resync + timeout, "every object's sweep pass")
    took = time.time() - boundary
    await harness.quiet(stage.requests, 1.0, 30)
    calls = harness.counter_delta(stage.pinecone_requests(), before)
    kube = harness.counter_delta(stage.requests(), kube_before)
    return {
        "objects": objects,
        "resync_seconds": resync,
        "spread_seconds": round(resync * 0.1, 1),  # objects join within the first tenth of the interval
        "seconds": round(took, 2),
        "pinecone_calls": calls,
        "list_indexes": calls.get("list_indexes", 0),
        "describes": calls.get("describe_index", 0),
        "requests_per_object": round(sum(kube.values()) / objects, 2),
        "requests_by_kind": kube,
        "operator_cpu_seconds": round(proc.cpu_seconds() - cpu_before, 2),
    }


def main() -> int:
    parser = harness.arguments(__doc__, "2 single indexes, a burst of 50, sweeps every 10 s")
    parser.add_argument("--single", type=int, default=5)
    parser.add_argument("--burst", type=int, default=500)
    parser.add_argument("--ready-delay", type=float, default=3.0, help="seconds the emulator takes to make an index Ready")
    parser.add_argument("--resync", type=float, default=30.0, help="PINERY_RESYNC_SECONDS of the operator")
    args = parser.parse_args()
    if args.quick:
        args.single, args.burst, args.resync = min(args.single, 2), min(args.burst, 50), min(args.resync, 10.0)

    floor = readiness_floor(args.ready_delay)
    results: dict[str, Any] = {"ready_delay_seconds": args.ready_delay, "floor": floor, **harness.machine()}
    with tempfile.TemporaryDirectory() as tmp:
        results["pinery"] = asyncio.run(measure(Path(tmp), args.single, args.burst, args.ready_delay, args.resync, args.timeout))
    path = harness.write_results("vectorindex_convergence", results, args.out)

    r = results["pinery"]
    rows = [
        [f"single ({args.single})", f"{r['single']['ready_latency']['p50_ms']} / {r['single']['ready_latency']['p95_ms']}",
         r["single"]["pinecone_calls_per_index"], ""],
        [f"burst ({args.burst})", f"{r['burst']['ready_latency']['p50_ms']} / {r['burst']['ready_latency']['p95_ms']}",
         r["burst"]["pinecone_calls_per_index"], f"{r['burst']['requests_per_index']}"],
        ["floor (a poller on the same schedule)", f"{floor['latency_ms']}", f"{floor['pinecone_calls']} (least possible {floor['least_pinecone_calls']})", ""],
    ]
    harness.print_table(f"VectorIndex: emulator Ready -> object Ready (ready delay {args.ready_delay:g} s)",
                        ["indexes", "latency p50 / p95 ms", "Pinecone calls/index", "API requests/index"], rows)
    s = r["sweep"]
    harness.print_table(f"Resync sweep of {s['objects']} objects sharing one key (every {s['resync_seconds']:g} s)",
                        ["list_indexes", "describes", "seconds (spread)", "API requests/object", "operator CPU s"],
                        [[s["list_indexes"], s["describes"], f"{s['seconds']} ({s['spread_seconds']})", s["requests_per_object"], s["operator_cpu_seconds"]]])
    print(f"\nwritten to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
