"""What the spec asks of Pinecone: the create request, and the configure changes for drift."""

from __future__ import annotations

from typing import Any

from pinery.api.vectorindex import VectorIndexSpec


def protection(enabled: bool) -> str:
    return "enabled" if enabled else "disabled"


def deployment_spec(spec: VectorIndexSpec) -> dict[str, Any]:
    """The `spec` member of a create request (REST shape)."""
    if spec.serverless is not None:
        body: dict[str, Any] = {"cloud": spec.serverless.cloud, "region": spec.serverless.region}
        if spec.serverless.source_collection:
            body["source_collection"] = spec.serverless.source_collection
        return {"serverless": body}
    if spec.pod is not None:
        pod = spec.pod
        body = {
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
    if spec.byoc is not None:
        return {"byoc": {"environment": spec.byoc.environment}}
    raise ValueError("spec has no deployment type")  # the model rules make this unreachable


def desired_tags(spec: VectorIndexSpec, owner_tags: dict[str, str]) -> dict[str, str]:
    """User tags plus ownership tags (users cannot set pinery-* keys, so nothing collides)."""
    return {**(spec.tags or {}), **owner_tags}


def create_request(spec: VectorIndexSpec, index_name: str, owner_tags: dict[str, str]) -> dict[str, Any]:
    """The body of Pinecone's create_index for this spec."""
    request: dict[str, Any] = {
        "name": index_name,
        "metric": spec.effective_metric,
        "vector_type": spec.vector_type,
        "deletion_protection": protection(spec.deletion_protection),
        "tags": desired_tags(spec, owner_tags),
        "spec": deployment_spec(spec),
    }
    if spec.dimension is not None:
        request["dimension"] = spec.dimension
    return request


def configure_changes(spec: VectorIndexSpec, index: dict[str, Any], owner_tags: dict[str, str]) -> dict[str, Any]:
    """The arguments of one configure_index call that brings `index` to the spec ({} if none).

    Tags are fully managed: keys on the index that the spec does not declare are removed
    (Pinecone removes a tag when it is set to ""), so that deleting a key in Git deletes it.
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

    pod = (index.get("spec") or {}).get("pod")
    if spec.pod is not None and pod is not None:
        if pod.get("replicas") != spec.pod.replicas:
            changes["replicas"] = spec.pod.replicas
        if pod.get("pod_type") != spec.pod.pod_type:
            changes["pod_type"] = spec.pod.pod_type
    return changes
