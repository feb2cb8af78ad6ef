"""Discovery documents (`/api`, `/api/v1`, `/apis`, `/apis/{group}[/{version}]`) and `/version`,
derived from the resource types served right now, so CRDs appear and disappear with them.

Answers are plain JSON: clients that ask for aggregated discovery (`apidiscovery.k8s.io/v2`)
first, as kubectl does, accept it and fall back to these documents.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from pinery.local.apiserver.resources import ResourceType, TypeRegistry

KUBERNETES_VERSION = ("1", "32", "v1.32.0")
_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")
# Subresources: name -> (kind, verbs)
_SUBRESOURCE_VERBS = {
    "status": ("get", "patch", "update"),
    "log": ("get",),
    "binding": ("create",),
    "eviction": ("create",),
    "finalize": ("update",),
    "scale": ("get", "patch", "update"),
}

_SUBRESOURCE_GROUP_VERSIONS = {
    "scale": {"group": "autoscaling", "version": "v1"},
    "eviction": {"group": "policy", "version": "v1"},
}


def version_priority(version: str) -> tuple:
    """Kubernetes version order: GA before beta before alpha, higher numbers first, others last."""
    match = _VERSION.match(version)
    if not match:
        return (3, 0, 0, version)
    major, stage, minor = match.groups()
    rank = {None: 0, "beta": 1, "alpha": 2}[stage]
    return (rank, -int(major), -int(minor or 0), version)


def sorted_versions(versions: list[str]) -> list[str]:
    return sorted(versions, key=version_priority)


def version_info() -> dict[str, str]:
    major, minor, git = KUBERNETES_VERSION
    return {
        "major": major,
        "minor": minor,
        "gitVersion": git,
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2025-01-01T00:00:00Z",
        "goVersion": "go1.23.0",
        "compiler": "gc",
        "platform": "linux/amd64",
    }


def api_versions(server_address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def _group_entry(group: str, versions: list[str]) -> dict[str, Any]:
    ordered = sorted_versions(versions)
    return {
        "name": group,
        "versions": [{"groupVersion": f"{group}/{v}", "version": v} for v in ordered],
        "preferredVersion": {"groupVersion": f"{group}/{ordered[0]}", "version": ordered[0]},
    }


def api_group_list(registry: TypeRegistry) -> dict[str, Any]:
    groups = [_group_entry(g, vs) for g, vs in registry.group_versions().items() if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(registry: TypeRegistry, group: str) -> dict[str, Any] | None:
    versions = registry.group_versions().get(group)
    if not group or not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group_entry(group, versions)}


def _storage_hash(rtype: ResourceType) -> str:
    digest = hashlib.sha256(f"{rtype.group}/{rtype.version}/{rtype.kind}".encode()).digest()
    return digest[:8].hex()


def _resource(rtype: ResourceType) -> list[dict[str, Any]]:
    main: dict[str, Any] = {
        "name": rtype.plural,
        "singularName": rtype.singular_name,
        "namespaced": rtype.namespaced,
        "kind": rtype.kind,
        "verbs": list(rtype.verbs),
        "storageVersionHash": _storage_hash(rtype),
    }
    if rtype.short_names:
        main["shortNames"] = list(rtype.short_names)
    if rtype.categories:
        main["categories"] = list(rtype.categories)
    out = [main]
    for sub in rtype.subresources:
        kind = {"binding": "Binding", "scale": "Scale", "eviction": "Eviction"}.get(sub, rtype.kind)
        out.append({
            # A subresource of another group's kind names it, as upstream's discovery does;
            # kubectl drain's CheckEvictionSupport looks for pods/eviction with group and version.
            **_SUBRESOURCE_GROUP_VERSIONS.get(sub, {}),
            "name": f"{rtype.plural}/{sub}",
            "singularName": "",
            "namespaced": rtype.namespaced,
            "kind": kind,
            "verbs": list(_SUBRESOURCE_VERBS.get(sub, ("get",))),
        })
    return out


def api_resource_list(registry: TypeRegistry, group: str, version: str) -> dict[str, Any] | None:
    types = registry.in_group_version(group, version)
    if not types:
        return None
    resources = [entry for t in types for entry in _resource(t)]
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": resources,
    }
