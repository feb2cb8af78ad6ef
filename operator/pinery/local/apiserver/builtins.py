"""Behaviour of the built-in kinds that a client can observe: defaults, initial status,
immutable fields and the few validation rules users run into.

- Pod: the defaults the API server and its admission plug-ins add (restartPolicy, dnsPolicy,
  terminationGracePeriodSeconds, serviceAccountName, container terminationMessage* and
  imagePullPolicy, port protocols, the not-ready/unreachable tolerations), status Pending on
  create, spec immutable except images, activeDeadlineSeconds and added tolerations.
- Service: type ClusterIP, a cluster IP allocated from 10.96.0.0/12 (kept on update when the
  client omits it, immutable otherwise), port protocol and targetPort defaults.
- Namespace: the `kubernetes` finalizer, phase Active, the `kubernetes.io/metadata.name` label.
- Secret: `stringData` folded into base64 `data`, type Opaque; ConfigMap and Secret honour
  `immutable`.
- PersistentVolumeClaim: phase Pending, volumeMode Filesystem.
- Event: involvedObject.namespace must match the event's namespace.
"""

from __future__ import annotations

import base64
import binascii
import copy
import ipaddress
from typing import Any

from pinery.local.apiserver import apps_policy, errors, podspec_defaults, rbac_validation
from pinery.local.apiserver.resources import ResourceType
from pinery.schema.errors import FieldError

_POD_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
]
_SERVICE_RANGE = ipaddress.ip_network("10.96.0.0/12")


def _core_kind(rtype: ResourceType) -> str | None:
    return rtype.kind if rtype.group == "" else None


class ClusterIPs:
    """Allocates service cluster IPs; the first address is the `kubernetes` service's."""

    def __init__(self) -> None:
        self._used: set[str] = set()
        self._next = 10

    def reserve(self, ip: str) -> None:
        self._used.add(ip)

    def release(self, ip: str) -> None:
        self._used.discard(ip)

    def allocate(self) -> str:
        hosts = _SERVICE_RANGE.num_addresses - 2
        for _ in range(hosts):
            candidate = str(_SERVICE_RANGE.network_address + self._next)
            self._next = self._next + 1 if self._next < hosts else 10
            if candidate not in self._used:
                self._used.add(candidate)
                return candidate
        raise errors.ApiError(500, "InternalError", "the service cluster IP range is full")


def prepare_create(rtype: ResourceType, obj: dict[str, Any], ips: ClusterIPs) -> None:
    """Defaults and initial status of a new built-in object (in place)."""
    kind = _core_kind(rtype)
    if rtype.group == "apps":
        _APPS_DEFAULTS[rtype.kind](obj)
    if kind == "Pod":
        _default_pod(obj)
        obj["status"] = {"phase": "Pending", "qosClass": _qos_class(obj.get("spec") or {})}
    elif kind == "Service":
        _default_service(obj, None, ips)
        obj["status"] = {"loadBalancer": {}}
    elif kind == "Namespace":
        spec = obj.setdefault("spec", {})
        spec.setdefault("finalizers", ["kubernetes"])
        obj["status"] = {"phase": "Active"}
        labels = obj["metadata"].setdefault("labels", {})
        labels["kubernetes.io/metadata.name"] = obj["metadata"]["name"]
    elif kind == "Secret":
        _fold_string_data(obj)
        obj.setdefault("type", "Opaque")
    elif kind == "PersistentVolumeClaim":
        obj.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")
        obj["status"] = {"phase": "Pending"}


