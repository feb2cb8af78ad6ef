"""API 2026-07's index model, translated to and from the emulator's records (pure).

No 2026-07 OpenAPI file is published; the wire format is what the `pinecone` 10.x SDK sends and
decodes. Each rule names where it comes from: a module of the 10.2.0 wheel (`pinecone/...`) or a
migration guide of pinecone-io/python-sdk (`v10-*.md`; docs/pinecone-api-versions.md lists them).

One store, two views: an index keeps its 2025-10 record (`spec`, `dimension`, `metric`,
`vector_type`, `embed`), so that 2025-10 clients describe it as before, plus `typed_schema` when
it was created under 2026-07. The 2026-07 view of an older index derives its schema from the
record (`schema_fields`).
"""

from __future__ import annotations

import uuid
from typing import Any

from pinery.local.pinecone import inference, render, request_validation, transitions
from pinery.local.pinecone.errors import bad_request, not_found, unprocessable

VERSION = "2026-07"

# pinecone/_internal/index_migration.py (reject_legacy_create_kwargs) quotes the server's refusal.
POD_REFUSED = "deployment_type 'pod' is not supported on this API version"
# pinecone/_internal/index_migration.py and v10-2026-07-index-model.md ("create_index").
FROM_SOURCE_REFUSED = "Creating an index from collection or backup is not yet supported"
# v10-2026-07-vector-models.md ("What actually fails"), the server's text verbatim.
DOCUMENTS_ONLY = (
    "This index has a document schema, so writes must go through the documents API. Use "
    "`POST /namespaces/{namespace}/documents/upsert`, `/update` or `/delete` with the "
    "`X-Pinecone-API-Version` header set to `2026-07` or later. The vectors and records write "
    "endpoints do not support document schemas.")
# v10-2026-07-vector-models.md (warning on SparseNotSupported), the server's (stale) text.
SPARSE_NOT_SUPPORTED = ("Index configuration does not support sparse values - only indexes that are sparse "
                        "or using dotproduct are supported")
# pinecone/_internal/legacy_index_translation.py: DENSE_FIELD, SPARSE_FIELD, the reserved names the
# vectors API addresses values by; legacy_vector_schema() declares them for `create(dimension=...)`.
DENSE_FIELD = "_values"
SPARSE_FIELD = "_sparse_values"
RESERVED = {DENSE_FIELD: "dense_vector", SPARSE_FIELD: "sparse_vector"}

# pinecone/models/indexes/requests.py CreateIndexRequest / ConfigureIndexRequest; the bodies are
# closed (v10-2026-07-db-control.md: `additionalProperties: false`; the server rejects unknown
# PATCH fields, v10-2026-07-index-model.md "configure_index").
CREATE_KEYS = ("schema", "name", "deployment", "read_capacity", "deletion_protection", "tags",
               "source_collection", "source_backup_id", "cmek_id")
CONFIGURE_KEYS = ("schema", "deployment", "read_capacity", "deletion_protection", "tags")
# pinecone/models/backups/model.py CreateIndexFromBackupRequest.
FROM_BACKUP_KEYS = ("name", "tags", "deletion_protection", "read_capacity")

# pinecone/models/indexes/schema.py: the field structs and the keys each carries.
FIELD_KEYS = {
    "dense_vector": ("type", "dimension", "metric", "description"),
    "sparse_vector": ("type", "description"),
    "string": ("type", "description", "filterable", "full_text_search", "embed", "sparse_embed", "store_text"),
    "string_list": ("type", "description", "filterable"),
    "boolean": ("type", "description", "filterable"),
    "integer": ("type", "description", "filterable"),
    "float": ("type", "description", "filterable"),
    "semantic_text": ("type", "model", "metric", "description", "read_parameters", "write_parameters"),
}
SCALAR_TYPES = ("string_list", "boolean", "integer", "float")
# v10-2026-07-db-data-breaking-changes.md row 3: the server requires `filterable` on these.
FILTERABLE_REQUIRED = ("boolean", "float", "string_list")
MAX_FIELD_NAME_BYTES = 64  # pinecone/models/indexes/requests.py validate_schema_field_name


def closed(body: dict[str, Any], allowed: tuple[str, ...], type_name: str) -> None:
    """Refuse keys a closed request body does not declare (serde's wording)."""
    for key in body:
        if key not in allowed:
            raise bad_request(f"Invalid {type_name}: unknown field `{key}`, expected one of "
                              + ", ".join(f"`{k}`" for k in allowed))


