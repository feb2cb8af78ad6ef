"""A Kopf daemon that puts no finalizer on its objects.

`kopf.daemon` always registers its handler with `requires_finalizer=True` (kopf/on.py,
`daemon`), and Kopf blocks the deletion of every object such a daemon runs for
(kopf/_core/reactor/processing.py, `process_resource_causes`: `deletion_must_be_blocked`):
one more write per new object, and, worse, objects that cannot be deleted while the operator is
down or uninstalled. Kopf offers no switch for it: the maintainers declined one (nolar/kopf
pull requests #896 and #1183), because a daemon without a finalizer is not stopped when its
object goes: Kopf forgets the object's memory on the DELETED event (`process_resource_event`,
`memories.forget`) and leaves the daemon running.

A daemon that holds nothing to clean up may do without: the pass queues' sentinel on Kopf's
peering object (pinery.handlers.queues), which must never block that object's deletion.
"""

from __future__ import annotations

import dataclasses

import kopf


def without_finalizer(registry: kopf.OperatorRegistry, handler_id: str) -> None:
    """Re-register the daemon `handler_id` (already registered) as one requiring no finalizer.
    Kopf keeps its spawning handlers, frozen dataclasses, in `registry._spawning` (the registry
    `kopf.daemon` itself appends to)."""
    spawning = registry._spawning
    for index, handler in enumerate(spawning._handlers):
        if handler.id == handler_id:
            spawning._handlers[index] = dataclasses.replace(handler, requires_finalizer=False)
            return
    raise LookupError(f"no Kopf daemon {handler_id!r} is registered")
