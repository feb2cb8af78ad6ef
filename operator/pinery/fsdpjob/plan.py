"""What one reconcile pass of an FSDPJob decides: the result of `lifecycle.plan`.

A handler applies a Plan in the order of `steps()`, each step idempotent: the status first (so
that a restart is counted before any pod goes), then the Events that tell of it (before any
slower step that could fail and leave a transition untold), then patches of other objects (the
Kueue Workload), then pod deletions, then deletions of other children (an old attempt's
PodGroup), then creations, then the job's own deletion. Killed at any step, the handler just plans again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Literal, Optional


@dataclass(frozen=True)
class Event:
    """A Kubernetes Event about the FSDPJob."""

    type: Literal["Normal", "Warning"]
    reason: str
    message: str


@dataclass(frozen=True)
class PodDeletion:
    """Delete pod `name`, with `preconditions.uid` so a newer pod of that name is never hit.

    `force` (gracePeriodSeconds 0) is for pods stuck terminating on a node that stopped
    answering: without it the gang could wait forever for the old pod to go.
    """

    name: str
    uid: str
    force: bool = False


@dataclass(frozen=True)
class ObjectPatch:
    """A JSON merge patch of another object the job owns or follows, by its `KINDS` key in
    gateways.kube. `resource_version` makes it conditional (409 means: plan again)."""

    kind: str
    name: str
    patch: dict[str, Any]
    subresource: Optional[str] = None


@dataclass(frozen=True)
class ObjectDeletion:
    """Delete a child that is not a pod (by `KINDS` key), with a uid precondition."""

    kind: str
    name: str
    uid: Optional[str] = None


@dataclass(frozen=True)
class Plan:
    # The complete status the job should have (progress included, as it was).
    status: dict[str, Any]
    # JSON merge patch for the status subresource: changed top-level keys, None for removed
    # ones; None when nothing changed (no write, no watch event, no hot loop).
    status_patch: Optional[dict[str, Any]] = None
    # Objects to create, in order. AlreadyExists (409) means done.
    create: tuple[dict[str, Any], ...] = ()
    # Patches of other objects, in order.
    patches: tuple[ObjectPatch, ...] = ()
    # Pods to delete. NotFound (404) and a failed uid precondition (409) mean done.
    delete_pods: tuple[PodDeletion, ...] = ()
    # Other children to delete (404 and a failed uid precondition mean done).
    delete_objects: tuple[ObjectDeletion, ...] = ()
    # Delete the FSDPJob itself (ttlSecondsAfterFinished); its children go with it.
    delete_job: bool = False
    events: tuple[Event, ...] = ()
    # Plan again after this many seconds even if nothing changes (deadlines, progress).
    requeue_after: Optional[float] = None

    def steps(self) -> Iterator[tuple[str, Any]]:
        """(action, payload) in the order a handler must apply them."""
        if self.status_patch is not None:
            yield "patch_status", self.status_patch
        for event in self.events:
            yield "event", event
        for patch in self.patches:
            yield "patch", patch
        for deletion in self.delete_pods:
            yield "delete_pod", deletion
        for other in self.delete_objects:
            yield "delete_object", other
        for obj in self.create:
            yield "create", obj
        if self.delete_job:
            yield "delete_job", None

    @property
    def idle(self) -> bool:
        """Nothing to write, create, delete or tell."""
        return next(self.steps(), None) is None


def merge_patch(old: dict[str, Any], new: dict[str, Any]) -> Optional[dict[str, Any]]:
    """A top-level JSON merge patch turning `old` into `new`, or None when they are equal."""
    patch = {k: v for k, v in new.items() if old.get(k) != v}
    patch.update({k: None for k in old if k not in new})
    return patch or None
