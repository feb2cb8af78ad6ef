"""`torchrun -m pinery_trainer.smoke`: does every rank of the gang reach every other one?

Each rank all-reduces (rank + 1) over the whole world and checks that the sum is
WORLD_SIZE x (WORLD_SIZE + 1) / 2, prints one JSON line with the result, and exits 0, or 1 on
a mismatch. NCCL on GPUs, gloo otherwise.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from datetime import timedelta

import torch
import torch.distributed as dist

from pinery_trainer.distributed import env_int, exit_process, make_store

TIMEOUT_SECONDS = int(os.environ.get("PINERY_SMOKE_TIMEOUT_SECONDS", "300"))


def expected_sum(world_size: int) -> int:
    return world_size * (world_size + 1) // 2


def main() -> int:
    rank, world_size = env_int("RANK", 0), env_int("WORLD_SIZE", 1)
    local_rank = env_int("LOCAL_RANK", 0)
    timeout = timedelta(seconds=TIMEOUT_SECONDS)
    if torch.cuda.is_available():
        device = torch.device("cuda", local_rank % torch.cuda.device_count())
        torch.cuda.set_device(device)
        backend = "nccl"
    else:
        device, backend = torch.device("cpu"), "gloo"
    dist.init_process_group(
        backend, store=make_store(rank, world_size, timeout), rank=rank, world_size=world_size, timeout=timeout
    )
    value = torch.tensor([float(rank + 1)], device=device)
    dist.all_reduce(value)
    total = int(value.item())
    ok = total == expected_sum(world_size)
    record = {
        "smoke": "allreduce",
        "ok": ok,
        "rank": rank,
        "worldSize": world_size,
        "localRank": local_rank,
        "sum": total,
        "expected": expected_sum(world_size),
        "backend": backend,
        "host": socket.gethostname(),
    }
    # One write per line: print() writes the text and the newline separately, and ranks that
    # share a log (unbuffered) could interleave between the two.
    sys.stdout.write(json.dumps(record, separators=(",", ":")) + "\n")
    sys.stdout.flush()
    code = 0 if ok else 1
    exit_process(code, synchronise=True)
    return code  # pragma: no cover - exit_process does not return


if __name__ == "__main__":
    sys.exit(main())
