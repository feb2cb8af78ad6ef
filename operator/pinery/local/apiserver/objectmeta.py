"""ObjectMeta helpers: timestamps, uids, generated names, and the fields the server owns."""

from __future__ import annotations

import random
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

# Fields of metadata that only the server sets; a client's values are replaced by the server's.
SERVER_FIELDS = ("uid", "creationTimestamp", "resourceVersion", "generation", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink")

# The alphabet and length of generateName suffixes (as in the API server: no vowels, no 0/1/3).
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def now(offset_seconds: float = 0) -> str:
    """RFC 3339 with second precision, as metav1.Time serialises."""
    moment = datetime.now(timezone.utc) + timedelta(seconds=offset_seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def micro_now() -> str:
    """metav1.MicroTime (Event.eventTime)."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def new_uid() -> str:
    return str(uuid.uuid4())


def generated_name(prefix: str) -> str:
    return prefix + "".join(random.choice(_SUFFIX_ALPHABET) for _ in range(5))


# ObjectMeta fields a body can get the JSON type of wrong, and the Go types the API server reads.
_META_TYPES = {
    "name": (str, "string"),
    "generateName": (str, "string"),
    "namespace": (str, "string"),
    "resourceVersion": (str, "string"),
    "uid": (str, "types.UID"),
    "labels": (dict, "map[string]string"),
    "annotations": (dict, "map[string]string"),
    "finalizers": (list, "[]string"),
    "ownerReferences": (list, "[]v1.OwnerReference"),
}
_JSON_TYPES = ((bool, "bool"), (str, "string"), ((int, float), "number"), (list, "array"), (dict, "object"))


def _json_type(value: Any) -> str:
    return next(name for kind, name in _JSON_TYPES if isinstance(value, kind))


def decoding_error(meta: Any) -> str | None:
    """Why `metadata` cannot be decoded as an ObjectMeta (a 400 on a real API server), or None."""
    if meta is None:
        return None
    if not isinstance(meta, dict):
        return f"json: cannot unmarshal {_json_type(meta)} into Go struct field .metadata of type v1.ObjectMeta"
    for field, (kind, go_type) in _META_TYPES.items():
        value = meta.get(field)
        if value is not None and not isinstance(value, kind):
            return f"json: cannot unmarshal {_json_type(value)} into Go struct field ObjectMeta.metadata.{field} of type {go_type}"
    return None


def metadata(obj: dict[str, Any]) -> dict[str, Any]:
    """obj["metadata"], created if absent (for objects being prepared, never stored ones)."""
    m = obj.get("metadata")
    if not isinstance(m, dict):
        m = obj["metadata"] = {}
    return m


def finalizers(obj: dict[str, Any]) -> list[str]:
    return list((obj.get("metadata") or {}).get("finalizers") or [])


def is_deleting(obj: dict[str, Any]) -> bool:
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))


def without_version(obj: dict[str, Any]) -> dict[str, Any]:
    """The object minus metadata.resourceVersion, to tell a real change from a no-op."""
    m = dict(obj.get("metadata") or {})
    m.pop("resourceVersion", None)
    return {**obj, "metadata": m}
