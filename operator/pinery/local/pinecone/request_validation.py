"""Validation of control-plane request bodies (pure), with Pinecone's status codes.

422 when the body cannot be read as the request type (missing field, wrong JSON type), 400 when
it can but a value is invalid, 404 for an unknown cloud/region or environment.
"""

from __future__ import annotations

import re
from typing import Any

from pinery.local.pinecone.errors import ApiError, bad_request, not_found, unprocessable
from pinery.local.pinecone.transitions import pod_size

NAME_RE = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")
TAG_KEY_RE = re.compile(r"^[a-zA-Z0-9_-]+$")
METRICS = ("cosine", "euclidean", "dotproduct")
CLOUDS = ("gcp", "aws", "azure")
VECTOR_TYPES = ("dense", "sparse")
PROTECTION = ("enabled", "disabled")

SERVERLESS_REGIONS = {
    "aws": ("us-east-1", "us-west-2", "eu-west-1"),
    "gcp": ("us-central1", "europe-west4"),
    "azure": ("eastus2",),
}
POD_ENVIRONMENTS = (
    "us-east-1-aws", "us-east1-aws", "eu-west1-aws", "us-east1-gcp", "us-west1-gcp", "us-central1-gcp", "us-west4-gcp",
    "us-east4-gcp", "eu-west1-gcp", "eu-west4-gcp", "northamerica-northeast1-gcp", "asia-northeast1-gcp",
    "asia-southeast1-gcp", "asia-southeast1-gcp-free", "gcp-starter", "eastus-azure",
)
EMBED_MODELS: dict[str, dict[str, Any]] = {
    "multilingual-e5-large": {"dimension": 1024, "metric": "cosine", "vector_type": "dense", "dimensions": (1024,)},
    "llama-text-embed-v2": {"dimension": 1024, "metric": "cosine", "vector_type": "dense",
                            "dimensions": (384, 512, 768, 1024, 2048)},
    "pinecone-sparse-english-v0": {"dimension": None, "metric": "dotproduct", "vector_type": "sparse",
                                   "dimensions": ()},
}
NODE_TYPES = ("b1", "t1")


def require_object(body: Any, type_name: str) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise unprocessable(f"invalid type: expected struct {type_name}")
    return body


