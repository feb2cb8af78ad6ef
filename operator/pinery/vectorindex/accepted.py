"""The spec an index was created or adopted with, kept on the object to catch immutable changes.

The CRD's CEL rules reject changes to immutable fields, but they can be missing (an old API
server, a CRD installed by hand). The operator records the immutable part of the spec it acted
on in an annotation, and compares each new spec with it before it talks to Pinecone at all.
"""

from __future__ import annotations

import json
from typing import Any

from pinery.api.base import GROUP
from pinery.api.immutability import changed_immutable_fields, mutable_fields
from pinery.api.vectorindex import VectorIndexSpec

ANNOTATION = f"{GROUP}/accepted-spec"


def record(spec: VectorIndexSpec, index_name: str) -> str:
    """The annotation value: the immutable fields of the spec (API form), index name included."""
    mutable = set(mutable_fields(VectorIndexSpec))
    fields = {k: v for k, v in spec.to_api().items() if k not in mutable}
    fields["indexName"] = index_name  # defaulted from metadata.name: recorded as resolved
    return json.dumps(fields, sort_keys=True, separators=(",", ":"))


def changed_fields(annotations: dict[str, Any] | None, spec: VectorIndexSpec, index_name: str) -> list[str]:
    """Immutable fields (paths under spec) that differ from the recorded ones; [] without a
    readable record (the comparison with Pinecone's index then catches differences)."""
    raw = (annotations or {}).get(ANNOTATION)
    if not raw:
        return []
    try:
        accepted = json.loads(raw)
    except ValueError:
        return []
    if not isinstance(accepted, dict):
        return []
    current = {**spec.to_api(), "indexName": index_name}
    return changed_immutable_fields(VectorIndexSpec, accepted, current)
