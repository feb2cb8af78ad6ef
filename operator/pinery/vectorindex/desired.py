"""What the spec asks of Pinecone: the create request, and the configure changes for drift.

Indexes are created through API 2026-07 (`POST /indexes` with a schema and a deployment),
except those 2026-07 refuses to create: pod-based indexes ("deployment_type 'pod' is not
supported on this API version") and indexes made from a collection ("Creating an index from
collection or backup is not yet supported"; both texts quoted by the 10.x SDK's
pinecone/_internal/index_migration.py). Those go through API 2026-04, the newest version that
creates them, whose control plane has 2025-10's shapes (pinecone-io/pinecone-api
2026-04/db_control_2026-04.oas.yaml). Every other call uses 2026-07. docs/vectorindex.md,
"Pinecone API versions", is the plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pinery.api.vectorindex import TextField, VectorIndexSpec
from pinery.vectorindex import observed

# How a create is sent: through 2026-07's `POST /indexes`, its `POST /indexes/create-for-model`
# (integrated inference; 2026-07 keeps 2025-10's body there: v10-2026-07-db-control.md), or the
# 2025-10-shaped `POST /indexes` of 2026-04 (pod-based indexes, and indexes made from a collection).
Route = Literal["2026-07", "for-model", "2026-04"]
LEGACY_CREATE_VERSION: Route = "2026-04"


@dataclass(frozen=True)
class CreateRequest:
    route: Route
    body: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.body["name"])


def protection(enabled: bool) -> str:
    return "enabled" if enabled else "disabled"


def desired_tags(spec: VectorIndexSpec, owner_tags: dict[str, str]) -> dict[str, str]:
    """User tags plus ownership tags (users cannot set pinery-* keys, so nothing collides)."""
    return {**(spec.tags or {}), **owner_tags}


def needs_legacy_create(spec: VectorIndexSpec) -> bool:
    """Whether 2026-07 refuses to create this index (see the module docstring)."""
    if spec.pod is not None:
        return True
    return spec.serverless is not None and bool(spec.serverless.source_collection)


def vector_field_names(spec: VectorIndexSpec) -> tuple[str | None, str | None]:
    """The names of the dense and sparse fields: the reserved ones the vectors API addresses
    (10.x SDK: pinecone/_internal/legacy_index_translation.py, DENSE_FIELD and SPARSE_FIELD), or
    for a document schema those of spec.fieldNames (the server reserves `_values` and
    `_sparse_values`: requests.py validate_schema_field_name)."""
    if spec.embed is not None:
        return None, None
    if spec.document_schema:
        return spec.document_vector_fields()
    dense = observed.DENSE_FIELD if spec.vector_type in ("dense", "hybrid") else None
    sparse = observed.SPARSE_FIELD if spec.vector_type in ("sparse", "hybrid") else None
    return dense, sparse


def text_field(field: TextField) -> dict[str, Any]:
    """A declared text field as 2026-07's schema takes it (schema.py StringField with
    FullTextSearchConfig; language left to Pinecone's default when the spec leaves it out)."""
    search: dict[str, Any] = {"stemming": bool(field.stemming), "stop_words": bool(field.stop_words)}
    if field.language is not None:
        search = {"language": field.language, **search}
    return {"type": "string", "full_text_search": search}


def vector_schema(spec: VectorIndexSpec) -> dict[str, Any]:
    """The 2026-07 `schema` of an index: its vector fields and its declared text fields.

    Without declared fields the vector fields go under the reserved names, so that the index is
    served by the vectors API as an index made before 2026-07 is (legacy_vector_schema); a hybrid
    index declares both, as 2026-07 refuses sparse values on a dense index without a
    sparse_vector field (v10-2026-07-db-data-breaking-changes.md). Any other field makes a
    document schema, written through the documents API (v10-2026-07-vector-models.md)."""
    fields: dict[str, Any] = {}
    dense, sparse = vector_field_names(spec)
    if dense is not None:
        fields[dense] = {"type": "dense_vector", "dimension": spec.dimension, "metric": spec.effective_metric}
    if sparse is not None:
        fields[sparse] = {"type": "sparse_vector"}
    for field in spec.text_fields or []:
        fields[field.name] = text_field(field)
    return {"fields": fields}