def prepare_update(rtype: ResourceType, new: dict[str, Any], old: dict[str, Any], ips: ClusterIPs) -> list[FieldError]:
    """Carry over what the server owns and check immutable fields; returns problems (422)."""
    kind = _core_kind(rtype)
    problems: list[FieldError] = []
    if rtype.group == rbac_validation.GROUP:
        problems += rbac_validation.update_problems(rtype.kind, new, old)
    if rtype.group == "apps":
        _APPS_DEFAULTS[rtype.kind](new)
        problems += apps_policy.selector_update_problems(new, old)
    if kind == "Pod":
        _default_pod(new)
        problems += _pod_update_problems(new, old)
    elif kind == "Service":
        problems += _default_service(new, old, ips)
    elif kind == "Namespace":
        labels = new.setdefault("metadata", {}).setdefault("labels", {})
        labels["kubernetes.io/metadata.name"] = old["metadata"]["name"]
        new.setdefault("spec", {}).setdefault("finalizers", list((old.get("spec") or {}).get("finalizers") or []))
    elif kind == "Secret":
        _fold_string_data(new)
        new.setdefault("type", old.get("type", "Opaque"))
        if new["type"] != old.get("type", "Opaque"):
            problems.append(FieldError("type", "Invalid value: field is immutable"))
    elif kind == "PersistentVolumeClaim":
        new.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")
    if kind in ("Secret", "ConfigMap") and old.get("immutable"):
        for field in ("data", "binaryData"):
            if new.get(field) != old.get(field):
                problems.append(FieldError(field, "Forbidden: field is immutable when `immutable` is set"))
        if not new.get("immutable"):
            problems.append(FieldError("immutable", "Forbidden: field is immutable when `immutable` is set"))
    return problems


def validate(rtype: ResourceType, obj: dict[str, Any]) -> list[FieldError]:
    kind = _core_kind(rtype)
    out: list[FieldError] = []
    if rtype.group == rbac_validation.GROUP:
        out += rbac_validation.validate(rtype.kind, obj)
    if rtype.group == "apps":
        out += _APPS_PROBLEMS[rtype.kind](obj)
    if kind == "Pod":
        out += _pod_problems(obj.get("spec") or {})
    elif kind == "Service":
        spec = obj.get("spec") or {}
        if spec.get("clusterIP") != "None" and not spec.get("ports") and spec.get("type") != "ExternalName":
            out.append(FieldError("spec.ports", "Required value"))
        for i, port in enumerate(spec.get("ports") or []):
            if not isinstance(port.get("port"), int) or not 1 <= port["port"] <= 65535:
                out.append(FieldError(f"spec.ports[{i}].port", f"Invalid value: {port.get('port')}: must be between 1 and 65535, inclusive"))
    elif kind == "Event":
        involved = obj.get("involvedObject") or {}
        ns = (obj.get("metadata") or {}).get("namespace")
        if involved.get("namespace") and involved["namespace"] != ns:
            out.append(FieldError("involvedObject.namespace", f'Invalid value: "{involved["namespace"]}": does not match event.namespace'))
    elif kind == "ConfigMap":
        for field in ("data", "binaryData"):
            for key in obj.get(field) or {}:
                if not key or len(key) > 253 or not all(c.isalnum() or c in "-._" for c in key):
                    out.append(FieldError(
                        f"{field}[{key}]",
                        f"Invalid value: \"{key}\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' "
                        "(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
                    ))
    return out


_APPS_DEFAULTS = {"Deployment": apps_policy.default_deployment, "ReplicaSet": apps_policy.default_replicaset}
_APPS_PROBLEMS = {"Deployment": apps_policy.deployment_problems, "ReplicaSet": apps_policy.replicaset_problems}


# Pods


def _default_pod(pod: dict[str, Any]) -> None:
    spec = pod.setdefault("spec", {})
    podspec_defaults.default_pod_spec(spec)
    account = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
    spec["serviceAccountName"] = account
    spec["serviceAccount"] = account
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("priority", 0)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    tolerations = spec.setdefault("tolerations", [])
    for toleration in _POD_TOLERATIONS:
        if not any(t.get("key") == toleration["key"] for t in tolerations if isinstance(t, dict)):
            tolerations.append(dict(toleration))


def _qos_class(spec: dict[str, Any]) -> str:
    resources = [c.get("resources") or {} for c in spec.get("containers") or [] if isinstance(c, dict)]
    if not any(r.get("requests") or r.get("limits") for r in resources):
        return "BestEffort"
    guaranteed = all(
        r.get("limits") and set(r["limits"]) >= {"cpu", "memory"} and all(r.get("requests", {}).get(k, v) == v for k, v in r["limits"].items())
        for r in resources
    )
    return "Guaranteed" if guaranteed else "Burstable"


