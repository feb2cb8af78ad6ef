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

Collateral failures. A gang does not outlive one of its nodes: torchrun's other ranks fail
within about 1.5 s of losing a peer, with exit code 1 (measured with torch 2.13 and gloo:
`../shared/notes/torch-distributed.md`, "Failure propagation"). So the gang's new failures are
one disruption when the first of them in time is a disruption: every real failure that ended at
or after the earliest disruption followed from it (collateral) and costs nothing more, whatever
its exit code. A non-retryable one included: were the job at fault, that code would come first
in the next attempt and fail the job then. A real failure that ended before the first
disruption makes the whole a failure. Times are the API's, in whole seconds: a failure in the
disruption's second is taken for collateral (it cannot be told earlier). A disruption is timed
by its DisruptionTarget condition, which marks its start (the Eviction API writes it before it
deletes the pod); a failure by its container's end; either, lacking those, by when pinery first
sees it, so a node lost (no condition, no end) comes after any failure its peers reported. The
same order decides in one pass or in two: seen first, a disruption restarts the gang and the
later failures belong to the old attempt. Kubernetes Job's podFailurePolicy judges each pod
alone; JobSet (pkg/controllers/failure_policy.go: `findFirstFailedJob`, and each rule's
earliest matching Job) acts on the first failed Job by its Failed condition's time, the same
idea.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from pinery.api.fsdpjob import MAX_RESTART_BACKOFF_SECONDS, FSDPJobSpec
from pinery.fsdpjob import failure_policy
from pinery.fsdpjob.failure_policy import Failure, FailureDecision, Replacement, first_to_fail, node_list

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


def cause(new: list[Failure]) -> Optional[Failure]:
    """The disruption the new failures follow from: the earliest one, when no real failure
    ended before it (in the same second counts as after); None when they are a failure."""
    disrupted = [f for f in new if is_disruption(f)]
    if not disrupted:
        return None
    first = min(disrupted, key=first_to_fail)
    return None if any(f.at < first.at for f in new if not is_disruption(f)) else first


def decide(spec: FSDPJobSpec, n: int, restarts: int, disruptions: int, failures: list[Failure],
           new: list[Failure]) -> FailureDecision:
    """What the failures not yet acted upon (`new`) cost: a disruption restart when they follow
    from a disruption (`cause`) and the cap allows, else what `failure_policy.decide` says."""
    if not new:
        return FailureDecision("none", restarts, disruptions=disruptions)
    limit = spec.max_disruptions
    first = cause(new)
    if first is None:
        return replace(failure_policy.decide(spec, n, restarts, failures, new), disruptions=disruptions)
    gang = failure_policy.gang_broken(spec.elastic, n, failures)
    disrupted = [f for f in new if is_disruption(f)]
    # A gang restart counts one disruption; elastic replacements one per disrupted node.
    if disruptions + (1 if gang else len(disrupted)) > limit:
        decision = failure_policy.decide(spec, n, restarts, failures, new)
        note = f"disruption limit reached ({disruptions} of {limit}), counted as a failure"
        return replace(decision, disruptions=disruptions, message=f"{decision.message}; {note}" if decision.message else note,
                       replacements=tuple(replace(r, message=f"{r.message}; {note}") for r in decision.replacements))
    reported = tuple(sorted(new, key=first_to_fail))
    collateral = tuple(f for f in reported if not is_disruption(f))
    after = f"; {node_list(sorted(f.rank for f in collateral))} failed after it" if collateral else ""
    if gang:
        disruptions += 1
        return FailureDecision(
            "gang_restart", restarts, reported, disruptions=disruptions, disrupted=first, collateral=collateral,
            message=(f"{first.describe()}{after}; a disruption, not a failure of the job: restarting all {n} nodes "
                     f"(disruption {disruptions} of {limit}; restarts used {restarts} of {spec.max_restarts})"),
        )
    # Elastic, the gang holds: each disrupted node gets a new pod that rejoins, and so does each
    # node that failed after it, free.
    out = []
    for f in sorted(new, key=lambda f: f.rank):
        if is_disruption(f):
            disruptions += 1
            out.append(Replacement(f, True, f"{f.describe()}; a disruption: replacing its pod (disruption {disruptions} of {limit})"))
        else:
            out.append(Replacement(f, True, f"{f.describe()}; after the disruption of node {first.rank}: replacing its pod "
                                            "(part of that disruption, no restart spent)"))
    return FailureDecision("replace", restarts, reported, disruptions=disruptions, replacements=tuple(out), disrupted=first,
                           collateral=collateral)


def backoff(restart: int, base: int) -> float:
    """Seconds before the pods of the `restart`-th gang restart (1-based, failures and
    disruptions alike) are created: `base`, doubled per restart, capped (0: at once). Kueue's
    requeueing doubles its wait the same way (`workload.UpdateRequeueState`)."""
    if base <= 0 or restart <= 0:
        return 0.0
    return float(min(base * 2 ** min(restart - 1, 32), MAX_RESTART_BACKOFF_SECONDS))
