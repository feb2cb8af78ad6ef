"""The VectorIndex API: a Pinecone index declared as a Kubernetes object."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Optional

from pydantic import Field, StringConstraints, ValidationInfo, model_validator

from pinery.api.base import (
    ApiModel,
    ObjectName,
    OpaqueObject,
    SecretKeyRef,
    immutable,
    report_problems,
)
from pinery.api.conditions import Condition
from pinery.api.resource import CelRule, PrinterColumn, ResourceInfo
from pinery.schema.errors import FieldError

# Pinecone's naming rule for indexes and collections.
INDEX_NAME_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
INDEX_NAME_MAX = 45
_INDEX_NAME_RE = re.compile(INDEX_NAME_PATTERN)

# Tag keys with this prefix are the operator's ownership tags.
RESERVED_TAG_PREFIX = "pinery-"
# Pinecone keeps at most 20 tags on an index, and the operator adds its three ownership tags.
MAX_USER_TAGS = 17
TAG_KEY_PATTERN = r"^[A-Za-z0-9_-]+$"
TAG_VALUE_PATTERN = r"^[A-Za-z0-9;@_.+ -]+$"

IndexName = Annotated[
    str, StringConstraints(min_length=1, max_length=INDEX_NAME_MAX, pattern=INDEX_NAME_PATTERN)
]
TagKey = Annotated[str, StringConstraints(min_length=1, max_length=80, pattern=TAG_KEY_PATTERN)]
TagValue = Annotated[
    str, StringConstraints(min_length=1, max_length=120, pattern=TAG_VALUE_PATTERN)
]

Metric = Literal["cosine", "euclidean", "dotproduct"]
VectorType = Literal["dense", "sparse", "hybrid"]
DeploymentType = Literal["serverless", "pod", "byoc"]
Phase = Literal["Pending", "Creating", "Restoring", "Ready", "Updating", "Disabled", "Error", "Failed", "Terminating"]
# Pinecone's dedicated read node types (2025-10 spec, ReadCapacityDedicatedConfig.node_type).
NodeType = Literal["b1", "t1"]


class ServerlessSpec(ApiModel):
    """A serverless index in a public cloud region."""

    cloud: Literal["aws", "gcp", "azure"] = Field(
        description="Public cloud that hosts the index: aws, gcp or azure."
    )
    region: str = Field(
        min_length=1,
        max_length=64,
        pattern=r"^[a-z0-9-]+$",
        description="Cloud region of the index, for example us-east-1.",
    )
    source_collection: Optional[IndexName] = Field(
        None, description="Name of a collection to create the index from."
    )


class ReadCapacity(ApiModel):
    """How a serverless or BYOC index serves reads: on demand, or from dedicated read nodes.

    Everything here can change in place; Pinecone applies a change asynchronously and
    status.readCapacity shows its progress. Sources: the 2025-10 spec's ReadCapacity,
    ReadCapacityDedicatedConfig and ScalingConfigManual.
    """

    mode: Literal["OnDemand", "Dedicated"] = Field(
        description="OnDemand (Pinecone's default) or Dedicated (nodeType, replicas and shards required)."
    )
    node_type: Optional[NodeType] = Field(
        None, description="Dedicated read node type: b1, or t1 (more processing power and memory)."
    )
    replicas: Optional[int] = Field(
        None,
        ge=0,
        description=(
            "Dedicated replicas (manual scaling). 0 disables the index (Pinecone's Disabled state: "
            "it keeps its data but serves no reads) to save cost while it is not used."
        ),
    )
    shards: Optional[int] = Field(
        None, ge=1, description="Dedicated shards (manual scaling); each shard adds storage."
    )

    def request(self) -> dict[str, Any]:
        """Pinecone's ReadCapacity object for this setting (REST shape)."""
        if self.mode == "OnDemand":
            return {"mode": "OnDemand"}
        return {
            "mode": "Dedicated",
            "dedicated": {
                "node_type": self.node_type,
                "scaling": "Manual",
                "manual": {"replicas": self.replicas, "shards": self.shards},
            },
        }


