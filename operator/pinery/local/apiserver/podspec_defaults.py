"""Defaults of a PodSpec that pods and pod templates share (pure).

k8s.io/kubernetes pkg/apis/core/v1/defaults.go: SetDefaults_PodSpec and SetDefaults_Container.
Pods add their own (serviceAccountName, enableServiceLinks) at creation (builtins.py);
Deployments and ReplicaSets default their templates with these alone (apps_policy.py).
"""

from __future__ import annotations

from typing import Any


def default_container(container: dict[str, Any]) -> None:
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")
    image = str(container.get("image", ""))
    tag = image.rsplit("/", 1)[-1]
    latest = "@" not in image and (":" not in tag or tag.endswith(":latest"))
    container.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
    resources = container.setdefault("resources", {})
    for kind in ("limits", "requests"):
        if isinstance(resources.get(kind), dict):
            # resource.Quantity is always served as a string (`cpu: 2` comes back as "2").
            resources[kind] = {k: str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v for k, v in resources[kind].items()}
    for port in container.get("ports") or []:
        port.setdefault("protocol", "TCP")


def default_pod_spec(spec: dict[str, Any]) -> None:
    for field in ("containers", "initContainers"):
        for container in spec.get(field) or []:
            if isinstance(container, dict):
                default_container(container)
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
