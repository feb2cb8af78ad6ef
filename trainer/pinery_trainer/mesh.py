"""The device mesh FSDP2 shards over: its shape follows fsdp.strategy and the world size.

Torch-free and pure, so that the rules are checked (and tested) before any process group exists.
torch/distributed/fsdp/_fully_shard/_fully_shard.py (fully_shard's `mesh`): a 1-D mesh shards
across all its ranks, (Shard(0),); a 2-D mesh replicates across dim 0 and shards across dim 1,
(Replicate(), Shard(0)), which is HSDP.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from pinery_trainer.configfile import ConfigError

FIELD = "fsdp.shardGroupSize"


@dataclass(frozen=True)
class MeshPlan:
    strategy: str
    shape: tuple[int, ...]
    dim_names: tuple[str, ...]

    def describe(self) -> dict[str, Any]:
        """What the `start` event reports."""
        return {"strategy": self.strategy, "shape": list(self.shape), "dims": list(self.dim_names)}


def plan_mesh(strategy: str, shard_group_size: Optional[int], world_size: int, local_world_size: int) -> MeshPlan:
    """The mesh for `strategy` at this world size; ConfigError naming fsdp.shardGroupSize otherwise.

    hybrid with one group (shardGroupSize = world size) is full sharding on a (1, N) mesh; with
    shardGroupSize 1 every rank holds the whole model and gradients are all-reduced (plain data
    parallelism). Both are allowed.
    """
    if strategy == "full":
        return MeshPlan("full", (world_size,), ("shard",))
    if strategy != "hybrid":
        raise ConfigError([("fsdp.strategy", f"unknown strategy {strategy!r}")])
    group = shard_group_size if shard_group_size is not None else local_world_size
    source = "" if shard_group_size is not None else f" (the default, LOCAL_WORLD_SIZE={local_world_size}; set fsdp.shardGroupSize)"
    if group < 1:
        raise ConfigError([(FIELD, f"must be at least 1, not {group}{source}")])
    if group > world_size:
        raise ConfigError([(FIELD, f"{group} exceeds the world size ({world_size}){source}")])
    if world_size % group:
        raise ConfigError([(FIELD, f"{group} must divide the world size ({world_size}){source}")])
    return MeshPlan("hybrid", (world_size // group, group), ("replicate", "shard"))
