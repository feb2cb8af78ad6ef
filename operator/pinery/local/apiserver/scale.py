"""The `scale` subresource of Deployments and ReplicaSets: an `autoscaling/v1` Scale.

Follows kubernetes `pkg/registry/apps/deployment/storage/storage.go` (`ScaleREST`,
`scaleFromDeployment`, `scaleUpdatedObjectInfo`) and the ReplicaSet equivalent: the Scale
carries the object's name, namespace, uid, resourceVersion and creationTimestamp,
`spec.replicas`, and `status.replicas` with the selector as text; an update changes only
`spec.replicas` of the object (409 on a stale resourceVersion). `kubectl scale` sends a merge
patch `{"spec":{"replicas":N}}`.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from pinery.local.apiserver import apps_policy, errors
from pinery.local.apiserver.patch import JSON_PATCH, MERGE, json_patch, merge_patch


def scale_of(obj: dict[str, Any]) -> dict[str, Any]:
    m = obj["metadata"]
    meta = {k: m[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in m}
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": meta,
        "spec": {"replicas": apps_policy.replicas(obj)},
        "status": {
            "replicas": int((obj.get("status") or {}).get("replicas", 0)),
            "selector": apps_policy.selector_text((obj.get("spec") or {}).get("selector")).replace("<none>", ""),
        },
    }


def patched_scale(obj: dict[str, Any], content_type: str, raw: bytes) -> dict[str, Any]:
    """The Scale after a merge or JSON patch (a strategic patch of a Scale merges the same way)."""
    try:
        patch = json.loads(raw or b"{}")
    except ValueError as exc:
        raise errors.bad_request(f"error decoding patch: {exc}") from None
    current = scale_of(obj)
    if content_type == JSON_PATCH:
        return json_patch(current, patch)
    if content_type not in (MERGE, "application/strategic-merge-patch+json"):
        raise errors.unsupported_media_type(f"the body of the request was in an unknown format - accepted media types include: {MERGE}, {JSON_PATCH}")
    return merge_patch(current, patch)


def scaled(rtype, obj: dict[str, Any], scale: Any) -> dict[str, Any]:
    """The object with the Scale's replicas (a fresh copy for `Api.write_update`)."""
    if not isinstance(scale, dict):
        raise errors.bad_request("the body of the request must be a Scale object")
    version = (scale.get("metadata") or {}).get("resourceVersion")
    if version and version != obj["metadata"].get("resourceVersion"):
        raise errors.stale(rtype, obj["metadata"]["name"])
    replicas = (scale.get("spec") or {}).get("replicas", 0)
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise errors.ApiError(
            422,
            "Invalid",
            f'Scale.autoscaling "{obj["metadata"]["name"]}" is invalid: '
            f"spec.replicas: Invalid value: {json.dumps(replicas)}: must be greater than or equal to 0",
        )
    new = copy.deepcopy(obj)
    new["spec"]["replicas"] = replicas
    new["metadata"].pop("resourceVersion", None)
    return new
