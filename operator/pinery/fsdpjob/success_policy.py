"""When an FSDPJob runs and when it has succeeded, from its current pods. Pure.

A gang succeeds when every node exited 0 and runs when every node started; an elastic job
succeeds when none still runs and at least `minNodes` exited 0, and runs while `minNodes`
run (or are done).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

from pinery.api.fsdpjob import ElasticSpec
from pinery.fsdpjob.observe import PodView


@dataclass(frozen=True)
class Outcome:
    succeeded: bool
    started: bool
    running_nodes: int


def outcome(n: int, elastic: Optional[ElasticSpec], current: Mapping[int, PodView]) -> Outcome:
    pods = current
    if elastic is None:
        succeeded = len(pods) == n and all(p.succeeded and p.exit_code in (0, None) for p in pods.values())
        started = len(pods) == n and all(p.started and not p.failed for p in pods.values())
        running_nodes = sum(1 for p in pods.values() if p.running)
    else:
        alive = [p for p in pods.values() if not p.failed]
        done = [p for p in alive if p.succeeded]
        running_nodes = sum(1 for p in alive if p.running)
        succeeded = running_nodes == 0 and len(done) >= elastic.min_nodes
        started = sum(1 for p in alive if p.running or p.succeeded) >= elastic.min_nodes
    return Outcome(succeeded, started, running_nodes)


def success_message(n: int, elastic: Optional[ElasticSpec], current: Mapping[int, PodView]) -> str:
    if elastic is None:
        return f"all {n} nodes exited 0"
    done = sorted(i for i, p in current.items() if p.succeeded)
    return f"{len(done)} of {n} nodes exited 0 (elastic, at least {elastic.min_nodes} needed)"
