"""Trainer benchmark on NVIDIA GPUs: MFU, tokens/s and peak memory per preset and sharding strategy, in bfloat16.

Written for one node of H100 or H200 GPUs (it runs on any CUDA GPU; MFU needs a known peak or
--peak-tflops). Not run by the test suite.

How to run:

1. On a machine with the GPUs and a CUDA driver, install pinery with the trainer extra, then
   replace the CPU build of torch with the CUDA build of the same version (2.13.0) for your CUDA
   version, following PyTorch's installation instructions:

       python3.11 -m venv .venv && .venv/bin/pip install -e '.[trainer]'
       .venv/bin/pip install --force-reinstall 'torch==2.13.0'   # the CUDA build, from PyTorch's index

   Check: `.venv/bin/python -c "import torch; print(torch.cuda.is_available(), torch.cuda.device_count())"`.

2. Run (all GPUs of the node, every preset; about 10 minutes on 8 x H100):

       .venv/bin/python benchmarks/trainer_gpu.py
       .venv/bin/python benchmarks/trainer_gpu.py --presets 1b 7b --gpus 8 --compile

   Each preset trains `--steps` steps (default 30) of synthetic data under torchrun with FSDP2,
   bfloat16 parameters and float32 gradient reduction; the first `--warmup` steps (default 10)
   are left out of the figures. A preset that runs out of memory is recorded as failed and the
   others still run.

   Every preset runs once per `--strategies` (default: full hybrid). On one node, hybrid uses
   shard groups of `--shard-group-size` GPUs (default: half of them, so two groups replicate
   each other): it shows the memory and all-reduce cost of HSDP; its gain, all-gathers kept off
   a slow inter-node link, needs several nodes (run the trainer itself as an FSDPJob for that).

3. Results go to benchmarks/results/trainer_gpu-<gpu>.json; copy the table it prints into
   docs/performance.md under "Trainer".

MFU is the trainer's own figure: 6 x non-embedding parameters + 12 x layers x width x sequence
length FLOPs per token (the PaLM estimate) over the dense bf16 peak (989 TFLOP/s for H100 SXM and
H200).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
TORCHRUN = str(Path(sys.executable).parent / "torchrun")

# Per preset: micro-batch per GPU and activation checkpointing, sized for 80 GB at seqLen 2048
# (smaller models use the memory for larger batches).
SETTINGS = {
    "small": {"microBatchSize": 16, "fsdp.activationCheckpointing": False},
    "base": {"microBatchSize": 16, "fsdp.activationCheckpointing": False},
    "1b": {"microBatchSize": 8, "fsdp.activationCheckpointing": True},
    "7b": {"microBatchSize": 2, "fsdp.activationCheckpointing": True},
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_preset(preset: str, gpus: int, strategy: str, args: argparse.Namespace) -> dict:
    settings = {
        "model.preset": preset,
        "model.seqLen": args.seq_len,
        "model.compile": args.compile,
        "steps": args.steps,
        "logEvery": 1,
        "optim.warmupSteps": 1,
        "fsdp.mixedPrecision.paramDtype": "bfloat16",
        "fsdp.mixedPrecision.reduceDtype": "float32",
        **SETTINGS[preset],
        "fsdp.strategy": strategy,
    }
    if strategy == "hybrid":
        settings["fsdp.shardGroupSize"] = args.shard_group_size or max(1, gpus // 2)
    if args.micro_batch:
        settings["microBatchSize"] = args.micro_batch
    if args.peak_tflops:
        settings["peakTflops"] = args.peak_tflops
    command = [TORCHRUN, f"--nproc-per-node={gpus}", f"--master-port={free_port()}", "-m", "pinery_trainer"]
    for key, value in settings.items():
        command += ["--set", f"{key}={str(value).lower() if isinstance(value, bool) else value}"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PET_", "PINERY_"))}
    started = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=args.timeout)
    record = {"preset": preset, "gpus": gpus, "strategy": strategy, "settings": settings, "wallSeconds": round(time.monotonic() - started, 1)}
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith('{"event"')]
    progress = [e for e in events if e["event"] == "progress" and e["step"] > args.warmup]
    if result.returncode != 0 or not progress:
        oom = "OutOfMemoryError" in result.stderr or "CUDA out of memory" in result.stderr
        return {**record, "ok": False, "error": "out of memory" if oom else result.stderr[-2000:]}
    start = next(e for e in events if e["event"] == "start")
    return {
        **record,
        "ok": True,
        "parameters": start["parameters"],
        "mesh": start.get("mesh"),
        "globalBatchSize": start["globalBatchSize"],
        "tokensPerSecond": round(statistics.median(e["tokensPerSecond"] for e in progress), 1),
        "tokensPerSecondPerGpu": round(statistics.median(e["tokensPerSecond"] for e in progress) / gpus, 1),
        "mfu": None if progress[-1]["mfu"] is None else round(statistics.median(e["mfu"] for e in progress), 4),
        "maxMemoryGiB": max(e.get("maxMemoryGiB", 0.0) for e in progress),
        "finalLoss": progress[-1]["loss"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    parser.add_argument("--gpus", type=int, help="processes (GPUs) to use; default: all")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=10, help="first steps left out of the figures")
    parser.add_argument("--seq-len", type=int, default=2048)
    parser.add_argument("--micro-batch", type=int, help="override the per-preset micro-batch size")
    parser.add_argument("--compile", action="store_true", help="torch.compile every block")
    parser.add_argument("--peak-tflops", type=float, help="peak dense bf16 TFLOP/s of one GPU, if not detected")
    parser.add_argument("--strategies", nargs="+", default=["full", "hybrid"], choices=["full", "hybrid"])
    parser.add_argument("--shard-group-size", type=int, help="GPUs per shard group with hybrid; default: half of them")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds per preset")
    args = parser.parse_args()

    import torch

    if not torch.cuda.is_available():
        raise SystemExit("no CUDA GPU: this benchmark needs the CUDA build of torch and a GPU (see its docstring)")
    gpus = args.gpus or torch.cuda.device_count()
    name = torch.cuda.get_device_name(0)
    runs = [run_preset(preset, gpus, strategy, args) for preset in args.presets for strategy in args.strategies]
    result = {
        "benchmark": "trainer_gpu",
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"gpu": name, "gpus": gpus, "torch": torch.__version__, "cuda": torch.version.cuda},
        "seqLen": args.seq_len,
        "runs": runs,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    path = RESULTS / f"trainer_gpu-{slug}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(f"| preset | strategy (mesh) | GPUs | tokens/s | tokens/s per GPU | MFU | peak memory (GiB) |  ({name}, seqLen {args.seq_len})")
    print("|---|---|---|---|---|---|---|")
    for r in runs:
        mesh = f"{r['strategy']} ({' x '.join(map(str, r['mesh']['shape']))})" if r.get("mesh") else r["strategy"]
        if r["ok"]:
            mfu = "n/a" if r["mfu"] is None else f"{100 * r['mfu']:.1f} %"
            print(f"| {r['preset']} | {mesh} | {gpus} | {r['tokensPerSecond']:.0f} | {r['tokensPerSecondPerGpu']:.0f} | {mfu} | "
                  f"{r['maxMemoryGiB']:.1f} |")
        else:
            print(f"| {r['preset']} | {mesh} | {gpus} | failed: {r['error'][:80]} | | | |")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
