"""Field errors worded exactly as Kubernetes words them.

apimachinery `pkg/util/validation/field/errors.go`: `Error.Error()` is `<path>: <body>`, and
`ErrorBody` is the type's words (`Invalid value`, `Required value`, `Forbidden`, ...), then for
the types that show a value, `: <value>` (numbers and booleans as Go's `%v`, strings as `%q`,
nil as `"null"`), then `: <detail>` when there is one. Required, Forbidden, TooLong and Internal
never show the value. Ported here so that every checker of pinery (the structural-schema and CRD
rules, the local control plane) says what a real API server says.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from pinery.schema.errors import FieldError


@dataclass(frozen=True)
class GoRepr:
    """A value already written as Go would print it (`%#v` of a struct or slice, say)."""

    text: str


def go_value(value: Any) -> str:
    """A bad value as `ErrorBody` prints it."""
    if isinstance(value, GoRepr):
        return value.text
    if value is None:
        return '"null"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, str):
        return go_quote(value)
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def go_quote(text: str) -> str:
    """Go's `%q` (strconv.Quote) for the strings that appear in API objects."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def go_float(value: float) -> str:
    """Go's `%v` of a float64: `%g` with the shortest digits, which switches to the exponent
    form below 1e-4 and from 1e+06 (Go prints 1000000.0 as `1e+06`)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "0"
    _, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    text = "".join(map(str, digits))
    exp10 = len(text) + int(exponent) - 1
    sign = "-" if value < 0 else ""
    if exp10 < -4 or exp10 >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{sign}{mantissa}e{'+' if exp10 >= 0 else '-'}{abs(exp10):02d}"
    return f"{sign}{Decimal(repr(abs(value))).normalize():f}"


def _body(kind: str, value: Any = None, detail: str = "", *, show: bool = True) -> str:
    text = f"{kind}: {go_value(value)}" if show else kind
    return f"{text}: {detail}" if detail else text


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(path, _body("Invalid value", value, detail))


def type_invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(path, _body("Invalid value", value, detail))


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(path, _body("Required value", detail=detail, show=False))


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(path, _body("Forbidden", detail=detail, show=False))


def duplicate(path: str, value: Any) -> FieldError:
    return FieldError(path, _body("Duplicate value", value))


def not_supported(path: str, value: Any, valid: list[str] | tuple[str, ...]) -> FieldError:
    detail = "supported values: " + ", ".join(go_quote(v) for v in valid) if valid else ""
    return FieldError(path, _body("Unsupported value", value, detail))


def too_long(path: str, max_length: int) -> FieldError:
    """`field.TooLong`: the value is never shown."""
    return FieldError(path, _body("Too long", detail=f"must have at most {max_length} bytes", show=False))


def too_long_max_length(path: str, max_length: int) -> FieldError:
    """`field.TooLongMaxLength`."""
    detail = f"may not be longer than {max_length}" if max_length >= 0 else "value is too long"
    return FieldError(path, _body("Too long", detail=detail, show=False))


def too_many(path: str, actual: int, max_quantity: int) -> FieldError:
    detail = f"must have at most {max_quantity} items" if max_quantity >= 0 else "has too many items"
    if actual >= 0:
        return FieldError(path, _body("Too many", actual, detail))
    return FieldError(path, _body("Too many", detail=detail, show=False))


def internal(path: str, detail: str) -> FieldError:
    return FieldError(path, _body("Internal error", detail=detail, show=False))


def sort_errors(errors: list[FieldError]) -> list[FieldError]:
    """`sort.Slice(allErrs, ... Error() < Error())`, as ValidateStructural orders its result."""
    return sorted(errors, key=str)


def dedup(errors: list[FieldError]) -> list[FieldError]:
    """`ErrorList.ToAggregate`: the same message once, first occurrence kept."""
    seen: set[str] = set()
    out = []
    for err in errors:
        if str(err) not in seen:
            seen.add(str(err))
            out.append(err)
    return out
