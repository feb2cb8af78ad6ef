"""Load on the local control plane: many FSDPJobs with their pods and services at once.

    flock /tmp/pinery-heavy.lock .venv/bin/python benchmarks/apiserver_load.py --jobs 1000

Over HTTPS with a bearer token, as Kopf and the pod runner talk to it: creates N FSDPJobs and,
for each, a headless Service and three pods owned by the job (label `job=<name>`), with
`--concurrency` requests in flight; meanwhile watchers (all pods, all jobs, all services) count
what they receive. Then: one label-selector list per job, a status patch per pod, full and
paginated lists, and deletion of every job with the garbage collector removing the pods and
services. Writes `benchmarks/results/apiserver_load.json`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import harness
from harness import percentiles

from pinery.api import RESOURCES
from pinery.generate.crds import build_crd
from pinery.local.apiserver.server import LocalApiServer

RESULTS = Path(__file__).parent / "results" / "apiserver_load.json"
JOBS = "/apis/pinery.dev/v1alpha1/namespaces/default/fsdpjobs"
PODS = "/api/v1/namespaces/default/pods"
SERVICES = "/api/v1/namespaces/default/services"


class Client(harness.Client):
    async def watch(self, path: str, counts: dict[str, int], stop: asyncio.Event) -> None:
        url = f"{self.base}{path}?watch=true&allowWatchBookmarks=true&timeoutSeconds=3600"
        async with self.session.get(url) as response:
            async for line in response.content:
                if line.strip():
                    kind = json.loads(line)["type"]
                    counts[kind] = counts.get(kind, 0) + 1
                if stop.is_set():
                    return


def job(name: str) -> dict:
    return {"apiVersion": "pinery.dev/v1alpha1", "kind": "FSDPJob", "metadata": {"name": name},
            "spec": {"numNodes": 3, "nprocPerNode": 1, "command": ["torchrun", "train.py"]}}


def owned(name: str, uid: str) -> list[dict]:
    return [{"apiVersion": "pinery.dev/v1alpha1", "kind": "FSDPJob", "name": name, "uid": uid, "controller": True, "blockOwnerDeletion": True}]


async def make_job(client: Client, name: str) -> None:
    created = await client.call("create job", "POST", JOBS, job(name))
    refs = owned(name, created["metadata"]["uid"])
    await client.call("create service", "POST", SERVICES, {"metadata": {"name": name, "labels": {"job": name}, "ownerReferences": refs},
                                                           "spec": {"clusterIP": "None", "selector": {"job": name}}})
    for rank in range(3):
        await client.call("create pod", "POST", PODS, {
            "metadata": {"name": f"{name}-{rank}", "labels": {"job": name, "rank": str(rank)}, "ownerReferences": refs},
            "spec": {"subdomain": name, "hostname": f"{name}-{rank}", "restartPolicy": "Never",
                     "containers": [{"name": "trainer", "image": "trainer:1", "command": ["torchrun"], "env": [{"name": "NODE_RANK", "value": str(rank)}]}]},
        })


async def run(jobs: int, concurrency: int, state_dir: Path) -> dict[str, Any]:
    server = LocalApiServer(state_dir, token="bench")
    await server.start()
    client = Client(server)
    try:
        for res in RESOURCES:
            await client.call("create crd", "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", build_crd(res))
        await asyncio.sleep(0.2)
        stop = asyncio.Event()
        counts = {"pods": {}, "jobs": {}, "services": {}}
        watchers = [
            asyncio.create_task(client.watch("/api/v1/pods", counts["pods"], stop)),
            asyncio.create_task(client.watch("/apis/pinery.dev/v1alpha1/fsdpjobs", counts["jobs"], stop)),
            asyncio.create_task(client.watch("/api/v1/services", counts["services"], stop)),
        ]
        await asyncio.sleep(0.2)
        names = [f"job-{i:05d}" for i in range(jobs)]
        gate = asyncio.Semaphore(concurrency)

        async def limited(coro):
            async with gate:
                return await coro

        results: dict[str, Any] = {"jobs": jobs, "pods": jobs * 3, "services": jobs, "concurrency": concurrency}
        started = time.perf_counter()
        await asyncio.gather(*(limited(make_job(client, n)) for n in names))
        elapsed = time.perf_counter() - started
        results["create"] = {"seconds": round(elapsed, 2), "objects_per_s": round(jobs * 5 / elapsed, 1)}

        started = time.perf_counter()
        await asyncio.gather(*(limited(client.call("list pods by label", "GET", f"{PODS}?labelSelector=job%3D{n}")) for n in names))
        results["list_by_label"] = {"lists": jobs, "seconds": round(time.perf_counter() - started, 2)}

        started = time.perf_counter()
        await asyncio.gather(*(limited(client.call("patch pod status", "PATCH", f"{PODS}/{n}-{r}/status",
                                                   {"status": {"phase": "Running", "podIP": "127.0.0.2"}},
                                                   "application/merge-patch+json"))
                               for n in names for r in range(3)))
        elapsed = time.perf_counter() - started
        results["status_patches"] = {"patches": jobs * 3, "seconds": round(elapsed, 2), "per_s": round(jobs * 3 / elapsed, 1)}

        for label, path in (("list all pods", PODS), ("list all jobs", JOBS)):
            for _ in range(5):
                await client.call(label, "GET", path)
        started = time.perf_counter()
        token, pages = "", 0
        while True:
            page = await client.call("list pods page of 500", "GET", f"{PODS}?limit=500" + (f"&continue={token}" if token else ""))
            pages += 1
            token = page["metadata"].get("continue", "")
            if not token:
                break
        results["paginated_list"] = {"pages": pages, "seconds": round(time.perf_counter() - started, 3)}

        started = time.perf_counter()
        await asyncio.gather(*(limited(client.call("delete job", "DELETE", f"{JOBS}/{n}")) for n in names))
        deleted = time.perf_counter() - started
        while server.store.count(("", "pods")) or server.store.count(("", "services"), "default"):
            await asyncio.sleep(0.05)
        results["delete_with_gc"] = {"delete_calls_seconds": round(deleted, 2), "until_dependents_gone_seconds": round(time.perf_counter() - started, 2)}
        await asyncio.sleep(0.5)
        results["watch_events"] = counts
        results["expected_watch_events"] = {
            "pods": {"ADDED": jobs * 3, "MODIFIED": jobs * 3, "DELETED": jobs * 3},
            "jobs": {"ADDED": jobs, "DELETED": jobs},
            "services": {"ADDED": jobs, "DELETED": jobs},
        }
        stop.set()
        for task in watchers:
            task.cancel()
        started = time.perf_counter()
        await server._persistence.flush()  # noqa: SLF001 (time one snapshot of the final state)
        results["latency"] = {k: percentiles(v) for k, v in client.latencies.items()}
        results["max_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
        results["final_resource_version"] = server.store.rv
        return results
    finally:
        await client.session.close()
        await server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = asyncio.run(run(args.jobs, args.concurrency, Path(tmp)))
    results["python"] = sys.version.split()[0]
    results["cpus"] = os.cpu_count()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
