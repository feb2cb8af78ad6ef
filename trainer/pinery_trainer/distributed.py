"""Process-group setup and the clean exit every worker needs.

CUDA with NCCL when the process has a GPU (LOCAL_RANK picks it), else the CPU with gloo. The
rendezvous comes from torchrun's environment (or RANK/WORLD_SIZE/MASTER_* for plain `python`
with one process per node); without WORLD_SIZE the trainer runs as a single process.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh

from pinery_trainer.config import FSDPConfig
from pinery_trainer.mesh import MeshPlan, plan_mesh


@dataclass(frozen=True)
class Runtime:
    rank: int
    world_size: int
    local_rank: int
    device: torch.device
    mesh: DeviceMesh
    mesh_plan: MeshPlan

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value not in (None, "") else default


def init(timeout_seconds: int, fsdp: FSDPConfig) -> Runtime:
    rank = env_int("RANK", 0)
    world_size = env_int("WORLD_SIZE", 1)
    local_rank = env_int("LOCAL_RANK", 0)
    # Checked before the process group exists: every rank reports the same ConfigError.
    # torchrun sets LOCAL_WORLD_SIZE; plain python runs one process per node.
    mesh_plan = plan_mesh(fsdp.strategy, fsdp.shard_group_size, world_size, env_int("LOCAL_WORLD_SIZE", 1))
    timeout = timedelta(seconds=timeout_seconds)
    if torch.cuda.is_available():
        device = torch.device("cuda", local_rank % torch.cuda.device_count())
        torch.cuda.set_device(device)
        # gloo beside NCCL carries the small CPU-side agreements (stop requests) without a GPU sync.
        backend, device_id = "cuda:nccl,cpu:gloo", device
    else:
        device, backend, device_id = torch.device("cpu"), "gloo", None
    dist.init_process_group(
        backend, store=make_store(rank, world_size, timeout), rank=rank, world_size=world_size,
        timeout=timeout, device_id=device_id,
    )
    # Consecutive ranks (a node's processes under torchrun) form a shard group: init_device_mesh
    # lays ranks out row-major, so dim 1 ("shard") holds ranks g*i .. g*i+g-1.
    mesh = init_device_mesh(device.type, mesh_plan.shape, mesh_dim_names=mesh_plan.dim_names)
    return Runtime(rank, world_size, local_rank, device, mesh, mesh_plan)


def make_store(rank: int, world_size: int, timeout: timedelta) -> dist.Store:
    if world_size == 1 and "MASTER_ADDR" not in os.environ:
        return dist.HashStore()
    # Under torchrun the agent already serves the store; with plain python rank 0 serves it.
    agent_store = os.environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True"
    store = dist.TCPStore(
        os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), world_size,
        is_master=rank == 0 and not agent_store, timeout=timeout, wait_for_workers=False, multi_tenant=True,
    )
    # torchrun reuses its store across restarts: a fresh prefix per attempt keeps restarted
    # workers from reading the previous attempt's addresses (pytorch#135712).
    return dist.PrefixStore(f"pinery/attempt-{os.environ.get('TORCHELASTIC_RESTART_COUNT', '0')}", store)


def all_agree(flag: bool) -> bool:
    """True on every rank when `flag` is true on any rank (a CPU all-reduce, no GPU sync)."""
    value = torch.tensor([1 if flag else 0], dtype=torch.int32)
    dist.all_reduce(value, op=dist.ReduceOp.MAX)
    return bool(value.item())


def exit_process(code: int, synchronise: bool) -> None:
    """Leave without the abort gloo can cause at interpreter shutdown.

    With only destroy_process_group, a gloo thread may drop a tensor while Python tears down,
    and the worker dies with SIGABRT after a successful run. Exiting with os._exit after a
    barrier avoids it; after a failure the barrier is skipped (peers may be gone).
    """
    try:
        if synchronise and dist.is_initialized():
            dist.barrier()
            dist.destroy_process_group()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
