"""Operator memory: resident memory of `pinery run` idle and with many objects, against Kopf's own.

    flock /tmp/pinery-heavy.lock .venv/bin/python benchmarks/operator_memory.py [--quick]

The operator runs as its own process against the local control plane and the Pinecone emulator
(indexes Ready after 1 s, sweeps every `--resync` seconds); its memory is read from /proc
(VmRSS now, VmHWM the peak). Steps: idle once it watches everything; then `--indexes`
VectorIndexes and `--jobs` FSDPJobs (2 nodes each, so a Service, a ConfigMap and 2 pods each)
created at once, measured once every index is Ready and every job has its children, and again
after `--warmup` and then `--hold` seconds of sweeps, its RSS read every `--every` seconds
through both: memory that keeps growing shows as the growth over the hold (`growth`, by the
medians of its first and last samples; `last_minus_first_mb_over_hold` is the plain
difference). Then the operator is stopped and started again over the same objects, and measured
once its first passes are done and `--restart-hold` seconds more have passed: what the objects
cost an operator that did not live through their creation.

The floor is Kopf alone, set up as pinery is, with no-op event handlers for the same two kinds
(floor_operator.py `noop`), given the same objects: what listing, watching and remembering them
costs before pinery does anything (it makes no children, so it holds no pods).
With `--trace`, pinery runs under tracemalloc (traced_operator.py), and the live Python memory it
holds, idle and converged, is reported by the line that allocated it: what the RSS is made of.
Tracing inflates the RSS itself, so a traced run answers that question only.
Writes `benchmarks/results/operator_memory.json` (`operator_memory_traced.json` with `--trace`).
"""

from __future__ import annotations

import asyncio
import json
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import harness
from fsdpjob_convergence import CHILDREN, Jobs
from vectorindex_convergence import PLURAL as INDEXES
from vectorindex_convergence import Indexes

JOBS = "fsdpjobs"


async def traced(proc: harness.OperatorProcess, out: Path) -> dict[str, Any]:
    """What live Python memory the traced operator holds now."""
    out.unlink(missing_ok=True)
    proc.process.send_signal(signal.SIGUSR1)
    await harness.until(out.exists, 120, "the traced operator's report", interval=0.2)
    return json.loads(out.read_text())


async def sample_rss(proc: harness.OperatorProcess, origin: float, until: float, every: float, samples: list[list[float]]) -> None:
    """Append [seconds since `origin`, RSS in MiB] every `every` seconds, up to `until` seconds
    after `origin` (monotonic)."""
    while (left := origin + until - time.monotonic()) > 0:
        await asyncio.sleep(min(every, left))
        proc.check_alive()
        samples.append([round(time.monotonic() - origin, 1), proc.rss_mb()])


TREND_SAMPLES = 5


def growth(held: list[float], window: int = TREND_SAMPLES) -> float:
    """The RSS trend over the hold's samples: the median of the last `window` less the median of
    the first `window`. One sample falls at some point of a sweep, so it holds that sweep's
    transient working memory too; growth is what stays, which the medians see."""
    return round(statistics.median(held[-window:]) - statistics.median(held[:window]), 1)


