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
    # Subresources served: "status" (CRDs with the status subresource, pods, ...); pods also
    # have "log", "binding" and "eviction" (eviction.py), namespaces "finalize".
    subresources: tuple[str, ...] = ()
    # openAPIV3Schema of a custom resource (structural); None for built-ins.
    schema: dict[str, Any] | None = field(default=None, compare=False, hash=False)
    # additionalPrinterColumns of a custom resource.
    printer_columns: tuple[dict[str, Any], ...] = field(default=(), compare=False, hash=False)
    # The CRD this type came from (None for built-ins).
    crd_name: str | None = None
    # Where objects live when another type stores them: events.k8s.io/v1 Events are core v1
    # Events seen through another schema, so both APIs show the same objects.
    stored_as: tuple[str, str] | None = None

    @property
    def storage_key(self) -> tuple[str, str]:
        """(group, plural) of the objects' storage, shared by every version of a resource."""
        return self.stored_as or (self.group, self.plural)

    @property
    def is_custom(self) -> bool:
        """Defined by a CRD served here, so its schema applies."""
        return self.crd_name is not None

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

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
    _core("Namespace", "namespaces", namespaced=False, short_names=("ns",), subresources=("status", "finalize")),
    _core("Pod", "pods", short_names=("po",), categories=("all",), subresources=("status", "log", "binding", "eviction")),
    _core("Service", "services", short_names=("svc",), categories=("all",), subresources=("status",)),
    _core("ConfigMap", "configmaps", short_names=("cm",)),
    _core("Secret", "secrets"),
    _core("Event", "events", short_names=("ev",)),
    _core("ServiceAccount", "serviceaccounts", short_names=("sa",), subresources=("token",)),
    _core("PersistentVolumeClaim", "persistentvolumeclaims", short_names=("pvc",), subresources=("status",)),
    _core("Endpoints", "endpoints", short_names=("ep",)),
    _core("Node", "nodes", namespaced=False, short_names=("no",), subresources=("status",)),
    ResourceType("events.k8s.io", "v1", "Event", "events", namespaced=True, short_names=("ev",), stored_as=("", "events")),
    ResourceType("coordination.k8s.io", "v1", "Lease", "leases", namespaced=True),
    ResourceType(
        "apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions",
        namespaced=False, short_names=("crd", "crds"), categories=("api-extensions",), subresources=("status",),
    ),
    # RBAC, enforced for ServiceAccount tokens (see `access`); the reviews are create-only.
    ResourceType("rbac.authorization.k8s.io", "v1", "Role", "roles", namespaced=True),
    ResourceType("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", namespaced=True),
    ResourceType("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", namespaced=False),
    ResourceType("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", namespaced=False),
    ResourceType("authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", namespaced=False, verbs=("create",)),
    ResourceType("authorization.k8s.io", "v1", "SelfSubjectRulesReview", "selfsubjectrulesreviews", namespaced=False, verbs=("create",)),
    ResourceType("authentication.k8s.io", "v1", "SelfSubjectReview", "selfsubjectreviews", namespaced=False, verbs=("create",)),
    # apps/v1 (apps_policy.py, apps_controllers.py); "scale" answers autoscaling/v1 Scale.
    ResourceType("apps", "v1", "Deployment", "deployments", namespaced=True, short_names=("deploy",), categories=("all",), subresources=("status", "scale")),
    ResourceType("apps", "v1", "ReplicaSet", "replicasets", namespaced=True, short_names=("rs",), categories=("all",), subresources=("status", "scale")),
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


class TypeRegistry:
    """The resource types served right now: the built-ins plus those of established CRDs."""

    def __init__(self, builtins: tuple[ResourceType, ...] = BUILTIN_TYPES) -> None:
        self.generation = 0  # bumped on every change, so callers can cache what they derive
        self._builtins = builtins
        self._by_crd: dict[str, list[ResourceType]] = {}
        self._rebuild()

    def _rebuild(self) -> None:
        types = list(self._builtins)
        for crd_types in self._by_crd.values():
            types.extend(crd_types)
        self._types = types
        self._by_path = {(t.group, t.version, t.plural): t for t in types}
        by_kind: dict[tuple[str, str], ResourceType] = {}
        for t in types:
            by_kind.setdefault((t.group, t.kind), t)
        self._by_group_kind = by_kind
        self.generation += 1

    @property
    def types(self) -> list[ResourceType]:
        return list(self._types)

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._by_path.get((group, version, plural))

    def for_api_version_kind(self, api_version: str, kind: str) -> ResourceType | None:
        """The type of an object (or ownerReference) by apiVersion and kind; any served version."""
        group = api_version.rpartition("/")[0]
        version = api_version.rpartition("/")[2]
        exact = next((t for t in self._types if t.group == group and t.version == version and t.kind == kind), None)
        return exact or self._by_group_kind.get((group, kind))

    def for_storage(self, key: tuple[str, str]) -> ResourceType | None:
        """The primary type of a storage key (the one whose objects are stored as they are)."""
        group, plural = key
        return next((t for t in self._types if t.group == group and t.plural == plural), None)

    def group_versions(self) -> dict[str, list[str]]:
        """Group -> served versions, in the order the types were added (core group is "")."""
        out: dict[str, list[str]] = {}
        for t in self._types:
            versions = out.setdefault(t.group, [])
            if t.version not in versions:
                versions.append(t.version)
        return out

    def in_group_version(self, group: str, version: str) -> list[ResourceType]:
        return [t for t in self._types if t.group == group and t.version == version]

    def set_crd(self, crd_name: str, types: list[ResourceType]) -> None:
        """Serve (or stop serving, with no types) the versions of one CRD."""
        if types:
            self._by_crd[crd_name] = types
        else:
            self._by_crd.pop(crd_name, None)
        self._rebuild()

    def crd_types(self, crd_name: str) -> list[ResourceType]:
        return list(self._by_crd.get(crd_name, ()))
