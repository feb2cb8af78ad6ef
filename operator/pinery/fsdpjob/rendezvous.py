"""The rendezvous of an elastic job: a store in a pod of its own, and which run the nodes join.

Why a pod of its own. torchrun's c10d backend keeps the rendezvous in a TCPStore that one agent
hosts: `_create_tcp_store` (torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py)
hosts it where `is_host` says so or, unset, where the endpoint's host is the agent's own; every
other agent is a client. Hosted by rank 0's pod, the store dies with it, and every other agent
then exits with RendezvousConnectionError: the whole gang restarts (measured, torch 2.13). In a
pod that runs no agent, with `is_host=false` on every node, the store outlives any node: the
survivors re-rendezvous and a replacement joins them (docs/fsdpjob.md, "Elastic jobs").

Which run. `launch_agent` (torch/distributed/launcher/api.py) closes the rendezvous of its run
id for good when an agent ends other than by a signal (its workers succeeded, or failed past
`elastic.maxRestarts`), and the store lives as long as the job. So each gang (a new attempt of
all nodes: the first, a gang restart, a resume, a Kueue readmission) starts a run id of its own,
`<job uid>-<attempt>`, and a replacement node joins the run its peers are in, read from their
pods (`PodView.rendezvous_id`). A job whose pods an older pinery made keeps their run id.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Literal, Optional

from pinery.api.fsdpjob import FSDPJobSpec
from pinery.fsdpjob import failure_policy
from pinery.fsdpjob.disruption_policy import NODE_LOST
from pinery.fsdpjob.failure_policy import FailureDecision
from pinery.fsdpjob.observe import PodView

# The store's program: a TCPStore server and nothing else, in the training image, so that server
# and clients are one torch version (a newer client's requests can be unknown to an older
# server). Python ignores SIGTERM's default action as PID 1, hence the handler: the pod stops at
# once when deleted. `wait_for_workers=False`: agents come and go, none is awaited.
STORE_PROGRAM = (
    "import signal, sys\n"
    "from torch.distributed import TCPStore\n"
    "port = int(sys.argv[1])\n"
    "store = TCPStore('localhost', port, is_master=True, wait_for_workers=False)\n"
    "for sig in (signal.SIGTERM, signal.SIGINT):\n"
    "    signal.signal(sig, lambda *_: sys.exit(0))\n"
    "print(f'pinery: rendezvous store listening on port {port}', flush=True)\n"
    "while True:\n"
    "    signal.pause()\n"
)
# `python3`, not `python`: Debian's and Ubuntu's Python images have only the first for sure.
STORE_COMMAND = ("python3", "-c", STORE_PROGRAM)
# The store holds a few keys per node; the most of it is torch's import.
STORE_RESOURCES = {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}}

StoreStep = Literal["create", "keep", "wait", "replace"]
# The Restarting reason and Event when the store's end restarts the gang.
STORE_LOST = "RendezvousStoreLost"


def run_id(job_uid: str, attempt: int) -> str:
    """The rendezvous of the gang that started in `attempt`."""
    return f"{job_uid}-{attempt}"


def joining_run_id(job_uid: str, attempt: int, peers: Iterable[PodView]) -> str:
    """The run a node created now joins: its live peers' (the running ones first, then any
    not finished), else a new gang's own."""
    live = [p for p in peers if not p.finished and not p.terminating and p.rendezvous_id]
    if not live:
        return run_id(job_uid, attempt)
    first = min(live, key=lambda p: (not p.running, p.rank if p.rank is not None else -1))
    return str(first.rendezvous_id)


def store_step(store: Optional[PodView], name_taken: bool) -> StoreStep:
    """What the job does with its store pod this pass: create it when missing; wait while one
    of that name is going away (its own, or someone else's); replace one that ended (deleted
    now, created once it is gone); keep one that runs or is starting."""
    if store is None:
        return "wait" if name_taken else "create"
    if store.terminating:
        return "wait"
    if store.finished:
        return "replace"
    return "keep"


def describe_end(store: PodView) -> str:
    """`the rendezvous store pod j-rendezvous ended (Evicted: low on memory)`."""
    why = f"{store.reason}: {store.detail}" if store.reason and store.detail else (store.reason or store.phase)
    return f"the rendezvous store pod {store.name} ended ({why})"


def store_lost(spec: FSDPJobSpec, n: int, restarts: int, disruptions: int, store: PodView) -> FailureDecision:
    """The store ended under a training gang. Every agent then exits 1 with
    RendezvousConnectionError at its next look at the store (measured with torch 2.13: both
    agents of a two-node job within seconds of the store's SIGKILL, their workers mid-training),
    so the gang restarts on a new store now, whatever pass sees the agents' failures, and they
    are not counted again (they belong to the old attempt). The store's pod disrupted
    (DisruptionTarget, or its node lost) is one of the job's disruptions while `maxDisruptions`
    allows, as a node's would be (disruption_policy); any other end spends a restart."""
    cause = describe_end(store)
    limit = spec.max_disruptions
    if (store.disrupted or store.reason == NODE_LOST) and disruptions < limit:
        disruptions += 1
        return FailureDecision(
            "gang_restart", restarts, reason=STORE_LOST, disruptions=disruptions,
            message=(f"{cause}; a disruption, not a failure of the job: restarting all {n} nodes "
                     f"(disruption {disruptions} of {limit}; restarts used {restarts} of {spec.max_restarts})"),
        )
    return replace(failure_policy.restart_gang(spec, n, restarts, cause, reason=STORE_LOST), disruptions=disruptions)