async def measure(operator: str, state_dir: Path, indexes: int, jobs: int, resync: float, warmup: float, hold: float,
                  every: float, restart_hold: float, timeout: float, trace: bool = False) -> dict[str, Any]:
    async with harness.Stage(state_dir, pinecone=True, ready_delay=1.0, watched=(INDEXES, JOBS, *CHILDREN)) as stage:
        vis = Indexes(stage, 1.0)
        fjs = Jobs(stage, "default", 2)
        log = state_dir / "operator.log"
        if operator == "pinery":
            proc = harness.OperatorProcess.pinery(stage, log, resync_seconds=resync)
            if trace:
                proc.argv = [sys.executable, str(Path(__file__).parent / "traced_operator.py"), *proc.argv[3:]]
                proc.env["BENCHMARK_TRACE_OUT"] = str(state_dir / "trace.json")
                # Under tracemalloc the operator froze for good in about one run in four, right after
                # two Pinecone SDK (10.x) calls answered in two worker threads at once; one call at a
                # time avoids it. Tracing measures memory, not speed, so nothing is lost.
                proc.env["PINERY_PINECONE_CONCURRENCY"] = "1"
        else:
            proc = harness.OperatorProcess.floor(stage, log, "noop")
        with proc:
            await stage.wait_watching([INDEXES, JOBS])
            await asyncio.sleep(2.0)
            result: dict[str, Any] = {"idle_rss_mb": proc.rss_mb()}
            if trace:
                result["traced_idle"] = await traced(proc, state_dir / "trace.json")
            index_names = [f"index-{i:04d}" for i in range(indexes)]
            job_names = [f"job-{i:04d}" for i in range(jobs)]
            started = time.monotonic()
            await harness.gather_limited([*(vis.create(n) for n in index_names), *(fjs.create(n) for n in job_names)], 32)
            if operator == "pinery":
                await harness.until(lambda: all(n in vis.ready_at for n in index_names), timeout, "every index Ready", interval=0.2)
                await harness.until(lambda: all(fjs.converged_at(n) for n in job_names), timeout, "every job's children", interval=0.2)
            await harness.quiet(stage.requests, 2.0, 60)
            proc.check_alive()
            result["converged_seconds"] = round(time.monotonic() - started, 1)
            result["objects"] = indexes + jobs
            result["rss_mb"] = proc.rss_mb()
            if trace:
                result["traced_converged"] = await traced(proc, state_dir / "trace.json")
            # RSS through the sweeps: the warm-up (the first sweeps still shape the heap), then the hold
            origin, samples = time.monotonic(), [[0.0, result["rss_mb"]]]
            result["rss_samples"] = samples
            await sample_rss(proc, origin, warmup, every, samples)
            hold_from = len(samples) - 1  # the sample read as the hold began
            at_hold = result["rss_mb_after_warmup"] = samples[hold_from][1]
            await sample_rss(proc, origin, warmup + hold, every, samples)
            result["rss_mb_after_hold"] = samples[-1][1]
            result["last_minus_first_mb_over_hold"] = round(samples[-1][1] - at_hold, 1)
            result["growth_mb_over_hold"] = growth([mb for _, mb in samples[hold_from:]])
            result["peak_rss_mb"] = proc.peak_rss_mb()
            result["kib_per_object"] = round((result["rss_mb_after_hold"] - result["idle_rss_mb"]) * 1024 / (indexes + jobs), 1)
        if trace:
            return result
        print(f"{operator}, before the restart: {json.dumps(result)}", file=sys.stderr, flush=True)  # kept if what follows fails
        # The same operator started again over the converged objects: what they cost one that
        # did not live through their creation (it reads them all and starts their loops at once).
        again = harness.OperatorProcess(proc.argv, proc.env, state_dir / "operator-restarted.log")
        watches = {k: n for k, n in stage.requests().items() if k.startswith("watch ")}
        with again:
            await harness.until(lambda: all(stage.requests().get(f"watch {p}", 0) > watches.get(f"watch {p}", 0) for p in (INDEXES, JOBS)),
                                timeout, "the restarted operator to watch")  # it lists every object first
            await harness.quiet(stage.requests, 2.0, max(120.0, timeout))
            await asyncio.sleep(restart_hold)
            again.check_alive()
            result["restarted_rss_mb"] = again.rss_mb()
            result["restarted_kib_per_object"] = round((result["restarted_rss_mb"] - result["idle_rss_mb"]) * 1024 / (indexes + jobs), 1)
        return result


def main() -> int:
    parser = harness.arguments(__doc__, "50 of each kind, held 10 s")
    parser.add_argument("--indexes", type=int, default=500)
    parser.add_argument("--jobs", type=int, default=500)
    parser.add_argument("--resync", type=float, default=10.0, help="PINERY_RESYNC_SECONDS of the operator")
    parser.add_argument("--warmup", type=float, default=0.0, help="seconds of sweeps before the hold starts")
    parser.add_argument("--hold", type=float, default=30.0, help="seconds of sweeps over which growth is measured")
    parser.add_argument("--every", type=float, default=30.0, help="seconds between RSS samples")
    parser.add_argument("--restart-hold", type=float, help="seconds after the restarted operator's first passes (default: --hold)")
    parser.add_argument("--trace", action="store_true", help="run pinery under tracemalloc and report what its memory is")
    args = parser.parse_args()
    if args.quick:
        args.indexes, args.jobs, args.hold, args.warmup = min(args.indexes, 50), min(args.jobs, 50), min(args.hold, 10.0), 0.0
    restart_hold = args.hold if args.restart_hold is None else args.restart_hold

    results: dict[str, Any] = {"indexes": args.indexes, "jobs": args.jobs, "resync_seconds": args.resync, "warmup_seconds": args.warmup,
                               "hold_seconds": args.hold, "restart_hold_seconds": restart_hold,
                               **harness.machine()}
    for operator in ("pinery",) if args.trace else ("pinery", "floor"):
        with tempfile.TemporaryDirectory() as tmp:
            results[operator] = asyncio.run(
                measure(operator, Path(tmp), args.indexes, args.jobs, args.resync, args.warmup, args.hold, args.every,
                        restart_hold, args.timeout, args.trace))
    if args.trace:
        path = harness.write_results("operator_memory_traced", results, args.out)
        r = results["pinery"]
        rows = [[f"{t['mb']} MiB", t["blocks"], t["where"]] for t in r["traced_converged"]["top"]]
        harness.print_table(f"Live Python memory of pinery: {r['traced_idle']['traced_mb']} MiB idle, "
                            f"{r['traced_converged']['traced_mb']} MiB converged; largest by line",
                            ["size", "blocks", "allocated at"], rows)
        print(f"\nwritten to {path}")
        return 0
    path = harness.write_results("operator_memory", results, args.out)
    rows = [[op, r["idle_rss_mb"], r["rss_mb"], r["rss_mb_after_warmup"], r["rss_mb_after_hold"], r["growth_mb_over_hold"],
             r["peak_rss_mb"], r["kib_per_object"], r["restarted_rss_mb"], r["restarted_kib_per_object"]]
            for op, r in ((op, results[op]) for op in ("pinery", "floor"))]
    harness.print_table(f"Operator RSS (MiB): idle, then {args.indexes} VectorIndexes + {args.jobs} FSDPJobs",
                        ["operator", "idle", "converged", f"after {args.warmup:g} s", f"{args.hold:g} s later", "growth",
                         "peak", "KiB/object", "restarted", "KiB/object restarted"], rows)
    print(f"\nwritten to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
