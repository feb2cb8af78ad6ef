"""Pinecone metadata filters: validation and evaluation (pure).

Supported: `$eq $ne $gt $gte $lt $lte $in $nin $exists $and $or` and the implicit-equality
shorthand `{"genre": "drama"}`. A field holding a list of strings matches `$eq`/`$in` when any
element matches, and `$ne`/`$nin` when no element does. Fields that are absent match `$ne`,
`$nin` and `$exists: false` only. Invalid filters raise `FilterError` with a message naming the
offending part; the data plane turns it into a 400.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

Predicate = Callable[[Mapping[str, Any]], bool]

COMPARISONS = ("$gt", "$gte", "$lt", "$lte")
MAX_IN_VALUES = 10_000  # Pinecone's limit on the values of one $in or $nin
FIELD_OPERATORS = ("$eq", "$ne", "$in", "$nin", "$exists", *COMPARISONS)


class FilterError(ValueError):
    """The filter is not a valid Pinecone metadata filter."""


def _show(value: Any) -> str:
    try:
        return json.dumps(value, separators=(",", ":"))
    except (TypeError, ValueError):
        return repr(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_scalar(value: Any) -> bool:
    return isinstance(value, (str, bool)) or _is_number(value)


def _values(field_value: Any) -> list[Any]:
    return list(field_value) if isinstance(field_value, list) else [field_value]


def _equal(a: Any, b: Any) -> bool:
    # True == 1 in Python; Pinecone keeps booleans and numbers apart.
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return a == b


def _key(value: Any) -> tuple[str, Any]:
    """A hashable key under which values are equal exactly when `_equal` says so."""
    return ("b" if isinstance(value, bool) else "n" if _is_number(value) else "s", value)


def _field_predicate(field: str, op: str, operand: Any) -> Predicate:
    if op in ("$eq", "$ne"):
        if not _is_scalar(operand):
            raise FilterError(
                f"invalid filter for field '{field}': {op} expects a string, number or boolean, "
                f"got {_show(operand)}")
        if op == "$eq":
            return lambda m: field in m and any(_equal(v, operand) for v in _values(m[field]))
        return lambda m: field not in m or not any(_equal(v, operand) for v in _values(m[field]))
    if op in ("$in", "$nin"):
        if not isinstance(operand, list) or not all(_is_scalar(v) for v in operand):
            raise FilterError(
                f"invalid filter for field '{field}': {op} expects an array of strings, numbers or "
                f"booleans, got {_show(operand)}")
        if len(operand) > MAX_IN_VALUES:
            raise FilterError(
                f"invalid filter for field '{field}': {op} accepts at most {MAX_IN_VALUES} values, got {len(operand)}")
        options = {_key(o) for o in operand}  # a set: up to 10,000 values against every record

        def hit(m: Mapping[str, Any]) -> bool:
            return field in m and any(_key(v) in options for v in _values(m[field]))

        return hit if op == "$in" else (lambda m: not hit(m))
    if op in COMPARISONS:
        if not _is_number(operand):
            raise FilterError(
                f"invalid filter for field '{field}': {op} expects a number, got {_show(operand)}")
        compare = {
            "$gt": lambda v: v > operand, "$gte": lambda v: v >= operand,
            "$lt": lambda v: v < operand, "$lte": lambda v: v <= operand,
        }[op]
        return lambda m: field in m and _is_number(m[field]) and compare(m[field])
    if op == "$exists":
        if not isinstance(operand, bool):
            raise FilterError(
                f"invalid filter for field '{field}': $exists expects a boolean, got {_show(operand)}")
        return (lambda m: field in m) if operand else (lambda m: field not in m)
    raise FilterError(
        f"invalid filter for field '{field}': unknown operator '{op}' (supported: "
        f"{', '.join(FIELD_OPERATORS)})")


def _all(predicates: list[Predicate]) -> Predicate:
    if len(predicates) == 1:
        return predicates[0]
    return lambda m: all(p(m) for p in predicates)


def _any(predicates: list[Predicate]) -> Predicate:
    return lambda m: any(p(m) for p in predicates)


def compile_filter(spec: Any) -> Predicate:
    """A predicate over a record's metadata; raises FilterError for an invalid filter."""
    if not isinstance(spec, dict):
        raise FilterError(f"filter must be an object, got {_show(spec)}")
    predicates: list[Predicate] = []
    for key, value in spec.items():
        if key in ("$and", "$or"):
            if not isinstance(value, list) or not value:
                raise FilterError(f"{key} expects a non-empty array of filters, got {_show(value)}")
            parts = [compile_filter(part) for part in value]
            predicates.append(_all(parts) if key == "$and" else _any(parts))
        elif key.startswith("$"):
            raise FilterError(f"unknown top-level operator '{key}' (supported: $and, $or)")
        elif isinstance(value, dict):
            if not value:
                raise FilterError(f"invalid filter for field '{key}': empty condition")
            predicates.extend(_field_predicate(key, op, operand) for op, operand in value.items())
        else:
            predicates.append(_field_predicate(key, "$eq", value))
    if not predicates:
        return lambda m: True
    return _all(predicates)


def validate_metadata(metadata: Any, where: str) -> dict[str, Any]:
    """Check a record's metadata the way Pinecone does: flat, with scalar or string-list values."""
    if not isinstance(metadata, dict):
        raise FilterError(f"metadata of {where} must be an object, got {_show(metadata)}")
    for key, value in metadata.items():
        if _is_scalar(value):
            continue
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            continue
        raise FilterError(
            f"metadata value of field '{key}' in {where} must be a string, number, boolean or list "
            f"of strings, got {_show(value)}")
    return metadata
