"""Which nodes failed, and what a failure costs: a gang restart, an elastic replacement, or
the job. Pure: the lifecycle applies the decision.

A gang (no `elastic`) restarts all its nodes together on any failure; an elastic job replaces
only the failed nodes, rank 0 among them, while at least `minNodes` others train on (the
rendezvous store is a pod of its own: rendezvous.py). Every restart or replacement spends one
of `maxRestarts`; an exit code the job marks non-retryable ends it at once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Literal, Mapping, Optional, Sequence

from pinery.api.fsdpjob import ElasticSpec, FSDPJobSpec
from pinery.fsdpjob.observe import PodView
from pinery_trainer.exit_codes import NON_RETRYABLE


@dataclass(frozen=True)
class Failure:
    """A node that stopped for good in its current attempt."""

    rank: int
    pod: str
    reason: str
    exit_code: Optional[int]
    detail: str
    at: datetime
    disrupted: bool = False  # the pod's DisruptionTarget condition was True (disruption_policy)
    node_name: Optional[str] = None  # the Kubernetes node it failed on (node_avoidance)
    message: str = ""  # the training container's termination message (node_avoidance)

    def describe(self) -> str:
        code = f"exit code {self.exit_code}" if self.exit_code is not None else "no exit code"
        text = f"node {self.rank} (pod {self.pod}) failed: {code} ({self.reason})"
        return f"{text}: {self.detail}" if self.detail else text


def first_to_fail(f: Failure) -> tuple[datetime, int]:
    """Sort key: the earliest failure first (rank breaks ties)."""
    return (f.at, f.rank)


def node_failures(n: int, current: Mapping[int, PodView], pod_names: Sequence[str], old_nodes: Mapping[int, Mapping[str, Any]],
                  known_failed: set[int], vanished: set[int], now: datetime) -> list[Failure]:
    """Every node failed in its current attempt: its pod failed, was deleted by someone else
    (terminating, or `vanished`: seen before and gone), or its failure was recorded before
    (`known_failed`). Each is timed when it began, as far as the pod tells: a disruption by its
    DisruptionTarget condition, a failure by its container's end, else when it is seen (`now`)."""
    out: list[Failure] = []
    for i in range(n):
        p = current.get(i)
        name = pod_names[i]
        if p is None:
            old = old_nodes.get(i) or {}
            if i in known_failed:
                f = Failure(i, name, old.get("reason") or "Error", old.get("exitCode"), "", now, node_name=old.get("nodeName"))
            elif i in vanished:
                f = Failure(i, name, "PodDeleted", None, "the pod disappeared", now)
            else:
                continue
        elif p.failed:
            f = Failure(i, name, p.reason or "Error", p.exit_code, p.detail, p.disrupted_at or p.finished_at or now, p.disrupted,
                        p.node_name, p.message)
        elif p.terminating:
            reason = p.reason if p.reason not in (None, "Terminating") else "PodDeleted"
            f = Failure(i, name, reason, None, p.detail or "the pod was deleted by someone other than pinery",
                        p.disrupted_at or now, p.disrupted, p.node_name)
        else:
            continue
        out.append(f)
    return out


@dataclass(frozen=True)
class Rank0Check:
    failures: list[Failure]
    recheck_after: Optional[float] = None  # the grace is still running
    exited_early: bool = False  # rank 0's exit is now a failure of its own (ExitedBeforeNodesJoined)


def rank0_alone(failures: list[Failure], *, n: int, current: Mapping[int, PodView], known_failed: set[int],
                node_reasons: Mapping[int, Optional[str]], elastic: Optional[ElasticSpec], now: datetime,
                grace: float) -> Rank0Check:
    """`failures`, counting it against rank 0 that it exited while other nodes still waited to
    join it. They never can (their wait is for rank 0's port, and rank 0 is not restarted
    alone), so the job did not run on all nodes. A rank 0 that failed is a failure anyway: its
    message now says who never joined. One that exited 0 becomes a failure `grace` seconds
    after it finished (a node that reached rank 0 just before may not have said so yet).
    Static jobs only."""
    rank0 = current.get(0)
    if rank0 is None or not rank0.finished or elastic is not None:
        # Elastic nodes wait for the rendezvous store, not for rank 0: its exit leaves nobody
        # waiting in vain, and the elastic rules judge it.
        return Rank0Check(failures)
    failed = {f.rank for f in failures}
    left_out = [i for i in range(1, n)
                if i not in failed and i not in known_failed and (current.get(i) is None or not current[i].joined)]
    if not left_out:
        return Rank0Check(failures)
    never = never_joined(left_out, current, node_reasons)
    own = next((f for f in failures if f.rank == 0), None)
    if own is not None:
        detail = f"{own.detail}; {never}" if own.detail else never
        return Rank0Check([replace(f, detail=detail) if f is own else f for f in failures])
    finished = rank0.finished_at or now
    left = (finished + timedelta(seconds=grace) - now).total_seconds()
    if left > 0:
        return Rank0Check(failures, recheck_after=left)
    detail = f"rank 0 exited before the other nodes joined: {never}"
    return Rank0Check([Failure(0, rank0.name, "ExitedBeforeNodesJoined", rank0.exit_code, detail, finished), *failures],
                      exited_early=True)