def _typed(body: dict, key: str, kind, type_label: str, required: bool = False):
    if key not in body or body[key] is None:
        if required:
            raise unprocessable(f"missing field `{key}`")
        return None
    value = body[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise unprocessable(f"invalid type for `{key}`: expected {type_label}")
    return value


def check_name(name: str, what: str = "Name") -> str:
    if not 1 <= len(name) <= 45 or not NAME_RE.fullmatch(name):
        raise bad_request(
            f"{what} '{name}' is invalid: it must be 1 to 45 characters, consist of lower case "
            "alphanumeric characters or '-', and start and end with an alphanumeric character.")
    return name


def check_protection(body: dict) -> str | None:
    value = _typed(body, "deletion_protection", str, "a string")
    if value is not None and value not in PROTECTION:
        raise bad_request(f"deletion_protection must be one of: enabled, disabled (got '{value}').")
    return value


def check_tags(body: dict, allow_empty_values: bool = False) -> dict[str, str] | None:
    tags = _typed(body, "tags", dict, "a map of strings")
    if tags is None:
        return None
    if len(tags) > 20:
        raise bad_request("An index can have at most 20 tags.")
    for key, value in tags.items():
        if not isinstance(value, str):
            raise unprocessable(f"invalid type for tag `{key}`: expected a string")
        if not TAG_KEY_RE.fullmatch(key) or len(key) > 80:
            raise bad_request(
                f"Tag key '{key}' is invalid: use at most 80 characters, letters, digits, '_' or '-'.")
        if len(value) > 120 or (not value and not allow_empty_values):
            raise bad_request(f"Tag value of '{key}' must be 1 to 120 characters.")
    return dict(tags)


def check_read_capacity(raw: Any, where: str) -> dict[str, Any] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise unprocessable(f"invalid type for `{where}.read_capacity`: expected struct ReadCapacity")
    mode = raw.get("mode")
    if mode == "OnDemand":
        extra = sorted(set(raw) - {"mode"})
        if extra:
            raise bad_request(f"{where}.read_capacity: mode OnDemand takes no other fields (got {', '.join(extra)}).")
        return {"mode": "OnDemand"}
    if mode != "Dedicated":
        raise bad_request(f"{where}.read_capacity.mode must be OnDemand or Dedicated (got {mode!r}).")
    dedicated = raw.get("dedicated")
    if not isinstance(dedicated, dict):
        raise unprocessable(f"missing field `dedicated` in `{where}.read_capacity`")
    node_type = dedicated.get("node_type", "b1")
    if node_type not in NODE_TYPES:
        raise bad_request(f"{where}.read_capacity.dedicated.node_type must be one of {', '.join(NODE_TYPES)} (got {node_type!r}).")
    manual = dedicated.get("manual") or {}
    if not isinstance(manual, dict):
        raise unprocessable(f"invalid type for `{where}.read_capacity.dedicated.manual`")
    replicas, shards = manual.get("replicas", 1), manual.get("shards", 1)
    for label, value, low in (("replicas", replicas, 0), ("shards", shards, 1)):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise bad_request(f"{where}.read_capacity.dedicated.manual.{label} must be an integer >= {low}.")
    return {"mode": "Dedicated", "dedicated": {
        "node_type": node_type, "scaling": dedicated.get("scaling", "Manual"),
        "manual": {"replicas": replicas, "shards": shards}}}


def check_schema(raw: Any, where: str) -> dict[str, Any] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("fields"), dict):
        raise unprocessable(f"missing field `fields` in `{where}.schema`")
    for key, value in raw["fields"].items():
        if not isinstance(value, dict) or not isinstance(value.get("filterable", True), bool):
            raise bad_request(f"{where}.schema.fields.{key} must be an object like {{\"filterable\": true}}.")
    return {"fields": {k: dict(v) for k, v in raw["fields"].items()}}


def _serverless(raw: dict) -> dict[str, Any]:
    cloud = _typed(raw, "cloud", str, "a string", required=True)
    region = _typed(raw, "region", str, "a string", required=True)
    if cloud not in CLOUDS:
        raise bad_request(f"spec.serverless.cloud must be one of: {', '.join(CLOUDS)} (got '{cloud}').")
    if region not in SERVERLESS_REGIONS[cloud]:
        raise not_found(f"Resource cloud: {cloud} region: {region} not found.")
    spec: dict[str, Any] = {"cloud": cloud, "region": region,
                            "read_capacity": check_read_capacity(raw.get("read_capacity"), "spec.serverless")
                            or {"mode": "OnDemand"}}
    if raw.get("source_collection") is not None:
        spec["source_collection"] = _typed(raw, "source_collection", str, "a string")
    schema = check_schema(raw.get("schema"), "spec.serverless")
    if schema:
        spec["schema"] = schema
    return spec


def check_pod_type(pod_type: Any, where: str) -> str:
    if not isinstance(pod_type, str) or pod_size(pod_type) is None:
        raise bad_request(f"{where} '{pod_type}' is invalid: use s1, p1 or p2 with .x1, .x2, .x4 or .x8 (e.g. p1.x1).")
    return pod_type


def _positive(raw: dict, key: str, where: str, default: int) -> int:
    value = raw.get(key, default)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool):
        raise unprocessable(f"invalid type for `{where}.{key}`: expected an integer")
    if value < 1:
        raise bad_request(f"{where}.{key} must be at least 1 (got {value}).")
    return value


