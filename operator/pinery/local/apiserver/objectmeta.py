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
