"""The openAPIV3Schema of each pinery kind, built from the API models.

The CRDs (`pinery.generate.crds`), the API reference (`pinery.generate.apidocs`) and `pinery validate`
(`pinery.manifest_check`) all read the schemas from here.
"""

from __future__ import annotations

import inspect
from functools import lru_cache
from typing import Any

from pinery.api.resource import ResourceInfo
from pinery.schema.convert import to_structural


def spec_schema(res: ResourceInfo) -> dict[str, Any]:
    schema = to_structural(res.spec_model.model_json_schema(mode="validation", by_alias=True))
    rules = [r.to_api() for r in res.spec_rules]
    if rules:
        schema["x-kubernetes-validations"] = rules + schema.get("x-kubernetes-validations", [])
    return schema


def status_schema(res: ResourceInfo) -> dict[str, Any]:
    return to_structural(res.status_model.model_json_schema(mode="validation", by_alias=True))


@lru_cache(maxsize=None)
def _object_schema(res: ResourceInfo) -> dict[str, Any]:
    name_schema: dict[str, Any] = {
        "type": "string",
        "description": "Name of the object" + (f": {res.name_hint}." if res.name_hint else "."),
        "maxLength": res.name_max_length,
    }
    if res.name_pattern:
        name_schema["pattern"] = res.name_pattern
    schema: dict[str, Any] = {
        "type": "object",
        "description": res.description,
        "required": ["spec"],
        "properties": {
            "apiVersion": {
                "type": "string",
                "description": "APIVersion defines the versioned schema of this representation of an object.",
            },
            "kind": {
                "type": "string",
                "description": "Kind is a string value representing the REST resource this object represents.",
            },
            # The API server allows the root metadata schema nothing but `type` and restrictions
            # of name/generateName: a description is refused (apiextensions-apiserver,
            # pkg/apiserver/schema/validation.go, validateStructuralMetadataInvariants).
            "metadata": {"type": "object", "properties": {"name": name_schema}},
            "spec": {**spec_schema(res), "description": _doc(res.spec_model)},
            "status": {**status_schema(res), "description": _doc(res.status_model)},
        },
    }
    if res.root_rules:
        schema["x-kubernetes-validations"] = [r.to_api() for r in res.root_rules]
    return schema


def _doc(model: type) -> str:
    return inspect.cleandoc(model.__doc__ or "")


def object_schema(res: ResourceInfo) -> dict[str, Any]:
    """The openAPIV3Schema of the kind (shared; do not mutate)."""
    return _object_schema(res)
