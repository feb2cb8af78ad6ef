"""Failed-node avoidance: which failures make later attempts avoid the Kubernetes node they
happened on, how (required or preferred node affinity), and the affinity the pods get. Pure.

Kubernetes' own scheduler remembers nothing about a pod that failed on a node; node health is
cluster-wide state (node-problem-detector conditions, taints, cordons), and a node may look
healthy to it while it keeps breaking one job (an ECC error that recurs under load, a flaky
NIC). So a job keeps its own list, `status.avoidedNodes`: a node stays avoided for the rest of
the job, up to `maxAvoidedNodes` of them (past it the oldest is used again), since a fault that
broke one attempt is likely to break the next one that lands there.

The pods avoid a node by its name, as the DaemonSet controller targets one
(`ReplaceDaemonSetPodNodeNameNodeAffinity`, pkg/controller/daemon/util/daemonset_util.go: a
`matchFields` term on `metadata.name`), not by the `kubernetes.io/hostname` label, which need not
equal the node's name. A field requirement takes one value (`validateNodeFieldSelectorRequirement`,
pkg/apis/core/validation/validation.go), so each avoided node is a NotIn of its own, ANDed in one
term. Required terms are ORed and the expressions and fields of one term ANDed
(`NodeSelector` in k8s.io/api/core/v1/types.go; component-helpers/scheduling/corev1/nodeaffinity
`nodeSelectorTerms.Match`), so the NotIn field goes into every term of the user's own required
affinity; an empty term matches nothing and stays as it is.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any, Literal, Mapping, Optional, Sequence

from pinery.api.fsdpjob import NodeAvoidanceSpec
from pinery.fsdpjob.disruption_policy import DISRUPTION_REASONS
from pinery.fsdpjob.failure_policy import Failure

Mode = Literal["Required", "Preferred"]

# The weight of the preferred term: the most a term may have (1-100, core/v1 PreferredSchedulingTerm).
PREFERRED_WEIGHT = 100
NODE_NAME_FIELD = "metadata.name"

# A disruption means the node is being drained, lost or short of resources, except a preemption:
# the node is fine, the pod lost its place to one of a higher priority.
PREEMPTION = "PreemptionByScheduler"
# status.reason of a pod the kubelet failed for its node's sake (observe.view_pod reads them):
# node-pressure eviction, node shutdown, admission on a node without room.
NODE_REASONS = frozenset({"Evicted", "NodeLost", "Shutdown", "Terminated", "NodeShutdown", "UnexpectedAdmissionError", "OutOfcpu", "OutOfmemory"})
# Signals that kill a training process from outside it: SIGKILL that was not the container's own
# memory limit (that is OOMKilled, the job's own use), and SIGBUS, which the kernel sends for an
# uncorrectable memory error (Documentation/mm/hwpoison.rst, BUS_MCEERR_AR). SIGSEGV and SIGABRT
# are usually the program's own; SIGTERM (143) is how Kubernetes and pinery stop pods.
NODE_SIGNALS = {137: "SIGKILL", 135: "SIGBUS"}
OOM_KILLED = "OOMKilled"
# Device and interconnect faults as they appear in a failed worker's output (the termination
# message is the log's tail): the CUDA runtime's messages for cudaErrorECCUncorrectable and
# cudaErrorNvlinkUncorrectable (CUDA Runtime API, "Error Handling", enum cudaError), and NCCL's
# ncclSystemError, which PyTorch's ProcessGroupNCCL prints by name ("System call (e.g. socket,
# malloc) or external library call failed or device error"). ncclRemoteError blames the peer,
# ncclUnhandledCudaError is as often the job's own (out of memory): neither is here.
DEVICE_ERRORS = (
    re.compile(r"uncorrectable ECC error encountered", re.I),
    re.compile(r"uncorrectable NVLink error", re.I),
    re.compile(r"ncclSystemError"),
)
STALLED = "Stalled"


@dataclass(frozen=True)
class Fault:
    """Why a failure's node is avoided."""

    reason: str
    message: str


def node_fault(f: Failure, policy: str, stalled_everywhere: bool = False) -> Optional[Fault]:
    """Why `f` makes its node avoided under `policy` (Auto, Always, Never); None when it does not.
    A stall of every node says nothing about one of them (`stalled_everywhere`)."""
    if policy == "Never" or not f.node_name:
        return None
    fault = _not_the_jobs_own(f, stalled_everywhere)
    if fault is not None:
        return fault
    if policy == "Always":
        return Fault(f.reason, f.describe())
    return None


def _not_the_jobs_own(f: Failure, stalled_everywhere: bool) -> Optional[Fault]:
    if f.reason == PREEMPTION:
        return None
    if f.disrupted or f.reason in DISRUPTION_REASONS or f.reason in NODE_REASONS:
        return Fault(f.reason, f.describe())
    if f.reason == STALLED:
        return None if stalled_everywhere else Fault(STALLED, f.describe())
    for pattern in DEVICE_ERRORS:
        found = pattern.search(f.message)
        if found:
            line = f.message[f.message.rfind("\n", 0, found.start()) + 1:].split("\n", 1)[0].strip()
            return Fault("DeviceError", f"{f.describe()}: {line[:300]}")
    if f.exit_code in NODE_SIGNALS and f.reason != OOM_KILLED:
        return Fault("Signal", f"{f.describe()}; killed by {NODE_SIGNALS[f.exit_code]}, not by its memory limit")
    return None


