"""What Pinecone says an index is: facts read from an API 2026-07 `IndexModel` (pure).

The gateway hands the operator indexes in the 2026-07 wire shape (the `pinecone` 10.x SDK's
`IndexModel`, pinecone/models/indexes/index.py): `schema.fields` holds the vector fields,
`deployment` says where the index runs, `read_capacity` is top level; there is no `spec`,
`dimension`, `metric`, `vector_type` or `embed` (the SDK computes those as deprecated views).
Everything else in the operator reads an index through the functions here, so the wire shape
is known in one place. `from_2025_10` turns a 2025-10 `IndexModel` (what API 2026-04 answers
a pod-based create with) into the same shape.
"""

from __future__ import annotations

from typing import Any

# The reserved field names the vectors API addresses values by; an index whose schema holds
# only these is a plain vector index, served by the vectors API as before 2026-07 (10.x SDK:
# pinecone/_internal/legacy_index_translation.py, DENSE_FIELD, SPARSE_FIELD).
DENSE_FIELD = "_values"
SPARSE_FIELD = "_sparse_values"

# 2026-07 `deployment_type` -> the VectorIndex's deployment type (pinecone/models/indexes/deployment.py).
_DEPLOYMENT_TYPES = {"managed": "serverless", "pod": "pod", "byoc": "byoc"}


def fields(index: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return ((index.get("schema") or {}).get("fields")) or {}


def _typed(index: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {name: f for name, f in fields(index).items() if isinstance(f, dict) and f.get("type") == kind}


def dense_field(index: dict[str, Any]) -> dict[str, Any] | None:
    """The index's dense vector field (`dimension`, `metric`), if it has exactly one."""
    dense = _typed(index, "dense_vector")
    return next(iter(dense.values())) if len(dense) == 1 else None


def vector_type(index: dict[str, Any]) -> str | None:
    """dense, sparse, or hybrid (a dense and a sparse field); None for an index whose vectors
    come from an embedding model (a semantic_text field) or that declares several of a kind."""
    dense, sparse = _typed(index, "dense_vector"), _typed(index, "sparse_vector")
    if len(dense) > 1 or len(sparse) > 1:
        return None
    if dense and sparse:
        return "hybrid"
    if dense:
        return "dense"
    if sparse:
        return "sparse"
    return None


def vector_field_names(index: dict[str, Any]) -> tuple[str | None, str | None]:
    """The names of the dense and the sparse field (None where there is not exactly one)."""
    dense, sparse = _typed(index, "dense_vector"), _typed(index, "sparse_vector")
    return (next(iter(dense)) if len(dense) == 1 else None, next(iter(sparse)) if len(sparse) == 1 else None)


def text_fields(index: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The index's `string` fields, by name, as describe reports them: `full_text_search` with
    language, stemming and stop_words resolved, and `embed`/`sparse_embed` on fields a model
    embeds (the 10.x SDK's pinecone/models/indexes/schema.py, StringField)."""
    return _typed(index, "string")


def embed(index: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The semantic_text field of an index with integrated inference, and its name (the field
    the model embeds; create-for-model names it after field_map's text entry: the 10.x SDK's
    pinecone/models/indexes/index.py, ModelIndexEmbed.field_map)."""
    semantic = _typed(index, "semantic_text")
    return next(iter(semantic.items())) if len(semantic) == 1 else None


def dimension(index: dict[str, Any]) -> int | None:
    field = dense_field(index)
    return None if field is None else field.get("dimension")


def metric(index: dict[str, Any]) -> str | None:
    """The dense field's metric; a sparse-only index scores by dot product (the only metric
    2025-10 allowed for sparse indexes; 2026-07's sparse field carries none)."""
    field = dense_field(index)
    if field is not None:
        return field.get("metric")
    return "dotproduct" if vector_type(index) == "sparse" else None


def metadata_indexed(index: dict[str, Any]) -> list[str] | None:
    """Metadata fields a pod-based index indexes: 2026-07 lists them as untyped `{filterable}`
    fields (v10-2026-07-index-model.md, "Behavior notes"); None when it lists none."""
    names = sorted(name for name, f in fields(index).items() if isinstance(f, dict) and "type" not in f and f.get("filterable"))
    return names or None


def deployment_type(index: dict[str, Any]) -> str | None:
    return _DEPLOYMENT_TYPES.get(str((index.get("deployment") or {}).get("deployment_type")))


def deployment(index: dict[str, Any]) -> dict[str, Any]:
    return index.get("deployment") or {}


def status(index: dict[str, Any]) -> tuple[str | None, bool]:
    """Pinecone's state of the index and whether it serves."""
    found = index.get("status") or {}
    return found.get("state"), bool(found.get("ready"))


def read_capacity(index: dict[str, Any]) -> dict[str, Any] | None:
    return index.get("read_capacity")


def from_2025_10(model: dict[str, Any]) -> dict[str, Any]:
    """A 2025-10 (or 2026-04) `IndexModel` in the 2026-07 shape: the vector fields under their
    reserved names, `spec` as `deployment`, read capacity lifted to the top level, metadata
    config as untyped filterable fields (docs/pinecone-api-versions.md, "IndexModel")."""
    spec = model.get("spec") or {}
    kind = next((k for k in ("serverless", "pod", "byoc") if spec.get(k)), None)
    inner = dict(spec.get(kind) or {}) if kind else {}
    schema: dict[str, Any] = {}
    vector = model.get("vector_type") or "dense"
    if vector == "sparse":
        schema[SPARSE_FIELD] = {"type": "sparse_vector", "description": None}
    else:
        schema[DENSE_FIELD] = {"type": "dense_vector", "dimension": model.get("dimension"),
                               "metric": model.get("metric"), "description": None}
    for name in (inner.get("metadata_config") or {}).get("indexed") or []:
        schema.setdefault(name, {"filterable": True})
    if kind == "serverless":
        placed: dict[str, Any] = {"deployment_type": "managed", "cloud": inner.get("cloud"), "region": inner.get("region")}
    elif kind == "pod":
        placed = {"deployment_type": "pod", **{k: inner.get(k) for k in ("environment", "pod_type", "replicas", "shards")}}
    else:
        placed = {"deployment_type": "byoc", "environment": inner.get("environment")}
    return {
        "name": model.get("name"),
        "host": model.get("host"),
        "status": model.get("status") or {},
        "schema": {"fields": schema},
        "deployment": placed,
        "deletion_protection": model.get("deletion_protection", "disabled"),
        "read_capacity": inner.get("read_capacity"),
        "tags": model.get("tags") or None,
        "source_collection": inner.get("source_collection"),
    }
