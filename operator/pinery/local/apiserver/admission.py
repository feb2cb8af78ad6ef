"""What a write must pass before it is stored: ObjectMeta rules for every kind, the CRD schema
of custom resources (unknown fields by `fieldValidation`, pruning, defaulting, validation with
`x-kubernetes-validations` and transition rules), and the rules of CRDs themselves.

The schema work is pinery.schema's (`prune`, `apply_defaults`, `validate`, `structural`): the
same code `pinery validate` and the CRD generator use, so there is one validator.
"""

from __future__ import annotations

import re
from typing import Any

from pinery.local.apiserver import errors
from pinery.local.apiserver.resources import ResourceType
from pinery.local.apiserver.selectors import label_key_problem, label_value_problem
from pinery.schema.crd_names import DNS1123_SUBDOMAIN_ERROR, is_dns1123_subdomain_format
from pinery.schema.crd_validation import validate_crd
from pinery.schema.errors import FieldError
from pinery.schema.prune import apply_defaults, prune
from pinery.schema.value_validation import validate

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_LABEL_MESSAGE = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
# Kinds whose names must be DNS labels (they become DNS names or path segments of their own).
_LABEL_NAMED = {("", "Namespace"), ("", "Service")}
_ANNOTATIONS_LIMIT = 256 * 1024
FIELD_VALIDATION = ("Strict", "Warn", "Ignore")


def _quote(value: Any) -> str:
    return '"' + str(value).replace('"', '\\"') + '"'


def name_problems(rtype: ResourceType, name: str, path: str = "metadata.name") -> list[FieldError]:
    if rtype.group == "rbac.authorization.k8s.io":
        # pkg/apis/rbac/validation ValidateRBACName: path.IsValidPathSegmentName (`system:discovery`).
        bad = {".": "may not be '.'", "..": "may not be '..'"}.get(name) or next(
            (f"may not contain '{c}'" for c in "/%" if c in name), None)
        return [FieldError(path, f"Invalid value: {_quote(name)}: {bad}")] if bad else []
    if (rtype.group, rtype.kind) in _LABEL_NAMED:
        if len(name) > 63:
            return [FieldError(path, f"Invalid value: {_quote(name)}: must be no more than 63 characters")]
        if not DNS_LABEL.fullmatch(name):
            return [FieldError(path, f"Invalid value: {_quote(name)}: {_LABEL_MESSAGE}")]
        return []
    if len(name) > 253:
        return [FieldError(path, f"Invalid value: {_quote(name)}: must be no more than 253 characters")]
    if not is_dns1123_subdomain_format(name):
        return [FieldError(path, f"Invalid value: {_quote(name)}: {DNS1123_SUBDOMAIN_ERROR}")]
    return []


def metadata_problems(rtype: ResourceType, obj: dict[str, Any]) -> list[FieldError]:
    """ObjectMeta rules every kind shares: name, labels, annotations, ownerReferences."""
    m = obj.get("metadata") or {}
    out = name_problems(rtype, m.get("name") or "")
    for key, value in (m.get("labels") or {}).items():
        problem = label_key_problem(key)
        if problem:
            out.append(FieldError("metadata.labels", f"Invalid value: {_quote(key)}: {problem}"))
        if not isinstance(value, str):
            out.append(FieldError("metadata.labels", f"Invalid value: {_quote(value)}: label values must be strings"))
            continue
        problem = label_value_problem(value)
        if problem:
            out.append(FieldError("metadata.labels", f"Invalid value: {_quote(value)}: {problem}"))
    annotations = m.get("annotations") or {}
    size = 0
    for key, value in annotations.items():
        problem = label_key_problem(key)
        if problem:
            out.append(FieldError("metadata.annotations", f"Invalid value: {_quote(key)}: {problem}"))
        if not isinstance(value, str):
            out.append(FieldError("metadata.annotations", f"Invalid value: {_quote(key)}: annotation values must be strings"))
            continue
        size += len(key) + len(value)
    if size > _ANNOTATIONS_LIMIT:
        out.append(FieldError("metadata.annotations", f"Too long: must have at most {_ANNOTATIONS_LIMIT} bytes"))
    controllers = 0
    for i, ref in enumerate(m.get("ownerReferences") or []):
        where = f"metadata.ownerReferences[{i}]"
        for field in ("apiVersion", "kind", "name", "uid"):
            if not (ref or {}).get(field):
                what = "uid must not be empty" if field == "uid" else f"{field} must not be empty"
                out.append(FieldError(f"{where}.{field}" if field != "uid" else f"{where}.uid", f"Invalid value: \"\": {what}"))
        if (ref or {}).get("controller"):
            controllers += 1
    if controllers > 1:
        out.append(FieldError("metadata.ownerReferences", "Invalid value: []v1.OwnerReference: Only one reference can have Controller set to true"))
    return out


def unknown_field_warnings(paths: list[str]) -> list[str]:
    return [f'unknown field "{p}"' for p in paths]


def admit_custom(
    rtype: ResourceType,
    obj: dict[str, Any],
    old: dict[str, Any] | None,
    field_validation: str,
    warnings: list[str],
) -> dict[str, Any]:
    """Prune, default and validate a custom resource against its CRD schema.

    Unknown fields are always pruned; `Strict` turns them into 400, `Warn` into warnings.
    Validation errors (schema and CEL rules; transition rules see the old object) are 422.
    """
    schema = rtype.schema
    if not schema:
        return obj
    pruned, unknown = prune(schema, obj, root=True)
    pruned_meta = dict(pruned.get("metadata") or {})
    if unknown:
        if field_validation == "Strict":
            listed = ", ".join(unknown_field_warnings(unknown))
            raise errors.bad_request(f"strict decoding error: {listed}")
        if field_validation == "Warn":
            warnings.extend(unknown_field_warnings(unknown))
    defaulted = apply_defaults(schema, pruned)
    defaulted["metadata"] = pruned_meta
    # With no old object (a create) transition rules are skipped, as on a real server.
    problems = validate(schema, defaulted, old=old)
    if problems:
        raise errors.invalid(rtype, pruned_meta.get("name", ""), problems)
    return defaulted


def check_field_validation(value: str | None) -> str:
    if value in (None, ""):
        return "Warn"
    if value not in FIELD_VALIDATION:
        raise errors.bad_request(f"fieldValidation must be one of Ignore, Warn, Strict; got {value!r}")
    return value


def crd_problems(crd: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    """What the API server rejects in a CustomResourceDefinition (pinery.schema.crd_validation)."""
    return validate_crd(crd, old)