@dataclass(frozen=True)
class Update:
    avoided: list[dict[str, Any]]  # status.avoidedNodes
    added: list[dict[str, Any]]  # the entries new in this decision, one NodeAvoided Event each


def record(spec: NodeAvoidanceSpec, previous: Sequence[Mapping[str, Any]], failures: Sequence[Failure], *, n: int,
           attempts: Mapping[int, int], now: str) -> Update:
    """status.avoidedNodes after the failures a restart or replacement acts on: a node avoided
    already keeps its first entry; the list keeps the newest `maxAvoidedNodes`."""
    avoided = [dict(e) for e in previous if isinstance(e, Mapping) and e.get("nodeName")]
    if spec.policy == "Never":
        return Update([], [])
    stalled = sum(1 for f in failures if f.reason == STALLED) >= n
    known = {e["nodeName"] for e in avoided}
    added = []
    for f in sorted(failures, key=lambda f: (f.at, f.rank)):
        fault = node_fault(f, spec.policy, stalled)
        if fault is None or f.node_name in known:
            continue
        assert f.node_name is not None
        known.add(f.node_name)
        entry = {"nodeName": f.node_name, "reason": fault.reason, "message": fault.message[:1024], "node": f.rank,
                 "attempt": attempts.get(f.rank), "time": now}
        added.append({k: v for k, v in entry.items() if v is not None})
    avoided = (avoided + added)[-spec.max_avoided_nodes:]
    return Update(avoided, [e for e in added if e in avoided])


def trimmed(spec: NodeAvoidanceSpec, avoided: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The list as the spec allows it now (the field is mutable: Never, or a lower cap)."""
    if spec.policy == "Never":
        return []
    return [dict(e) for e in avoided if isinstance(e, Mapping) and e.get("nodeName")][-spec.max_avoided_nodes:]


def mode(spec: NodeAvoidanceSpec, avoided: Sequence[str], cluster_nodes: Optional[Sequence[Mapping[str, Any]]],
         node_selector: Mapping[str, str], needed: int) -> Mode:
    """Required or Preferred. Auto: Required only when the nodes the operator can list show at
    least `needed` Ready, schedulable nodes that match the pods' node selector besides the
    avoided ones (taints, resources and the user's own affinity are the scheduler's to judge);
    Preferred when fewer, or when the nodes cannot be listed (`cluster_nodes` None), so that a
    small cluster is never left without room for the job."""
    if spec.mode != "Auto":
        return spec.mode
    if cluster_nodes is None:
        return "Preferred"
    left = [node for node in cluster_nodes if _usable(node, node_selector) and (node.get("metadata") or {}).get("name") not in avoided]
    return "Required" if len(left) >= needed else "Preferred"


def _usable(node: Mapping[str, Any], node_selector: Mapping[str, str]) -> bool:
    """Ready and not cordoned (the NodeUnschedulable filter reads spec.unschedulable), with the
    node selector's labels (nodeSelector is an exact match on every key)."""
    if (node.get("spec") or {}).get("unschedulable"):
        return False
    conditions = (node.get("status") or {}).get("conditions") or []
    if not any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions):
        return False
    labels = (node.get("metadata") or {}).get("labels") or {}
    return all(labels.get(k) == v for k, v in node_selector.items())


def merge_affinity(affinity: Optional[Mapping[str, Any]], avoided: Sequence[str], mode: Mode) -> Optional[dict[str, Any]]:
    """The pod's affinity: the user's own, with the avoided nodes excluded (Required) or
    disfavoured (Preferred). Without avoided nodes, the user's affinity unchanged."""
    if not avoided:
        return copy.deepcopy(dict(affinity)) if affinity else None
    out = copy.deepcopy(dict(affinity or {}))
    node_affinity = out.setdefault("nodeAffinity", {})
    def not_in() -> list[dict[str, Any]]:
        return [{"key": NODE_NAME_FIELD, "operator": "NotIn", "values": [name]} for name in sorted(set(avoided))]

    if mode == "Required":
        required = node_affinity.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {})
        terms = required.get("nodeSelectorTerms") or []
        if not terms:
            required["nodeSelectorTerms"] = [{"matchFields": not_in()}]
        for term in terms:
            if term.get("matchExpressions") or term.get("matchFields"):
                term["matchFields"] = [*(term.get("matchFields") or []), *not_in()]
    else:
        preferred = node_affinity.setdefault("preferredDuringSchedulingIgnoredDuringExecution", [])
        preferred.append({"weight": PREFERRED_WEIGHT, "preference": {"matchFields": not_in()}})
    return out
