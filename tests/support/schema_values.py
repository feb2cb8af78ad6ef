"""Hypothesis strategies for values that satisfy a structural (CRD) schema.

Every field, bound, pattern and enum comes from the schema that `pinery crds` generates, so the
generators follow the API as it changes. CEL rules are not solved here: map keys follow the key
rules the CRD generator writes (`self.all(k, k.matches(...) && size(k) <= N)`), and the
cross-field rules of each kind are shaped in `tests.support.manifests`.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping

from hypothesis import strategies as st

from pinery.schema.value_validation import schema_regex

# Schema path (`podTemplate.volumes[*]`) -> strategy, for what a schema cannot describe: the
# Kubernetes objects pinery passes through unchanged, and values chosen for a test's purpose.
# OMIT leaves an optional field out.
Overrides = Mapping[str, st.SearchStrategy]
OMIT = st.nothing()

# Free-form strings stay short and printable: length limits are probed by the mutations.
_TEXT = st.characters(codec="utf-8", exclude_categories=("Cs", "Cc"))
MAX_FREE_TEXT = 12
MAX_COLLECTION = 3

_KEY_PATTERN = re.compile(r"k\.matches\(r'([^']*)'\)")
_KEY_MIN = re.compile(r"size\(k\) >= (\d+)")
_KEY_MAX = re.compile(r"size\(k\) <= (\d+)")


def go_regex(pattern: str) -> re.Pattern:
    """`pattern` for Python's `re` (which hypothesis generates from) with RE2's meaning of `$`:
    the end of the text, never the place before a final newline."""
    out, in_class, i = [], False, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
        elif c == "]" and in_class:
            in_class = False
        out.append(r"\Z" if c == "$" and not in_class else c)
        i += 1
    return re.compile("".join(out))


def matches(pattern: str, value: str) -> bool:
    """Whether the API server's reading of `pattern` accepts `value`."""
    return schema_regex(pattern).search(value) is not None


def key_constraints(schema: dict) -> tuple[str | None, int, int]:
    """(pattern, min length, max length) of the keys of a map, from its key rule."""
    pattern, low, high = None, 0, 253
    for rule in schema.get("x-kubernetes-validations", []):
        text = rule["rule"]
        if not text.startswith("self.all(k,"):
            continue
        if m := _KEY_PATTERN.search(text):
            pattern = m.group(1)
        if m := _KEY_MIN.search(text):
            low = int(m.group(1))
        if m := _KEY_MAX.search(text):
            high = int(m.group(1))
    return pattern, low, high


def strings(pattern: str | None, low: int = 0, high: int | None = None) -> st.SearchStrategy[str]:
    high = 2**31 if high is None else high
    if pattern:
        return st.from_regex(go_regex(pattern), fullmatch=True).filter(lambda s: low <= len(s) <= high)
    return st.text(_TEXT, min_size=low, max_size=max(low, min(high, MAX_FREE_TEXT)))


def integers(schema: dict) -> st.SearchStrategy[int]:
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and schema.get("exclusiveMinimum"):
        low += 1
    if high is not None and schema.get("exclusiveMaximum"):
        high -= 1
    # Unbounded integers stay within what every JSON parser reads exactly.
    return st.integers(low if low is not None else -(2**31), high if high is not None else 2**31)


def numbers(schema: dict) -> st.SearchStrategy[float]:
    return st.floats(
        schema.get("minimum"),
        schema.get("maximum", 1e9),
        exclude_min=bool(schema.get("exclusiveMinimum")),
        exclude_max=bool(schema.get("exclusiveMaximum")),
        allow_nan=False,
        allow_infinity=False,
        allow_subnormal=False,
    )


def values(schema: dict, path: str = "", overrides: Overrides | None = None) -> st.SearchStrategy[Any]:
    """Values valid under `schema` (ignoring CEL rules other than map-key rules)."""
    overrides = overrides or {}
    if path in overrides:
        return overrides[path]
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if schema.get("x-kubernetes-int-or-string"):
        ints = integers(schema) if "minimum" in schema or "maximum" in schema else st.integers(0, 10**6)
        return st.one_of(ints, strings(schema.get("pattern"), schema.get("minLength", 0), schema.get("maxLength")))
    kind = schema.get("type")
    if kind == "object":
        return _objects(schema, path, overrides)
    if kind == "array":
        item = values(schema.get("items", {}), f"{path}[*]", overrides)
        low = schema.get("minItems", 0)
        high = max(low, min(schema.get("maxItems", MAX_COLLECTION), MAX_COLLECTION))
        unique_by = _map_key(schema)
        return st.lists(item, min_size=low, max_size=high, unique_by=unique_by)
    if kind == "string":
        return strings(schema.get("pattern"), schema.get("minLength", 0), schema.get("maxLength"))
    if kind == "integer":
        return integers(schema)
    if kind == "number":
        return numbers(schema)
    if kind == "boolean":
        return st.booleans()
    raise ValueError(f"{path}: no strategy for schema {schema}")


def _map_key(schema: dict) -> Callable[[Any], Any] | None:
    if schema.get("x-kubernetes-list-type") != "map":
        return None
    keys = schema.get("x-kubernetes-list-map-keys", [])
    return lambda item: tuple(str(item.get(k)) for k in keys)


def _objects(schema: dict, path: str, overrides: Overrides) -> st.SearchStrategy[dict]:
    props = schema.get("properties")
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        pattern, low, high = key_constraints(schema)
        keys = strings(pattern, max(low, 1) if pattern is None else low, high)
        size = min(schema.get("maxProperties", MAX_COLLECTION), MAX_COLLECTION)
        return st.dictionaries(keys, values(extra, f"{path}[*]", overrides), max_size=size)
    if not props:
        return st.just({})  # preserve-unknown-fields objects: the test supplies content
    required = set(schema.get("required", []))
    where = lambda name: f"{path}.{name}" if path else name  # noqa: E731
    child = lambda name: values(props[name], where(name), overrides)  # noqa: E731
    return st.fixed_dictionaries(
        {name: child(name) for name in props if name in required},
        optional={name: child(name) for name in props if name not in required and overrides.get(where(name)) is not OMIT},
    )


def printable_outside(pattern: str | None, low: int, high: int | None) -> list[str]:
    """Strings that break a string schema, by pattern or by length (for mutations)."""
    candidates = ["", " ", "UPPER_case", "has space", "-dash-", "ünïcödé", "trailing\n", "x" * ((high or 64) + 1)]
    out = []
    for value in candidates:
        too_short, too_long = len(value) < low, high is not None and len(value) > high
        if too_short or too_long or (pattern and not matches(pattern, value)):
            out.append(value)
    return out