def deployment(spec: VectorIndexSpec) -> dict[str, Any]:
    """The 2026-07 `deployment` of a serverless or BYOC index (pinecone/models/indexes/deployment.py)."""
    if spec.serverless is not None:
        return {"deployment_type": "managed", "cloud": spec.serverless.cloud, "region": spec.serverless.region}
    if spec.byoc is not None:
        return {"deployment_type": "byoc", "environment": spec.byoc.environment}
    raise ValueError("pod-based indexes are created through API 2026-04")


def legacy_spec(spec: VectorIndexSpec) -> dict[str, Any]:
    """The `spec` member of a 2025-10-shaped (2026-04) create request."""
    if spec.pod is not None:
        pod = spec.pod
        body: dict[str, Any] = {
            "environment": pod.environment,
            "pod_type": pod.pod_type,
            "pods": pod.total_pods,
            "replicas": pod.replicas,
            "shards": pod.shards,
        }
        if pod.metadata_config is not None:
            body["metadata_config"] = {"indexed": list(pod.metadata_config.indexed)}
        if pod.source_collection:
            body["source_collection"] = pod.source_collection
        return {"pod": body}
    if spec.serverless is not None:
        body = {"cloud": spec.serverless.cloud, "region": spec.serverless.region}
        if spec.serverless.source_collection:
            body["source_collection"] = spec.serverless.source_collection
        if spec.read_capacity is not None:
            body["read_capacity"] = spec.read_capacity.request()
        return {"serverless": body}
    raise ValueError("only pod-based and collection-based indexes are created through API 2026-04")


def embed_request(spec: VectorIndexSpec) -> dict[str, Any]:
    """The `embed` of a create-for-model request (2025-10 spec, CreateIndexForModelRequest.embed)."""
    assert spec.embed is not None
    embed = spec.embed
    body: dict[str, Any] = {"model": embed.model, "field_map": dict(embed.field_map)}
    for key, value in (("metric", embed.metric), ("dimension", embed.dimension),
                       ("read_parameters", embed.read_parameters), ("write_parameters", embed.write_parameters)):
        if value is not None:
            body[key] = value
    return body


def create_request(spec: VectorIndexSpec, index_name: str, owner_tags: dict[str, str]) -> CreateRequest:
    """The create call for this spec: which API version, and its body."""
    common: dict[str, Any] = {"name": index_name, "deletion_protection": protection(spec.deletion_protection),
              "tags": desired_tags(spec, owner_tags)}
    if spec.embed is not None and spec.serverless is not None:
        body = {**common, "cloud": spec.serverless.cloud, "region": spec.serverless.region, "embed": embed_request(spec)}
        if spec.read_capacity is not None:
            body["read_capacity"] = spec.read_capacity.request()
        return CreateRequest("for-model", body)
    if needs_legacy_create(spec):
        body = {**common, "metric": spec.effective_metric, "spec": legacy_spec(spec),
                # 2025-10 has no hybrid type: a dense dotproduct index takes sparse values there.
                "vector_type": "sparse" if spec.vector_type == "sparse" else "dense"}
        if spec.dimension is not None:
            body["dimension"] = spec.dimension
        return CreateRequest(LEGACY_CREATE_VERSION, body)
    body = {**common, "schema": vector_schema(spec), "deployment": deployment(spec)}
    if spec.read_capacity is not None:
        body["read_capacity"] = spec.read_capacity.request()
    return CreateRequest("2026-07", body)


def write_api(spec: VectorIndexSpec) -> str:
    """Which data-plane API writes to the index: `records` for an index created for a model
    (create-for-model makes a legacy integrated index: the 10.x SDK's Indexes.create_for_model),
    `documents` for a document schema (the vectors API refuses it: v10-2026-07-vector-models.md),
    `vectors` otherwise."""
    if spec.embed is not None:
        return "records"
    return "documents" if spec.document_schema else "vectors"


