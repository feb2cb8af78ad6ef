"""Ownership tags: how an index says which VectorIndex manages it.

Tags carry the cluster name, namespace and object name (not the uid), so that an object deleted
with deletionPolicy Retain and applied again, as GitOps tools do, finds its index again.
"""

from __future__ import annotations

import hashlib
from typing import Any

CLUSTER_TAG = "pinery-cluster"
NAMESPACE_TAG = "pinery-namespace"
NAME_TAG = "pinery-name"
OWNERSHIP_KEYS = (CLUSTER_TAG, NAMESPACE_TAG, NAME_TAG)
_MAX_TAG_VALUE = 120


def tag_value(value: str) -> str:
    """A value that fits Pinecone's 120-character tag limit, unique for long inputs."""
    if len(value) <= _MAX_TAG_VALUE:
        return value
    digest = hashlib.sha256(value.encode()).hexdigest()[:8]
    return f"{value[: _MAX_TAG_VALUE - 9]}-{digest}"


def ownership_tags(cluster: str, namespace: str, name: str) -> dict[str, str]:
    return {
        CLUSTER_TAG: tag_value(cluster),
        NAMESPACE_TAG: tag_value(namespace),
        NAME_TAG: tag_value(name),
    }


def is_owned_by(index: dict[str, Any], cluster: str, namespace: str, name: str) -> bool:
    """True when the index carries exactly this object's ownership tags."""
    tags = index.get("tags") or {}
    return all(tags.get(k) == v for k, v in ownership_tags(cluster, namespace, name).items())


def owner_of(index: dict[str, Any]) -> str | None:
    """`cluster/namespace/name` of the VectorIndex that owns the index, if any (for messages)."""
    tags = index.get("tags") or {}
    if not all(k in tags for k in OWNERSHIP_KEYS):
        return None
    return f"{tags[CLUSTER_TAG]}/{tags[NAMESPACE_TAG]}/{tags[NAME_TAG]}"
