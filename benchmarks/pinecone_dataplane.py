"""Benchmark of the Pinecone emulator's data plane, against a plain numpy brute-force floor.

For each size (default 10k and 100k vectors of dimension 768, cosine) it measures, through the
real `pinecone` SDK over HTTP:
  - upsert throughput (vectors/s, batches of 100, as 1000 such vectors exceed Pinecone's 2 MB
    request limit; persistence to a state directory on),
  - query latency p50/p95 (top_k=10, no filter, and with a metadata filter),
  - the same for a sparse-only index (records of about 60 non-zero values out of 30,000),
and in the same run the floor that exact search cannot beat: numpy's matrix-vector product plus
argpartition on the same data in-process, and the memcpy of the same rows.

    flock /tmp/pinery-heavy.lock .venv/bin/python benchmarks/pinecone_dataplane.py [--sizes 10000 100000]

Writes benchmarks/results/pinecone_dataplane.json (summarised in docs/performance.md).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results" / "pinecone_dataplane.json"


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def summary_ms(samples: list[float]) -> dict:
    return {"p50_ms": round(1000 * percentile(samples, 50), 3), "p95_ms": round(1000 * percentile(samples, 95), 3),
            "mean_ms": round(1000 * statistics.fmean(samples), 3), "max_ms": round(1000 * max(samples), 3),
            "n": len(samples)}


def numpy_floor(data: np.ndarray, queries: np.ndarray, top_k: int) -> dict:
    norms = np.linalg.norm(data, axis=1)
    latencies = []
    for q in queries:
        started = time.perf_counter()
        scores = data @ q / (norms * np.linalg.norm(q))
        best = np.argpartition(-scores, top_k)[:top_k]
        best[np.argsort(-scores[best])]
        latencies.append(time.perf_counter() - started)
    started = time.perf_counter()
    copy = np.empty_like(data)
    copy[:] = data
    copy_s = time.perf_counter() - started
    return {"query": summary_ms(latencies), "upsert_vectors_per_s": round(len(data) / max(copy_s, 1e-9))}


def bench_size(pc, size: int, dimension: int, n_queries: int, top_k: int, batch: int, seed: int) -> dict:
    from pinecone import ServerlessSpec

    rng = np.random.default_rng(seed)
    data = rng.standard_normal((size, dimension), dtype=np.float32)
    queries = rng.standard_normal((n_queries, dimension), dtype=np.float32)
    name = f"bench-{size}"
    host = pc.create_index(name=name, dimension=dimension, metric="cosine", timeout=60,
                           spec=ServerlessSpec(cloud="aws", region="us-east-1")).host
    index = pc.Index(host=host)

    started = time.perf_counter()
    for start in range(0, size, batch):
        rows = data[start:start + batch]
        index.upsert(vectors=[{"id": f"v{start + i}", "values": row.tolist(), "metadata": {"bucket": (start + i) % 10}}
                              for i, row in enumerate(rows)])
    upsert_s = time.perf_counter() - started
    assert index.describe_index_stats().total_vector_count == size

    def timed(**kwargs) -> list[float]:
        latencies = []
        for q in queries:
            body = q.tolist()
            t0 = time.perf_counter()
            result = index.query(vector=body, top_k=top_k, **kwargs)
            latencies.append(time.perf_counter() - t0)
            assert len(result.matches) == top_k
        return latencies

    plain = timed()
    filtered = timed(filter={"bucket": {"$in": [1, 2]}})
    floor = numpy_floor(data, queries, top_k)
    pc.delete_index(name, timeout=-1)
    return {
        "vectors": size, "dimension": dimension, "top_k": top_k, "batch": batch,
        "emulator": {"upsert_vectors_per_s": round(size / upsert_s), "upsert_seconds": round(upsert_s, 2),
                     "query": summary_ms(plain), "query_with_filter": summary_ms(filtered)},
        "numpy_floor": floor,
    }


def sparse_floor(rows: list[tuple[np.ndarray, np.ndarray]], queries, top_k: int) -> dict:
    """In-process sparse dot products against postings already built (numpy, no HTTP)."""
    indices = np.concatenate([r[0] for r in rows])
    owners = np.repeat(np.arange(len(rows)), [len(r[0]) for r in rows])
    values = np.concatenate([r[1] for r in rows]).astype(np.float64)
    order = np.argsort(indices)
    indices, owners, values = indices[order], owners[order], values[order]
    latencies = []
    for q_idx, q_val in queries:
        started = time.perf_counter()
        scores = np.zeros(len(rows))
        for lo, hi, w in zip(np.searchsorted(indices, q_idx), np.searchsorted(indices, q_idx, "right"), q_val, strict=True):
            scores[owners[lo:hi]] += w * values[lo:hi]
        np.argpartition(-scores, top_k)[:top_k]
        latencies.append(time.perf_counter() - started)
    return {"query": summary_ms(latencies)}


def bench_sparse(pc, size: int, nnz: int, vocabulary: int, n_queries: int, top_k: int, batch: int, seed: int) -> dict:
    """A sparse-only index (dotproduct): records of about `nnz` non-zero values out of
    `vocabulary`, as from a keyword model; queries of 20 values."""
    from pinecone import ServerlessSpec

    rng = np.random.default_rng(seed)

    def draw(count: int) -> tuple[np.ndarray, np.ndarray]:
        idx = np.unique(rng.integers(0, vocabulary, count))
        return idx, rng.random(len(idx)).astype(np.float32)

    rows = [draw(nnz) for _ in range(size)]
    queries = [draw(20) for _ in range(n_queries)]
    name = f"sparse-{size}"
    host = pc.create_index(name=name, vector_type="sparse", metric="dotproduct", timeout=60,
                           spec=ServerlessSpec(cloud="aws", region="us-east-1")).host
    index = pc.Index(host=host)
    started = time.perf_counter()
    for start in range(0, size, batch):
        index.upsert(vectors=[{"id": f"s{start + i}", "sparse_values": {"indices": r[0].tolist(), "values": r[1].tolist()}}
                              for i, r in enumerate(rows[start:start + batch])])
    upsert_s = time.perf_counter() - started

    def query(q) -> float:
        t0 = time.perf_counter()
        result = index.query(sparse_vector={"indices": q[0].tolist(), "values": q[1].tolist()}, top_k=top_k)
        elapsed = time.perf_counter() - t0
        assert len(result.matches) == top_k
        return elapsed

    first = query(queries[0])  # builds the postings after the writes
    latencies = [query(q) for q in queries]
    pc.delete_index(name, timeout=-1)
    return {
        "records": size, "nonzeros_per_record": nnz, "vocabulary": vocabulary, "top_k": top_k, "batch": batch,
        "emulator": {"upsert_records_per_s": round(size / upsert_s), "first_query_after_writes_ms": round(1000 * first, 1),
                     "query": summary_ms(latencies)},
        "numpy_floor": sparse_floor(rows, queries, top_k),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--dimension", type=int, default=768)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sparse-sizes", type=int, nargs="*", default=[10_000, 100_000],
                        help="records of the sparse-only runs (none: skip them)")
    parser.add_argument("--sparse-nnz", type=int, default=60)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "operator"))
    from pinecone import Pinecone

    from pinery.local.pinecone import EmulatorAdmin, PineconeEmulator

    with tempfile.TemporaryDirectory(prefix="pinery-bench-") as state_dir:
        emulator = PineconeEmulator(Path(state_dir), api_key="bench", ready_delay=0).start_in_thread()
        try:
            pc = Pinecone(api_key="bench", host=emulator.url)
            runs = []
            for size in args.sizes:
                runs.append(bench_size(pc, size, args.dimension, args.queries, args.top_k, args.batch, args.seed))
                print(json.dumps(runs[-1]), flush=True)
            sparse_runs = []
            for size in args.sparse_sizes:
                sparse_runs.append(bench_sparse(pc, size, args.sparse_nnz, 30_000, args.queries, args.top_k,
                                                args.batch, args.seed))
                print(json.dumps(sparse_runs[-1]), flush=True)
            requests = EmulatorAdmin(emulator.url).stats()["requests"]
        finally:
            emulator.stop_thread()
    report = {
        "benchmark": "pinecone_dataplane",
        "command": "flock /tmp/pinery-heavy.lock .venv/bin/python benchmarks/pinecone_dataplane.py "
                   + " ".join(sys.argv[1:]),
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"python": platform.python_version(), "numpy": np.__version__, "cpus": os.cpu_count(),
                    "platform": platform.platform()},
        "runs": runs,
        "sparse_runs": sparse_runs,
        "emulator_requests": requests,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
