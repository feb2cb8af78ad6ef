"""Kopf handlers, named `<kind>_<event>`. Each module has `register(registry, services)`.

Handlers are thin: they read what exists, call the pure functions of `pinery.vectorindex` /
`pinery.fsdpjob`, and apply the result. They reach settings, Kubernetes, Pinecone and metrics
through the `Services` they are registered with (no globals, so tests build their own).
"""

from __future__ import annotations

import kopf

from pinery.services import Services


def register_all(registry: kopf.OperatorRegistry, services: Services) -> kopf.OperatorRegistry:
    from pinery.handlers import backup_schedules, backups, fsdpjob, queues, vectorindex

    # VectorIndexes and FSDPJobs, the kinds a fleet has thousands of, run their passes from a
    # queue each; backups and their schedules, few and mostly idle, keep a Kopf daemon each.
    passes = [vectorindex.register(registry, services), fsdpjob.register(registry, services)]
    for module in (backups, backup_schedules):
        module.register(registry, services)
    queues.register(registry, services, passes)
    return registry