def connection_fields(spec: VectorIndexSpec) -> dict[str, str]:
    """The index's field names, for the connection ConfigMap: what an application on the 10.x SDK
    addresses (the vector fields, the text field an embedding model reads, the full-text fields),
    and which API writes to it."""
    names = {"PINECONE_WRITE_API": write_api(spec)}
    if spec.embed is not None:
        names["PINECONE_TEXT_FIELD"] = spec.embed.text_field
    dense, sparse = vector_field_names(spec)
    if dense is not None:
        names["PINECONE_DENSE_FIELD"] = dense
    if sparse is not None:
        names["PINECONE_SPARSE_FIELD"] = sparse
    if spec.text_fields:
        names["PINECONE_FULL_TEXT_FIELDS"] = ",".join(field.name for field in spec.text_fields)
    return names


def read_capacity_differs(spec: VectorIndexSpec, index: dict[str, Any]) -> bool:
    """Whether the index's read capacity setting differs from the spec's (an unset spec
    field leaves it as it is)."""
    if spec.read_capacity is None:
        return False
    current = observed.read_capacity(index) or {"mode": "OnDemand"}
    wanted = spec.read_capacity.request()
    if current.get("mode") != wanted["mode"]:
        return True
    if wanted["mode"] == "OnDemand":
        return False
    have, want = current.get("dedicated") or {}, wanted["dedicated"]
    return (have.get("node_type"), (have.get("manual") or {}).get("replicas"), (have.get("manual") or {}).get("shards")) != (
        want["node_type"], want["manual"]["replicas"], want["manual"]["shards"])


def configure_changes(spec: VectorIndexSpec, index: dict[str, Any], owner_tags: dict[str, str]) -> dict[str, Any]:
    """The arguments of one 2026-07 configure call that brings `index` to the spec ({} if none).

    Tags are fully managed: keys on the index that the spec does not declare are removed
    (Pinecone removes a tag when it is set to ""), so that deleting a key in Git deletes it.
    Pod scaling goes under `deployment` and read capacity at the top level, as 2026-07's
    ConfigureIndexRequest has them (v10-2026-07-index-model.md, "configure_index").
    """
    changes: dict[str, Any] = {}
    wanted_protection = protection(spec.deletion_protection)
    if index.get("deletion_protection", "disabled") != wanted_protection:
        changes["deletion_protection"] = wanted_protection

    wanted = desired_tags(spec, owner_tags)
    current = index.get("tags") or {}
    tag_changes = {k: v for k, v in wanted.items() if current.get(k) != v}
    tag_changes.update({k: "" for k in current if k not in wanted})
    if tag_changes:
        changes["tags"] = tag_changes

    placed = observed.deployment(index)
    if spec.pod is not None and observed.deployment_type(index) == "pod":
        scaling: dict[str, Any] = {}
        if placed.get("replicas") != spec.pod.replicas:
            scaling["replicas"] = spec.pod.replicas
        if placed.get("pod_type") != spec.pod.pod_type:
            scaling["pod_type"] = spec.pod.pod_type
        if scaling:
            changes["deployment"] = scaling
    if spec.read_capacity is not None and observed.deployment_type(index) in ("serverless", "byoc"):
        if read_capacity_differs(spec, index):
            changes["read_capacity"] = spec.read_capacity.request()
    semantic = observed.embed(index)
    if spec.embed is not None and semantic is not None:
        name, found = semantic
        parameters: dict[str, Any] = {"read_parameters": spec.embed.read_parameters, "write_parameters": spec.embed.write_parameters}
        if any(value is not None and found.get(key) != value for key, value in parameters.items()):
            # 2026-07 configures them as the semantic_text field (v10-2026-07-vector-models.md);
            # a parameter set the spec leaves out is left as it is.
            patch = {"type": "semantic_text", **{k: v for k, v in parameters.items() if v is not None}}
            changes["schema"] = {"fields": {name: patch}}
    return changes