class Embed(ApiModel):
    """Integrated inference: Pinecone embeds the text of one field with a hosted model, at upsert
    and at query time (created with create-for-model; the 2025-10 spec's
    CreateIndexForModelRequest.embed). The model, field map, metric and dimension are fixed; the
    read and write parameters change in place (2026-07 configures them as the index's
    semantic_text field)."""

    model: str = Field(
        min_length=1,
        max_length=128,
        json_schema_extra=immutable(),
        description="Embedding model, for example llama-text-embed-v2 or pinecone-sparse-english-v0.",
    )
    field_map: dict[Annotated[str, StringConstraints(pattern=r"^text$")], Annotated[str, StringConstraints(min_length=1, max_length=64)]] = Field(
        min_length=1,
        max_length=1,
        json_schema_extra=immutable(),
        description="Which record field holds the text to embed: {text: <field name>}.",
    )
    metric: Optional[Metric] = Field(
        None, json_schema_extra=immutable(), description="Similarity metric, when the model offers more than one."
    )
    dimension: Optional[int] = Field(
        None, ge=1, le=20000, json_schema_extra=immutable(),
        description="Vector dimension, for models that offer several.",
    )
    read_parameters: Optional[OpaqueObject] = Field(
        None, description="Model parameters for queries, for example {input_type: query, truncate: END}."
    )
    write_parameters: Optional[OpaqueObject] = Field(
        None, description="Model parameters for upserts, for example {input_type: passage, truncate: END}."
    )

    @property
    def text_field(self) -> str:
        return self.field_map["text"]


# Names of declared schema fields: a conservative subset of what Pinecone takes (1-64 UTF-8
# bytes; the server reserves `_id`, `_values`, `_sparse_values` and treats a leading `$` specially:
# the 10.x SDK's pinecone/models/indexes/requests.py, validate_schema_field_name).
FIELD_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]*$"
FieldName = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=FIELD_NAME_PATTERN)]
# The vector fields of an index with a document schema, unless fieldNames names them.
DEFAULT_DENSE_FIELD = "values"
DEFAULT_SPARSE_FIELD = "sparse_values"
# pinery's own bound (Pinecone documents none), so that the CRD's rules over the list have a cost.
MAX_TEXT_FIELDS = 32


class TextField(ApiModel):
    """A string field searched by full text: API 2026-07's `type: string` field with
    `full_text_search` (the 10.x SDK's pinecone/models/indexes/schema.py, FullTextSearchConfig)."""

    name: FieldName = Field(description="Field name, as documents carry it.")
    language: Optional[str] = Field(
        None,
        min_length=2,
        max_length=32,
        pattern=r"^[a-z]+$",
        description="Language of the analysis rules: a two-letter code (en) or its English name "
        "(english), lower case. Pinecone's default is English.",
    )
    # No schema defaults: a defaulted field inside a list item makes every `kubectl apply` of an
    # unchanged manifest patch the list again (JSON merge patches replace lists whole).
    stemming: Optional[bool] = Field(None, description="Fold words to their root form, so that running matches run. Default false.")
    stop_words: Optional[bool] = Field(None, description="Leave common words such as 'the' out of the index; needs stemming. Default false.")


class FieldNames(ApiModel):
    """Names of an index's vector fields in its document schema."""

    dense: Optional[FieldName] = Field(
        None, description=f"The dense vector field (dense and hybrid indexes); default {DEFAULT_DENSE_FIELD}."
    )
    sparse: Optional[FieldName] = Field(
        None, description=f"The sparse vector field (sparse and hybrid indexes); default {DEFAULT_SPARSE_FIELD}."
    )


class RestoreFrom(ApiModel):
    """The backup a new index is made from (Pinecone's create-index-from-backup)."""

    backup_name: Optional[ObjectName] = Field(
        None, description="A VectorIndexBackup in the same namespace, once it is Ready."
    )
    backup_id: Optional[str] = Field(
        None,
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9-]+$",
        description="Or: Pinecone's id of a backup the API key can see.",
    )


