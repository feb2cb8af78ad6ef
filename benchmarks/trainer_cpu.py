"""Trainer benchmark on CPU: training throughput and checkpoint speed against the disk's own.

    flock /tmp/pinery-heavy.lock .venv/bin/python benchmarks/trainer_cpu.py [--quick]

Measures, with the real trainer under torchrun (gloo):

1. steps/s and tokens/s of the tiny and small presets with 1 and 2 processes at the same global
   batch (1 process accumulates gradients over what 2 processes do side by side);
2. checkpoint save and load throughput (DCP, 2 processes, small preset with its AdamW state),
   next to the disk's sequential write (with fsync) and cold read bandwidth measured in the same
   run on the same directory. Files are dropped from the page cache (posix_fadvise) before every
   read, so loads and reads both come from the disk.

Writes benchmarks/results/trainer_cpu.json and prints a summary. Steps/s counts only steps after
the first few (start-up and warm-up excluded).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
TORCHRUN = str(Path(sys.executable).parent / "torchrun")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def events(text: str) -> list[dict]:
    out = []
    for line in text.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            if "event" in record:
                out.append(record)
    return out


def train(nproc: int, sets: list[str]) -> list[dict]:
    command = [TORCHRUN, f"--nproc-per-node={nproc}", f"--master-port={free_port()}", "-m", "pinery_trainer"]
    for assignment in sets:
        command += ["--set", assignment]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PET_", "PINERY_"))}
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1800)
    if result.returncode != 0:
        raise SystemExit(f"trainer failed ({result.returncode}):\n{result.stderr[-4000:]}")
    return events(result.stdout)


def throughput(preset: str, nproc: int, steps: int, warmup: int, seq_len: int, global_batch: int) -> dict:
    micro = global_batch // 2  # the same micro-batch for both: 1 process accumulates 2 of them
    found = train(nproc, [
        f"model.preset={preset}", f"model.seqLen={seq_len}", f"steps={steps}", "logEvery=1",
        f"globalBatchSize={global_batch}", f"microBatchSize={micro}", "optim.warmupSteps=1",
    ])
    progress = {e["step"]: e for e in found if e["event"] == "progress"}
    seconds = progress[steps]["elapsedSeconds"] - progress[warmup]["elapsedSeconds"]
    measured = steps - warmup
    start = next(e for e in found if e["event"] == "start")
    return {
        "preset": preset,
        "processes": nproc,
        "parameters": start["parameters"],
        "globalBatchSize": global_batch,
        "gradAccumSteps": start["gradAccumSteps"],
        "seqLen": seq_len,
        "stepsMeasured": measured,
        "stepsPerSecond": round(measured / seconds, 3),
        "tokensPerSecond": round(measured * global_batch * seq_len / seconds, 1),
        "finalLoss": progress[steps]["loss"],
    }


def drop_cache(path: Path) -> None:
    for file in [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]:
        fd = os.open(file, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def disk_bandwidth(directory: Path, size: int) -> dict:
    """Sequential write with fsync, then a cold sequential read, of `size` bytes."""
    path = directory / "disk-probe.bin"
    block = os.urandom(8 << 20)
    start = time.monotonic()
    with path.open("wb") as out:
        written = 0
        while written < size:
            out.write(block)
            written += len(block)
        out.flush()
        os.fsync(out.fileno())
    write_seconds = time.monotonic() - start
    drop_cache(path)
    start = time.monotonic()
    with path.open("rb") as f:
        while f.read(8 << 20):
            pass
    read_seconds = time.monotonic() - start
    path.unlink()
    return {
        "bytes": written,
        "writeMBps": round(written / write_seconds / 1e6, 1),
        "readMBps": round(written / read_seconds / 1e6, 1),
    }


def checkpoint_speed(workdir: Path, preset: str) -> dict:
    ckpt = workdir / "checkpoints"
    common = [f"model.preset={preset}", "model.seqLen=32", "microBatchSize=1", "logEvery=1",
              f"checkpoint.dir={ckpt}", "checkpoint.keep=1", "optim.warmupSteps=1"]
    saved = [e for e in train(2, [*common, "steps=1"]) if e["event"] == "checkpoint"][-1]
    drop_cache(ckpt)
    start = next(e for e in train(2, [*common, "steps=2"]) if e["event"] == "start")
    size = saved["bytes"]
    disk = disk_bandwidth(workdir, size)
    save_mbps = size / saved["seconds"] / 1e6
    load_mbps = size / start["resumeSeconds"] / 1e6
    return {
        "preset": preset,
        "processes": 2,
        "checkpointBytes": size,
        "saveSeconds": saved["seconds"],
        "loadSeconds": start["resumeSeconds"],
        "saveMBps": round(save_mbps, 1),
        "loadMBps": round(load_mbps, 1),
        "disk": disk,
        "saveVsDiskWrite": round(save_mbps / disk["writeMBps"], 3),
        "loadVsDiskRead": round(load_mbps / disk["readMBps"], 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps and the tiny preset only")
    parser.add_argument("--workdir", type=Path, help="where checkpoints are written (default: a temporary directory)")
    args = parser.parse_args()
    import torch

    workdir = Path(tempfile.mkdtemp(prefix="pinery-bench-", dir=args.workdir))
    try:
        runs = [("tiny", 40, 10, 128, 16)] + ([] if args.quick else [("small", 12, 4, 64, 4)])
        training = [throughput(p, n, steps, warm, seq, batch) for p, steps, warm, seq, batch in runs for n in (1, 2)]
        checkpoint = checkpoint_speed(workdir, "tiny" if args.quick else "small")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    result = {
        "benchmark": "trainer_cpu",
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                    "torch": torch.__version__},
        "training": training,
        "checkpoint": checkpoint,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "trainer_cpu.json").write_text(json.dumps(result, indent=2) + "\n")
    for run in training:
        print(f"{run['preset']:>5} x{run['processes']}: {run['stepsPerSecond']:.2f} steps/s, "
              f"{run['tokensPerSecond']:.0f} tokens/s (global batch {run['globalBatchSize']} x {run['seqLen']})")
    c = checkpoint
    print(f"checkpoint {c['checkpointBytes'] / 1e6:.0f} MB: save {c['saveMBps']} MB/s "
          f"(disk write {c['disk']['writeMBps']}), load {c['loadMBps']} MB/s (disk read {c['disk']['readMBps']})")


if __name__ == "__main__":
    main()
