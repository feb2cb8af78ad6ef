"""spec.trainer.fsdp.strategy through the FSDPJob API and `pinery render`."""

import pytest
import yaml
from pydantic import ValidationError

from pinery.api import FSDPJobSpec
from tests.conftest import run_pinery

JOB = """apiVersion: pinery.dev/v1alpha1
kind: FSDPJob
metadata:
  name: train
  namespace: ml
spec:
  numNodes: 2
  nprocPerNode: 2
  trainer:
    fsdp: {strategy: hybrid, shardGroupSize: 2}
"""


def test_the_api_accepts_hybrid_sharding():
    spec = FSDPJobSpec.model_validate({"numNodes": 2, "trainer": {"fsdp": {"strategy": "hybrid"}}})
    assert spec.trainer is not None and spec.trainer.fsdp.strategy == "hybrid" and spec.trainer.fsdp.shard_group_size is None


@pytest.mark.parametrize(
    "fsdp, fragment",
    [
        ({"strategy": "zero3"}, "strategy"),
        ({"strategy": "hybrid", "shardGroupSize": 0}, "shardGroupSize"),
        ({"shardGroupSize": 2}, "fsdp.shardGroupSize: applies only to fsdp.strategy hybrid"),
    ],
)
def test_the_api_rejects(fsdp, fragment):
    with pytest.raises(ValidationError) as info:
        FSDPJobSpec.model_validate({"numNodes": 2, "trainer": {"fsdp": fsdp}})
    assert fragment in str(info.value)


def test_pinery_validate_names_the_full_path():
    problems: list = []
    FSDPJobSpec.model_validate({"numNodes": 2, "trainer": {"fsdp": {"shardGroupSize": 2}}}, context={"problems": problems})
    assert [(p.path, p.message) for p in problems] == [("spec.trainer.fsdp.shardGroupSize", "applies only to fsdp.strategy hybrid")]


def test_render_shows_the_strategy_in_the_trainer_configuration():
    result = run_pinery("render", "-f", "-", "--uid", "abc", stdin=JOB)
    assert result.returncode == 0, result.stderr
    [config_map] = [d for d in yaml.safe_load_all(result.stdout) if d["kind"] == "ConfigMap"]
    trainer = yaml.safe_load(config_map["data"]["trainer.yaml"])
    assert trainer["fsdp"]["strategy"] == "hybrid" and trainer["fsdp"]["shardGroupSize"] == 2


@pytest.mark.parametrize(
    "spec, message",
    [
        ({"numNodes": 3, "nprocPerNode": 1, "trainer": {"fsdp": {"strategy": "hybrid", "shardGroupSize": 2}}},
         "2 must divide the world size (nodes x nprocPerNode 1: 3)"),
        ({"numNodes": 2, "nprocPerNode": 3, "trainer": {"fsdp": {"strategy": "hybrid", "shardGroupSize": 4}}},
         "4 must divide the world size (nodes x nprocPerNode 3: 6)"),
        # Elastic: every node count between minNodes and maxNodes.
        ({"numNodes": 4, "nprocPerNode": 1, "elastic": {"minNodes": 2, "maxNodes": 4},
          "trainer": {"fsdp": {"strategy": "hybrid", "shardGroupSize": 2}}},
         "2 must divide the world size (nodes x nprocPerNode 1: 3)"),
    ],
)
def test_a_shard_group_that_does_not_divide_the_world_is_refused(spec, message):
    problems: list = []
    FSDPJobSpec.model_validate(spec, context={"problems": problems})
    assert [(p.path, p.message) for p in problems] == [("spec.trainer.fsdp.shardGroupSize", message)]


@pytest.mark.parametrize(
    "spec",
    [
        {"numNodes": 2, "nprocPerNode": 4, "trainer": {"fsdp": {"strategy": "hybrid"}}},  # default: one node
        {"numNodes": 3, "nprocPerNode": 2, "trainer": {"fsdp": {"strategy": "hybrid", "shardGroupSize": 3}}},
        {"numNodes": 3, "trainer": {"fsdp": {"strategy": "hybrid", "shardGroupSize": 5}}},  # auto: the workers check
        {"numNodes": 4, "nprocPerNode": 2, "elastic": {"minNodes": 2}, "trainer": {"fsdp": {"strategy": "hybrid", "shardGroupSize": 2}}},
    ],
)
def test_shard_groups_that_divide_every_world_size_are_accepted(spec):
    problems: list = []
    FSDPJobSpec.model_validate(spec, context={"problems": problems})
    assert problems == []
