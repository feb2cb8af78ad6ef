"""FSDP2: `fully_shard` on every transformer block, then on the root module.

The mesh decides the strategy (mesh.py): 1-D shards across every rank, 2-D (replicate, shard)
is HSDP. fully_shard needs the dimension names of a 2-D mesh
(torch/distributed/fsdp/_fully_shard/_fsdp_init.py, _validate_mesh), which distributed.init gives.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.fsdp import CPUOffloadPolicy, MixedPrecisionPolicy, OffloadPolicy, fully_shard

from pinery_trainer.config import FSDPConfig

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}


def apply_fsdp(
    model: nn.Module, blocks: list[nn.Module], mesh: DeviceMesh, config: FSDPConfig, device: torch.device,
    compile_blocks: bool = False,
) -> None:
    mp_policy = MixedPrecisionPolicy(
        param_dtype=DTYPES[config.mixed_precision.param_dtype],
        reduce_dtype=DTYPES[config.mixed_precision.reduce_dtype],
    )
    # Pinning needs an accelerator: on a CPU-only machine it fails outright.
    offload_policy = CPUOffloadPolicy(pin_memory=device.type == "cuda") if config.cpu_offload else OffloadPolicy()

    def shard(module: nn.Module) -> None:
        fully_shard(module, mesh=mesh, reshard_after_forward=config.reshard_after_forward, mp_policy=mp_policy, offload_policy=offload_policy)

    for block in blocks:
        if compile_blocks:
            block.compile()
        shard(block)
    shard(model)


def materialisation_device(config: FSDPConfig, device: torch.device) -> torch.device:
    """Where sharded parameters live: the CPU when offloaded, else the training device."""
    return torch.device("cpu") if config.cpu_offload else device
