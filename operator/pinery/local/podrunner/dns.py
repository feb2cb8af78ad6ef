"""Cluster DNS on loopback: every pod address and name, without touching the system resolver.

Pods get a loopback address derived from their namespace and name, so a pod's DNS name
(`<hostname>.<subdomain>.<namespace>.svc.<domain>`) resolves before the pod even starts, as
with a real headless Service. Headless Service names resolve to the addresses of their pods.
A Service name resolves to its ready pods (all of its pods with
`publishNotReadyAddresses`), never to a virtual IP: connect to the pods' own port (targetPort).
Resolution is offered two ways: a hosts file that the Python resolver hook (sitecustomize)
reads, and rewriting of names in a container's environment and arguments, for code that
resolves outside Python (torch's TCPStore, for example).
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
import socket
from dataclasses import dataclass, field

DEFAULT_DOMAIN = "cluster.local"
# A DNS name with at least one dot (bare words are never rewritten: too easy to hit by mistake).
_NAME = re.compile(r"(?<![-a-zA-Z0-9.])[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+(?![-a-zA-Z0-9])")
# Variables whose whole value is a host (or host:port) even when it has no dot.
HOST_VARIABLES = ("MASTER_ADDR", "PET_MASTER_ADDR", "PET_RDZV_ENDPOINT")


def pod_ip(namespace: str, name: str, salt: int = 0) -> str:
    """A stable loopback address for a pod, away from 127.0.0.0/16 (used by the host itself);
    another `salt` gives another address, for the rare name whose address is taken."""
    key = f"{namespace}/{name}" + (f"#{salt}" if salt else "")
    h = int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big")
    return f"127.{100 + h % 100}.{(h >> 8) % 256}.{1 + (h >> 16) % 254}"


def loopback_range_usable() -> bool:
    """Whether addresses beyond 127.0.0.1 work here (Linux routes 127/8 to lo; macOS does
    not without aliases, and then every pod shares 127.0.0.1)."""
    with socket.socket() as sock:
        try:
            sock.bind(("127.100.0.1", 0))
        except OSError:
            return False
    return True


@dataclass
class ClusterDNS:
    """Names known to the cluster: pods with hostname/subdomain, and Services."""

    domain: str = DEFAULT_DOMAIN
    # Pods get their own loopback address, or all share this one.
    shared_address: str | None = None
    # (namespace, subdomain) -> hostname -> ip
    _pods: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    # (namespace, service) -> (selector, publishNotReadyAddresses)
    _services: dict[tuple[str, str], tuple[dict[str, str], bool]] = field(default_factory=dict)
    # (namespace, pod name) -> (labels, ip, ready)
    _labels: dict[tuple[str, str], tuple[dict[str, str], str, bool]] = field(default_factory=dict)
    # ip -> (namespace, pod name): no two pods share an address
    _owners: dict[str, tuple[str, str]] = field(default_factory=dict)

    def add_pod(self, pod: dict) -> str:
        meta, spec = pod["metadata"], pod.get("spec") or {}
        ns, name = meta.get("namespace", "default"), meta["name"]
        ip = self.address(ns, name)
        hostname, subdomain = spec.get("hostname"), spec.get("subdomain")
        if hostname and subdomain:
            self._pods.setdefault((ns, subdomain), {})[hostname] = ip
        self._labels[(ns, name)] = (dict(meta.get("labels") or {}), ip, _ready(pod))
        self._owners[ip] = (ns, name)
        return ip

    def address(self, namespace: str, name: str) -> str:
        """The pod's address: its own hash, unless another known pod holds that one."""
        if self.shared_address:
            return self.shared_address
        known = self._labels.get((namespace, name))
        if known is not None:
            return known[1]
        salt = 0
        while self._owners.get(pod_ip(namespace, name, salt), (namespace, name)) != (namespace, name):
            salt += 1
        return pod_ip(namespace, name, salt)

    def remove_pod(self, pod: dict) -> None:
        meta, spec = pod["metadata"], pod.get("spec") or {}
        ns = meta.get("namespace", "default")
        known = self._labels.pop((ns, meta["name"]), None)
        if known is not None and self._owners.get(known[1]) == (ns, meta["name"]):
            del self._owners[known[1]]
        hosts = self._pods.get((ns, spec.get("subdomain") or ""))
        if hosts and spec.get("hostname") in hosts:
            del hosts[spec["hostname"]]

    def add_service(self, service: dict) -> None:
        meta, spec = service["metadata"], service.get("spec") or {}
        selector = dict(spec.get("selector") or {})
        self._services[(meta.get("namespace", "default"), meta["name"])] = (selector, bool(spec.get("publishNotReadyAddresses")))

    def remove_service(self, service: dict) -> None:
        meta = service["metadata"]
        self._services.pop((meta.get("namespace", "default"), meta["name"]), None)

    def _candidates(self, name: str, namespace: str) -> list[str]:
        name = name.rstrip(".").lower()
        if name.endswith("." + self.domain):
            return [name]
        return [f"{name}.{namespace}.svc.{self.domain}", f"{name}.svc.{self.domain}", f"{name}.{self.domain}"]

    def resolve(self, name: str, namespace: str = "default") -> list[str]:
        """Addresses of `name` as seen from a pod in `namespace` (search path applied)."""
        for fqdn in self._candidates(name, namespace):
            labels = fqdn[: -len(".svc." + self.domain)].split(".") if fqdn.endswith(".svc." + self.domain) else []
            if len(labels) == 3:  # hostname.subdomain.namespace
                hostname, subdomain, ns = labels
                ip = self._pods.get((ns, subdomain), {}).get(hostname)
                if ip:
                    return [ip]
            if len(labels) == 2:  # service.namespace
                service, ns = labels
                known = self._services.get((ns, service))
                if known is not None:
                    selector, not_ready_too = known
                    ips = sorted({
                        ip for (pod_ns, _), (pod_labels, ip, ready) in self._labels.items()
                        if pod_ns == ns and selector and (ready or not_ready_too)
                        and all(pod_labels.get(k) == v for k, v in selector.items())
                    })
                    if ips:
                        return ips
        return []

    def hosts(self) -> dict[str, list[str]]:
        """Every fully-qualified name -> its addresses (the resolver hook's table)."""
        table: dict[str, list[str]] = {}
        for (ns, subdomain), hosts in self._pods.items():
            for hostname, ip in hosts.items():
                table[f"{hostname}.{subdomain}.{ns}.svc.{self.domain}"] = [ip]
        for ns, service in self._services:
            ips = self.resolve(f"{service}.{ns}.svc.{self.domain}", ns)
            if ips:
                table[f"{service}.{ns}.svc.{self.domain}"] = ips
        return table

    def rewrite(self, text: str, namespace: str) -> str:
        """`text` with every resolvable dotted cluster name replaced by its address."""
        def replace(match: re.Match) -> str:
            ips = self.resolve(match.group(0), namespace)
            return ips[0] if ips else match.group(0)

        return _NAME.sub(replace, text)

    def rewrite_env(self, env: dict[str, str], namespace: str) -> dict[str, str]:
        out = {}
        for key, value in env.items():
            if key in HOST_VARIABLES:
                host, sep, port = value.rpartition(":") if ":" in value else (value, "", "")
                ips = self.resolve(host, namespace)
                value = f"{ips[0]}{sep}{port}" if ips else self.rewrite(value, namespace)
            else:
                value = self.rewrite(value, namespace)
            out[key] = value
        return out


def _ready(pod: dict) -> bool:
    """Whether a Service sends traffic to the pod: running, with its Ready condition True."""
    status = pod.get("status") or {}
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
    return ready and status.get("phase") == "Running" and not pod["metadata"].get("deletionTimestamp")


def is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False