class MetadataConfig(ApiModel):
    """Which metadata fields a pod-based index indexes for filtering."""

    indexed: list[Annotated[str, StringConstraints(min_length=1, max_length=512)]] = Field(
        max_length=1000,
        description="Metadata fields to index. Without metadataConfig every field is indexed.",
    )


class PodSpec(ApiModel):
    """A pod-based index. podType and replicas can be scaled in place; the rest is fixed."""

    environment: str = Field(
        min_length=1,
        max_length=64,
        json_schema_extra=immutable(),
        description="Pinecone environment that hosts the index, for example us-east1-gcp.",
    )
    pod_type: str = Field(
        "p1.x1",
        pattern=r"^(s1|p1|p2)\.(x1|x2|x4|x8)$",
        description=(
            "Pod type: s1, p1 or p2, then '.', then x1, x2, x4 or x8. Can be changed in place "
            "to a larger size of the same family (p1.x1 -> p1.x2)."
        ),
    )
    replicas: int = Field(
        1, ge=1, le=100, description="Number of replicas; can be scaled up or down in place."
    )
    shards: int = Field(
        1, ge=1, le=100, json_schema_extra=immutable(), description="Number of shards."
    )
    pods: Optional[int] = Field(
        None,
        ge=1,
        le=10000,
        description="Total number of pods. Must equal shards x replicas; computed when omitted.",
    )
    metadata_config: Optional[MetadataConfig] = Field(
        None,
        json_schema_extra=immutable(),
        description="Metadata fields to index; every field is indexed when omitted.",
    )
    source_collection: Optional[IndexName] = Field(
        None,
        json_schema_extra=immutable(),
        description="Name of a collection to create the index from.",
    )

    @property
    def total_pods(self) -> int:
        return self.pods if self.pods is not None else self.replicas * self.shards


class ByocSpec(ApiModel):
    """An index in a bring-your-own-cloud environment."""

    environment: str = Field(
        min_length=1,
        max_length=64,
        description="BYOC environment that hosts the index, for example aws-us-east-1-b921.",
    )


