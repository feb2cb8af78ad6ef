"""fsdp.strategy and fsdp.shardGroupSize against the world size: the mesh, or an error naming the field."""

from __future__ import annotations

import pytest

from pinery_trainer.configfile import ConfigError, load_config
from pinery_trainer.mesh import plan_mesh


@pytest.mark.parametrize(
    "strategy, group, world, local, shape",
    [
        ("full", None, 4, 2, (4,)),
        ("full", None, 1, 1, (1,)),
        ("hybrid", None, 4, 2, (2, 2)),  # default: one node's processes
        ("hybrid", 2, 8, 8, (4, 2)),  # the field wins over LOCAL_WORLD_SIZE
        ("hybrid", 4, 4, 2, (1, 4)),  # one group: full sharding on a 2-D mesh
        ("hybrid", 1, 4, 2, (4, 1)),  # no sharding: every rank holds the model
        ("hybrid", None, 1, 1, (1, 1)),
    ],
)
def test_mesh_shape(strategy, group, world, local, shape):
    plan = plan_mesh(strategy, group, world, local)
    assert plan.shape == shape
    assert plan.dim_names == (("shard",) if strategy == "full" else ("replicate", "shard"))
    assert plan.describe() == {"strategy": strategy, "shape": list(shape), "dims": list(plan.dim_names)}


@pytest.mark.parametrize(
    "group, world, local, words",
    [
        (3, 4, 2, "3 must divide the world size (4)"),
        (8, 4, 2, "8 exceeds the world size (4)"),
        (None, 6, 4, "4 must divide the world size (6) (the default, LOCAL_WORLD_SIZE=4; set fsdp.shardGroupSize)"),
        (None, 2, 4, "exceeds the world size (2)"),
        (0, 4, 2, "must be at least 1"),
    ],
)
def test_invalid_groups_name_the_field(group, world, local, words):
    with pytest.raises(ConfigError) as info:
        plan_mesh("hybrid", group, world, local)
    [(field, message)] = info.value.problems
    assert field == "fsdp.shardGroupSize" and words in message, message


@pytest.mark.parametrize(
    "sets, field, words",
    [
        (["fsdp.strategy=partial"], "fsdp.strategy", "'hybrid'"),
        (["fsdp.strategy=hybrid", "fsdp.shardGroupSize=0"], "fsdp.shardGroupSize", "greater than or equal to 1"),
        (["fsdp.shardGroupSize=2"], "fsdp.shardGroupSize", "applies only to fsdp.strategy hybrid"),
    ],
)
def test_configuration_errors_name_the_field(sets, field, words):
    with pytest.raises(ConfigError) as info:
        load_config(None, sets, {})
    assert info.value.problems[0][0] == field and words in info.value.problems[0][1], info.value.problems


def test_defaults_are_full_sharding():
    config = load_config(None, ["fsdp.strategy=hybrid", "fsdp.shardGroupSize=2"], {})
    assert (config.fsdp.strategy, config.fsdp.shard_group_size) == ("hybrid", 2)
    assert load_config(None, [], {}).fsdp.strategy == "full"