# -- schema ------------------------------------------------------------------------------------
def _check_field_name(name: Any) -> str:
    # pinecone/models/indexes/requests.py validate_schema_field_name: 1-64 UTF-8 bytes.
    if not isinstance(name, str) or not 1 <= len(name.encode("utf-8", "surrogatepass")) <= MAX_FIELD_NAME_BYTES:
        raise bad_request(f"Invalid schema field name {name!r}: field names must be 1-64 bytes.")
    return name


def _check_field(name: str, raw: Any) -> dict[str, Any]:
    where = f"schema.fields.{name}"
    if not isinstance(raw, dict):
        raise unprocessable(f"invalid type for `{where}`: expected a field object")
    kind = raw.get("type")
    if kind is None:
        # A 9.x metadata schema ({"filterable": true} without a type): metadata is indexed at
        # upsert and may not be declared (v10-2026-07-index-model.md; pinecone/client/indexes.py
        # _reject_legacy_metadata_schema).
        raise bad_request(f"Schema field '{name}' has no type. Metadata fields are not declared at create "
                          "time in API 2026-07; they are indexed automatically at upsert.")
    if kind not in FIELD_KEYS:
        raise unprocessable(f"unknown variant `{kind}` in `{where}.type`, expected one of "
                            + ", ".join(f"`{k}`" for k in FIELD_KEYS))
    if kind == "semantic_text":
        # v10-migration.md ("Renames where the shape also changed"): SemanticTextField can't be
        # declared at create time on 2026-07; it appears in responses only.
        raise bad_request(f"Schema field '{name}': semantic_text fields cannot be declared when creating an "
                          "index; use POST /indexes/create-for-model.")
    if name.startswith("_") and RESERVED.get(name) != kind:
        # v10-2026-07-vector-models.md: validate_field_name rejects `_`-prefixed names; the
        # reserved `_values`/`_sparse_values` (legacy_index_translation.py) are what the SDK's
        # `create(dimension=...)` sends, each with its own vector type.
        raise bad_request(f"Invalid schema field name '{name}': names starting with '_' are reserved.")
    field = dict(raw)
    if kind == "sparse_vector":
        # v10-2026-07-db-data-breaking-changes.md row 4: a `metric` on a sparse field was
        # accepted and dropped; a dimension has no meaning.
        field.pop("metric", None)
        if "dimension" in field:
            raise bad_request(f"Schema field '{name}': a sparse_vector field takes no dimension.")
    for key in field:
        if key not in FIELD_KEYS[kind]:
            raise bad_request(f"Invalid schema field '{name}': unknown field `{key}` for type {kind}, "
                              "expected one of " + ", ".join(f"`{k}`" for k in FIELD_KEYS[kind]))
    description = field.get("description")
    if description is not None and not isinstance(description, str):
        raise unprocessable(f"invalid type for `{where}.description`: expected a string")
    if kind == "dense_vector":
        # pinecone/models/indexes/schema.py DenseVectorField: dimension and metric required.
        for key in ("dimension", "metric"):
            if field.get(key) is None:
                raise unprocessable(f"missing field `{key}` in `{where}`")
        dimension = field["dimension"]
        if not isinstance(dimension, int) or isinstance(dimension, bool):
            raise unprocessable(f"invalid type for `{where}.dimension`: expected an integer")
        if not 1 <= dimension <= 20000:
            raise bad_request(f"Dimension must be between 1 and 20000 (got {dimension}).")
        if field["metric"] not in request_validation.METRICS:
            raise bad_request(f"metric must be one of: {', '.join(request_validation.METRICS)} (got '{field['metric']}').")
    if kind in FILTERABLE_REQUIRED and "filterable" not in field:
        raise unprocessable(f"missing field `filterable` in `{where}`")
    if "filterable" in field and not isinstance(field["filterable"], bool):
        raise unprocessable(f"invalid type for `{where}.filterable`: expected a boolean")
    if kind == "string":
        field = _string_field(name, field)
    return field


# -- string fields: full-text search and integrated embedding ----------------------------------
# pinecone/models/indexes/schema.py FieldEmbedConfig / FieldSparseEmbedConfig: every key is
# optional; the server defaults are llama-text-embed-v2 and pinecone-sparse-english-v0.
DEFAULT_EMBED_MODEL = "llama-text-embed-v2"
DEFAULT_SPARSE_EMBED_MODEL = "pinecone-sparse-english-v0"
SEARCH_KEYS = ("full_text_search", "embed", "sparse_embed")
# schema.py FullTextSearchConfig: language defaults to English, stemming and stop_words to off.
DEFAULT_LANGUAGE = "en"