def never_joined(left_out: list[int], current: Mapping[int, PodView], node_reasons: Mapping[int, Optional[str]]) -> str:
    """`node 2 never joined (WaitingForRank0)`; with several reasons, grouped by reason."""
    why: dict[str, list[int]] = {}
    for i in left_out:
        p = current.get(i)
        reason = (p.reason if p is not None else None) or node_reasons.get(i) or "Pending"
        why.setdefault(reason, []).append(i)
    if len(why) == 1:
        return f"{node_list(left_out)} never joined ({next(iter(why))})"
    return f"{node_list(left_out)} never joined (" + "; ".join(f"{node_list(r)}: {w}" for w, r in why.items()) + ")"


def non_retryable(spec: FSDPJobSpec, f: Failure) -> bool:
    """The job's own nonRetryableExitCodes, and the built-in trainer's when it runs."""
    codes = set(spec.non_retryable_exit_codes or ())
    if spec.command is None:
        codes.update(NON_RETRYABLE)
    return f.exit_code is not None and f.exit_code in codes


def gang_broken(elastic: Optional[ElasticSpec], n: int, failures: list[Failure]) -> bool:
    """Whether these failures take the whole gang down (else the failed nodes are replaced)."""
    if elastic is None:
        return True
    # No node hosts the rendezvous (its store has a pod of its own: rendezvous.py), so any node,
    # rank 0 included, can be lost while minNodes train on.
    return n - len(failures) < elastic.min_nodes


@dataclass(frozen=True)
class Replacement:
    """An elastic node's new attempt, or (`replaced` False, no budget left) its end."""

    failure: Failure
    replaced: bool
    message: str


@dataclass(frozen=True)
class FailureDecision:
    action: Literal["none", "fail", "gang_restart", "replace"]
    restarts: int  # status.restarts after the decision
    reported: tuple[Failure, ...] = ()  # one NodeFailed Event each, in this order
    reason: str = ""  # the Failed reason ("fail"); the Restarting reason ("gang_restart"; empty: GangRestart or Disrupted)
    message: str = ""  # the Failed or Restarting message
    replacements: tuple[Replacement, ...] = ()  # "replace", by rank
    disruptions: int = 0  # status.disruptions after the decision (disruption_policy)
    disrupted: Optional[Failure] = None  # the disruption acted on, when it was one
    collateral: tuple[Failure, ...] = ()  # the failures that followed it, part of the disruption


def decide(spec: FSDPJobSpec, n: int, restarts: int, failures: list[Failure], new: list[Failure]) -> FailureDecision:
    """What the failures not yet acted upon (`new`, among every current one: `failures`) cost,
    with `restarts` of the budget used so far."""
    if not new:
        return FailureDecision("none", restarts)
    reported = tuple(sorted(new, key=first_to_fail))
    limit = spec.max_restarts
    fatal = next((f for f in reported if non_retryable(spec, f)), None)
    if fatal is not None:
        return FailureDecision("fail", restarts, reported, "NonRetryableExitCode",
                               f"{fatal.describe()}; exit code {fatal.exit_code} is not retried")
    if gang_broken(spec.elastic, n, failures):
        first = sorted(failures, key=first_to_fail)[0]
        return restart_gang(spec, n, restarts, first.describe(), reported)
    # Elastic: the others train on; each failed node gets a new pod that rejoins.
    out = []
    for f in sorted(new, key=lambda f: f.rank):
        if restarts >= limit:
            out.append(Replacement(f, False, f"{f.describe()}; no restarts left ({limit} of {limit} used): training goes on without it"))
            continue
        restarts += 1
        out.append(Replacement(f, True, f"{f.describe()}; replacing its pod (restart {restarts} of {limit})"))
    return FailureDecision("replace", restarts, reported, replacements=tuple(out))


def restart_gang(spec: FSDPJobSpec, n: int, restarts: int, cause: str, reported: tuple[Failure, ...] = (),
                 reason: str = "") -> FailureDecision:
    """A gang restart for `cause` while the budget lasts (Restarting `reason`), else the job's
    failure (RestartLimitExceeded, whatever the cause: the budget is what ran out)."""
    limit = spec.max_restarts
    if restarts >= limit:
        return FailureDecision("fail", restarts, reported, "RestartLimitExceeded", f"{cause}; no restarts left ({restarts} of {limit} used)")
    restarts += 1
    return FailureDecision("gang_restart", restarts, reported, reason=reason,
                           message=f"{cause}; restarting all {n} nodes (restart {restarts} of {limit})")


def node_list(ranks: list[int]) -> str:
    """`node 3`, or `nodes 0-2, 5` for several (sorted ranks)."""
    if len(ranks) == 1:
        return f"node {ranks[0]}"
    spans: list[list[int]] = []
    for r in ranks:
        if spans and r == spans[-1][1] + 1:
            spans[-1][1] = r
        else:
            spans.append([r, r])
    return "nodes " + ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)
