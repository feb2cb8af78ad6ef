"""Kopf's diff base, not built for kinds that have only event handlers.

For every watch event of every resource, Kopf builds the object's "essence" (a deep copy of the
whole body, less its status and system fields) and compares it with the last handled one
(kopf/_core/reactor/processing.py, `_detect_causes`: `diffbase_storage.build` runs before it
looks at which handlers the resource has). Only change handlers (`on.create/update/delete/
resume`) and daemons or timers use that diff. FSDPJobs, their pods and Kueue Workloads have only
`on.event` handlers, so the copy is thrown away: in a burst of 1,000 new jobs it was a seventh
of the operator's event-loop time, most of it pods (docs/performance.md, "FSDPJob: create to
children"). For those kinds `build` returns None, which Kopf treats as no essence (the same
function: `progress_storage.clear` and the diff both take None), and the diff is empty.
tests/unit/test_kopf_diffbase.py checks that none of these kinds has a handler that reads it. An
operator with change handlers on one of them (the benchmarks' floor has `on.create` on FSDPJobs)
passes its own set: with None for such a kind, Kopf would store "null" as the handled state and
see every event as a creation.
"""

from __future__ import annotations

from typing import Any, Iterable

import kopf

# (API group, kind) of the bodies whose handlers are all `on.event`.
EVENT_ONLY_KINDS = frozenset({("pinery.dev", "FSDPJob"), ("", "Pod"), ("kueue.x-k8s.io", "Workload")})


def group_kind(body: Any) -> tuple[str, str]:
    api_version = str(body.get("apiVersion") or "")
    group = api_version.rpartition("/")[0]  # "v1" is the core group: ""
    return group, str(body.get("kind") or "")


class EventOnlyAwareDiffBase(kopf.AnnotationsDiffBaseStorage):
    """Kopf's annotations diff base, with no essence built for the kinds in `event_only`."""

    def __init__(self, *, event_only: Iterable[tuple[str, str]] = EVENT_ONLY_KINDS, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.event_only = frozenset(event_only)

    def build(self, *, body: kopf.Body, extra_fields: Iterable[Any] | None = None) -> Any:
        if group_kind(body) in self.event_only:
            return None
        return super().build(body=body, extra_fields=extra_fields)
