"""The VectorIndex decisions: from the spec and what Pinecone reports, what to do next.

`decide` covers create, adoption, waiting for readiness, drift repair and refusals; `decide_deletion`
covers the finalizer. Both are pure; the handlers call Pinecone and write what they return.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pinery.api.conditions import parse_time
from pinery.api.vectorindex import VectorIndexSpec
from pinery.vectorindex import observed, restore
from pinery.vectorindex.adoption import immutable_differences
from pinery.vectorindex.desired import configure_changes, create_request
from pinery.vectorindex.ownership import is_owned_by, owner_of, ownership_tags
from pinery.vectorindex.schedule import DEFAULT_TIMING, Timing
from pinery.vectorindex.status import Cond, Event, condition_events, read_capacity_report

Action = Literal["create", "restore", "configure", "wait", "none", "refuse"]

__all__ = ["CREATE_SENT_AT", "Action", "Cond", "Event", "Identity", "Step", "decide", "decide_deletion", "landing_deadline",
           "pass_events", "refuse_immutable_change"]


@dataclass(frozen=True)
class Step:
    """What to do, and what the status should say while (or after) doing it."""

    action: Action
    ready: Cond
    synced: Cond
    # The CreateRequest of a create, the configure arguments of a configure.
    request: Any = field(default_factory=dict)
    # Seconds until the next look (a readiness poll); None means the next resync sweep.
    requeue: float | None = None
    # Events of the action itself, posted once it succeeded (state changes make their own).
    events: tuple[Event, ...] = ()
    host: str | None = None
    state: str | None = None
    read_capacity: dict[str, Any] | None = None  # status.readCapacity
    restore: dict[str, Any] | None = None  # status.restore


@dataclass(frozen=True)
class Identity:
    """The VectorIndex object, as far as its index is concerned."""

    cluster: str
    namespace: str
    name: str

    def tags(self) -> dict[str, str]:
        return ownership_tags(self.cluster, self.namespace, self.name)


SCALING_STATES = ("ScalingUp", "ScalingDown", "ScalingUpPodSize", "ScalingDownPodSize")
# Read capacity states while a change is applied (2025-10 spec, ReadCapacityStatus.state).
READ_CAPACITY_MOVING = ("Scaling", "Migrating")
DISABLED = "Disabled"


def decide(
    spec: VectorIndexSpec,
    who: Identity,
    index: dict[str, Any] | None,
    *,
    known_index_name: str | None = None,
    polls: int = 0,
    timing: Timing = DEFAULT_TIMING,
    restoring: restore.RestoreView | None = None,
    restore_job: dict[str, Any] | None = None,
) -> Step:
    """The next step for one VectorIndex.

    `index` is Pinecone's description of the index named by the spec (None when absent);
    `known_index_name` is status.indexName (set once the operator created or adopted an
    index); `polls` counts consecutive readiness polls, for backoff. For an index made from a
    backup (spec.restoreFrom): `restoring`, the backup, when the index is absent; `restore_job`,
    Pinecone's restore job while it runs.
    """
    name = spec.index_name_for(who.name)
    if known_index_name and known_index_name != name:
        return refuse_immutable_change(known_index_name, ["indexName"], detail=f"it changed from {known_index_name!r} to {name!r}")

    if index is None and spec.restore_from is not None:
        return _restore(spec, who, name, restoring, known_index_name, polls, timing)
    if index is None:
        if known_index_name:
            event = Event("Warning", "Recreating", f"index {name} was deleted outside pinery; creating it again")
        else:
            event = Event("Normal", "Creating", f"creating Pinecone index {name}")
        creating: Cond = ("False", "Creating", f"creating index {name}")
        return Step(
            action="create",
            request=create_request(spec, name, who.tags()),
            ready=creating,
            synced=creating,
            requeue=timing.poll(0),
            events=(event,),
        )

    owned = is_owned_by(index, who.cluster, who.namespace, who.name)
    if not owned and not spec.adopt_existing:
        msg = (
            f"an index named {name} already exists and {_managed_elsewhere(index)}; set adoptExisting: true "
            "to take it over, or choose another indexName"
        )
        return _refuse("NotOwned", msg, index)

    diffs = immutable_differences(spec, index)
    if diffs:
        reason = "ImmutableFieldChanged" if known_index_name else "SpecMismatch"
        msg = f"index {name} differs from the spec where Pinecone cannot change it in place: " + "; ".join(diffs)
        return _refuse(reason, msg, index)

    state, ready = observed.status(index)
    host = index.get("host")
    facts: dict[str, Any] = {"host": host, "state": state, "read_capacity": read_capacity_report(index),
                             "restore": restore.report(None, restore_job) if restore_job else None}
    if restore_job is not None and restore_job.get("status") in restore.ENDED_BADLY:
        msg = (f"Pinecone could not restore index {name} from backup {restore_job.get('backup_id')}; delete this "
               "object (the index goes with it) and apply it again")
        return _refuse("RestoreFailed", msg, index)
    if restore.in_progress(restore_job) and not ready:
        assert restore_job is not None
        waiting_restore: Cond = ("False", "Restoring", restore.progress_message(name, restore_job))
        return Step("wait", waiting_restore, waiting_restore, requeue=timing.poll(polls), **facts)
    if state == "InitializationFailed":
        msg = (
            f"Pinecone could not initialize index {name}; delete this object (the failed index goes "
            "with it) and apply it again, or delete the index in Pinecone to have it created again"
        )
        return _refuse("InitializationFailed", msg, index)
    disabled = state == DISABLED
    if state == "Terminating" or (not ready and not disabled):
        if state == "Terminating":
            msg = f"index {name} is being deleted outside pinery; it will be created again once it is gone"
        else:
            msg = f"{'waiting for' if owned else 'adopting'} index {name} (Pinecone state {state})"
        waiting: Cond = ("False", "Creating", msg)
        return Step("wait", waiting, waiting, requeue=timing.poll(polls), **facts)

    if disabled:
        # Dedicated read capacity at 0 replicas (2025-10 spec, ScalingConfigManual.replicas): the
        # index keeps its data and serves nothing. Not ready, but nothing to wait for either.
        serving: Cond = ("False", DISABLED, f"index {name} is disabled: its dedicated read capacity has 0 replicas")
    else:
        serving = ("True", "IndexReady", f"index {name} is ready at {host}")
    if state in SCALING_STATES:
        msg = f"Pinecone is applying changes to index {name} (state {state})"
        return Step("wait", serving, ("False", "Configuring", msg), requeue=timing.poll(polls), **facts)
    capacity = (observed.read_capacity(index) or {}).get("status") or {}
    if capacity.get("state") in READ_CAPACITY_MOVING:
        msg = f"Pinecone is applying read capacity to index {name} ({_capacity_progress(capacity)})"
        return Step("wait", serving, ("False", "Configuring", msg), requeue=timing.poll(polls), **facts)

    changes = configure_changes(spec, index, who.tags())
    if changes:
        what = describe_changes(changes, index)
        events = [Event("Normal", "Configuring", f"configuring index {name}: {what}")]
        if not owned:
            events.insert(0, Event("Normal", "Adopted", f"adopted existing index {name}"))
        return Step(
            "configure", serving, ("False", "Configuring", f"applying {what}"),
            request=changes, requeue=timing.poll(0), events=tuple(events), **facts,
        )
    if capacity.get("state") == "Error":
        msg = (f"Pinecone could not apply the read capacity of index {name}: "
               f"{capacity.get('error_message') or 'no message'}; change spec.readCapacity")
        return Step("refuse", serving, ("False", "ReadCapacityFailed", msg), **facts)

    return Step("none", serving, ("True", "InSync", f"index {name} matches the spec"), **facts)


def _capacity_progress(capacity: dict[str, Any]) -> str:
    """`Scaling: 1 replicas, 1 shards serving` for messages."""
    serving = [f"{capacity[k]} {k.removeprefix('current_')}" for k in ("current_replicas", "current_shards")
               if capacity.get(k) is not None]
    return str(capacity.get("state")) + (f": {', '.join(serving)} serving" if serving else "")


def _restore(spec: VectorIndexSpec, who: Identity, name: str, view: restore.RestoreView | None,
             known_index_name: str | None, polls: int, timing: Timing) -> Step:
    """The index is absent and the spec restores it from a backup: wait for the backup, refuse a
    backup that contradicts the spec, or restore."""
    if view is None or view.waiting is not None:
        waiting = view.waiting if view is not None and view.waiting else ("False", "Restoring", f"looking for the backup of index {name}")
        return Step("wait", waiting, waiting, requeue=timing.poll(polls))
    backup_id = view.backup_id
    if view.backup is None:
        msg = f"spec.restoreFrom: backup {backup_id} does not exist in Pinecone (or the API key cannot see it)"
        return Step("refuse", ("False", "BackupNotFound", msg), ("False", "BackupNotFound", msg))
    if view.backup.get("status") != "Ready":
        msg = f"backup {backup_id} is {view.backup.get('status')}; restoring index {name} once it is Ready"
        return Step("wait", ("False", "Restoring", msg), ("False", "Restoring", msg), requeue=timing.poll(polls))
    diffs = restore.differences(spec, view.backup)
    if diffs:
        msg = f"spec.restoreFrom: backup {backup_id} differs from the spec: " + "; ".join(diffs)
        return Step("refuse", ("False", "SpecMismatch", msg), ("False", "SpecMismatch", msg))
    if known_index_name:
        event = Event("Warning", "Recreating", f"index {name} was deleted outside pinery; restoring it again from backup {backup_id}")
    else:
        event = Event("Normal", "Restoring", f"restoring Pinecone index {name} from backup {backup_id}")
    cond: Cond = ("False", "Restoring", f"restoring index {name} from backup {backup_id}")
    return Step("restore", cond, cond, request={"backup_id": backup_id, "name": name, **restore.request(spec, who.tags())},
                requeue=timing.poll(0), events=(event,), restore={"backupId": backup_id})


def refuse_immutable_change(index_name: str, fields: list[str], detail: str = "") -> Step:
    """A change to fields Pinecone cannot change in place reached the operator (the CRD's
    rules were bypassed): nothing is sent to Pinecone, and the index keeps its settings."""
    msg = (
        f"{', '.join('spec.' + f for f in fields)} cannot change after the index is created"
        + (f" ({detail})" if detail else "")
        + f"; index {index_name} keeps its settings. Revert the change, or create a new VectorIndex"
    )
    return Step("refuse", ("False", "ImmutableFieldChanged", msg), ("False", "ImmutableFieldChanged", msg))


def _refuse(reason: str, message: str, index: dict[str, Any]) -> Step:
    """A problem only a person can solve: no change in Pinecone; looked at again each sweep."""
    cond: Cond = ("False", reason, message)
    return Step("refuse", cond, cond, host=index.get("host"), state=observed.status(index)[0],
                read_capacity=read_capacity_report(index))


def pass_events(step_events: tuple[Event, ...], old_conditions: list[dict[str, Any]] | None, new_conditions: list[dict[str, Any]]) -> list[Event]:
    """The Events of one pass: those of the action taken, then one per changed condition
    (skipping a change the action's Event already announced)."""
    events = list(step_events)
    for event in condition_events(old_conditions, new_conditions):
        if not any(e.reason == event.reason for e in events):
            events.append(event)
    return events


def describe_changes(changes: dict[str, Any], index: dict[str, Any]) -> str:
    """`replicas 1 -> 3, tags team, deletion protection enabled` for events and messages."""
    placed, scaling = observed.deployment(index), changes.get("deployment") or {}
    parts = []
    if "replicas" in scaling:
        parts.append(f"replicas {placed.get('replicas')} -> {scaling['replicas']}")
    if "pod_type" in scaling:
        parts.append(f"podType {placed.get('pod_type')} -> {scaling['pod_type']}")
    if "read_capacity" in changes:
        parts.append(f"readCapacity {_capacity_words(observed.read_capacity(index))} -> {_capacity_words(changes['read_capacity'])}")
    if "schema" in changes:  # embed parameters; both are sent, the ones that differ are named
        current = observed.fields(index)
        for name, patch in changes["schema"]["fields"].items():
            differing = [k for k in ("read_parameters", "write_parameters") if k in patch and (current.get(name) or {}).get(k) != patch[k]]
            parts.append(f"embed {' and '.join(k.replace('_parameters', 'Parameters') for k in differing)} of field {name}")
    if "deletion_protection" in changes:
        parts.append(f"deletion protection {changes['deletion_protection']}")
    if "tags" in changes:
        parts.append("tags " + ", ".join(sorted(changes["tags"])))
    return ", ".join(parts)


def _capacity_words(capacity: dict[str, Any] | None) -> str:
    """`OnDemand`, or `Dedicated b1 2x1` (node type, replicas x shards)."""
    capacity = capacity or {"mode": "OnDemand"}
    if capacity.get("mode") != "Dedicated":
        return str(capacity.get("mode"))
    dedicated = capacity.get("dedicated") or {}
    manual = dedicated.get("manual") or {}
    return f"Dedicated {dedicated.get('node_type')} {manual.get('replicas')}x{manual.get('shards')}"


CREATE_SENT_AT = "createSentAt"  # the status field that marks a create whose answer is awaited


def landing_deadline(status: dict[str, Any] | None, timing: Timing = DEFAULT_TIMING) -> float | None:
    """Until when (epoch seconds) an index whose create got no answer may still appear."""
    sent = (status or {}).get(CREATE_SENT_AT)
    try:
        moment = parse_time(sent) if isinstance(sent, str) else None
    except ValueError:
        return None
    return None if moment is None else moment.timestamp() + timing.create_landing


DeletionAction = Literal["delete", "wait", "release"]


@dataclass(frozen=True)
class DeletionStep:
    action: DeletionAction
    event: Event | None
    requeue: float | None = None


def decide_deletion(
    spec: VectorIndexSpec,
    who: Identity,
    index: dict[str, Any] | None,
    *,
    polls: int = 0,
    timing: Timing = DEFAULT_TIMING,
    index_name: str | None = None,
    landing_until: float | None = None,
    now: float = 0.0,
) -> DeletionStep:
    """What the finalizer does. It never deletes an index that policy, protection or
    ownership keeps, and it never blocks the object's deletion on those. `index_name` is the
    index the object manages (status.indexName), when known. `landing_until`: a create got no
    answer, and its index may still appear in Pinecone until then (epoch seconds, as `now`)."""
    name = index_name or spec.index_name_for(who.name)
    would_delete = spec.deletion_policy != "Retain" and not spec.deletion_protection
    if index is None and would_delete and landing_until is not None and now < landing_until:
        msg = (f"a request to create index {name} got no answer; waiting up to {landing_until - now:.0f}s "
               "for an index that may still appear, so that none is left behind")
        return DeletionStep("wait", Event("Normal", "AwaitingCreate", msg),
                            requeue=min(timing.poll(polls), landing_until - now))
    if index is None:
        return DeletionStep("release", Event("Normal", "Deleted", f"index {name} is gone"))
    if spec.deletion_policy == "Retain":
        return DeletionStep("release", Event("Normal", "Retained", f"deletionPolicy is Retain: index {name} was left in Pinecone"))
    if not is_owned_by(index, who.cluster, who.namespace, who.name):
        return DeletionStep("release", Event("Warning", "NotOwned", f"index {name} {_managed_elsewhere(index)}; it was left in Pinecone"))
    # The spec's protection counts even before it reached Pinecone: an object deleted right
    # after protection was turned on must not lose its index to a configure call not yet made.
    if index.get("deletion_protection") == "enabled" or spec.deletion_protection:
        msg = (
            f"index {name} has deletion protection, so it was retained; disable protection and "
            "delete it in Pinecone if it is no longer needed"
        )
        return DeletionStep("release", Event("Warning", "DeletionProtected", msg))
    if observed.status(index)[0] == "Terminating":
        return DeletionStep("wait", None, requeue=timing.poll(polls))
    return DeletionStep("delete", Event("Normal", "Deleting", f"deleting index {name}"), requeue=timing.poll(0))


def _managed_elsewhere(index: dict[str, Any]) -> str:
    """Who manages an index that is not this object's, in words: its owner when its ownership
    tags name one (`cluster/namespace/name` of that VectorIndex), else that nobody here does."""
    owner = owner_of(index)
    if owner:
        return f"is managed by the VectorIndex {owner} (cluster/namespace/name), not by this object"
    return "is not managed by this object (its tags name no pinery owner)"
