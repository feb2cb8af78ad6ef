"""A v1 CustomResourceDefinition (JSON) as the API server validates it: defaulted, then converted
to the internal `apiextensions` form.

apiextensions-apiserver `pkg/apis/apiextensions/v1/defaults.go` (SetDefaults_CustomResourceDefinition,
SetDefaults_CustomResourceDefinitionSpec, SetDefaults_ServiceReference) and `v1/conversion.go`
(Convert_v1_CustomResourceDefinitionSpec_To_apiextensions_CustomResourceDefinitionSpec,
Convert_v1_CustomResourceConversion_To_apiextensions_CustomResourceConversion): `spec.version`
is the first version's name, and per-version schema, subresources, printer columns and selectable fields that are
identical in every version move up to `spec.validation`, `spec.subresources` and
`spec.additionalPrinterColumns`. That is why a real server reports a schema problem of a
single-version CRD at `spec.validation.openAPIV3Schema...`. Also the strategy's
PrepareForCreate/PrepareForUpdate (`pkg/registry/customresourcedefinition/strategy.go`), which
decide `status.storedVersions`.
"""

from __future__ import annotations

import copy
from typing import Any


def _empty(value: Any) -> bool:
    return value is None or value == [] or value == {}


def _same(a: Any, b: Any) -> bool:
    """apiequality.Semantic.DeepEqual: nil and empty slices and maps are equal."""
    if _empty(a) and _empty(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        keys = {k for k in a.keys() | b.keys() if not (_empty(a.get(k)) and _empty(b.get(k)))}
        return all(_same(a.get(k), b.get(k)) for k in keys)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def internal_spec(crd: dict[str, Any]) -> dict[str, Any]:
    """The internal spec of a v1 CRD: keys as in the v1 JSON, plus `version`, `validation`,
    `subresources` and `additionalPrinterColumns` at the top, and the conversion flattened
    (`webhookClientConfig`, `conversionReviewVersions`). Per-version fields moved up are None."""
    spec = copy.deepcopy(crd.get("spec") or {})
    if not isinstance(spec.get("names"), dict):
        spec["names"] = {}
    names = spec["names"]
    kind = names.get("kind") or ""
    if not names.get("singular"):
        names["singular"] = kind.lower()
    if not names.get("listKind") and kind:
        names["listKind"] = kind + "List"
    conversion = spec.get("conversion")
    if conversion is None:
        conversion = {"strategy": "None"}
    webhook = conversion.get("webhook") or {}
    flat: dict[str, Any] = {"strategy": conversion.get("strategy") or ""}
    if conversion.get("webhook") is not None:
        flat["conversionReviewVersions"] = webhook.get("conversionReviewVersions")
        client = webhook.get("clientConfig")
        if client is not None:
            client = copy.deepcopy(client)
            if client.get("service") is not None and client["service"].get("port") is None:
                client["service"]["port"] = 443
            flat["webhookClientConfig"] = client
    spec["conversion"] = flat
    spec["preserveUnknownFields"] = bool(spec.get("preserveUnknownFields"))
    versions = [dict(v) if isinstance(v, dict) else {} for v in (spec.get("versions") or [])]
    spec["versions"] = versions
    spec["validation"] = spec["subresources"] = spec["additionalPrinterColumns"] = spec["selectableFields"] = None
    if versions:
        spec["version"] = versions[0].get("name") or ""
        for key, top in (("schema", "validation"), ("subresources", "subresources"),
                         ("additionalPrinterColumns", "additionalPrinterColumns"),
                         ("selectableFields", "selectableFields")):
            first = versions[0].get(key)
            pointer = key in ("schema", "subresources")  # nil and empty pointers differ, slices do not
            if all(_same(v.get(key), first) and (not pointer or (v.get(key) is None) == (first is None)) for v in versions):
                spec[top] = first
                for v in versions:
                    v[key] = None
    else:
        spec["version"] = ""
    return spec


def stored_versions(spec: dict[str, Any], old_status: dict[str, Any] | None) -> list[str]:
    """status.storedVersions after PrepareForCreate (old_status None) or PrepareForUpdate."""
    stored = list((old_status or {}).get("storedVersions") or [])
    for v in spec.get("versions") or []:
        if v.get("storage"):
            if v.get("name") not in stored:
                stored.append(v.get("name"))
            break
    return stored


def established(crd: dict[str, Any] | None) -> bool:
    for cond in ((crd or {}).get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Established" and cond.get("status") == "True":
            return True
    return False
