"""FSDPJob convergence: from create to every child existing, the operator against its floor.

    flock /tmp/pinery-heavy.lock .venv/bin/python benchmarks/fsdpjob_convergence.py [--quick]

For each operator in turn (pinery's `pinery run`, then the floor: a bare Kopf `on.create`
handler, set up the same way, that creates the same children and writes the status once; see
floor_operator.py), against a fresh local control plane, with no pod runner (pods stay Pending):

- single: jobs created one at a time, each waited for;
- burst: `--burst` jobs created at once (32 requests in flight).

A job has converged when its headless Service, its trainer ConfigMap and its `--nodes` pods all
exist; times are the control plane's own commit times (job stored -> last child stored).
Requests are counted at the control plane, by verb and resource, from before the burst until
the operator has been quiet for 2 s; the minimum per job is the children plus one status write.
Writes `benchmarks/results/fsdpjob_convergence.json`.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import harness

PLURAL = "fsdpjobs"
CHILDREN = ("pods", "services", "configmaps")


def job_body(name: str, nodes: int) -> dict:
    """A job of the built-in trainer (so it has a ConfigMap), as small as the examples."""
    return {
        "apiVersion": "pinery.dev/v1alpha1", "kind": "FSDPJob", "metadata": {"name": name},
        "spec": {"numNodes": nodes, "nprocPerNode": 1,
                 "trainer": {"steps": 20, "model": {"preset": "tiny", "seqLen": 64}, "data": {"source": "synthetic"}}},
    }


def children_of(name: str, nodes: int) -> list[tuple[str, str]]:
    from pinery.fsdpjob.naming import config_map_name, pod_name, service_name

    return [("services", service_name(name)), ("configmaps", config_map_name(name))] + [("pods", pod_name(name, r)) for r in range(nodes)]


class Jobs:
    def __init__(self, stage: harness.Stage, namespace: str, nodes: int) -> None:
        self.stage, self.namespace, self.nodes = stage, namespace, nodes

    def converged_at(self, name: str) -> float | None:
        times = [self.stage.commits.when(plural, self.namespace, child) for plural, child in children_of(name, self.nodes)]
        return None if None in times else max(times)

    async def create(self, name: str) -> None:
        path = f"{harness.GROUP_PATH}/namespaces/{self.namespace}/{PLURAL}"
        await self.stage.client.call("create job", "POST", path, job_body(name, self.nodes))

    def latency(self, name: str) -> float:
        return self.converged_at(name) - self.stage.commits.when(PLURAL, self.namespace, name)


async def measure(operator: str, state_dir: Path, single: int, burst: int, nodes: int, timeout: float) -> dict[str, Any]:
    async with harness.Stage(state_dir, watched=(PLURAL, *CHILDREN)) as stage:
        for ns in ("single", "burst"):
            await stage.namespace(ns)
        log = state_dir / "operator.log"
        proc = harness.OperatorProcess.pinery(stage, log) if operator == "pinery" else harness.OperatorProcess.floor(stage, log, "fsdpjob")
        with proc:
            await stage.wait_watching([PLURAL])
            result: dict[str, Any] = {"idle_rss_mb": proc.rss_mb()}

            jobs = Jobs(stage, "single", nodes)
            for i in range(single):
                name = f"single-{i:03d}"
                await jobs.create(name)
                await harness.until(lambda name=name: jobs.converged_at(name) is not None, timeout, f"job {name}")
                proc.check_alive()
            result["single"] = {"jobs": single, "create_to_children": harness.percentiles(jobs.latency(f"single-{i:03d}") for i in range(single))}
            await harness.quiet(stage.requests, 1.0, 30)

            jobs = Jobs(stage, "burst", nodes)
            names = [f"burst-{i:04d}" for i in range(burst)]
            before, cpu_before, servers_before = stage.requests(), proc.cpu_seconds(), time.process_time()
            sampler = harness.sample_this_process(f"control-plane-{operator}")  # BENCHMARK_PYSPY only
            started = time.monotonic()
            await harness.gather_limited((jobs.create(n) for n in names), 32)
            created = time.monotonic() - started
            done = await harness.until(lambda: all(jobs.converged_at(n) is not None for n in names), timeout,
                                       f"{burst} jobs to converge", interval=0.2)
            proc.check_alive()
            first = min(stage.commits.when(PLURAL, "burst", n) for n in names)
            settled = await harness.quiet(stage.requests, 2.0, 60)
            harness.stop_sampling(sampler)
            requests = harness.counter_delta(stage.requests(), before)
            requests["create fsdpjobs"] -= burst  # the benchmark's own
            requests = {k: n for k, n in requests.items() if n}
            total = sum(requests.values())
            result["burst"] = {
                "jobs": burst,
                "create_requests_seconds": round(created, 2),
                "create_to_children": harness.percentiles(jobs.latency(n) for n in names),
                "all_converged_seconds": round(done - first, 2),
                "jobs_per_second": round(burst / (done - first), 1),
                "requests_per_job": round(total / burst, 2),
                "requests_by_kind_per_job": harness.top(requests, burst, limit=20),
                "requests_by_kind": dict(sorted(requests.items())),  # the counts the per-job figures round
                "operator_cpu_seconds": round(proc.cpu_seconds() - cpu_before, 1),
                # The control plane and this driver share one process (and so one core at most).
                "control_plane_cpu_seconds": round(time.process_time() - servers_before, 1),
                "quiet_after_seconds": round(settled, 1),
            }
            result["rss_mb_after_burst"] = proc.rss_mb()
            result["peak_rss_mb"] = proc.peak_rss_mb()
        return result


def main() -> int:
    parser = harness.arguments(__doc__, "5 single jobs and a burst of 100 (about a minute)")
    parser.add_argument("--single", type=int, default=20)
    parser.add_argument("--burst", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=2, help="numNodes of every job (pods per job)")
    args = parser.parse_args()
    if args.quick:
        args.single, args.burst = min(args.single, 5), min(args.burst, 100)

    results: dict[str, Any] = {
        "nodes_per_job": args.nodes,
        "minimum_requests_per_job": args.nodes + 3,  # the pods, the Service, the ConfigMap, one status write
        **harness.machine(),
    }
    for operator in ("pinery", "floor"):
        with tempfile.TemporaryDirectory() as tmp:
            results[operator] = asyncio.run(measure(operator, Path(tmp), args.single, args.burst, args.nodes, args.timeout))
    path = harness.write_results("fsdpjob_convergence", results, args.out)

    rows = []
    for operator in ("pinery", "floor"):
        r = results[operator]
        s, b = r["single"]["create_to_children"], r["burst"]["create_to_children"]
        rows.append([operator, f"{s['p50_ms']} / {s['p95_ms']}", f"{b['p50_ms']} / {b['p95_ms']}", r["burst"]["jobs_per_second"],
                     f"{r['burst']['requests_per_job']} (min {results['minimum_requests_per_job']})", r["rss_mb_after_burst"]])
    harness.print_table(
        f"FSDPJob: create -> Service, ConfigMap and {args.nodes} pods ({args.single} single jobs, a burst of {args.burst})",
        ["operator", "single p50 / p95 ms", "burst p50 / p95 ms", "jobs/s", "requests/job", "RSS MiB"], rows,
    )
    print(f"\nwritten to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
