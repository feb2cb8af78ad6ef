"""rendezvous.py: what a job does with its store pod, and which run a node joins, pass by pass.

Sources of the rules (torch 2.13): `_create_tcp_store` in
torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py (only an agent told `is_host`,
or whose own host is the endpoint's, hosts the store); `launch_agent` in
torch/distributed/launcher/api.py (an agent that ends other than by a signal closes its run id's
rendezvous for good, hence a run per gang).
"""

from __future__ import annotations

import pytest

from pinery.api.fsdpjob import FSDPJobSpec
from pinery.fsdpjob.observe import view_pod
from pinery.fsdpjob.rendezvous import STORE_LOST, joining_run_id, run_id, store_lost, store_step


def store(phase: str = "Running", terminating: bool = False) -> dict:
    meta: dict = {"name": "j-rendezvous", "uid": "s", "labels": {"pinery.dev/role": "rendezvous"}}
    if terminating:
        meta["deletionTimestamp"] = "2026-01-01T12:00:00Z"
    return {"metadata": meta, "status": {"phase": phase}}


@pytest.mark.parametrize("pod, taken, step", [
    (None, False, "create"),  # a new job, or the store was deleted and is gone
    (None, True, "wait"),  # someone else's pod holds the name (a deleted job's, not yet collected)
    (store("Pending"), True, "keep"),  # starting: the nodes' init containers wait for it
    (store("Running"), True, "keep"),
    (store("Running", terminating=True), True, "wait"),  # going away: created again once gone
    (store("Failed"), True, "replace"),  # evicted, or its node was lost
    (store("Succeeded"), True, "replace"),
    (store("Unknown"), True, "replace"),  # its node stopped reporting
], ids=["missing", "name-taken", "pending", "running", "terminating", "failed", "succeeded", "unknown"])
def test_store_step(pod, taken, step):
    assert store_step(view_pod(pod) if pod else None, taken) == step


def node(rank: int, run: str | None, phase: str = "Running", terminating: bool = False) -> dict:
    meta: dict = {"name": f"j-node-{rank}", "uid": f"u{rank}", "labels": {"pinery.dev/node-rank": str(rank), "pinery.dev/attempt": "0"}}
    if terminating:
        meta["deletionTimestamp"] = "2026-01-01T12:00:00Z"
    env = [{"name": "PET_RDZV_ID", "value": run}] if run else []
    return {"metadata": meta, "spec": {"containers": [{"name": "trainer", "env": env}]}, "status": {"phase": phase}}


@pytest.mark.parametrize("peers, attempt, expected", [
    ([], 0, "uid-0"),  # the first gang
    ([], 4, "uid-4"),  # a gang restart, resume or readmission: a run of its own
    ([node(1, "uid-0"), node(2, "uid-0")], 3, "uid-0"),  # a replacement joins its peers' run
    ([node(1, "uid-0", "Pending"), node(2, "uid-2")], 5, "uid-2"),  # running peers first
    ([node(1, "uid-0", "Succeeded"), node(2, "uid-0", "Failed")], 5, "uid-5"),  # no live peer
    ([node(1, "uid-0", terminating=True)], 5, "uid-5"),  # going away: not a peer
    ([node(1, None)], 2, "uid-2"),  # a peer without a run (static): none to join
    ([node(1, "uid")], 2, "uid"),  # pods of an older pinery (run id = job uid) are joined as they are
], ids=["first", "new-gang", "replacement", "running-first", "no-live-peer", "terminating", "no-run", "older-pinery"])
def test_joining_run_id(peers, attempt, expected):
    assert joining_run_id("uid", attempt, [view_pod(p) for p in peers]) == expected


def test_run_ids_are_per_gang():
    assert run_id("uid", 0) != run_id("uid", 1) and run_id("uid", 1) == "uid-1"


def ended_store(status: dict) -> dict:
    return {"metadata": {"name": "j-rendezvous", "uid": "s", "labels": {"pinery.dev/role": "rendezvous"}}, "status": status}


DISRUPTED = {"phase": "Failed", "conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]}


@pytest.mark.parametrize("status, restarts, disruptions, action, after", [
    ({"phase": "Failed", "reason": "Evicted", "message": "low on memory"}, 0, 0, "gang_restart", (1, 0)),  # no DisruptionTarget: a failure
    (DISRUPTED, 0, 0, "gang_restart", (0, 1)),
    ({"phase": "Unknown"}, 2, 3, "gang_restart", (2, 4)),  # its node lost: a disruption
    (DISRUPTED, 0, 10, "gang_restart", (1, 10)),  # past maxDisruptions (10): spends a restart
    ({"phase": "Failed"}, 3, 0, "fail", (3, 0)),  # no restarts left (maxRestarts 3)
], ids=["evicted-by-kubelet-without-condition", "preempted", "node-lost", "disruption-cap", "no-restarts-left"])
def test_store_lost(status, restarts, disruptions, action, after):
    spec = FSDPJobSpec.model_validate({"numNodes": 3, "elastic": {"minNodes": 2}, "maxRestarts": 3})
    d = store_lost(spec, 3, restarts, disruptions, view_pod(ended_store(status)))
    assert (d.action, (d.restarts, d.disruptions)) == (action, after)
    assert d.message.startswith("the rendezvous store pod j-rendezvous ended (")
    assert d.reason == (STORE_LOST if action == "gang_restart" else "RestartLimitExceeded")
