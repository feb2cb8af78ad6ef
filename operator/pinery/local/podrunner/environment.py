"""A container's environment, resolved as the kubelet does (env, envFrom, valueFrom).

Pure: ConfigMaps and Secrets are passed in; missing references raise `EnvError` with the
kubelet's wording (the pod then waits with CreateContainerConfigError).
"""

from __future__ import annotations

import base64
import re
from typing import Callable

# Kubernetes expands $(VAR) references to earlier variables; $$(VAR) escapes.
_REF = re.compile(r"\$\$|\$\(([-._a-zA-Z][-._a-zA-Z0-9]*)\)")

Lookup = Callable[[str, str], dict | None]  # (kind, name) -> object in the pod's namespace


class EnvError(Exception):
    """A reference the container needs is missing."""


def expand(value: str, env: dict[str, str]) -> str:
    def sub(match: re.Match) -> str:
        if match.group(0) == "$$":
            return "$"
        name = match.group(1)
        return env.get(name, match.group(0))

    return _REF.sub(sub, value)


def field_value(pod: dict, path: str, pod_ip: str, node: str) -> str:
    """A downward API fieldRef; whole label and annotation maps as `key="value"` lines."""
    meta = pod["metadata"]
    if path in ("metadata.labels", "metadata.annotations"):
        values = meta.get(path.split(".")[1]) or {}
        return "\n".join(f'{k}="{v}"' for k, v in sorted(values.items()))
    simple = {
        "metadata.name": meta.get("name", ""),
        "metadata.namespace": meta.get("namespace", "default"),
        "metadata.uid": meta.get("uid", ""),
        "spec.nodeName": node,
        "spec.serviceAccountName": (pod.get("spec") or {}).get("serviceAccountName", "default"),
        "status.podIP": pod_ip,
        "status.hostIP": "127.0.0.1",
        "status.podIPs": pod_ip,
    }
    if path in simple:
        return simple[path]
    match = re.fullmatch(r"metadata\.(labels|annotations)\['([^']+)'\]", path)
    if match:
        return (meta.get(match.group(1)) or {}).get(match.group(2), "")
    raise EnvError(f"unsupported fieldRef {path!r}")


def _data(kind: str, obj: dict, key: str) -> str | None:
    raw = (obj.get("data") or {}).get(key)
    if kind == "Secret" and raw is not None:
        return base64.b64decode(raw).decode("utf-8", errors="replace")
    return raw


def _source(lookup: Lookup, kind: str, ref: dict, key: str | None) -> str | None:
    name = ref.get("name", "")
    obj = lookup(kind, name)
    optional = bool(ref.get("optional"))
    if obj is None:
        if optional:
            return None
        raise EnvError(f"{kind.lower()} \"{name}\" not found")
    if key is None:
        return ""
    value = _data(kind, obj, key)
    if value is None and not optional:
        raise EnvError(f"couldn't find key {key} in {kind} {obj['metadata'].get('namespace', '')}/{name}")
    return value


def container_env(pod: dict, container: dict, lookup: Lookup, *, pod_ip: str, node: str) -> dict[str, str]:
    """The variables Kubernetes would give `container` (envFrom first, then env in order)."""
    env: dict[str, str] = {}
    for source in container.get("envFrom") or []:
        prefix = source.get("prefix", "")
        for kind, field in (("ConfigMap", "configMapRef"), ("Secret", "secretRef")):
            if field not in source:
                continue
            ref = source[field]
            obj = lookup(kind, ref.get("name", ""))
            if obj is None:
                if ref.get("optional"):
                    continue
                raise EnvError(f"{kind.lower()} \"{ref.get('name')}\" not found")
            for key in obj.get("data") or {}:
                value = _data(kind, obj, key)
                if value is not None:
                    env[prefix + key] = value
    for var in container.get("env") or []:
        name = var["name"]
        if "valueFrom" not in var:
            env[name] = expand(var.get("value", ""), env)
            continue
        source = var["valueFrom"]
        if "fieldRef" in source:
            env[name] = field_value(pod, source["fieldRef"]["fieldPath"], pod_ip, node)
        elif "secretKeyRef" in source:
            value = _source(lookup, "Secret", source["secretKeyRef"], source["secretKeyRef"].get("key"))
            if value is not None:
                env[name] = value
        elif "configMapKeyRef" in source:
            value = _source(lookup, "ConfigMap", source["configMapKeyRef"], source["configMapKeyRef"].get("key"))
            if value is not None:
                env[name] = value
        elif "resourceFieldRef" in source:
            env[name] = _resource(container, source["resourceFieldRef"])
        else:
            raise EnvError(f"unsupported valueFrom for {name}")
    return env


def _resource(container: dict, ref: dict) -> str:
    kind, _, resource = ref.get("resource", "").partition(".")
    value = ((container.get("resources") or {}).get(kind) or {}).get(resource)
    return str(value) if value is not None else "0"
