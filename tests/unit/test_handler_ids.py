"""Kopf keeps each handler's progress in the objects' annotations under the handler's id: the
ids must never change, or existing objects would have their handlers run again from scratch."""

from __future__ import annotations

import types

import kopf

from pinery.handlers import register_all
from pinery.metrics import Metrics
from pinery.settings import OperatorSettings

# The ids Kopf derived from the functions before they were given explicitly (fn.__qualname__).
IDS = {
    "_watching": ["fsdpjob_workload_event", "register.<locals>.fsdpjob_event", "register.<locals>.fsdpjob_pod_event", "vectorindex_event",
                  "vectorindexbackup_schedule_event", "vectorindexbackupschedule_event"],
    # VectorIndexes and FSDPJobs have no daemon any more (their passes run from a queue:
    # pinery.handlers.pass_queue); daemons keep no progress in the objects.
    "_spawning": ["vectorindexbackup_daemon", "vectorindexbackupschedule_daemon"],
    "_changing": ["vectorindex_delete", "vectorindexbackup_delete"],
}


def test_every_handler_keeps_its_id():
    registry = kopf.OperatorRegistry()
    register_all(registry, types.SimpleNamespace(metrics=Metrics(), settings=OperatorSettings()))  # type: ignore[arg-type]
    for table, ids in IDS.items():
        assert sorted(h.id for h in getattr(registry, table).get_all_handlers()) == ids
