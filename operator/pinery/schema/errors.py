"""One shape for every validation problem pinery reports."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class FieldError:
    """A problem with one field. `path` is dotted, as Kubernetes writes it: `spec.env[0].name`."""

    path: str
    message: str

    def under(self, prefix: str) -> "FieldError":
        """The same problem, seen from an enclosing object at `prefix`."""
        if not prefix:
            return self
        return FieldError(join_path(prefix, self.path) if self.path else prefix, self.message)

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


def join_path(prefix: str, part: str | int) -> str:
    """Extend a field path by a property name, list index or map key."""
    if isinstance(part, int):
        return f"{prefix}[{part}]"
    if not prefix:
        return part
    if part.startswith("["):
        return prefix + part
    return f"{prefix}.{part}"
