"""Names, labels and addresses of an FSDPJob's children; everything else refers to these."""

from __future__ import annotations

from typing import Any

from pinery.api.base import GROUP

KIND = "FSDPJob"
LABEL_JOB = f"{GROUP}/job-name"
LABEL_RANK = f"{GROUP}/node-rank"
LABEL_ATTEMPT = f"{GROUP}/attempt"
# On the pods that are not training nodes (the rendezvous store of an elastic job).
LABEL_ROLE = f"{GROUP}/role"
LABEL_MANAGED_BY = "app.kubernetes.io/managed-by"
# On the Service: the immutable part of the spec the children are built from (see lifecycle).
ANNOTATION_SPEC = f"{GROUP}/accepted-spec"

TRAINER_CONTAINER = "trainer"
WAIT_CONTAINER = "wait-for-rank0"
# Elastic nodes wait for the job's rendezvous store instead (rendezvous.py), and that pod's
# one container.
RENDEZVOUS_WAIT_CONTAINER = "wait-for-rendezvous"
RENDEZVOUS_CONTAINER = "rendezvous"
ROLE_RENDEZVOUS = "rendezvous"
CONFIG_DIR = "/etc/pinery"
CONFIG_FILE = "trainer.yaml"
CONFIG_PATH = f"{CONFIG_DIR}/{CONFIG_FILE}"
# The wait container only opens a TCP connection now and then. (Here, not in children.py,
# because a PodGroup's minResources counts it too: gang.py.)
WAIT_RESOURCES = {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "128Mi"}}


def node_waits(elastic: bool, rank: int) -> bool:
    """Whether node `rank`'s pod has the wait container: every static node but rank 0 (it waits
    for rank 0), every elastic node (it waits for the rendezvous store)."""
    return elastic or rank > 0


def service_name(job: str) -> str:
    return job


def pod_name(job: str, rank: int) -> str:
    return f"{job}-node-{rank}"


def config_map_name(job: str) -> str:
    return f"{job}-trainer"


def pod_group_name(job: str, attempt: int) -> str:
    """The PodGroup of one attempt of the gang (gang.py): a new one per attempt."""
    return f"{job}-{attempt}"


def rendezvous_pod_name(job: str) -> str:
    """The pod of an elastic job's rendezvous store: never `<job>-node-<i>`, so never a node's."""
    return f"{job}-rendezvous"


def _fqdn(hostname: str, job: str, namespace: str, cluster_domain: str) -> str:
    return f"{hostname}.{service_name(job)}.{namespace}.svc.{cluster_domain}"


def pod_fqdn(job: str, rank: int, namespace: str, cluster_domain: str) -> str:
    """A pod's stable DNS name: hostname `<job>-node-<i>` under the headless Service `<job>`."""
    return _fqdn(pod_name(job, rank), job, namespace, cluster_domain)


def rendezvous_fqdn(job: str, namespace: str, cluster_domain: str) -> str:
    """The rendezvous store's stable DNS name, under the same headless Service."""
    return _fqdn(rendezvous_pod_name(job), job, namespace, cluster_domain)


def master_addr(job: str, namespace: str, cluster_domain: str) -> str:
    return pod_fqdn(job, 0, namespace, cluster_domain)


def selector_labels(job: str) -> dict[str, str]:
    """What the Service selects and the operator lists pods by."""
    return {LABEL_JOB: job}


def pod_labels(job: str, rank: int, attempt: int) -> dict[str, str]:
    return {
        LABEL_MANAGED_BY: "pinery",
        **selector_labels(job),
        LABEL_RANK: str(rank),
        LABEL_ATTEMPT: str(attempt),
    }


class JobRef:
    """The identity of one FSDPJob: what every child's name, address and owner derive from."""

    __slots__ = ("name", "namespace", "uid")

    def __init__(self, name: str, namespace: str, uid: str):
        self.name, self.namespace, self.uid = name, namespace, uid

    @classmethod
    def of(cls, job: dict[str, Any]) -> "JobRef":
        meta = job.get("metadata") or {}
        return cls(meta["name"], meta.get("namespace") or "default", meta.get("uid") or "")

    def __repr__(self) -> str:
        return f"JobRef({self.namespace}/{self.name}, uid={self.uid})"
