"""Small builders and waiters shared by the integration tests."""

from __future__ import annotations

import json
from typing import Any

from tests.support.waiting import wait_for

WIDGET_GROUP, WIDGET_VERSION, WIDGET_PLURAL = "test.pinery.dev", "v1", "widgets"


def configmap(name: str, labels: dict[str, str] | None = None, **data: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


def pod(name: str, labels: dict[str, str] | None = None, containers: list[dict] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = labels
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": containers or [{"name": "main", "image": "python:3.11", "command": ["python", "-V"]}]},
    }


def status_of(exc: Exception) -> dict[str, Any]:
    """The Status body of a kubernetes.client ApiException."""
    return json.loads(exc.body)  # type: ignore[attr-defined]


def widget_crd(**version_extra: Any) -> dict[str, Any]:
    """A small CRD with a status subresource, defaults, pruning and CEL rules."""
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "required": ["size"],
                "properties": {
                    "size": {"type": "integer", "minimum": 1, "maximum": 10},
                    "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
                    "zone": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "zone is immutable"}]},
                    "a": {"type": "string"},
                    "b": {"type": "string"},
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                },
                "x-kubernetes-validations": [
                    {"rule": "(has(self.a) ? 1 : 0) + (has(self.b) ? 1 : 0) <= 1", "message": "at most one of a and b may be set"},
                ],
            },
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        },
    }
    version = {
        "name": WIDGET_VERSION,
        "served": True,
        "storage": True,
        "subresources": {"status": {}},
        "schema": {"openAPIV3Schema": schema},
        "additionalPrinterColumns": [
            {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
            {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
        ],
        **version_extra,
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{WIDGET_PLURAL}.{WIDGET_GROUP}"},
        "spec": {
            "group": WIDGET_GROUP,
            "names": {"kind": "Widget", "plural": WIDGET_PLURAL, "singular": "widget", "shortNames": ["wd"], "listKind": "WidgetList"},
            "scope": "Namespaced",
            "versions": [version],
        },
    }


def widget(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"{WIDGET_GROUP}/{WIDGET_VERSION}", "kind": "Widget", "metadata": {"name": name}, "spec": spec}


def install_widgets(cluster) -> None:
    """Create the Widget CRD and wait until it is served."""
    response = cluster.http("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=widget_crd())
    assert response.status_code in (201, 409), response.text

    def served() -> bool:
        listing = cluster.http("GET", f"/apis/{WIDGET_GROUP}/{WIDGET_VERSION}")
        return listing.ok and any(r["name"] == WIDGET_PLURAL for r in listing.json()["resources"])

    wait_for(served, what="the Widget CRD in discovery")


def widgets_path(namespace: str = "default", name: str = "", sub: str = "") -> str:
    path = f"/apis/{WIDGET_GROUP}/{WIDGET_VERSION}/namespaces/{namespace}/{WIDGET_PLURAL}"
    if name:
        path += f"/{name}"
    if sub:
        path += f"/{sub}"
    return path