class VectorIndexSpec(ApiModel):
    """Desired state of a Pinecone index.

    Exactly one of serverless, pod and byoc must be set. Fields Pinecone cannot change in place
    are immutable; deletionProtection, tags, pod.replicas, pod.podType and the operator-side
    fields can change at any time.
    """

    index_name: Optional[IndexName] = Field(
        None,
        json_schema_extra=immutable(),
        description=(
            "Name of the index in Pinecone: 1-45 characters, lowercase letters, digits and '-', "
            "starting and ending with a letter or digit. Defaults to metadata.name."
        ),
    )
    dimension: Optional[int] = Field(
        None,
        ge=1,
        le=20000,
        json_schema_extra=immutable(),
        description="Dimension of the vectors (1-20000). Required for dense indexes, unset for sparse.",
    )
    metric: Optional[Metric] = Field(
        None,
        json_schema_extra=immutable(),
        description=(
            "Similarity metric: cosine, euclidean or dotproduct. Defaults to cosine for dense "
            "indexes; sparse indexes require dotproduct."
        ),
    )
    vector_type: VectorType = Field(
        "dense",
        json_schema_extra=immutable(),
        description=(
            "Vector type: dense (default), sparse, or hybrid (dense vectors with sparse values "
            "beside them; metric dotproduct). Serverless and BYOC indexes made since API 2026-07 "
            "take sparse values only when they are hybrid."
        ),
    )
    serverless: Optional[ServerlessSpec] = Field(
        None, json_schema_extra=immutable(), description="Create a serverless index."
    )
    pod: Optional[PodSpec] = Field(
        None, json_schema_extra=immutable("presence"), description="Create a pod-based index."
    )
    byoc: Optional[ByocSpec] = Field(
        None,
        json_schema_extra=immutable(),
        description="Create an index in a bring-your-own-cloud environment.",
    )
    embed: Optional[Embed] = Field(
        None,
        json_schema_extra=immutable("presence"),
        description=(
            "Integrated inference (serverless only): Pinecone embeds the text of one field with a "
            "hosted model. Dimension and metric then come from embed, not from the top level."
        ),
    )
    text_fields: Optional[list[TextField]] = Field(
        None,
        min_length=1,
        max_length=MAX_TEXT_FIELDS,
        json_schema_extra={**immutable(), "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]},
        description=(
            "String fields searched by full text (serverless and BYOC, without embed). Declaring "
            "any gives the index a document schema: documents are written through Pinecone's "
            "documents API (API 2026-07), which also searches these fields; the vectors API "
            "refuses writes to it."
        ),
    )
    field_names: Optional[FieldNames] = Field(
        None,
        json_schema_extra=immutable(),
        description=(
            "Names of the vector fields in a document schema (serverless and BYOC, without "
            f"embed). Setting it, or textFields, gives the index a document schema, with the "
            f"vector fields named {DEFAULT_DENSE_FIELD} and {DEFAULT_SPARSE_FIELD} unless named "
            "here; without either, the index is a plain vector index, addressed by the vectors API."
        ),
    )
    restore_from: Optional[RestoreFrom] = Field(
        None,
        json_schema_extra=immutable(),
        description=(
            "Create the index from a backup (serverless only): its records, dimension, metric and "
            "fields come from the backup. dimension and metric may then be left out; what the spec "
            "does say must match the backup."
        ),
    )
    read_capacity: Optional[ReadCapacity] = Field(
        None,
        description=(
            "Read capacity of a serverless or BYOC index, changed in place. Without it the "
            "operator leaves read capacity as Pinecone has it (OnDemand for a new index); "
            "write mode: OnDemand to go back from Dedicated."
        ),
    )
    deletion_protection: bool = Field(
        False,
        description=(
            "Ask Pinecone to refuse deletion of the index. A protected index is never deleted by "
            "the operator: deleting the object then leaves the index in place."
        ),
    )
    tags: Optional[dict[TagKey, TagValue]] = Field(
        None,
        max_length=MAX_USER_TAGS,
        description=(
            f"Tags on the index, at most {MAX_USER_TAGS} (Pinecone allows 20, and pinery adds 3 "
            "ownership tags). Keys: up to 80 letters, digits, '_' or '-'; values: up to 120 "
            "letters, digits or ';@_-.+ '. Keys starting with 'pinery-' are reserved for the "
            "operator's ownership tags. Removing a key here removes the tag."
        ),
    )
    deletion_policy: Literal["Delete", "Retain"] = Field(
        "Delete",
        description=(
            "What happens to the Pinecone index when this object is deleted: Delete (default) "
            "deletes it, Retain leaves it."
        ),
    )
    adopt_existing: bool = Field(
        False,
        description=(
            "Take over an index of the same name that this object did not create, if its "
            "immutable properties match the spec. Without it such an index is left alone."
        ),
    )
    api_key_secret_ref: Optional[SecretKeyRef] = Field(
        None,
        description=(
            "Secret key holding the Pinecone API key. Defaults to the operator's configured "
            "Secret."
        ),
    )
    connection_config_map: Optional[ObjectName] = Field(
        None,
        description=(
            "Name of a ConfigMap the operator creates (owned by this object) with the index "
            "name and host, for applications to mount or read."
        ),
    )

    @property
    def deployment_type(self) -> DeploymentType | None:
        names: tuple[DeploymentType, ...] = ("serverless", "pod", "byoc")
        for name in names:
            if getattr(self, name) is not None:
                return name
        return None

    @property
    def effective_metric(self) -> Metric:
        if self.metric:
            return self.metric
        return "cosine" if self.vector_type == "dense" else "dotproduct"

    @property
    def document_schema(self) -> bool:
        """Whether the index has a document schema: declared text fields or named vector fields."""
        return self.text_fields is not None or self.field_names is not None

    def document_vector_fields(self) -> tuple[str | None, str | None]:
        """The names of the dense and sparse fields of a document schema (None where the vector
        type has no such field)."""
        names = self.field_names or FieldNames()
        dense = (names.dense or DEFAULT_DENSE_FIELD) if self.vector_type in ("dense", "hybrid") else None
        sparse = (names.sparse or DEFAULT_SPARSE_FIELD) if self.vector_type in ("sparse", "hybrid") else None
        return dense, sparse

    def problems(self) -> list[FieldError]:
        """Cross-field rules (each also a CEL rule in the CRD; a test keeps them in step)."""
        out: list[FieldError] = []
        chosen = [n for n in ("serverless", "pod", "byoc") if getattr(self, n) is not None]
        if len(chosen) != 1:
            out.append(
                FieldError(
                    "spec",
                    "exactly one of serverless, pod and byoc must be set"
                    + (f" (found {', '.join(chosen)})" if chosen else ""),
                )
            )
        if self.embed is not None:
            if self.dimension is not None or self.metric is not None:
                out.append(FieldError("spec.embed", "with embed, dimension and metric come from embed (embed.dimension, embed.metric)"))
            if self.serverless is None:
                out.append(FieldError("spec.embed", "integrated inference needs a serverless index"))
            if self.vector_type == "hybrid":
                out.append(FieldError("spec.vectorType", "an embedding model makes dense or sparse vectors, not both"))
        elif self.vector_type != "sparse" and self.dimension is None and self.restore_from is None:
            out.append(FieldError("spec.dimension", "required for dense and hybrid indexes"))
        if self.vector_type == "hybrid":
            if self.metric not in (None, "dotproduct"):
                out.append(FieldError("spec.metric", "hybrid indexes require dotproduct"))
            if self.pod is not None:
                out.append(FieldError("spec.vectorType", "pod-based indexes are dense or sparse; a dense pod-based "
                                      "index with metric dotproduct takes sparse values"))
        rc = self.read_capacity
        if rc is not None:
            if self.pod is not None:
                out.append(FieldError("spec.readCapacity", "applies to serverless and BYOC indexes only"))
            given = [n for n in ("node_type", "replicas", "shards") if getattr(rc, n) is not None]
            if rc.mode == "Dedicated" and len(given) != 3:
                out.append(FieldError("spec.readCapacity", "mode Dedicated requires nodeType, replicas and shards"))
            if rc.mode == "OnDemand" and given:
                out.append(FieldError("spec.readCapacity", "mode OnDemand takes no nodeType, replicas or shards"))
        if self.vector_type == "sparse":
            if self.dimension is not None:
                out.append(FieldError("spec.dimension", "must not be set for sparse indexes"))
            if self.metric not in (None, "dotproduct"):
                out.append(FieldError("spec.metric", "sparse indexes require dotproduct"))
            if self.pod is not None:
                out.append(FieldError("spec.pod", "sparse indexes cannot be pod-based"))
        out.extend(self._document_problems())
        out.extend(self._restore_problems())
        for key in sorted(self.tags or {}):
            if key.startswith(RESERVED_TAG_PREFIX):
                out.append(
                    FieldError(
                        f"spec.tags[{key}]",
                        f"tag keys starting with '{RESERVED_TAG_PREFIX}' are reserved for the operator",
                    )
                )
        if self.pod is not None and self.pod.pods is not None:
            if self.pod.pods != self.pod.replicas * self.pod.shards:
                out.append(
                    FieldError(
                        "spec.pod.pods",
                        f"must equal shards x replicas ({self.pod.shards} x {self.pod.replicas}"
                        f" = {self.pod.replicas * self.pod.shards}); omit it to have it computed",
                    )
                )
        return out

    def _restore_problems(self) -> list[FieldError]:
        restore = self.restore_from
        if restore is None:
            return []
        out = []
        if (restore.backup_name is None) == (restore.backup_id is None):
            out.append(FieldError("spec.restoreFrom", "exactly one of backupName and backupId must be set"))
        if self.serverless is None or self.serverless.source_collection:
            out.append(FieldError("spec.restoreFrom", "backups restore as serverless indexes: set serverless, without sourceCollection"))
        return out

    def _document_problems(self) -> list[FieldError]:
        out: list[FieldError] = []
        legacy = self.pod is not None or (self.serverless is not None and bool(self.serverless.source_collection))
        for path, value in (("spec.textFields", self.text_fields), ("spec.fieldNames", self.field_names)):
            if value is None:
                continue
            if self.embed is not None:
                out.append(FieldError(path, "not with embed: an index created for a model has the one text field embed reads"))
            if legacy:
                out.append(FieldError(path, "declared fields need a serverless or BYOC index not made from a collection "
                                      "(those are created through API 2026-04, which declares no fields)"))
        names = self.field_names
        if names is not None:
            if names.dense is not None and self.vector_type == "sparse":
                out.append(FieldError("spec.fieldNames.dense", "a sparse index has no dense field"))
            if names.sparse is not None and self.vector_type == "dense":
                out.append(FieldError("spec.fieldNames.sparse", "a dense index has no sparse field; use vectorType hybrid"))
        if self.text_fields is not None:
            vectors = set(self.document_vector_fields()) - {None}
            for i, field in enumerate(self.text_fields):
                if field.stop_words and not field.stemming:
                    out.append(FieldError(f"spec.textFields[{i}].stopWords", "needs stemming"))
                if field.name in vectors:
                    out.append(FieldError(f"spec.textFields[{i}].name", f"{field.name!r} is the name of a vector field"))
        return out

    @model_validator(mode="after")
    def _check_rules(self, info: ValidationInfo) -> "VectorIndexSpec":
        report_problems(self.problems(), info)
        return self

    def index_name_for(self, object_name: str) -> str:
        return self.index_name or object_name


def metadata_problems(name: str | None, spec: dict[str, Any]) -> list[FieldError]:
    """Rules that involve metadata.name: it is the default index name."""
    if spec.get("indexName") or not name:
        return []
    if len(name) > INDEX_NAME_MAX or not _INDEX_NAME_RE.fullmatch(name):
        return [
            FieldError(
                "metadata.name",
                f"{name!r} is not a valid Pinecone index name (1-45 lowercase letters, digits and "
                "'-'); set spec.indexName",
            )
        ]
    return []


class ReadCapacityStatus(ApiModel):
    """Read capacity as Pinecone reports it (its ReadCapacityStatus, 2025-10 spec)."""

    mode: Optional[str] = Field(None, description="OnDemand or Dedicated.")
    node_type: Optional[str] = Field(None, description="Dedicated read node type in effect.")
    state: Optional[str] = Field(
        None,
        description=(
            "Ready; Scaling (replicas or shards are changing); Migrating (moving to another "
            "node type or mode); Error (see message)."
        ),
    )
    current_replicas: Optional[int] = Field(None, description="Dedicated replicas serving now.")
    current_shards: Optional[int] = Field(None, description="Dedicated shards serving now.")
    message: Optional[str] = Field(None, description="Pinecone's error message, in state Error.")


class RestoreStatus(ApiModel):
    """The restore job that makes the index from a backup, as Pinecone reports it."""

    backup_id: Optional[str] = Field(None, description="The backup restored.")
    restore_job_id: Optional[str] = Field(None, description="Pinecone's id of the restore job.")
    state: Optional[str] = Field(None, description="Pinecone's state of the job (Pending, InProgress, Completed, Failed).")
    percent_complete: Optional[float] = Field(None, ge=0, le=100, description="How much of the backup is restored.")


class VectorIndexStatus(ApiModel):
    """Observed state of the index, written by the operator."""

    conditions: list[Condition] = Field(
        default_factory=list,
        max_length=16,
        json_schema_extra={
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["type"],
        },
        description=(
            "Ready: the index exists and serves requests. Synced: Pinecone matches the spec "
            "of observedGeneration."
        ),
    )
    phase: Optional[Phase] = Field(
        None,
        description=(
            "Summary of the conditions for display: Pending, Creating, Restoring (being made from "
            "a backup), Ready, Updating, "
            "Disabled (dedicated read capacity with 0 replicas: the index keeps its data and "
            "serves no reads), Error (retrying by itself), Failed (needs a change to the spec, "
            "Secret or account) or Terminating."
        ),
    )
    index_name: Optional[str] = Field(None, description="Name of the index in Pinecone.")
    type: Optional[DeploymentType] = Field(
        None, description="Deployment type of the index: serverless, pod or byoc."
    )
    host: Optional[str] = Field(None, description="Host serving the index's data plane.")
    state: Optional[str] = Field(
        None,
        description="Pinecone's state of the index (Initializing, Ready, ScalingUp, Disabled, Terminating, ...).",
    )
    read_capacity: Optional[ReadCapacityStatus] = Field(
        None, description="Read capacity of a serverless or BYOC index as Pinecone reports it."
    )
    restore: Optional[RestoreStatus] = Field(None, description="The restore of an index made from a backup (restoreFrom).")
    observed_generation: Optional[int] = Field(
        None, ge=0, description="The metadata.generation the operator last acted on."
    )
    create_sent_at: Optional[str] = Field(
        None,
        json_schema_extra={"format": "date-time"},
        description=(
            "Set (RFC 3339) when the operator asks Pinecone to create the index, removed once an "
            "answer or the index itself is seen. While it is set, deleting the object waits up "
            "to a minute after it for an index that may still appear, so that none is left behind."
        ),
    )


_ONE_DEPLOYMENT_TYPE = CelRule(
    rule="(has(self.serverless) ? 1 : 0) + (has(self.pod) ? 1 : 0) + (has(self.byoc) ? 1 : 0) == 1",
    message="exactly one of serverless, pod and byoc must be set",
)

SPEC_RULES = (
    _ONE_DEPLOYMENT_TYPE,
    CelRule(
        rule="!has(self.embed) || (!has(self.dimension) && !has(self.metric))",
        message="with embed, dimension and metric come from embed (embed.dimension, embed.metric)",
        field_path=".embed",
    ),
    CelRule(
        rule="!has(self.embed) || has(self.serverless)",
        message="integrated inference needs a serverless index",
        field_path=".embed",
    ),
    CelRule(
        rule="!has(self.embed) || self.vectorType != 'hybrid'",
        message="an embedding model makes dense or sparse vectors, not both",
        field_path=".vectorType",
    ),
    CelRule(
        rule="self.vectorType == 'sparse' || has(self.dimension) || has(self.embed) || has(self.restoreFrom)",
        message="dimension is required for dense and hybrid indexes",
        field_path=".dimension",
    ),
    CelRule(
        rule="self.vectorType != 'hybrid' || !has(self.metric) || self.metric == 'dotproduct'",
        message="hybrid indexes require dotproduct",
        field_path=".metric",
    ),
    CelRule(
        rule="self.vectorType != 'hybrid' || !has(self.pod)",
        message="pod-based indexes are dense or sparse; a dense pod-based index with metric dotproduct takes sparse values",
        field_path=".vectorType",
    ),
    CelRule(
        rule="!has(self.readCapacity) || !has(self.pod)",
        message="readCapacity applies to serverless and BYOC indexes only",
        field_path=".readCapacity",
    ),
    CelRule(
        rule=(
            "!has(self.readCapacity) || (self.readCapacity.mode == 'Dedicated' ? "
            "(has(self.readCapacity.nodeType) && has(self.readCapacity.replicas) && has(self.readCapacity.shards)) : "
            "(!has(self.readCapacity.nodeType) && !has(self.readCapacity.replicas) && !has(self.readCapacity.shards)))"
        ),
        message="readCapacity: mode Dedicated requires nodeType, replicas and shards; mode OnDemand takes none of them",
        field_path=".readCapacity",
    ),
    CelRule(
        rule="self.vectorType != 'sparse' || !has(self.dimension)",
        message="dimension must not be set for sparse indexes",
        field_path=".dimension",
    ),
    CelRule(
        rule="self.vectorType != 'sparse' || !has(self.metric) || self.metric == 'dotproduct'",
        message="sparse indexes require dotproduct",
        field_path=".metric",
    ),
    CelRule(
        rule="self.vectorType != 'sparse' || !has(self.pod)",
        message="sparse indexes cannot be pod-based",
        field_path=".pod",
    ),
    *(
        rule
        for field in ("textFields", "fieldNames")
        for rule in (
            CelRule(
                rule=f"!has(self.{field}) || !has(self.embed)",
                message=f"{field}: not with embed: an index created for a model has the one text field embed reads",
                field_path=f".{field}",
            ),
            CelRule(
                rule=f"!has(self.{field}) || (!has(self.pod) && !(has(self.serverless) && has(self.serverless.sourceCollection)))",
                message=f"{field}: declared fields need a serverless or BYOC index not made from a collection",
                field_path=f".{field}",
            ),
        )
    ),
    CelRule(
        rule="!has(self.fieldNames) || !has(self.fieldNames.dense) || self.vectorType != 'sparse'",
        message="a sparse index has no dense field",
        field_path=".fieldNames.dense",
    ),
    CelRule(
        rule="!has(self.fieldNames) || !has(self.fieldNames.sparse) || self.vectorType != 'dense'",
        message="a dense index has no sparse field; use vectorType hybrid",
        field_path=".fieldNames.sparse",
    ),
    CelRule(
        rule="!has(self.textFields) || self.textFields.all(f, !(has(f.stopWords) && f.stopWords) || (has(f.stemming) && f.stemming))",
        message="textFields: stopWords needs stemming",
        field_path=".textFields",
    ),
    CelRule(
        rule=(
            "!has(self.textFields) || self.textFields.all(f, "
            "(self.vectorType == 'sparse' || f.name != (has(self.fieldNames) && has(self.fieldNames.dense) ? "
            f"self.fieldNames.dense : '{DEFAULT_DENSE_FIELD}')) && "
            "(self.vectorType == 'dense' || f.name != (has(self.fieldNames) && has(self.fieldNames.sparse) ? "
            f"self.fieldNames.sparse : '{DEFAULT_SPARSE_FIELD}')))"
        ),
        message="textFields: a text field cannot have the name of a vector field",
        field_path=".textFields",
    ),
    CelRule(
        rule="!has(self.restoreFrom) || has(self.restoreFrom.backupName) != has(self.restoreFrom.backupId)",
        message="restoreFrom: exactly one of backupName and backupId must be set",
        field_path=".restoreFrom",
    ),
    CelRule(
        rule="!has(self.restoreFrom) || (has(self.serverless) && !has(self.serverless.sourceCollection))",
        message="restoreFrom: backups restore as serverless indexes: set serverless, without sourceCollection",
        field_path=".restoreFrom",
    ),
    CelRule(
        rule="!has(self.tags) || self.tags.all(k, !k.startsWith('pinery-'))",
        message="tag keys starting with 'pinery-' are reserved for the operator",
        field_path=".tags",
    ),
    CelRule(
        rule="!has(self.pod) || !has(self.pod.pods) || self.pod.pods == self.pod.replicas * self.pod.shards",
        message="pod.pods must equal shards x replicas; omit it to have it computed",
        field_path=".pod.pods",
    ),
)

VECTOR_INDEX = ResourceInfo(
    kind="VectorIndex",
    plural="vectorindexes",
    short_names=("vi",),
    description=(
        "A Pinecone vector index (serverless, pod-based or BYOC) managed by pinery: created, "
        "scaled, tagged, protected, adopted and deleted from this object."
    ),
    spec_model=VectorIndexSpec,
    status_model=VectorIndexStatus,
    spec_rules=SPEC_RULES,
    printer_columns=(
        PrinterColumn("Index", ".status.indexName", "string", "Name of the index in Pinecone."),
        PrinterColumn("Type", ".status.type", "string", "serverless, pod or byoc."),
        PrinterColumn("Phase", ".status.phase", "string", "Summary of the conditions."),
        PrinterColumn("Host", ".status.host", "string", "Data-plane host of the index."),
        PrinterColumn(
            "Age", ".metadata.creationTimestamp", "date", "Time since the object was created."
        ),
        PrinterColumn(
            "State", ".status.state", "string", "Pinecone's own state of the index.", priority=1
        ),
    ),
    root_rules=(
        CelRule(
            rule=(
                "has(self.spec.indexName) || (size(self.metadata.name) <= 45 && "
                "self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'))"
            ),
            message=(
                "metadata.name is not a valid Pinecone index name (1-45 lowercase letters, "
                "digits and '-'); set spec.indexName"
            ),
            field_path=".metadata.name",
        ),
    ),
    metadata_problems=metadata_problems,
)
