"""What the CRD generator, `pinery validate` and the operator need to know about each kind."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from pydantic import BaseModel

from pinery.api.base import API_VERSION, GROUP, VERSION
from pinery.schema.errors import FieldError


@dataclass(frozen=True)
class PrinterColumn:
    """One `kubectl get` column (additionalPrinterColumns)."""

    name: str
    json_path: str
    type: str
    description: str
    priority: int = 0

    def to_api(self) -> dict[str, Any]:
        col: dict[str, Any] = {
            "name": self.name,
            "type": self.type,
            "jsonPath": self.json_path,
            "description": self.description,
        }
        if self.priority:
            col["priority"] = self.priority
        return col


@dataclass(frozen=True)
class CelRule:
    """An `x-kubernetes-validations` rule. `field_path` names the field reported on failure."""

    rule: str
    message: str
    field_path: str | None = None
    reason: str | None = None

    def to_api(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rule": self.rule, "message": self.message}
        if self.field_path:
            out["fieldPath"] = self.field_path
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True)
class ResourceInfo:
    """A pinery custom resource: its names, its models and its CRD extras."""

    kind: str
    plural: str
    short_names: tuple[str, ...]
    description: str
    spec_model: type[BaseModel]
    status_model: type[BaseModel]
    printer_columns: tuple[PrinterColumn, ...]
    # Restrictions on metadata.name (the only metadata a structural schema may constrain).
    name_max_length: int = 253
    name_pattern: str | None = None
    name_hint: str = ""
    # CEL rules on the spec, each mirroring a rule of the spec model's `problems()`.
    spec_rules: tuple[CelRule, ...] = field(default=())
    # Rules on the whole object (they may read self.metadata.name and self.spec).
    root_rules: tuple[CelRule, ...] = field(default=())
    # The model-side twin of root_rules: (metadata.name, raw spec) -> problems.
    metadata_problems: Callable[[str | None, dict[str, Any]], list[FieldError]] | None = None

    group: str = GROUP
    version: str = VERSION
    categories: tuple[str, ...] = ("pinery",)

    @property
    def api_version(self) -> str:
        return API_VERSION

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def crd_name(self) -> str:
        return f"{self.plural}.{self.group}"
