"""Whether an existing index matches the spec in everything Pinecone cannot change in place."""

from __future__ import annotations

from typing import Any, Callable

from pinery.api.vectorindex import VectorIndexSpec
from pinery.vectorindex import desired, observed


def immutable_differences(spec: VectorIndexSpec, index: dict[str, Any]) -> list[str]:
    """Human-readable differences, `field: spec wants X, index has Y`; empty when they match.
    `index` is a 2026-07 IndexModel (pinery.vectorindex.observed)."""
    diffs: list[str] = []

    def differ(field: str, wanted: Any, actual: Any) -> None:
        if wanted != actual:
            diffs.append(f"{field}: spec wants {wanted!r}, index has {actual!r}")

    kind = observed.deployment_type(index)
    semantic = observed.embed(index)
    if spec.embed is not None or semantic is not None:
        _embed_differences(spec, semantic, differ)
    else:
        found_type = observed.vector_type(index)
        differ("vectorType", spec.vector_type, found_type)
        # An index made from a backup (restoreFrom) takes its dimension and metric from it: the
        # spec may leave them out.
        restored = spec.restore_from is not None
        dimension = observed.dimension(index)
        if spec.dimension is not None or (dimension is not None and not restored):
            differ("dimension", spec.dimension, dimension)
        if spec.metric is not None or not restored:
            differ("metric", spec.effective_metric, observed.metric(index))
        if found_type == spec.vector_type:  # applications address the fields by these names
            differ("vector field names", list(desired.vector_field_names(spec)), list(observed.vector_field_names(index)))
    differ("textFields", _wanted_text(spec), {name: _found_text(f) for name, f in observed.text_fields(index).items()})

    wanted_kind = spec.deployment_type
    if kind != wanted_kind:
        differ("deployment type", wanted_kind, kind)
        return diffs
    placed = observed.deployment(index)
    if spec.serverless is not None:
        differ("serverless.cloud", spec.serverless.cloud, placed.get("cloud"))
        differ("serverless.region", spec.serverless.region, placed.get("region"))
    elif spec.pod is not None:
        differ("pod.environment", spec.pod.environment, placed.get("environment"))
        differ("pod.shards", spec.pod.shards, placed.get("shards"))
        # 2026-07 lists indexed metadata fields as untyped schema fields: an empty list and no
        # metadata config both show none, so they compare equal.
        wanted_meta = sorted(spec.pod.metadata_config.indexed) or None if spec.pod.metadata_config else None
        differ("pod.metadataConfig.indexed", wanted_meta, observed.metadata_indexed(index))
        wanted_family, actual_family = spec.pod.pod_type.split(".")[0], str(placed.get("pod_type", "")).split(".")[0]
        differ("pod.podType family", wanted_family, actual_family)
    elif spec.byoc is not None:
        differ("byoc.environment", spec.byoc.environment, placed.get("environment"))
    return diffs



def _embed_differences(spec: VectorIndexSpec, semantic: tuple[str, dict[str, Any]] | None,
                       differ: Callable[[str, Any, Any], None]) -> None:
    """Integrated inference: the model, the embedded field and the metric when the spec sets it.
    A 2026-07 semantic_text field reports no dimension (the 10.x SDK's ModelIndexEmbed.dimension
    is always None), so embed.dimension cannot be compared."""
    if spec.embed is None or semantic is None:
        differ("embed", "set" if spec.embed is not None else None, "set" if semantic is not None else None)
        return
    name, field = semantic
    differ("embed.model", spec.embed.model, field.get("model"))
    differ("embed.fieldMap.text", spec.embed.text_field, name)
    if spec.embed.metric is not None:
        differ("embed.metric", spec.embed.metric, field.get("metric"))


# Pinecone takes a language as a two-letter code or its English name and reports it resolved
# (schema.py FullTextSearchConfig.language); only the default's two spellings are known to be one.
_SAME_LANGUAGE = {"english": "en"}


def _language(value: str | None) -> str:
    name = (value or "en").lower()
    return _SAME_LANGUAGE.get(name, name)


def _wanted_text(spec: VectorIndexSpec) -> dict[str, str]:
    return {f.name: _text_summary(_language(f.language), bool(f.stemming), bool(f.stop_words)) for f in spec.text_fields or []}


def _found_text(field: dict[str, Any]) -> str:
    """A string field as the spec would declare it; one a model embeds, or an n-gram field,
    is not one a VectorIndex declares, and says so."""
    search = field.get("full_text_search") or {}
    extra = [key for key in ("embed", "sparse_embed") if field.get(key)] + (["ngram"] if search.get("ngram") else [])
    if not search:
        extra.append("no full_text_search")
    return _text_summary(_language(search.get("language")), bool(search.get("stemming")), bool(search.get("stop_words")), extra)


def _text_summary(language: str, stemming: bool, stop_words: bool, extra: list[str] | None = None) -> str:
    words = [language] + (["stemming"] if stemming else []) + (["stopWords"] if stop_words else []) + (extra or [])
    return " ".join(words)