def _pod(raw: dict) -> dict[str, Any]:
    environment = _typed(raw, "environment", str, "a string", required=True)
    if environment not in POD_ENVIRONMENTS:
        raise not_found(f"Resource environment: {environment} not found.")
    pod_type = check_pod_type(raw.get("pod_type") or "p1.x1", "spec.pod.pod_type")
    replicas = _positive(raw, "replicas", "spec.pod", 1)
    shards = _positive(raw, "shards", "spec.pod", 1)
    _positive(raw, "pods", "spec.pod", 1)
    spec: dict[str, Any] = {"environment": environment, "replicas": replicas, "shards": shards,
                            "pod_type": pod_type, "pods": replicas * shards}
    meta = raw.get("metadata_config")
    if meta is not None:
        indexed = meta.get("indexed") if isinstance(meta, dict) else None
        if not isinstance(indexed, list) or not all(isinstance(x, str) for x in indexed):
            raise unprocessable("invalid type for `spec.pod.metadata_config.indexed`: expected a list of strings")
        spec["metadata_config"] = {"indexed": list(indexed)}
    if raw.get("source_collection") is not None:
        spec["source_collection"] = _typed(raw, "source_collection", str, "a string")
    return spec


def _byoc(raw: dict) -> dict[str, Any]:
    environment = _typed(raw, "environment", str, "a string", required=True)
    if not environment:
        raise bad_request("spec.byoc.environment must not be empty.")
    spec: dict[str, Any] = {"environment": environment,
                            "read_capacity": check_read_capacity(raw.get("read_capacity"), "spec.byoc")
                            or {"mode": "OnDemand"}}
    schema = check_schema(raw.get("schema"), "spec.byoc")
    if schema:
        spec["schema"] = schema
    return spec


SPEC_KINDS = {"serverless": _serverless, "pod": _pod, "byoc": _byoc}


def check_spec(raw: Any) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise unprocessable("invalid type for `spec`: expected struct IndexSpec")
    kinds = [k for k in raw if k in SPEC_KINDS]
    unknown = [k for k in raw if k not in SPEC_KINDS]
    if unknown:
        raise unprocessable(f"unknown variant `{unknown[0]}` in `spec`, expected one of `serverless`, `pod`, `byoc`")
    if len(kinds) != 1:
        raise unprocessable("`spec` must have exactly one of `serverless`, `pod`, `byoc`")
    kind = kinds[0]
    inner = raw[kind]
    if not isinstance(inner, dict):
        raise unprocessable(f"invalid type for `spec.{kind}`: expected an object")
    return {kind: SPEC_KINDS[kind](inner)}


def check_create_index(body: Any) -> dict[str, Any]:
    """The fields of a new index from a CreateIndexRequest."""
    body = require_object(body, "CreateIndexRequest")
    name = check_name(_typed(body, "name", str, "a string", required=True))
    spec = check_spec(body.get("spec") if "spec" in body else _typed(body, "spec", dict, "", required=True))
    vector_type = _typed(body, "vector_type", str, "a string") or "dense"
    if vector_type not in VECTOR_TYPES:
        raise bad_request(f"vector_type must be one of: dense, sparse (got '{vector_type}').")
    metric = _typed(body, "metric", str, "a string")
    if metric is not None and metric not in METRICS:
        raise bad_request(f"metric must be one of: {', '.join(METRICS)} (got '{metric}').")
    dimension = _typed(body, "dimension", int, "an integer")
    if vector_type == "dense":
        if dimension is None:
            raise bad_request("Dimension must be provided for dense indexes.")
        if not 1 <= dimension <= 20000:
            raise bad_request(f"Dimension must be between 1 and 20000 (got {dimension}).")
        metric = metric or "cosine"
    else:
        if dimension is not None:
            raise bad_request("Sparse indexes must not have a dimension.")
        if metric not in (None, "dotproduct"):
            raise bad_request(f"Sparse indexes must use the dotproduct metric (got '{metric}').")
        if "pod" in spec:
            raise bad_request("Sparse indexes are not supported for pod-based indexes.")
        metric = "dotproduct"
    return {
        "name": name, "spec": spec, "dimension": dimension, "metric": metric, "vector_type": vector_type,
        "deletion_protection": check_protection(body) or "disabled", "tags": check_tags(body) or None,
    }


