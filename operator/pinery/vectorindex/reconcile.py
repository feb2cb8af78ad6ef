"""The VectorIndex decisions: from the spec and what Pinecone reports, what to do next.

`decide` covers create, adoption, waiting for readiness, drift repair and refusals; `decide_deletion`
covers the finalizer. Both are pure; the handlers call Pinecone and write what they return.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pinery.api.vectorindex import VectorIndexSpec
from pinery.vectorindex.adoption import immutable_differences
from pinery.vectorindex.desired import configure_changes, create_request
from pinery.vectorindex.errors import SLOW_RETRY, readiness_delay
from pinery.vectorindex.ownership import is_owned_by, owner_of, ownership_tags

Action = Literal["create", "configure", "wait", "none", "refuse"]
Cond = tuple[str, str, str]  # (status, reason, message)


@dataclass(frozen=True)
class Event:
    type: str  # Normal or Warning
    reason: str
    message: str


@dataclass(frozen=True)
class Step:
    """What to do, and what the status should say while (or after) doing it."""

    action: Action
    ready: Cond
    synced: Cond
    request: dict[str, Any] = field(default_factory=dict)
    # Seconds until the next look; None means the regular resync interval.
    requeue: float | None = None
    events: tuple[Event, ...] = ()
    host: str | None = None
    state: str | None = None


@dataclass(frozen=True)
class Identity:
    """The VectorIndex object, as far as its index is concerned."""

    cluster: str
    namespace: str
    name: str

    def tags(self) -> dict[str, str]:
        return ownership_tags(self.cluster, self.namespace, self.name)


SCALING_STATES = ("ScalingUp", "ScalingDown", "ScalingUpPodSize", "ScalingDownPodSize")


def decide(
    spec: VectorIndexSpec,
    who: Identity,
    index: dict | None,
    *,
    known_index_name: str | None = None,
    polls: int = 0,
) -> Step:
    """The next step for one VectorIndex.

    `index` is Pinecone's description of the index named by the spec (None when absent);
    `known_index_name` is status.indexName (set once the operator created or adopted an
    index); `polls` counts consecutive readiness polls, for backoff.
    """
    name = spec.index_name_for(who.name)
    if known_index_name and known_index_name != name:
        msg = (
            f"indexName changed from {known_index_name!r} to {name!r}; Pinecone cannot rename an "
            "index. Revert the change, or create a new VectorIndex for the new index"
        )
        return _refuse("ImmutableFieldChanged", msg, requeue=None)

    if index is None:
        if known_index_name:
            event = Event("Warning", "Recreating", f"index {name} was deleted outside pinery; creating it again")
        else:
            event = Event("Normal", "Creating", f"creating Pinecone index {name}")
        return Step(
            action="create",
            request=create_request(spec, name, who.tags()),
            ready=("False", "Creating", f"creating index {name}"),
            synced=("False", "Creating", f"creating index {name}"),
            requeue=readiness_delay(0),
            events=(event,),
        )

    owned = is_owned_by(index, who.cluster, who.namespace, who.name)
    if not owned and not spec.adopt_existing:
        owner = owner_of(index)
        by = f"by {owner}" if owner else "by this object"
        msg = (
            f"an index named {name} already exists and is not managed {by}; set adoptExisting: true "
            "to take it over, or choose another indexName"
        )
        return _refuse("NotOwned", msg, requeue=SLOW_RETRY)

    diffs = immutable_differences(spec, index)
    if diffs:
        reason = "ImmutableFieldChanged" if known_index_name else "SpecMismatch"
        msg = f"index {name} differs from the spec where Pinecone cannot change it in place: " + "; ".join(diffs)
        return _refuse(reason, msg, requeue=SLOW_RETRY, index=index)

    status = index.get("status") or {}
    state, ready = status.get("state"), bool(status.get("ready"))
    host = index.get("host")
    if state == "InitializationFailed":
        msg = f"Pinecone could not initialize index {name}; fix the spec (or delete and recreate the object)"
        return _refuse("InitializationFailed", msg, requeue=None, index=index)
    if state == "Terminating":
        msg = f"index {name} is being deleted outside pinery; it will be created again once it is gone"
        return Step("wait", ("False", "Creating", msg), ("False", "Creating", msg), requeue=readiness_delay(polls), host=host, state=state)
    if not ready:
        verb = "adopting" if not owned else "waiting for"
        msg = f"{verb} index {name} (Pinecone state {state})"
        return Step("wait", ("False", "Creating", msg), ("False", "Creating", msg), requeue=readiness_delay(polls), host=host, state=state)

    serving = ("True", "IndexReady", f"index {name} is ready at {host}")
    if state in SCALING_STATES:
        msg = f"Pinecone is applying changes to index {name} (state {state})"
        return Step("wait", serving, ("False", "Configuring", msg), requeue=readiness_delay(polls), host=host, state=state)

    changes = configure_changes(spec, index, who.tags())
    if changes:
        events = [Event("Normal", "Configuring", f"configuring index {name}: {describe_changes(changes, index)}")]
        if not owned:
            events.insert(0, Event("Normal", "Adopted", f"adopted existing index {name}"))
        msg = f"applying {describe_changes(changes, index)}"
        return Step("configure", serving, ("False", "Configuring", msg), request=changes, requeue=readiness_delay(0), events=tuple(events), host=host, state=state)

    return Step("none", serving, ("True", "InSync", f"index {name} matches the spec"), requeue=None, host=host, state=state)


def _refuse(reason: str, message: str, *, requeue: float | None, index: dict | None = None) -> Step:
    """A problem only a person can solve: no Pinecone call; Ready reflects whether it serves."""
    status = (index or {}).get("status") or {}
    serving = bool(status.get("ready")) and status.get("state") not in ("InitializationFailed", "Terminating")
    ready = ("True", "IndexReady", "the index serves requests, but " + message) if serving else ("False", reason, message)
    return Step(
        "refuse",
        ready,
        ("False", reason, message),
        requeue=requeue,
        events=(Event("Warning", reason, message),),
        host=(index or {}).get("host"),
        state=status.get("state"),
    )


def describe_changes(changes: dict[str, Any], index: dict) -> str:
    """`replicas 1 -> 3, tags team, deletion protection enabled` for events and messages."""
    pod = (index.get("spec") or {}).get("pod") or {}
    parts = []
    if "replicas" in changes:
        parts.append(f"replicas {pod.get('replicas')} -> {changes['replicas']}")
    if "pod_type" in changes:
        parts.append(f"podType {pod.get('pod_type')} -> {changes['pod_type']}")
    if "deletion_protection" in changes:
        parts.append(f"deletion protection {changes['deletion_protection']}")
    if "tags" in changes:
        parts.append("tags " + ", ".join(sorted(changes["tags"])))
    return ", ".join(parts)


DeletionAction = Literal["delete", "wait", "release"]


@dataclass(frozen=True)
class DeletionStep:
    action: DeletionAction
    event: Event | None
    requeue: float | None = None


def decide_deletion(spec: VectorIndexSpec, who: Identity, index: dict | None, *, polls: int = 0) -> DeletionStep:
    """What the finalizer does. It never deletes an index that policy, protection or
    ownership keeps, and it never blocks the object's deletion on those."""
    name = spec.index_name_for(who.name)
    if index is None:
        return DeletionStep("release", Event("Normal", "Deleted", f"index {name} is gone"))
    if spec.deletion_policy == "Retain":
        return DeletionStep("release", Event("Normal", "Retained", f"deletionPolicy is Retain: index {name} was left in Pinecone"))
    if not is_owned_by(index, who.cluster, who.namespace, who.name):
        return DeletionStep("release", Event("Warning", "NotOwned", f"index {name} is not managed by this object; it was left in Pinecone"))
    if index.get("deletion_protection") == "enabled":
        msg = (
            f"index {name} has deletion protection, so it was retained; disable protection and "
            "delete it in Pinecone if it is no longer needed"
        )
        return DeletionStep("release", Event("Warning", "DeletionProtected", msg))
    if (index.get("status") or {}).get("state") == "Terminating":
        return DeletionStep("wait", None, requeue=readiness_delay(polls))
    return DeletionStep("delete", Event("Normal", "Deleting", f"deleting index {name}"), requeue=readiness_delay(0))
