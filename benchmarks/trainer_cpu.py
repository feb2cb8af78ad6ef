"""Trainer benchmark on CPU: training throughput and checkpoint speed against the disk's own.

    flock /tmp/pinery-heavy.lock .venv/bin/python benchmarks/trainer_cpu.py [--quick]

Measures, with the real trainer under torchrun (gloo):

1. steps/s and tokens/s of the tiny and small presets with 1 and 2 processes at the same global
   batch (1 process accumulates gradients over what 2 processes do side by side);
2. checkpoint save and load throughput (DCP, 2 processes, small preset with its AdamW state),
   next to the disk's sequential write (with fsync) and cold read bandwidth measured in the same
   run on the same directory. Files are dropped from the page cache (posix_fadvise) before every
   read, so loads and reads both come from the disk.

3. the trainer against a floor, for fsdp.strategy full and hybrid (4 processes; hybrid: 2 shard
   groups of 2): the floor is a minimal hand-written FSDP2 loop in this file (`--floor-worker`,
   run under torchrun like the trainer) with the same model, initialisation, batch, AdamW and
   gradient clipping, and no configuration, data pipeline, checkpointing or progress lines.
   Step time is the mean over the steps after the first few; time to first step runs from the
   launch of torchrun to the end of the first optimizer step (for the trainer: the arrival of
   the progress line of step 1, from a 1-step run; its steady runs log less often). Floor and
   trainer runs alternate, and the fastest of `--repeats` is kept for each.

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


# -- the trainer against a minimal FSDP2 loop -----------------------------------------------------

FLOOR = {"preset": "tiny", "seqLen": 128, "microBatchSize": 4, "processes": 4, "shardGroupSize": 2}


def torchrun_env(launched: float) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PET_", "PINERY_"))}
    return {**env, "PYTHONUNBUFFERED": "1", "PINERY_BENCH_LAUNCHED_AT": repr(launched)}


def run_stamped(command: list[str]) -> tuple[list[tuple[float, dict]], float]:
    """Run torchrun; every JSON line of stdout with the seconds since launch when it arrived."""
    launched = time.time()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=torchrun_env(launched))
    assert proc.stdout is not None and proc.stderr is not None
    lines = []
    for line in proc.stdout:
        if line.startswith("{"):
            lines.append((time.time() - launched, json.loads(line)))
    stderr = proc.stderr.read()
    if proc.wait(timeout=1800) != 0:
        raise SystemExit(f"{command[3:6]} failed ({proc.returncode}):\n{stderr[-4000:]}")
    return lines, time.time() - launched


def torchrun_command(nproc: int) -> list[str]:
    return [TORCHRUN, f"--nproc-per-node={nproc}", f"--master-port={free_port()}"]


def floor_run(strategy: str, steps: int, warmup: int) -> dict:
    f = FLOOR
    command = [*torchrun_command(f["processes"]), str(Path(__file__).resolve()), "--floor-worker",
               f"--strategy={strategy}", f"--steps={steps}", f"--warmup={warmup}"]
    lines, wall = run_stamped(command)
    (record,) = [r for _, r in lines if "floor" in r]
    return {**record, "wallSeconds": round(wall, 3)}


def trainer_sets(strategy: str, steps: int, log_every: int) -> list[str]:
    f = FLOOR
    sets = [f"model.preset={f['preset']}", f"model.seqLen={f['seqLen']}", f"microBatchSize={f['microBatchSize']}",
            f"steps={steps}", f"logEvery={log_every}", "optim.warmupSteps=1", f"fsdp.strategy={strategy}"]
    if strategy == "hybrid":
        sets.append(f"fsdp.shardGroupSize={f['shardGroupSize']}")
    return sets


def trainer_run(strategy: str, steps: int, warmup: int) -> dict:
    """Step time from a run logging every `warmup` steps; time to first step from a 1-step run."""
    command = [*torchrun_command(FLOOR["processes"]), "-m", "pinery_trainer"]
    lines, wall = run_stamped(command + [a for s in trainer_sets(strategy, steps, warmup) for a in ("--set", s)])
    progress = {r["step"]: r for _, r in lines if r.get("event") == "progress"}
    step_seconds = (progress[steps]["elapsedSeconds"] - progress[warmup]["elapsedSeconds"]) / (steps - warmup)
    first, _ = run_stamped(command + [a for s in trainer_sets(strategy, 1, 1) for a in ("--set", s)])
    first_step = next(t for t, r in first if r.get("event") == "progress" and r["step"] == 1)
    return {"stepSeconds": round(step_seconds, 5), "timeToFirstStepSeconds": round(first_step, 3),
            "finalLoss": progress[steps]["loss"], "wallSeconds": round(wall, 3)}


def against_floor(strategy: str, steps: int, warmup: int, repeats: int) -> dict:
    floors, trainers = [], []
    for _ in range(repeats):
        floors.append(floor_run(strategy, steps, warmup))
        trainers.append(trainer_run(strategy, steps, warmup))
    floor = {k: min(r[k] for r in floors) for k in ("stepSeconds", "timeToFirstStepSeconds")}
    pinery = {k: min(r[k] for r in trainers) for k in ("stepSeconds", "timeToFirstStepSeconds")}
    return {
        "strategy": strategy,
        **{k: v for k, v in FLOOR.items() if strategy == "hybrid" or k != "shardGroupSize"},
        "steps": steps,
        "stepsMeasured": steps - warmup,
        "pinery": pinery,
        "floor": floor,
        "stepTimeRatio": round(pinery["stepSeconds"] / floor["stepSeconds"], 3),
        "timeToFirstStepRatio": round(pinery["timeToFirstStepSeconds"] / floor["timeToFirstStepSeconds"], 3),
        "runs": {"pinery": trainers, "floor": floors},
    }


def floor_worker(strategy: str, steps: int, warmup: int) -> None:
    """The floor: a minimal FSDP2 training loop (run under torchrun by `floor_run`)."""
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    from pinery_trainer.model import Transformer
    from pinery_trainer.presets import resolve_shape

    launched = float(os.environ["PINERY_BENCH_LAUNCHED_AT"])
    f = FLOOR
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    group = f["shardGroupSize"] if strategy == "hybrid" else world
    shape_2d = (world // group, group) if strategy == "hybrid" else (world,)
    # A 2-D mesh needs dimension names (fsdp/_fully_shard/_fsdp_init.py, _validate_mesh).
    names = ("replicate", "shard") if strategy == "hybrid" else ("shard",)
    mesh = init_device_mesh("cpu", shape_2d, mesh_dim_names=names)
    torch.manual_seed(0)
    shape = resolve_shape(f["preset"])
    with torch.device("meta"):
        model = Transformer(shape)
    for block in model.blocks:
        fully_shard(block, mesh=mesh)
    fully_shard(model, mesh=mesh)
    model.to_empty(device="cpu")
    model.init_weights(0)
    decay = [p for p in model.parameters() if p.ndim >= 2]
    no_decay = [p for p in model.parameters() if p.ndim < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                                  lr=3e-4, betas=(0.9, 0.95), eps=1e-8, foreach=True)
    generator = torch.Generator().manual_seed(rank)
    tokens = torch.randint(0, shape.vocab_size, (steps, f["microBatchSize"], f["seqLen"] + 1), generator=generator)
    marks = {}
    for step in range(1, steps + 1):
        batch = tokens[step - 1]
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step == 1:
            first_step = time.time() - launched
        if step in (warmup, steps):
            dist.barrier()
            marks[step] = time.monotonic()
    if rank == 0:
        print(json.dumps({"floor": strategy, "stepSeconds": round((marks[steps] - marks[warmup]) / (steps - warmup), 5),
                          "timeToFirstStepSeconds": round(first_step, 3), "finalLoss": loss.item()}), flush=True)
    dist.barrier()
    dist.destroy_process_group()
    sys.stdout.flush()
    os._exit(0)  # the gloo abort at interpreter shutdown (docs/trainer.md, "Clean shutdown")


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
    parser.add_argument("--repeats", type=int, default=3, help="runs of the floor and of the trainer per strategy")
    parser.add_argument("--out", type=Path, help="result file (default: benchmarks/results/trainer_cpu.json)")
    parser.add_argument("--only-floor", action="store_true", help="only the comparison with the floor")
    parser.add_argument("--floor-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--strategy", default="full", help=argparse.SUPPRESS)
    parser.add_argument("--steps", type=int, default=25, help=argparse.SUPPRESS)
    parser.add_argument("--warmup", type=int, default=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.floor_worker:
        floor_worker(args.strategy, args.steps, args.warmup)
        return
    import torch

    workdir = Path(tempfile.mkdtemp(prefix="pinery-bench-", dir=args.workdir))
    try:
        floor_steps, floor_warmup = (15, 5) if args.quick else (25, 5)
        floor = [against_floor(strategy, floor_steps, floor_warmup, args.repeats) for strategy in ("full", "hybrid")]
        training: list[dict] = []
        checkpoint: dict = {}
        if not args.only_floor:
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
        "againstFloor": floor,
        "training": training,
        "checkpoint": checkpoint,
    }
    out = args.out or RESULTS / "trainer_cpu.json"
    if args.only_floor and out.exists():
        # Keep the throughput and checkpoint figures of the last full run.
        previous = json.loads(out.read_text())
        result["training"], result["checkpoint"] = previous.get("training", []), previous.get("checkpoint", {})
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    for run in training:
        print(f"{run['preset']:>5} x{run['processes']}: {run['stepsPerSecond']:.2f} steps/s, "
              f"{run['tokensPerSecond']:.0f} tokens/s (global batch {run['globalBatchSize']} x {run['seqLen']})")
    for r in floor:
        print(f"{r['strategy']:>6}: step {1000 * r['pinery']['stepSeconds']:.1f} ms vs floor {1000 * r['floor']['stepSeconds']:.1f} ms "
              f"({r['stepTimeRatio']}x); first step {r['pinery']['timeToFirstStepSeconds']:.2f} s vs "
              f"{r['floor']['timeToFirstStepSeconds']:.2f} s ({r['timeToFirstStepRatio']}x)")
    if not checkpoint:
        return
    c = checkpoint
    print(f"checkpoint {c['checkpointBytes'] / 1e6:.0f} MB: save {c['saveMBps']} MB/s "
          f"(disk write {c['disk']['writeMBps']}), load {c['loadMBps']} MB/s (disk read {c['disk']['readMBps']})")


if __name__ == "__main__":
    main()
