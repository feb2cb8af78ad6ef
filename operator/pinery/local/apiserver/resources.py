"""The resource types the local control plane serves: built-ins, and those CRDs add.

One `ResourceType` per group/version/resource. Discovery, the REST routes, server-side
printing (Table) and the OpenAPI documents are all derived from these.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class ResourceType:
    group: str  # "" for the core group
    version: str
    kind: str
    plural: str
    namespaced: bool
    singular: str = ""
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    # Subresources served: "status" (CRDs with the status subresource, pods, ...), "log" (pods).
    subresources: tuple[str, ...] = ()
    # openAPIV3Schema of a custom resource (structural); None for built-ins.
    schema: dict[str, Any] | None = field(default=None, compare=False, hash=False)
    # additionalPrinterColumns of a custom resource.
    printer_columns: tuple[dict[str, Any], ...] = field(default=(), compare=False, hash=False)
    # The CRD this type came from (None for built-ins).
    crd_name: str | None = None

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def api_version(self) -> str:
        return self.group_version

    @property
    def singular_name(self) -> str:
        return self.singular or self.kind.lower()

    @property
    def has_status(self) -> bool:
        return "status" in self.subresources

    @property
    def from_crd(self) -> bool:
        """Served from a CRD on a real cluster, as Kopf's peering kinds are: printed from printer
        columns, patched with JSON merge patches rather than strategic ones."""
        return self.crd_name is not None or self.group == "kopf.dev"


def _core(kind: str, plural: str, namespaced: bool = True, **kw: Any) -> ResourceType:
    return ResourceType(group="", version="v1", kind=kind, plural=plural, namespaced=namespaced, **kw)


# What Kopf, kubectl and the operator use. Subresource "status" follows the real API server:
# the main endpoint ignores status changes for these kinds.
BUILTIN_TYPES: tuple[ResourceType, ...] = (
    _core("Namespace", "namespaces", namespaced=False, short_names=("ns",), subresources=("status",)),
    _core("Pod", "pods", short_names=("po",), categories=("all",), subresources=("status", "log")),
    _core("Service", "services", short_names=("svc",), categories=("all",), subresources=("status",)),
    _core("ConfigMap", "configmaps", short_names=("cm",)),
    _core("Secret", "secrets"),
    _core("Event", "events", short_names=("ev",)),
    _core("ServiceAccount", "serviceaccounts", short_names=("sa",)),
    _core("PersistentVolumeClaim", "persistentvolumeclaims", short_names=("pvc",), subresources=("status",)),
    _core("Endpoints", "endpoints", short_names=("ep",)),
    _core("Node", "nodes", namespaced=False, short_names=("no",), subresources=("status",)),
    ResourceType("events.k8s.io", "v1", "Event", "events", namespaced=True, short_names=("ev",)),
    ResourceType("coordination.k8s.io", "v1", "Lease", "leases", namespaced=True),
    ResourceType(
        "apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions",
        namespaced=False, short_names=("crd", "crds"), categories=("api-extensions",), subresources=("status",),
    ),
    # Kopf's peering resources, which a cluster gets from Kopf's own CRDs.
    ResourceType("kopf.dev", "v1", "KopfPeering", "kopfpeerings", namespaced=True),
    ResourceType("kopf.dev", "v1", "ClusterKopfPeering", "clusterkopfpeerings", namespaced=False),
)


def types_from_crd(crd: dict[str, Any]) -> list[ResourceType]:
    """The served versions of a CustomResourceDefinition, as resource types."""
    spec = crd.get("spec", {})
    names = spec.get("names", {})
    out = []
    for version in spec.get("versions", []):
        if not version.get("served", True):
            continue
        out.append(
            ResourceType(
                group=spec["group"],
                version=version["name"],
                kind=names["kind"],
                plural=names["plural"],
                namespaced=spec.get("scope", "Namespaced") == "Namespaced",
                singular=names.get("singular", ""),
                short_names=tuple(names.get("shortNames", ())),
                categories=tuple(names.get("categories", ())),
                subresources=("status",) if "status" in (version.get("subresources") or {}) else (),
                schema=(version.get("schema") or {}).get("openAPIV3Schema"),
                printer_columns=tuple(version.get("additionalPrinterColumns", ())),
                crd_name=crd.get("metadata", {}).get("name"),
            )
        )
    return out
