"""Disruptions are not failures: a gang taken down by the cluster (preemption, eviction, node
loss) restarts without spending `maxRestarts`, and every gang restart waits a backoff. Pure.

A pod was disrupted when Kubernetes says so: its `DisruptionTarget` condition is True (the
reasons below; the condition's meaning is `k8s.io/api/core/v1/types.go` `DisruptionTarget`),
or its node is lost (phase Unknown, `observe.view_pod`'s NodeLost). That is the test Kubernetes
Job's `podFailurePolicy` makes with `onPodConditions: [{type: DisruptionTarget}]` and action
`Ignore` ("the counter towards the backoffLimit is not incremented"), which this policy follows.
Disruptions are counted apart, in `status.disruptions`, and capped by `spec.maxDisruptions`
so that a node that keeps dying cannot restart a job forever: past the cap a disruption is an
ordinary failure and spends `maxRestarts`.

A failure with status.reason `Evicted` but no DisruptionTarget condition (a kubelet from before
the condition existed) is a failure: without the condition a Job's podFailurePolicy would not
ignore it either.
"""

from __future__ import annotations

from dataclasses import replace

from pinery.api.fsdpjob import MAX_RESTART_BACKOFF_SECONDS, FSDPJobSpec
from pinery.fsdpjob import failure_policy
from pinery.fsdpjob.failure_policy import Failure, FailureDecision, Replacement, first_to_fail

# The reasons Kubernetes writes into a pod's DisruptionTarget condition:
# - PreemptionByScheduler: `v1.PodReasonPreemptionByScheduler` (k8s.io/api core/v1 types.go),
#   the scheduler's preemption (pkg/scheduler/framework/preemption);
# - TerminationByKubelet: `v1.PodReasonTerminationByKubelet`, the kubelet's node-pressure
#   eviction and graceful node shutdown;
# - EvictionByEvictionAPI: pkg/registry/core/pod/storage/eviction.go, the condition the
#   Eviction subresource adds before deleting the pod (a drain, a PDB-mediated eviction);
# - DeletionByTaintManager: pkg/controller/tainteviction (NoExecute taints, a node unreachable);
# - DeletionByPodGC: pkg/controller/podgc/gc_controller.go, pods of a node that no longer exists.
DISRUPTION_TARGET_REASONS = frozenset(
    {"PreemptionByScheduler", "TerminationByKubelet", "EvictionByEvictionAPI", "DeletionByTaintManager", "DeletionByPodGC"}
)
# observe.view_pod's reason for a pod whose node stopped reporting (phase Unknown, or the old
# node controller's status.reason NodeLost).
NODE_LOST = "NodeLost"
DISRUPTION_REASONS = DISRUPTION_TARGET_REASONS | {NODE_LOST}


def is_disruption(f: Failure) -> bool:
    """Marked so by Kubernetes (any DisruptionTarget reason, as a Job's onPodConditions matches
    the condition type alone: a reason added later, such as the cluster autoscaler's, counts),
    or one of the reasons above when only the reason is known (a failure recorded earlier)."""
    return f.disrupted or f.reason in DISRUPTION_REASONS


def decide(spec: FSDPJobSpec, n: int, restarts: int, disruptions: int, failures: list[Failure],
           new: list[Failure]) -> FailureDecision:
    """What the failures not yet acted upon (`new`) cost: a disruption restart when each of them
    is a disruption and the cap allows, else what `failure_policy.decide` says. A mix of a
    disruption and a real failure is a failure (the job may be at fault)."""
    if not new:
        return FailureDecision("none", restarts, disruptions=disruptions)
    limit = spec.max_disruptions
    if not all(is_disruption(f) for f in new):
        return replace(failure_policy.decide(spec, n, restarts, failures, new), disruptions=disruptions)
    gang = failure_policy.gang_broken(spec.elastic, n, failures)
    # A gang restart counts one disruption; elastic replacements one per node.
    if disruptions + (1 if gang else len(new)) > limit:
        decision = failure_policy.decide(spec, n, restarts, failures, new)
        note = f"disruption limit reached ({disruptions} of {limit}), counted as a failure"
        return replace(decision, disruptions=disruptions, message=f"{decision.message}; {note}" if decision.message else note,
                       replacements=tuple(replace(r, message=f"{r.message}; {note}") for r in decision.replacements))
    reported = tuple(sorted(new, key=first_to_fail))
    if gang:
        first = sorted(failures, key=first_to_fail)[0]
        disruptions += 1
        return FailureDecision(
            "gang_restart", restarts, reported, disruptions=disruptions, disrupted=first,
            message=(f"{first.describe()}; a disruption, not a failure of the job: restarting all {n} nodes "
                     f"(disruption {disruptions} of {limit}; restarts used {restarts} of {spec.max_restarts})"),
        )
    # Elastic, the gang holds: each disrupted node gets a new pod that rejoins.
    out = []
    for f in sorted(new, key=lambda f: f.rank):
        disruptions += 1
        out.append(Replacement(f, True, f"{f.describe()}; a disruption: replacing its pod (disruption {disruptions} of {limit})"))
    return FailureDecision("replace", restarts, reported, disruptions=disruptions, replacements=tuple(out), disrupted=reported[0])


def backoff(restart: int, base: int) -> float:
    """Seconds before the pods of the `restart`-th gang restart (1-based, failures and
    disruptions alike) are created: `base`, doubled per restart, capped (0: at once). Kueue's
    requeueing doubles its wait the same way (`workload.UpdateRequeueState`)."""
    if base <= 0 or restart <= 0:
        return 0.0
    return float(min(base * 2 ** min(restart - 1, 32), MAX_RESTART_BACKOFF_SECONDS))
