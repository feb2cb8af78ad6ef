"""Whether an existing index matches the spec in everything Pinecone cannot change in place."""

from __future__ import annotations

from typing import Any

from pinery.api.vectorindex import VectorIndexSpec


def _deployment_type(index: dict[str, Any]) -> str | None:
    spec = index.get("spec") or {}
    for name in ("serverless", "pod", "byoc"):
        if spec.get(name):
            return name
    return None


def immutable_differences(spec: VectorIndexSpec, index: dict[str, Any]) -> list[str]:
    """Human-readable differences, `field: spec wants X, index has Y`; empty when they match."""
    diffs: list[str] = []

    def differ(field: str, wanted: Any, actual: Any) -> None:
        if wanted != actual:
            diffs.append(f"{field}: spec wants {wanted!r}, index has {actual!r}")

    differ("vectorType", spec.vector_type, index.get("vector_type", "dense"))
    if spec.dimension is not None or index.get("dimension") is not None:
        differ("dimension", spec.dimension, index.get("dimension"))
    differ("metric", spec.effective_metric, index.get("metric"))

    kind = _deployment_type(index)
    wanted_kind = spec.deployment_type
    if kind != wanted_kind:
        differ("deployment type", wanted_kind, kind)
        return diffs
    deployed = (index.get("spec") or {}).get(kind) or {}
    if spec.serverless is not None:
        differ("serverless.cloud", spec.serverless.cloud, deployed.get("cloud"))
        differ("serverless.region", spec.serverless.region, deployed.get("region"))
    elif spec.pod is not None:
        differ("pod.environment", spec.pod.environment, deployed.get("environment"))
        differ("pod.shards", spec.pod.shards, deployed.get("shards"))
        wanted_meta = spec.pod.metadata_config.indexed if spec.pod.metadata_config else None
        actual_meta = (deployed.get("metadata_config") or {}).get("indexed")
        if sorted(wanted_meta or []) != sorted(actual_meta or []) or (wanted_meta is None) != (actual_meta is None):
            differ("pod.metadataConfig.indexed", wanted_meta, actual_meta)
        wanted_family, actual_family = spec.pod.pod_type.split(".")[0], str(deployed.get("pod_type", "")).split(".")[0]
        differ("pod.podType family", wanted_family, actual_family)
    elif spec.byoc is not None:
        differ("byoc.environment", spec.byoc.environment, deployed.get("environment"))
    return diffs