def check_create_for_model(body: Any) -> dict[str, Any]:
    body = require_object(body, "CreateIndexForModelRequest")
    name = check_name(_typed(body, "name", str, "a string", required=True))
    cloud = _typed(body, "cloud", str, "a string", required=True)
    region = _typed(body, "region", str, "a string", required=True)
    embed = _typed(body, "embed", dict, "struct Embed", required=True)
    model = _typed(embed, "model", str, "a string", required=True)
    field_map = _typed(embed, "field_map", dict, "an object", required=True)
    if model not in EMBED_MODELS:
        raise bad_request(f"Model '{model}' is not supported (supported: {', '.join(sorted(EMBED_MODELS))}).")
    info = EMBED_MODELS[model]
    metric = embed.get("metric") or info["metric"]
    if metric not in METRICS or (info["vector_type"] == "sparse" and metric != "dotproduct"):
        raise bad_request(f"embed.metric '{metric}' is not supported by model '{model}'.")
    dimension = embed.get("dimension") or info["dimension"]
    if info["dimensions"] and dimension not in info["dimensions"]:
        raise bad_request(f"embed.dimension {dimension} is not supported by model '{model}'.")
    spec = {"serverless": _serverless({"cloud": cloud, "region": region,
                                       "read_capacity": body.get("read_capacity"), "schema": body.get("schema")})}
    embed_model = {"model": model, "metric": metric, "vector_type": info["vector_type"], "field_map": dict(field_map)}
    if dimension:
        embed_model["dimension"] = dimension
    for key in ("read_parameters", "write_parameters"):
        if isinstance(embed.get(key), dict):
            embed_model[key] = dict(embed[key])
    return {
        "name": name, "spec": spec, "dimension": dimension if info["vector_type"] == "dense" else None,
        "metric": metric, "vector_type": info["vector_type"], "embed": embed_model,
        "deletion_protection": check_protection(body) or "disabled", "tags": check_tags(body) or None,
    }


def check_configure(body: Any) -> dict[str, Any]:
    """The parts of a ConfigureIndexRequest, still independent of the index it applies to."""
    body = require_object(body, "ConfigureIndexRequest")
    out: dict[str, Any] = {}
    spec = body.get("spec")
    if spec is not None:
        if not isinstance(spec, dict) or len(spec) != 1 or next(iter(spec)) not in SPEC_KINDS:
            raise unprocessable("`spec` must have exactly one of `serverless`, `pod`, `byoc`")
        kind, inner = next(iter(spec.items()))
        if not isinstance(inner, dict):
            raise unprocessable(f"invalid type for `spec.{kind}`: expected an object")
        if kind == "pod":
            pod: dict[str, Any] = {}
            if inner.get("replicas") is not None:
                pod["replicas"] = _positive(inner, "replicas", "spec.pod", 1)
            if inner.get("pod_type") is not None:
                pod["pod_type"] = check_pod_type(inner["pod_type"], "spec.pod.pod_type")
            out["spec"] = {"pod": pod}
        else:
            out["spec"] = {kind: {"read_capacity": check_read_capacity(inner.get("read_capacity"), f"spec.{kind}")}}
    protection = check_protection(body)
    if protection:
        out["deletion_protection"] = protection
    tags = check_tags(body, allow_empty_values=True)
    if tags is not None:
        out["tags"] = tags
    if body.get("embed") is not None:
        out["embed"] = _typed(body, "embed", dict, "an object")
    return out


def check_collection(body: Any) -> tuple[str, str]:
    body = require_object(body, "CreateCollectionRequest")
    name = check_name(_typed(body, "name", str, "a string", required=True), "Collection name")
    source = _typed(body, "source", str, "a string", required=True)
    return name, source


def check_from_backup(body: Any) -> dict[str, Any]:
    body = require_object(body, "CreateIndexFromBackupRequest")
    name = check_name(_typed(body, "name", str, "a string", required=True))
    return {"name": name, "tags": check_tags(body) or None,
            "deletion_protection": check_protection(body) or "disabled"}


def check_backup(body: Any) -> dict[str, Any]:
    body = require_object(body if body is not None else {}, "CreateBackupRequest")
    return {"name": _typed(body, "name", str, "a string"), "description": _typed(body, "description", str, "a string")}


def check_limit(raw: str | None, default: int = 10, maximum: int = 100) -> int:
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise bad_request(f"limit must be an integer (got '{raw}').") from exc
    if not 1 <= value <= maximum:
        raise bad_request(f"limit must be between 1 and {maximum} (got {value}).")
    return value


__all__ = ["ApiError"]
