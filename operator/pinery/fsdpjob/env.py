"""The environment of the training container: the rendezvous, the same in meaning on every node.

Two audiences read it. torchrun reads only its flags and `PET_<FLAG>` variables (it ignores and
then overwrites plain MASTER_ADDR/WORLD_SIZE/RANK for its workers), so the PET_* set makes a bare
`torchrun script.py` work. Scripts and tools outside torchrun read the plain names, which are
therefore also set, with WORLD_SIZE counting processes (nodes x processes per node) and
NODE_RANK the node; RANK is a process rank and is set only where it is unambiguous (one process
per node, static rendezvous).

An elastic node gets none of the values membership changes make false (MASTER_*, NNODES,
NODE_RANK, WORLD_SIZE, RANK): the c10d rendezvous assigns ranks and torchrun hands its workers the
true ones each round. What the spec configured is there under names that say so
(PINERY_POD_INDEX, PINERY_NUM_NODES, PINERY_MIN_NODES, PINERY_MAX_NODES), and the rendezvous is
the job's store pod (rendezvous.py), never a training node.
"""

from __future__ import annotations

from typing import Any, Optional

from pinery.api.fsdpjob import FSDPJobSpec
from pinery.fsdpjob import rendezvous
from pinery.fsdpjob.naming import JobRef, master_addr, rendezvous_fqdn
from pinery.fsdpjob.nproc import nproc_per_node
from pinery.settings import OperatorSettings

# torchrun's c10d store read timeout and rendezvous join timeout must outlast the time nodes may
# start apart (a node waiting for a slow image pull), which startupTimeoutSeconds bounds.
MIN_READ_TIMEOUT = 300
MIN_JOIN_TIMEOUT = 600


def rendezvous_env(
    job: JobRef, spec: FSDPJobSpec, rank: int, attempt: int, settings: OperatorSettings,
    run_id: Optional[str] = None,
) -> list[dict[str, str]]:
    """pinery's variables for the node of this rank, as Kubernetes EnvVars, in a stable order.
    `run_id`: the elastic rendezvous the node joins (rendezvous.joining_run_id); by default
    the run of a gang started in `attempt`."""
    nproc = nproc_per_node(spec)
    if spec.elastic is None:
        env = _static_env(job, spec, rank, nproc, settings)
    else:
        env = _elastic_env(job, spec, rank, nproc, settings, run_id or rendezvous.run_id(job.uid, attempt))
    env["PYTHONUNBUFFERED"] = "1"
    env["PINERY_JOB_NAME"] = job.name
    env["PINERY_ATTEMPT"] = str(attempt)
    if spec.checkpoint is not None:
        env["PINERY_CHECKPOINT_DIR"] = spec.checkpoint.path
        env["PINERY_CHECKPOINT_INTERVAL"] = str(spec.checkpoint.interval_steps)
    return [{"name": name, "value": value} for name, value in env.items()]


def _static_env(job: JobRef, spec: FSDPJobSpec, rank: int, nproc: int, settings: OperatorSettings) -> dict[str, str]:
    addr = master_addr(job.name, job.namespace, settings.cluster_domain)
    port = str(spec.master_port)
    env: dict[str, str] = {
        "MASTER_ADDR": addr,
        "MASTER_PORT": port,
        "NNODES": str(spec.num_nodes),
        "NODE_RANK": str(rank),
        "NPROC_PER_NODE": str(nproc),
        "WORLD_SIZE": str(spec.num_nodes * nproc),
    }
    if nproc == 1:
        # One process per node: the process rank is the node rank, so plain `python` works.
        env.update(RANK=str(rank), LOCAL_RANK="0", LOCAL_WORLD_SIZE="1")
    env.update(
        PET_NNODES=str(spec.num_nodes),
        PET_NODE_RANK=str(rank),
        PET_NPROC_PER_NODE=str(nproc),
        PET_MASTER_ADDR=addr,
        PET_MASTER_PORT=port,
        # pinery restarts the whole gang itself; torchrun's own restarts reuse a stale store.
        PET_MAX_RESTARTS="0",
    )
    return env


def _elastic_env(job: JobRef, spec: FSDPJobSpec, rank: int, nproc: int, settings: OperatorSettings,
                 run_id: str) -> dict[str, str]:
    elastic = spec.elastic
    assert elastic is not None
    max_nodes = elastic.max_nodes or spec.num_nodes
    read_timeout = max(MIN_READ_TIMEOUT, spec.startup_timeout_seconds)
    join_timeout = max(MIN_JOIN_TIMEOUT, spec.startup_timeout_seconds)
    store = rendezvous_fqdn(job.name, job.namespace, settings.cluster_domain)
    return {
        # True whatever the membership: the processes this node starts.
        "NPROC_PER_NODE": str(nproc),
        # As configured, not as trained: the rendezvous decides ranks and the world each round.
        "PINERY_POD_INDEX": str(rank),
        "PINERY_NUM_NODES": str(spec.num_nodes),
        "PINERY_MIN_NODES": str(elastic.min_nodes),
        "PINERY_MAX_NODES": str(max_nodes),
        "PET_NNODES": f"{elastic.min_nodes}:{max_nodes}",
        "PET_NPROC_PER_NODE": str(nproc),
        "PET_RDZV_BACKEND": "c10d",
        "PET_RDZV_ENDPOINT": f"{store}:{spec.master_port}",
        "PET_RDZV_ID": run_id,
        # is_host=false: the store pod hosts the rendezvous, no agent does (rendezvous.py).
        "PET_RDZV_CONF": f"join_timeout={join_timeout},read_timeout={read_timeout},is_host=false",
        "PET_MAX_RESTARTS": str(elastic.max_restarts),
        # Without it restarted or joining agents read stale addresses and deadlock.
        "TORCH_DISABLE_SHARE_RDZV_TCP_STORE": "1",
    }


def container_env(
    job: JobRef, spec: FSDPJobSpec, rank: int, attempt: int, settings: OperatorSettings,
    run_id: Optional[str] = None,
) -> list[dict[str, Any]]:
    """pinery's variables first, then the user's (which may refer to pinery's as `$(NAME)`)."""
    user = [var.to_api() for var in spec.env or []]
    return rendezvous_env(job, spec, rank, attempt, settings, run_id) + user
