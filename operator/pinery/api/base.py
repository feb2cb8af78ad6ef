"""Building blocks shared by every pinery API model.

The pydantic models in `pinery.api` are the single source of truth for the API: the CRDs are
generated from them (`pinery.generate.crds`) and the operator parses specs with them. A few
`x-pinery-*` JSON-schema markers carry what plain pydantic cannot say (immutability); the CRD
generator turns them into CEL rules and strips them.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Union

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationInfo,
    WithJsonSchema,
)
from pydantic.alias_generators import to_camel

from pinery.schema.errors import FieldError
from pinery.schema.markers import IMMUTABLE

GROUP = "pinery.dev"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
# The finalizer the operator keeps on its objects until it has cleaned up after them.
FINALIZER = f"{GROUP}/finalizer"


def controller_reference(kind: str, name: str, uid: str) -> dict[str, Any]:
    """The ownerReference that makes a pinery object the controller of a child: deleting the
    object deletes the child, and a child made for an object already gone is collected."""
    return {"apiVersion": API_VERSION, "kind": kind, "name": name, "uid": uid, "controller": True, "blockOwnerDeletion": True}


def has_finalizer(meta: dict[str, Any]) -> bool:
    """Whether the object can no longer vanish without the operator's finalizer running."""
    return FINALIZER in (meta.get("finalizers") or [])


class ApiModel(BaseModel):
    """Base of all API models: camelCase on the wire, unknown fields rejected."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        use_enum_values=True,
    )

    def to_api(self) -> dict[str, Any]:
        """The object as it appears in the Kubernetes API (camelCase, no nulls)."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


# An object pinery passes through without looking inside (Kubernetes objects, Pinecone's
# embedding parameters): kept whole by the API server.
OpaqueObject = Annotated[dict[str, Any], WithJsonSchema({"type": "object", "x-kubernetes-preserve-unknown-fields": True})]


def immutable(mode: Literal["value", "presence"] = "value") -> dict[str, Any]:
    """`json_schema_extra` for a field that cannot change after creation."""
    return {IMMUTABLE: mode}


def report_problems(problems: list[FieldError], info: ValidationInfo | None) -> None:
    """Hand cross-field problems to `pinery validate` (via the validation context), or raise.

    Cross-field rules are written as pure functions returning `FieldError`s with full paths,
    so `pinery validate` can print each with its field path; everywhere else they simply make
    model validation fail.
    """
    if not problems:
        return
    sink = info.context.get("problems") if info is not None and info.context else None
    if sink is not None:
        sink.extend(problems)
        return
    raise ValueError("; ".join(f"{p.path}: {p.message}" for p in problems))


# --- Kubernetes value types -------------------------------------------------------------

# resource.Quantity as the Kubernetes API server's own schema writes it, without the sign (every
# quantity pinery takes, resources and shared memory, must not be negative) and with an integer
# exponent: the schema's pattern allows "1e2.5", but apimachinery's parser refuses it
# (pkg/api/resource/suffix.go `interpret` reads the exponent with strconv.ParseInt, and
# quantity.go `parseQuantityString` returns ErrFormatWrong on anything after its digits), so a
# pod carrying it would be refused.
QUANTITY_PATTERN = (
    r"^\+?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
    r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?[0-9]+))?$"
)
_QUANTITY_RE = re.compile(QUANTITY_PATTERN)


def _check_quantity(value: Union[int, str]) -> Union[int, str]:
    if isinstance(value, str) and not _QUANTITY_RE.fullmatch(value):
        raise ValueError(f"{value!r} is not a Kubernetes quantity (for example 512Mi, 2, 1.5Gi)")
    if isinstance(value, int) and value < 0:
        raise ValueError(f"{value} is negative")
    return value


Quantity = Annotated[
    Union[int, str],
    AfterValidator(_check_quantity),
    WithJsonSchema(
        {
            "x-kubernetes-int-or-string": True,
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "minimum": 0,
            "pattern": QUANTITY_PATTERN,
        }
    ),
]

# Label keys, annotation keys and resource names: an optional DNS-subdomain prefix and '/', then
# a name of at most 63 characters.
QUALIFIED_NAME_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)
QualifiedName = Annotated[str, StringConstraints(min_length=1, max_length=317, pattern=QUALIFIED_NAME_PATTERN)]
LABEL_VALUE_PATTERN = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"
LabelValue = Annotated[str, StringConstraints(max_length=63, pattern=LABEL_VALUE_PATTERN)]

# DNS-1123 subdomain: names of most Kubernetes objects (ConfigMaps, Secrets, ...).
DNS_SUBDOMAIN_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
# DNS-1123 label: names that become host names (Services, pod host names).
DNS_LABEL_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
# DNS-1035 label: Service names must also start with a letter.
DNS_1035_PATTERN = r"^[a-z]([-a-z0-9]*[a-z0-9])?$"

ObjectName = Annotated[str, Field(min_length=1, max_length=253, pattern=DNS_SUBDOMAIN_PATTERN)]


class LocalObjectReference(ApiModel):
    """A reference to an object by name in the same namespace."""

    name: ObjectName = Field(description="Name of the referenced object.")


class SecretKeyRef(ApiModel):
    """A key of a Secret in the same namespace."""

    name: ObjectName = Field(description="Name of the Secret.")
    key: str = Field(
        "api-key",
        min_length=1,
        max_length=253,
        pattern=r"^[-._a-zA-Z0-9]+$",
        description="Key within the Secret whose value is used.",
    )
