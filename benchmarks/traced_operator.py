"""`pinery` with tracemalloc on: on SIGUSR1 it writes what live Python memory it holds, by the
line that allocated it, as JSON to $BENCHMARK_TRACE_OUT (used by operator_memory.py --trace).

    python benchmarks/traced_operator.py run --standalone --kubeconfig PATH

Tracing costs memory and time of its own, so resident memory under it is not comparable.
"""

import gc
import json
import os
import signal
import sys
import threading
import tracemalloc

TOP = 15
# Frames kept per allocation ($BENCHMARK_TRACE_FRAMES): more than 1 adds the largest call paths to
# the report, at a cost in memory and time of its own.
FRAMES = int(os.environ.get("BENCHMARK_TRACE_FRAMES", "1"))


def dump(*_: object) -> None:
    gc.collect()
    current, peak = tracemalloc.get_traced_memory()
    snapshot = tracemalloc.take_snapshot()
    lines = snapshot.statistics("lineno")[:TOP]
    report = {
        "traced_mb": round(current / 2**20, 1),
        "traced_peak_mb": round(peak / 2**20, 1),
        "top": [{"where": str(s.traceback), "mb": round(s.size / 2**20, 2), "blocks": s.count} for s in lines],
    }
    if FRAMES > 1:  # who called what allocated: the largest call paths, innermost frame last
        report["paths"] = [{"mb": round(s.size / 2**20, 2), "blocks": s.count, "frames": s.traceback.format()}
                           for s in snapshot.statistics("traceback")[:TOP]]
    out = os.environ["BENCHMARK_TRACE_OUT"]
    if os.environ.get("BENCHMARK_TRACE_SNAPSHOTS"):  # the whole snapshot too, to compare two of them
        snapshot.dump(out + ".snapshot")
    with open(out + ".tmp", "w") as f:
        json.dump(report, f)
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    tracemalloc.start(FRAMES)
    # The report is made in a thread of its own, not in the signal handler: the handler runs in
    # the main thread between two bytecodes of whatever it interrupted, and the collection it
    # starts can run finalizers that wait for a lock the interrupted code holds (an HTTP client's
    # pool, say), which froze the operator's event loop for good in some runs.
    signal.signal(signal.SIGUSR1, lambda *_: threading.Thread(target=dump, name="trace-report", daemon=True).start())
    from pinery.cli import main

    sys.exit(main(sys.argv[1:]))
