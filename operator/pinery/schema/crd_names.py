"""Name rules of CustomResourceDefinitions: the DNS formats, `spec.names`, the CRD's own name.

Ported from apimachinery `pkg/util/validation/validation.go` (IsDNS1123Subdomain,
IsDNS1035Label, IsValidPortNum, their messages), `pkg/api/validation/objectmeta.go`
(ValidateObjectMeta's name and generateName part) and apiextensions-apiserver
`pkg/apis/apiextensions/validation/validation.go` (ValidateCustomResourceDefinitionNames and
the name function of ValidateCustomResourceDefinition).
"""

from __future__ import annotations

import re
from typing import Any

from pinery.schema import field
from pinery.schema.errors import FieldError

_SUBDOMAIN_FMT = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_SUBDOMAIN = re.compile(_SUBDOMAIN_FMT)
_LABEL1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_LABEL1035 = re.compile(_LABEL1035_FMT)


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """validation.RegexError."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


DNS1123_SUBDOMAIN_ERROR = regex_error(
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character", _SUBDOMAIN_FMT, "example.com")


def is_dns1123_subdomain_format(value: str) -> bool:
    return _SUBDOMAIN.fullmatch(value) is not None


def is_dns1123_subdomain(value: str) -> list[str]:
    errs = []
    if len(value) > 253:
        errs.append(max_len_error(253))
    if not is_dns1123_subdomain_format(value):
        errs.append(DNS1123_SUBDOMAIN_ERROR)
    return errs


def is_dns1035_label(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append(max_len_error(63))
    if not _LABEL1035.fullmatch(value):
        errs.append(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
            "alphabetic character, and end with an alphanumeric character", _LABEL1035_FMT, "my-name", "abc-123"))
    return errs


def is_valid_port_num(port: int) -> list[str]:
    if 1 <= port <= 65535:
        return []
    return ["must be between 1 and 65535, inclusive"]


def _mask_trailing_dash(name: str) -> str:
    """objectmeta.go maskTrailingDash: a generateName may end in '-'."""
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def validate_crd_object_name(meta: dict[str, Any], names: dict[str, Any], group: str) -> list[FieldError]:
    """ValidateObjectMeta's name part with ValidateCustomResourceDefinition's name function:
    a DNS subdomain that is exactly `<spec.names.plural>.<spec.group>`."""
    required_name = f"{names.get('plural') or ''}.{group or ''}"

    def name_fn(name: str, prefix: bool) -> list[str]:
        errs = is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)
        if name != required_name:
            errs.append('must be spec.names.plural+"."+spec.group')
        return errs

    out: list[FieldError] = []
    generate_name = meta.get("generateName") or ""
    if generate_name:
        out += [field.invalid("metadata.generateName", generate_name, m) for m in name_fn(generate_name, True)]
    name = meta.get("name") or ""
    if not name:
        out.append(field.required("metadata.name", "name or generateName is required"))
    else:
        out += [field.invalid("metadata.name", name, m) for m in name_fn(name, False)]
    return out


def validate_names(names: dict[str, Any], path: str) -> list[FieldError]:
    """validation.go ValidateCustomResourceDefinitionNames."""
    out: list[FieldError] = []
    for key in ("plural", "singular"):
        value = names.get(key) or ""
        errs = is_dns1035_label(value)
        if value and errs:
            out.append(field.invalid(f"{path}.{key}", value, ",".join(errs)))
    for key in ("kind", "listKind"):
        value = names.get(key) or ""
        errs = is_dns1035_label(value.lower())
        if value and errs:
            out.append(field.invalid(f"{path}.{key}", value, "may have mixed case, but should otherwise match: " + ",".join(errs)))
    for i, short in enumerate(names.get("shortNames") or []):
        errs = is_dns1035_label(short)
        if errs:
            out.append(field.invalid(f"{path}.shortNames[{i}]", short, ",".join(errs)))
    kind = names.get("kind") or ""
    if kind and kind == names.get("listKind"):
        out.append(field.invalid(f"{path}.listKind", kind, "kind and listKind may not be the same"))
    for i, category in enumerate(names.get("categories") or []):
        errs = is_dns1035_label(category)
        if errs:
            out.append(field.invalid(f"{path}.categories[{i}]", category, ",".join(errs)))
    return out
