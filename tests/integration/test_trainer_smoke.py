"""`torchrun -m pinery_trainer.smoke` (examples/fsdpjob-custom-command.yaml) on two nodes."""

from __future__ import annotations

import json

import pytest

from tests.support.ports import free_port
from tests.support.trainer import TORCHRUN, base_env, cleanup, operator_env, start, wait_all

pytestmark = pytest.mark.slow


def test_every_rank_all_reduces_over_the_whole_world(tmp_path):
    port = free_port()
    nodes = [
        start([TORCHRUN, "-m", "pinery_trainer.smoke"], {**base_env(), **operator_env(2, 2, i, port)}, tmp_path, f"node{i}")
        for i in range(2)
    ]
    try:
        codes = wait_all(nodes, timeout=120)
    finally:
        cleanup(nodes)
    assert codes == [0, 0], [n.stderr[-2000:] for n in nodes]
    results = [json.loads(line) for n in nodes for line in n.stdout.splitlines() if line.startswith("{")]
    assert sorted(r["rank"] for r in results) == [0, 1, 2, 3], [n.stdout + n.stderr[-2000:] for n in nodes]
    for r in results:
        assert r["ok"] is True and r["sum"] == r["expected"] == 10 and r["worldSize"] == 4
        assert "event" not in r  # not a progress line for the operator
    assert {r["localRank"] for r in results} == {0, 1}