def _string_field(name: str, field: dict[str, Any]) -> dict[str, Any]:
    """A `string` field, checked and resolved as describe reports it (schema.py StringField):
    `full_text_search` with its resolved language/stemming/stop_words whenever the text is stored,
    `embed`/`sparse_embed` with every omitted key filled in from the model, and `store_text`."""
    where = f"schema.fields.{name}"
    for key in SEARCH_KEYS:
        if field.get(key) is not None and not isinstance(field[key], dict):
            raise unprocessable(f"invalid type for `{where}.{key}`: expected an object")
    store_text = field.get("store_text")
    if store_text is not None and not isinstance(store_text, bool):
        raise unprocessable(f"invalid type for `{where}.store_text`: expected a boolean")
    searched = [key for key in SEARCH_KEYS if field.get(key) is not None]
    if not searched:
        # schema.py StringField: "A string field you declare on create must carry at least one
        # search configuration"; text only filtered on is upserted, not declared.
        raise bad_request(f"Schema field '{name}': a string field needs full_text_search, embed or sparse_embed. "
                          "Text you only filter on is not declared; it is indexed automatically at upsert.")
    if "filterable" in field:
        # schema.py _encode_schema_for_request: the server rejects `filterable` on a search field,
        # even false ("A field is filtered or searched, not both").
        raise bad_request(f"Schema field '{name}': filterable cannot be set on a field with "
                          f"{', '.join(searched)}; a field is filtered or searched, not both.")
    if store_text is False:
        # schema.py StringField ("Stored text"): false only with embed or sparse_embed, and never
        # together with full_text_search.
        if field.get("embed") is None and field.get("sparse_embed") is None:
            raise bad_request(f"Schema field '{name}': store_text false needs embed or sparse_embed.")
        if field.get("full_text_search") is not None:
            raise bad_request(f"Schema field '{name}': store_text false cannot be combined with "
                              "full_text_search, which searches the stored text.")
    out: dict[str, Any] = {"type": "string"}
    if field.get("description") is not None:
        out["description"] = field["description"]
    if store_text is not False:
        # "stored text is always indexed for full-text search: declare only embed and describe
        # reports full_text_search with default settings as well" (schema.py StringField).
        out["full_text_search"] = _full_text(name, field.get("full_text_search") or {})
    if field.get("embed") is not None:
        out["embed"] = _embed_config(name, field["embed"], "dense")
    if field.get("sparse_embed") is not None:
        out["sparse_embed"] = _embed_config(name, field["sparse_embed"], "sparse")
    out["store_text"] = store_text is not False
    return out


