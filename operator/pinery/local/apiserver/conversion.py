"""Between how an object is stored and how one API version shows it.

Objects are stored once per resource (storage key). A custom resource served in several
versions is shown with the requested apiVersion (the `None` conversion strategy of CRDs).
`events.k8s.io/v1` Events are core `v1` Events seen through the newer schema, converted field
by field as the API server does, so both APIs list the same events.
"""

from __future__ import annotations

from typing import Any

from pinery.local.apiserver.resources import ResourceType

# core/v1 Event field -> events.k8s.io/v1 Event field
_EVENT_FIELDS = (
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("reason", "reason"),
    ("type", "type"),
    ("action", "action"),
    ("related", "related"),
    ("series", "series"),
    ("eventTime", "eventTime"),
    ("reportingComponent", "reportingController"),
    ("reportingInstance", "reportingInstance"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
)


def _is_new_event(rtype: ResourceType) -> bool:
    return rtype.group == "events.k8s.io" and rtype.kind == "Event"


def to_storage(rtype: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    """The stored form of an object written through `rtype`."""
    if _is_new_event(rtype):
        out = {"apiVersion": "v1", "kind": "Event", "metadata": obj.get("metadata", {})}
        for old, new in _EVENT_FIELDS:
            if obj.get(new) is not None:
                out[old] = obj[new]
        return out
    return obj


def present(rtype: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    """A stored object as `rtype` shows it (a shallow copy; nested values are shared)."""
    if _is_new_event(rtype):
        out = {"apiVersion": rtype.api_version, "kind": "Event", "metadata": obj.get("metadata", {})}
        for old, new in _EVENT_FIELDS:
            if obj.get(old) is not None:
                out[new] = obj[old]
        return out
    if obj.get("apiVersion") != rtype.api_version:
        return {**obj, "apiVersion": rtype.api_version}
    return obj
