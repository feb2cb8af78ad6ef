"""Strategic merge patch for the built-in kinds served here.

Maps merge as in a merge patch; lists with a patch merge key (containers and env by name,
volumeMounts by mountPath, container ports by containerPort, service ports by port, ...)
merge item by item; `metadata.finalizers` merges as a set; other lists are replaced. The
directives kubectl sends are honoured: `$patch: replace|delete`, `$retainKeys`,
`$deleteFromPrimitiveList/<field>` and `$setElementOrder/<field>`. Custom resources do not
support strategic merge (the API server answers 415), so the tables cover built-ins only.
"""

from __future__ import annotations

import copy
from typing import Any

from pinery.local.apiserver.errors import bad_request

_CONTAINER_LISTS = {
    "ports": "containerPort",
    "env": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "resizePolicy": "resourceName",
}


def _pod_spec_keys(prefix: str) -> dict[str, str]:
    keys = {
        f"{prefix}.volumes": "name",
        f"{prefix}.imagePullSecrets": "name",
        f"{prefix}.hostAliases": "ip",
        f"{prefix}.topologySpreadConstraints": "topologyKey",
        f"{prefix}.resourceClaims": "name",
        f"{prefix}.schedulingGates": "name",
    }
    for containers in ("containers", "initContainers", "ephemeralContainers"):
        keys[f"{prefix}.{containers}"] = "name"
        for field, key in _CONTAINER_LISTS.items():
            keys[f"{prefix}.{containers}.{field}"] = key
    return keys


# Field path (list items do not add a segment) -> merge key, per kind.
_COMMON = {"metadata.ownerReferences": "uid"}
MERGE_KEYS: dict[str, dict[str, str]] = {
    "Pod": {
        **_pod_spec_keys("spec"),
        "status.conditions": "type",
        "status.podIPs": "ip",
        "status.hostIPs": "ip",
    },
    "Service": {"spec.ports": "port"},
    "Deployment": {**_pod_spec_keys("spec.template.spec"), "status.conditions": "type"},
    "ReplicaSet": {**_pod_spec_keys("spec.template.spec"), "status.conditions": "type"},
    "Namespace": {"status.conditions": "type"},
    "PersistentVolumeClaim": {"status.conditions": "type"},
}
# Lists of scalars merged as sets.
MERGED_SCALAR_LISTS = {"metadata.finalizers"}


def _merge_key(kind: str, path: str) -> str | None:
    return _COMMON.get(path) or MERGE_KEYS.get(kind, {}).get(path)


def strategic_merge(kind: str, original: dict[str, Any], patch: Any) -> dict[str, Any]:
    """Apply a strategic merge patch to a copy of `original`."""
    if not isinstance(patch, dict):
        raise bad_request("the body of a strategic merge patch must be a JSON object")
    merged = _merge_map(kind, "", copy.deepcopy(original), patch)
    return merged if isinstance(merged, dict) else {}


_DELETE = object()


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _strip(value: Any) -> Any:
    """A patch value with its directives removed, for fields absent from the original."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if not k.startswith("$") and v is not None}
    if isinstance(value, list):
        return [_strip(v) for v in value if not (isinstance(v, dict) and v.get("$patch") == "delete")]
    return value


def _merge_map(kind: str, path: str, original: Any, patch: dict[str, Any]) -> Any:
    directive = patch.get("$patch")
    if directive == "replace":
        return _strip({k: v for k, v in patch.items() if k != "$patch"})
    if directive == "delete":
        return _DELETE
    if not isinstance(original, dict):
        original = {}
    retain = patch.get("$retainKeys")
    if isinstance(retain, list):
        original = {k: v for k, v in original.items() if k in retain}
    orders: dict[str, list] = {}
    for key, value in patch.items():
        if key in ("$patch", "$retainKeys"):
            continue
        if key.startswith("$setElementOrder/"):
            orders[key.split("/", 1)[1]] = value
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.split("/", 1)[1]
            if isinstance(original.get(field), list) and isinstance(value, list):
                original[field] = [v for v in original[field] if v not in value]
            continue
        sub = _join(path, key)
        if value is None:
            original.pop(key, None)
        elif isinstance(value, dict):
            merged = _merge_map(kind, sub, original.get(key), value)
            if merged is _DELETE:
                original.pop(key, None)
            else:
                original[key] = merged
        elif isinstance(value, list):
            original[key] = _merge_list(kind, sub, original.get(key), value)
        else:
            original[key] = value
    for field, order in orders.items():
        if isinstance(original.get(field), list):
            original[field] = _reorder(kind, _join(path, field), original[field], order)
    return original


def _merge_list(kind: str, path: str, original: Any, patch: list) -> list:
    key = _merge_key(kind, path)
    if path in MERGED_SCALAR_LISTS:
        out = list(original) if isinstance(original, list) else []
        for item in patch:
            if item not in out:
                out.append(item)
        return out
    if key is None:
        if any(isinstance(i, dict) and i.get("$patch") == "replace" for i in patch):
            return _strip([i for i in patch if not (isinstance(i, dict) and "$patch" in i)])
        return _strip(patch)
    out = [copy.deepcopy(i) for i in original] if isinstance(original, list) else []
    if any(isinstance(i, dict) and i.get("$patch") == "replace" for i in patch):
        return _strip([i for i in patch if not (isinstance(i, dict) and i.get("$patch") == "replace")])
    for item in patch:
        if not isinstance(item, dict):
            raise bad_request(f"{path}: a list with merge key {key!r} must contain objects")
        if key not in item:
            raise bad_request(f"{path}: map: {item} does not contain declared merge key: {key}")
        index = next((i for i, o in enumerate(out) if isinstance(o, dict) and o.get(key) == item[key]), None)
        if item.get("$patch") == "delete":
            if index is not None:
                out.pop(index)
            continue
        if index is None:
            out.append(_strip(item))
        else:
            out[index] = _merge_map(kind, path, out[index], item)
    return out


def _reorder(kind: str, path: str, items: list, order: list) -> list:
    key = _merge_key(kind, path)

    def ident(item: Any) -> Any:
        if key is not None and isinstance(item, dict):
            return item.get(key)
        return item

    wanted = [ident(o) for o in order]
    listed = [i for i in items if ident(i) in wanted]
    listed.sort(key=lambda i: wanted.index(ident(i)))
    rest = [i for i in items if ident(i) not in wanted]
    return listed + rest
