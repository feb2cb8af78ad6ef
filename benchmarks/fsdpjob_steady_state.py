"""FSDPJob steady state: what running and finished jobs cost the API server, pinery against its floor.

    flock /tmp/pinery-heavy.lock .venv/bin/python benchmarks/fsdpjob_steady_state.py [--quick]

For each operator in turn (pinery's `pinery run`, then the floor: a bare Kopf operator that
creates the same children and, every progress interval, reads rank 0's log since its last read
and writes the progress, nothing else; floor_operator.py `steady`), against a fresh local
control plane: `--jobs` FSDPJobs of `--nodes` pods are created, this script plays their kubelet
(it marks every pod Running and appends a progress line to each rank 0's log every few
seconds), and once all have run for a warm-up, the requests the control plane serves in a
`--window` are counted, by verb and resource, watches left out. Then every pod exits 0 and,
once pinery has recorded each job as Succeeded and settled it (its passes end: the count of
jobs whose passes ended so is recorded), a second window measures finished jobs (the floor has nothing to do
for them: 0).

Both run with the same progress interval (`--progress`, PINERY_FSDPJOB_PROGRESS_SECONDS).
Writes `benchmarks/results/fsdpjob_steady_state.json`.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import harness

from pinery.api.conditions import now_rfc3339
from pinery.fsdpjob.naming import TRAINER_CONTAINER, pod_name
from pinery.local.podrunner import crilog

PLURAL = "fsdpjobs"
NAMESPACE = "steady"
LOG_EVERY = 5.0  # seconds between the progress lines of each rank 0


def job_body(name: str, nodes: int) -> dict:
    return {"apiVersion": "pinery.dev/v1alpha1", "kind": "FSDPJob", "metadata": {"name": name},
            "spec": {"numNodes": nodes, "nprocPerNode": 1, "command": ["python", "train.py"]}}


def pod_status(state: dict, phase: str) -> dict:
    container = {"name": TRAINER_CONTAINER, "image": "trainer", "imageID": "", "ready": "running" in state,
                 "restartCount": 0, "started": "running" in state, "state": state, "lastState": {}}
    return {"status": {"phase": phase, "startTime": now_rfc3339(), "containerStatuses": [container]}}


def per_job_minute(counts: dict[str, int], jobs: int, seconds: float) -> float:
    return round(sum(counts.values()) / jobs / (seconds / 60.0), 2)


class Kubelet:
    """Runs the jobs' pods as far as the operators can tell: their status and rank 0's log."""

    def __init__(self, stage: harness.Stage, names: list[str], nodes: int) -> None:
        self.stage, self.names, self.nodes = stage, names, nodes
        self.step = 0

    def pods(self) -> list[str]:
        return [pod_name(n, r) for n in self.names for r in range(self.nodes)]

    async def set_all(self, body: dict) -> None:
        base = f"/api/v1/namespaces/{NAMESPACE}/pods"
        await harness.gather_limited((self.stage.client.call("pod status", "PATCH", f"{base}/{p}/status", body,
                                                             "application/merge-patch+json") for p in self.pods()), 16)

    def say_progress(self) -> None:
        self.step += 1
        line = f'{{"event": "progress", "step": {self.step}, "totalSteps": 100000, "loss": {1.0 / self.step:.4f}}}\n'
        for name in self.names:
            log = self.stage.server.logs_dir / NAMESPACE / pod_name(name, 0) / f"{TRAINER_CONTAINER}.log"
            log.parent.mkdir(parents=True, exist_ok=True)
            with log.open("ab") as fh:
                fh.write(crilog.record("stdout", line, time.time_ns()))

    async def talk(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            self.say_progress()
            try:
                await asyncio.wait_for(stop.wait(), LOG_EVERY)
            except asyncio.TimeoutError:
                pass


def requests(stage: harness.Stage) -> dict[str, int]:
    return {k: n for k, n in stage.requests().items() if not k.startswith("watch ")}


async def window(stage: harness.Stage, seconds: float) -> dict[str, int]:
    before = requests(stage)
    await asyncio.sleep(seconds)
    return harness.counter_delta(requests(stage), before)


async def listed(stage: harness.Stage) -> list[dict]:
    listing = await stage.client.call("list jobs", "GET", f"{harness.GROUP_PATH}/namespaces/{NAMESPACE}/{PLURAL}")
    items: list[dict] = listing["items"]
    return items


async def phases(stage: harness.Stage) -> list[str]:
    return [(item.get("status") or {}).get("phase", "") for item in await listed(stage)]


async def settled(stage: harness.Stage) -> int:
    """Jobs pinery has settled (pinery.fsdpjob.settling): status.settledGeneration is their generation."""
    return sum(1 for item in await listed(stage)
               if (item.get("status") or {}).get("settledGeneration") == item["metadata"].get("generation"))


# pinery's line for a job whose passes ended because it settled (handlers/fsdpjob.py).
PASSES_ENDED = "passes ended (settled)"


async def measure(operator: str, state_dir: Path, jobs: int, nodes: int, progress: float, seconds: float,
                  timeout: float) -> dict[str, Any]:
    async with harness.Stage(state_dir, watched=(PLURAL, "pods")) as stage:
        await stage.namespace(NAMESPACE)
        log = state_dir / "operator.log"
        settings = {"fsdpjob_progress_seconds": progress}
        proc = (harness.OperatorProcess.pinery(stage, log, **settings) if operator == "pinery"
                else harness.OperatorProcess.floor(stage, log, "steady", **settings))
        with proc:
            await stage.wait_watching([PLURAL])
            names = [f"job-{i:03d}" for i in range(jobs)]
            kubelet = Kubelet(stage, names, nodes)
            for name in names:
                await stage.client.call("create job", "POST", f"{harness.GROUP_PATH}/namespaces/{NAMESPACE}/{PLURAL}", job_body(name, nodes))
            await harness.until(lambda: all(stage.commits.when("pods", NAMESPACE, p) for p in kubelet.pods()), timeout, "every pod")
            await kubelet.set_all(pod_status({"running": {"startedAt": now_rfc3339()}}, "Running"))
            stop = asyncio.Event()
            talking = asyncio.ensure_future(kubelet.talk(stop))
            try:
                if operator == "pinery":
                    await harness.until_async(lambda: phases(stage), lambda p: p.count("Running") == jobs, timeout, "every job Running")
                await asyncio.sleep(progress + LOG_EVERY)  # warm-up: every job has published once
                cpu = proc.cpu_seconds()
                running = await window(stage, seconds)
                running_cpu = proc.cpu_seconds() - cpu
                proc.check_alive()
            finally:
                stop.set()
                await talking
            result: dict[str, Any] = {
                "running": {"requests_per_job_per_minute": per_job_minute(running, jobs, seconds),
                            "requests_by_kind_per_job_per_minute": harness.top(running, jobs * seconds / 60.0),
                            "operator_cpu_seconds": round(running_cpu, 2)},
            }
            if operator == "pinery":
                now = now_rfc3339()
                await kubelet.set_all(pod_status({"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": now, "finishedAt": now}},
                                                 "Succeeded"))
                await harness.until_async(lambda: phases(stage), lambda p: p.count("Succeeded") == jobs, timeout, "every job Succeeded")
                await harness.until_async(lambda: settled(stage), lambda n: n == jobs, timeout, "every job settled")
                await harness.quiet(lambda: requests(stage), 2.0, 60)
                result["passes_ended_when_settled"] = log.read_text(errors="replace").count(PASSES_ENDED)
                cpu = proc.cpu_seconds()
                finished = await window(stage, seconds)
                result["finished"] = {"requests_per_job_per_minute": per_job_minute(finished, jobs, seconds),
                                      "requests_by_kind_per_job_per_minute": harness.top(finished, jobs * seconds / 60.0),
                                      "operator_cpu_seconds": round(proc.cpu_seconds() - cpu, 2)}
            else:
                result["finished"] = {"requests_per_job_per_minute": 0.0, "note": "nothing to do for a finished job"}
            result["rss_mb"] = proc.rss_mb()
        return result


def main() -> int:
    parser = harness.arguments(__doc__, "10 jobs, 60 s windows at a 15 s progress interval (about 5 minutes)")
    parser.add_argument("--jobs", type=int, default=20)
    parser.add_argument("--nodes", type=int, default=2, help="numNodes of every job (pods per job)")
    parser.add_argument("--progress", type=float, default=30.0, help="the progress interval, seconds (both operators)")
    parser.add_argument("--window", type=float, default=120.0, help="seconds each measurement lasts")
    args = parser.parse_args()
    if args.quick:
        args.jobs, args.progress, args.window = min(args.jobs, 10), 15.0, 60.0

    floor_rate = round(2 * 60.0 / args.progress, 2)  # one log read and one status write per interval
    results: dict[str, Any] = {"jobs": args.jobs, "nodes_per_job": args.nodes, "progress_seconds": args.progress,
                               "window_seconds": args.window, "floor_requests_per_job_per_minute": floor_rate, **harness.machine()}
    for operator in ("pinery", "floor"):
        with tempfile.TemporaryDirectory() as tmp:
            results[operator] = asyncio.run(measure(operator, Path(tmp), args.jobs, args.nodes, args.progress, args.window, args.timeout))
    p, f = results["pinery"], results["floor"]
    results["running_ratio"] = round(p["running"]["requests_per_job_per_minute"] / max(f["running"]["requests_per_job_per_minute"], 1e-9), 3)
    path = harness.write_results("fsdpjob_steady_state", results, args.out)
    rows = [[op, r["running"]["requests_per_job_per_minute"], r["finished"]["requests_per_job_per_minute"],
             r["running"]["operator_cpu_seconds"], r["rss_mb"]] for op, r in (("pinery", p), ("floor", f))]
    harness.print_table(
        f"FSDPJob steady state: {args.jobs} jobs of {args.nodes} pods, progress every {args.progress:g} s, {args.window:g} s windows",
        ["operator", "running: requests/job/min", "finished: requests/job/min", "operator CPU s (running window)", "RSS MiB"], rows,
    )
    print(f"\nratio running pinery/floor: {results['running_ratio']}\nwritten to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