def _pod_problems(spec: dict[str, Any]) -> list[FieldError]:
    out = []
    containers = spec.get("containers")
    if not containers:
        out.append(FieldError("spec.containers", "Required value"))
    seen: set[str] = set()
    for field in ("initContainers", "containers"):
        for i, container in enumerate(spec.get(field) or []):
            where = f"spec.{field}[{i}]"
            if not isinstance(container, dict):
                out.append(FieldError(where, "Invalid value: must be an object"))
                continue
            name = container.get("name")
            if not name:
                out.append(FieldError(f"{where}.name", "Required value"))
            elif name in seen:
                out.append(FieldError(f"{where}.name", f'Duplicate value: "{name}"'))
            else:
                seen.add(name)
            if not container.get("image"):
                out.append(FieldError(f"{where}.image", "Required value"))
    policy = spec.get("restartPolicy")
    if policy not in ("Always", "OnFailure", "Never"):
        out.append(FieldError("spec.restartPolicy", f'Unsupported value: "{policy}": supported values: "Always", "OnFailure", "Never"'))
    return out


_POD_MUTABLE_MESSAGE = (
    "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions "
    "to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was "
    "previously negative)"
)


def _pod_update_problems(new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    def comparable(spec: dict[str, Any]) -> dict[str, Any]:
        spec = copy.deepcopy(spec)
        for field in ("containers", "initContainers"):
            for container in spec.get(field) or []:
                if isinstance(container, dict):
                    container.pop("image", None)
        spec.pop("activeDeadlineSeconds", None)
        spec.pop("tolerations", None)
        return spec

    new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    out = []
    if comparable(new_spec) != comparable(old_spec):
        out.append(FieldError("spec", _POD_MUTABLE_MESSAGE))
    old_tolerations = old_spec.get("tolerations") or []
    if any(t not in (new_spec.get("tolerations") or []) for t in old_tolerations):
        out.append(FieldError("spec.tolerations", "Forbidden: existing toleration can not be modified except its tolerationSeconds"))
    return out


# Services


def _default_service(svc: dict[str, Any], old: dict[str, Any] | None, ips: ClusterIPs) -> list[FieldError]:
    spec = svc.setdefault("spec", {})
    old_spec = (old or {}).get("spec") or {}
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    spec.setdefault("internalTrafficPolicy", "Cluster")
    spec.setdefault("ipFamilies", ["IPv4"])
    spec.setdefault("ipFamilyPolicy", "SingleStack")
    for port in spec.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
            if "port" in port:
                port.setdefault("targetPort", port["port"])
    problems = []
    if old is not None:
        if not spec.get("clusterIP"):
            spec["clusterIP"] = old_spec.get("clusterIP")
        elif spec["clusterIP"] != old_spec.get("clusterIP"):
            problems.append(FieldError("spec.clusterIPs[0]", f'Invalid value: []string{{"{spec["clusterIP"]}"}}: may not change once set'))
        spec["clusterIPs"] = [spec["clusterIP"]] if spec.get("clusterIP") else []
        return problems
    if spec.get("type") == "ExternalName":
        return problems
    if spec.get("clusterIP") in (None, ""):
        spec["clusterIP"] = ips.allocate()
    elif spec["clusterIP"] != "None":
        ips.reserve(spec["clusterIP"])
    spec["clusterIPs"] = [spec["clusterIP"]]
    return problems


# Secrets


def _fold_string_data(secret: dict[str, Any]) -> None:
    """stringData is write-only: folded into base64 data, as the API server does."""
    data = secret.get("data") or {}
    for key, value in (data or {}).items():
        if not isinstance(value, str):
            raise errors.bad_request(f"Secret in version \"v1\" cannot be handled as a Secret: data[{key}] must be a base64 string")
        try:
            base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise errors.bad_request(f"Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data in data[{key}]") from None
    string_data = secret.pop("stringData", None) or {}
    if string_data:
        data = dict(data)
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode()).decode()
    if data:
        secret["data"] = data