def _full_text(name: str, raw: dict[str, Any]) -> dict[str, Any]:
    """schema.py FullTextSearchConfig / NgramConfig; responses report language, stemming and
    stop_words resolved. The emulator's analyser ignores all of them (docs/local-mode.md)."""
    where = f"schema.fields.{name}.full_text_search"
    closed(raw, ("language", "stemming", "stop_words", "ngram"), where)
    language = raw.get("language") or DEFAULT_LANGUAGE
    if not isinstance(language, str):
        raise unprocessable(f"invalid type for `{where}.language`: expected a string")
    out: dict[str, Any] = {"language": language.lower()}
    for key in ("stemming", "stop_words"):
        value = raw.get(key)
        if value is not None and not isinstance(value, bool):
            raise unprocessable(f"invalid type for `{where}.{key}`: expected a boolean")
        out[key] = bool(value)
    if out["stop_words"] and not out["stemming"]:
        raise bad_request(f"{where}: stop_words requires stemming.")  # FullTextSearchConfig.stop_words
    ngram = raw.get("ngram")
    if ngram is not None:
        if not isinstance(ngram, dict):
            raise unprocessable(f"invalid type for `{where}.ngram`: expected an object")
        closed(ngram, ("min_gram", "max_gram", "prefix_only"), f"{where}.ngram")
        low, high = ngram.get("min_gram"), ngram.get("max_gram")
        for key, value in (("min_gram", low), ("max_gram", high)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise unprocessable(f"missing field `{key}` in `{where}.ngram`")
        assert isinstance(low, int) and isinstance(high, int)  # checked just above
        if not 1 <= low <= high:
            raise bad_request(f"{where}.ngram: min_gram must be at least 1 and no more than max_gram.")
        if out["stemming"] or out["stop_words"]:
            # FullTextSearchConfig.ngram: "Mutually exclusive with stemming and stop_words".
            raise bad_request(f"{where}: ngram cannot be combined with stemming or stop_words.")
        out["ngram"] = {"min_gram": low, "max_gram": high, "prefix_only": bool(ngram.get("prefix_only", False))}
    return out


def _embed_config(name: str, raw: dict[str, Any], vector_type: str) -> dict[str, Any]:
    """An `embed` (dense) or `sparse_embed` config resolved from inference.py's catalogue: the
    model (default above), for dense its dimension (one the model supports; default the model's)
    and metric (one it supports, lower-cased; default its first, cosine for both dense models),
    and write/read parameters merged with the model's defaults (schema.py FieldEmbedConfig:
    "Describe reports the resolved configuration, with every omitted key filled in")."""
    key = "embed" if vector_type == "dense" else "sparse_embed"
    where = f"schema.fields.{name}.{key}"
    dense = vector_type == "dense"
    closed(raw, ("model", "dimension", "metric", "write_parameters", "read_parameters") if dense
           else ("model", "write_parameters", "read_parameters"), where)
    model = inference.embedding_model(raw.get("model") or (DEFAULT_EMBED_MODEL if dense else DEFAULT_SPARSE_EMBED_MODEL),
                                      vector_type, where)
    given = {which: raw.get(which) or {} for which in ("write_parameters", "read_parameters")}
    for which, params in given.items():
        if not isinstance(params, dict):
            raise unprocessable(f"invalid type for `{where}.{which}`: expected an object")
    out: dict[str, Any] = {"model": model.name}
    dimension = None
    if dense:
        dimension = raw.get("dimension") or given["write_parameters"].get("dimension") \
            or given["read_parameters"].get("dimension") or model.default_dimension
        metric = raw.get("metric") or model.supported_metrics[0]
        if not isinstance(metric, str):
            raise unprocessable(f"invalid type for `{where}.metric`: expected a string")
        out["dimension"] = inference.check_dimension(model, dimension, where)
        out["metric"] = inference.check_metric(model, metric.lower(), where)
    out["write_parameters"] = inference.field_parameters(model, given["write_parameters"], "passage", dimension)
    out["read_parameters"] = inference.field_parameters(model, given["read_parameters"], "query", dimension)
    return out


def embed_fields(schema: dict[str, Any]) -> tuple[str | None, str | None]:
    """The names of the string fields with `embed` and with `sparse_embed` (None when none)."""
    fields = schema["fields"]
    dense = next((n for n, f in fields.items() if f.get("type") == "string" and f.get("embed")), None)
    sparse = next((n for n, f in fields.items() if f.get("type") == "string" and f.get("sparse_embed")), None)
    return dense, sparse


def text_searchable(field: dict[str, Any]) -> bool:
    """A string field whose text is stored and full-text searchable: one with full_text_search,
    or with embed/sparse_embed and the default store_text (documents/requests.py SearchDocumentsRequest.filter)."""
    return field.get("type") == "string" and field.get("store_text") is not False and \
        any(field.get(key) is not None for key in SEARCH_KEYS)


def check_schema(raw: Any) -> dict[str, Any]:
    """A 2026-07 create `schema`, checked; the stored typed schema."""
    if not isinstance(raw, dict) or not isinstance(raw.get("fields"), dict):
        raise unprocessable("missing field `fields` in `schema`")
    closed(raw, ("fields",), "schema")
    if not raw["fields"]:
        # pinecone/client/indexes.py _require_fields_dict: at least one field.
        raise bad_request("schema.fields cannot be empty: declare at least one field.")
    fields = {_check_field_name(name): _check_field(name, cfg) for name, cfg in raw["fields"].items()}
    for kind in ("dense_vector", "sparse_vector"):
        if sum(1 for f in fields.values() if f["type"] == kind) > 1:
            raise bad_request(f"The local Pinecone emulator serves at most one {kind} field per index.")
    for kind, key in (("dense_vector", "embed"), ("sparse_vector", "sparse_embed")):
        # schema.py FieldEmbedConfig / FieldSparseEmbedConfig: an embed (sparse_embed) field takes
        # the index's one dense (sparse) vector slot.
        users = [n for n, f in fields.items() if f["type"] == kind or (f["type"] == "string" and f.get(key))]
        if len(users) > 1 and any(fields[n]["type"] == "string" for n in users):
            raise bad_request(f"Schema fields {', '.join(repr(n) for n in users)}: an index has one {kind.split('_')[0]} "
                              f"vector slot, and a string field with {key} takes it; declare {key} on one field "
                              f"and no {kind} field beside it.")
    return {"fields": fields}


def vector_fields(schema: dict[str, Any]) -> tuple[str | None, str | None]:
    """The names of the dense_vector and sparse_vector fields of a typed schema."""
    dense = next((n for n, f in schema["fields"].items() if f.get("type") == "dense_vector"), None)
    sparse = next((n for n, f in schema["fields"].items() if f.get("type") == "sparse_vector"), None)
    return dense, sparse


def is_document_index(typed_schema: dict[str, Any] | None) -> bool:
    """Whether an index is served by the documents API for writes.

    v10-2026-07-vector-models.md: the one schema shape that keeps the vectors API holds nothing
    beyond the reserved `_values` / `_sparse_values`; every other 2026-07 schema is a document
    schema. Indexes created before 2026-07 have no typed schema.
    """
    return typed_schema is not None and any(name not in RESERVED for name in typed_schema["fields"])


def declares_sparse(typed_schema: dict[str, Any]) -> bool:
    """v10-2026-07-vector-models.md ("The rule"): sparse reads and writes on a 2026-07 index need a
    declared sparse_vector field, whatever the dense field's metric."""
    return vector_fields(typed_schema)[1] is not None


def schema_fields(dimension: int | None, metric: str | None, vector_type: str | None,
                  spec_inner: dict[str, Any] | None, embed: dict[str, Any] | None,
                  legacy_schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """The 2026-07 schema of a record made before 2026-07.

    The vector goes under the reserved name (legacy_index_translation.py legacy_vector_schema); an
    integrated index shows its embedding as a semantic_text field named after the field_map text
    entry (pinecone/models/indexes/index.py IndexModel.embed); legacy metadata fields come without
    `type` (v10-2026-07-index-model.md "Behavior notes", schema.py LegacyMetadataField).
    """
    fields: dict[str, Any] = {}
    if embed:
        name = (embed.get("field_map") or {}).get("text") or "text"
        fields[name] = {"type": "semantic_text", "model": embed["model"], "metric": embed.get("metric"),
                        "read_parameters": embed.get("read_parameters"),
                        "write_parameters": embed.get("write_parameters")}
    elif vector_type == "sparse":
        fields[SPARSE_FIELD] = {"type": "sparse_vector"}
    else:
        fields[DENSE_FIELD] = {"type": "dense_vector", "dimension": dimension, "metric": metric}
    inner = spec_inner or {}
    metadata = legacy_schema if legacy_schema is not None else inner.get("schema")
    for name, cfg in ((metadata or {}).get("fields") or {}).items():
        fields.setdefault(name, {"filterable": bool(cfg.get("filterable", True))})
    for name in (inner.get("metadata_config") or {}).get("indexed") or []:
        fields.setdefault(name, {"filterable": True})
    return {"fields": fields}


def record_schema(rec: Any) -> dict[str, Any]:
    """The typed schema of an index record, declared or derived."""
    if getattr(rec, "typed_schema", None):
        return rec.typed_schema
    return schema_fields(rec.dimension, rec.metric, rec.vector_type, next(iter(rec.spec.values())), rec.embed)


def render_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A schema as responses show it: `description` always present, null when unset
    (v10-2026-07-index-model.md "Behavior notes"); untyped legacy fields as they are."""
    out = {}
    for name, field in schema["fields"].items():
        if "type" not in field:
            out[name] = dict(field)
            continue
        shown = {key: field.get(key) for key in FIELD_KEYS[field["type"]] if key in field or key == "description"}
        if field["type"] in SCALAR_TYPES:
            shown.setdefault("filterable", False)
        out[name] = shown
    return {"fields": out}


# -- create ------------------------------------------------------------------------------------
def _deployment(raw: Any) -> dict[str, Any]:
    """The internal spec of a 2026-07 `deployment` (pinecone/models/indexes/deployment.py)."""
    if raw is None:
        # pinecone/client/indexes.py Indexes.create: "Defaults to a managed index on AWS us-east-1
        # when omitted".
        raw = {"deployment_type": "managed", "cloud": "aws", "region": "us-east-1"}
    if not isinstance(raw, dict):
        raise unprocessable("invalid type for `deployment`: expected an object")
    kind = raw.get("deployment_type")
    if kind is None:
        raise unprocessable("missing field `deployment_type` in `deployment`")
    if kind == "managed":
        closed(raw, ("deployment_type", "cloud", "region"), "deployment")
        cloud, region = raw.get("cloud"), raw.get("region")
        for key, value in (("cloud", cloud), ("region", region)):
            if not isinstance(value, str):
                raise unprocessable(f"missing field `{key}` in `deployment`")
        if cloud not in request_validation.CLOUDS:
            raise bad_request(f"deployment.cloud must be one of: {', '.join(request_validation.CLOUDS)} (got '{cloud}').")
        if region not in request_validation.SERVERLESS_REGIONS[cloud]:
            raise not_found(f"Resource cloud: {cloud} region: {region} not found.")
        return {"serverless": {"cloud": cloud, "region": region}}
    if kind == "byoc":
        closed(raw, ("deployment_type", "environment"), "deployment")
        environment = raw.get("environment")
        if not isinstance(environment, str) or not environment:
            raise unprocessable("missing field `environment` in `deployment`")
        return {"byoc": {"environment": environment}}
    if kind == "pod":
        # v10-2026-07-index-model.md: pod deployments need environment, pod_type, replicas and
        # shards (omission 422); index_migration.py: the server then refuses pod creation (400).
        closed(raw, ("deployment_type", "environment", "pod_type", "replicas", "shards"), "deployment")
        for key in ("environment", "pod_type", "replicas", "shards"):
            if raw.get(key) is None:
                raise unprocessable(f"missing field `{key}` in `deployment`")
        raise bad_request(POD_REFUSED)
    raise unprocessable(f"unknown variant `{kind}` in `deployment.deployment_type`, expected one of "
                        "`managed`, `pod`, `byoc`")


def check_create(body: Any) -> dict[str, Any]:
    """The fields of a new index record from a 2026-07 CreateIndexRequest."""
    body = request_validation.require_object(body, "CreateIndexRequest")
    closed(body, CREATE_KEYS, "CreateIndexRequest")
    if body.get("source_collection") is not None or body.get("source_backup_id") is not None:
        raise bad_request(FROM_SOURCE_REFUSED)
    if body.get("schema") is None:
        raise unprocessable("missing field `schema`")
    spec = _deployment(body.get("deployment"))
    schema = check_schema(body["schema"])
    name = body.get("name")
    if name is None:
        # pinecone/client/indexes.py Indexes.create: "The server assigns a name when omitted."
        name = f"index-{uuid.uuid4().hex[:12]}"
    elif not isinstance(name, str):
        raise unprocessable("invalid type for `name`: expected a string")
    request_validation.check_name(name)
    kind = next(iter(spec))
    spec[kind]["read_capacity"] = request_validation.check_read_capacity(body.get("read_capacity"), "index") or {"mode": "OnDemand"}
    cmek_id = body.get("cmek_id")
    if cmek_id is not None and not isinstance(cmek_id, str):
        raise unprocessable("invalid type for `cmek_id`: expected a string")
    dense, sparse = vector_fields(schema)
    embedded, _ = embed_fields(schema)
    if dense is not None:
        dimension, metric, vector_type = schema["fields"][dense]["dimension"], schema["fields"][dense]["metric"], "dense"
    elif embedded is not None:  # the embed field holds the index's dense vectors
        config = schema["fields"][embedded]["embed"]
        dimension, metric, vector_type = config["dimension"], config["metric"], "dense"
    else:
        dimension, metric, vector_type = None, "dotproduct", "sparse"
    return {
        "name": name, "spec": spec, "dimension": dimension, "metric": metric, "vector_type": vector_type,
        "deletion_protection": request_validation.check_protection(body) or "disabled",
        "tags": request_validation.check_tags(body) or None, "typed_schema": schema, "cmek_id": cmek_id,
    }


# -- configure ---------------------------------------------------------------------------------
def check_configure(body: Any, rec: Any) -> dict[str, Any]:
    """A 2026-07 ConfigureIndexRequest as the change dict the 2025-10 handler applies
    (request_validation.check_configure's shape): `deployment: {replicas, pod_type}` without
    deployment_type, top-level `read_capacity`, no `embed` (v10-2026-07-index-model.md
    "configure_index"; pinecone/client/indexes.py Indexes.configure)."""
    body = request_validation.require_object(body, "ConfigureIndexRequest")
    closed(body, CONFIGURE_KEYS, "ConfigureIndexRequest")
    out: dict[str, Any] = {}
    deployment = body.get("deployment")
    if deployment is not None:
        if not isinstance(deployment, dict):
            raise unprocessable("invalid type for `deployment`: expected an object")
        if "deployment_type" in deployment:
            raise bad_request("deployment_type cannot be changed after creation; send only replicas and pod_type.")
        closed(deployment, ("replicas", "pod_type"), "deployment")
        if rec.kind != "pod":
            raise bad_request(f"Index {rec.name} is not a pod index; deployment scaling applies to pod indexes only.")
        pod: dict[str, Any] = {}
        if deployment.get("replicas") is not None:
            pod["replicas"] = request_validation._positive(deployment, "replicas", "deployment", 1)
        if deployment.get("pod_type") is not None:
            pod["pod_type"] = request_validation.check_pod_type(deployment["pod_type"], "deployment.pod_type")
        out["spec"] = {"pod": pod}
    if body.get("read_capacity") is not None:
        if rec.kind == "pod":
            raise bad_request(f"Index {rec.name} is a pod index; read_capacity applies to managed and BYOC indexes.")
        out["spec"] = {rec.kind: {"read_capacity": request_validation.check_read_capacity(body["read_capacity"], "index")}}
    if body.get("schema") is not None:
        out["embed"] = _semantic_patch(body["schema"], rec)
    protection = request_validation.check_protection(body)
    if protection:
        out["deletion_protection"] = protection
    tags = request_validation.check_tags(body, allow_empty_values=True)
    if tags is not None:
        out["tags"] = tags
    return out


def _semantic_patch(raw: Any, rec: Any) -> dict[str, Any]:
    """v10-2026-07-vector-models.md: configure's schema patch has exactly one variant,
    semantic_text (read/write parameters), under deny_unknown_fields."""
    if not isinstance(raw, dict) or not isinstance(raw.get("fields"), dict) or len(raw["fields"]) != 1:
        raise bad_request("schema must name exactly one semantic_text field to configure.")
    name, patch = next(iter(raw["fields"].items()))
    if not isinstance(patch, dict) or patch.get("type", "semantic_text") != "semantic_text":
        raise bad_request("Only semantic_text fields can be configured; the schema cannot change otherwise.")
    closed(patch, ("type", "read_parameters", "write_parameters"), f"schema field '{name}'")
    current = record_schema(rec)["fields"].get(name)
    if current is None or current.get("type") != "semantic_text":
        raise bad_request(f"Index {rec.name} has no semantic_text field '{name}'.")
    return {key: patch[key] for key in ("read_parameters", "write_parameters") if isinstance(patch.get(key), dict)}


def check_from_backup(body: Any) -> None:
    """A 2026-07 CreateIndexFromBackupRequest is closed; its `read_capacity` is declared but ignored
    by the server (v10-2026-07-backup-models.md, docs/pinecone-api-versions.md "Backups")."""
    body = request_validation.require_object(body if body is not None else {}, "CreateIndexFromBackupRequest")
    closed(body, FROM_BACKUP_KEYS, "CreateIndexFromBackupRequest")
    if body.get("read_capacity") is not None:
        request_validation.check_read_capacity(body["read_capacity"], "index")


# -- responses ---------------------------------------------------------------------------------
def read_capacity(raw: dict[str, Any] | None, state: str = transitions.READ_CAPACITY_READY,
                  in_effect: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """pinecone/models/indexes/read_capacity.py; `current_*` always present, null for on-demand
    (v10-2026-07-index-model.md "Behavior notes"). The same record as 2025-10's
    (render.read_capacity): `state` Scaling/Migrating with the old counts until a change is in effect."""
    if raw is None:
        return None
    out = render.read_capacity(raw, state, in_effect)
    out["status"].setdefault("current_shards", None)
    out["status"].setdefault("current_replicas", None)
    return out


def deployment(spec: dict[str, Any]) -> dict[str, Any]:
    """pinecone/models/indexes/deployment.py: ManagedDeployment, PodDeployment, ByocDeployment."""
    kind, inner = next(iter(spec.items()))
    if kind == "serverless":
        return {"deployment_type": "managed", "cloud": inner["cloud"], "region": inner["region"]}
    if kind == "pod":
        return {"deployment_type": "pod", "environment": inner["environment"], "pod_type": inner["pod_type"],
                "replicas": inner["replicas"], "shards": inner["shards"]}
    return {"deployment_type": "byoc", "environment": inner["environment"]}


def index(rec: Any, base_url: str) -> dict[str, Any]:
    """The 2026-07 IndexModel of a record (pinecone/models/indexes/index.py IndexModel): no
    dimension/metric/vector_type/spec/embed/created_at; `tags` null when none."""
    inner = next(iter(rec.spec.values()))
    return {
        "name": rec.name,
        "host": render.index_host(base_url, rec.project, rec.name),
        "status": render.index_status(rec),
        "schema": render_schema(record_schema(rec)),
        "deployment": deployment(rec.spec),
        "deletion_protection": rec.deletion_protection,
        "read_capacity": (read_capacity(inner.get("read_capacity"), rec.read_capacity_state,
                                        rec.read_capacity_in_effect) if rec.kind != "pod" else None),
        "tags": dict(rec.tags) if rec.tags else None,
        "source_collection": inner.get("source_collection"),
        "source_backup_id": getattr(rec, "source_backup_id", None),
        "cmek_id": getattr(rec, "cmek_id", None),
    }


def backup(bkp: Any) -> dict[str, Any]:
    """The 2026-07 BackupModel (pinecone/models/backups/model.py; v10-2026-07-backup-models.md):
    no dimension or metric, `schema` is the typed index schema, plus source_index_deleted_at (when
    the source index was deleted, null while it exists); `tags` null when the source had none
    ("the API returns "tags": null rather than {}")."""
    body = render.backup(bkp)
    body.pop("dimension", None)
    body.pop("metric", None)
    schema = getattr(bkp, "typed_schema", None) or schema_fields(
        bkp.dimension, bkp.metric, bkp.vector_type, None, getattr(bkp, "embed", None), bkp.schema)
    body["schema"] = render_schema(schema)
    deleted = getattr(bkp, "source_index_deleted_at", None)
    body["source_index_deleted_at"] = render.iso(deleted) if deleted is not None else None
    body.setdefault("tags", None)
    return body


def restore_job(job: Any) -> dict[str, Any]:
    """The 2026-07 RestoreJobModel (pinecone/models/backups/model.py; client/restore_jobs.py
    RestoreJobs.describe): status `Pending`, `Completed`, `Failed` or `Cancelled`, "There is no
    in-progress value: a restore that is actively running reports Pending"; `percent_complete`
    "100 once status is Completed, and None before that", `completed_at` None until then."""
    body = render.restore_job(job)
    if body["status"] == "InProgress":
        body["status"] = "Pending"
    body["percent_complete"] = 100.0 if body["status"] == "Completed" else None
    body.setdefault("completed_at", None)
    return body


# -- data plane --------------------------------------------------------------------------------
def clean_metadata(raw: Any) -> Any:
    """2026-07 metadata on write: null values are dropped, `$`-prefixed keys refused
    (v10-2026-07-vector-models.md "What does not raise", "Metadata keys")."""
    if not isinstance(raw, dict):
        return raw
    for key in raw:
        if isinstance(key, str) and key.startswith("$"):
            raise bad_request(f"Metadata field '{key}' cannot start with '$'")
    return {key: value for key, value in raw.items() if value is not None}


def check_vector_write(rec: Any) -> None:
    """Vector-API writes to a document-schema index are refused (v10-2026-07-vector-models.md)."""
    if is_document_index(getattr(rec, "typed_schema", None)):
        raise bad_request(DOCUMENTS_ONLY)


# v10-2026-07-db-data-breaking-changes.md row 2: a non-empty stats filter is rejected for every
# index type.
STATS_FILTER_REFUSED = "Describing index stats with a metadata filter is not supported."


def closed_query(body: dict[str, Any]) -> None:
    """v10-2026-07-vector-models.md section 1: `queries` (and QueryVector) are gone; sending it is a 400."""
    if "queries" in body:
        raise bad_request("Invalid QueryRequest: unknown field `queries`; the multi-query form was removed "
                          "in API 2026-07. Send one query per request with `vector`, `sparseVector` or `id`.")
