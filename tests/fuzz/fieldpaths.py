"""Field paths as pinery reports them (`spec.env[0].name`, `spec.tags[team]`), resolved in a
document or in a schema: a reported path must name something that is there, or could be."""

from __future__ import annotations

import re
from typing import Any

# What `pinery validate` reports for the object as a whole and for text that is not YAML.
ROOT, YAML = "", "yaml"
_INDEX = re.compile(r"\[(\d+)\]")


def in_document(doc: Any, path: str) -> bool:
    return _resolve(doc, path, _document_children)


def in_schema(schema: dict, path: str) -> bool:
    return _resolve(schema, path, _schema_children)


def names_something(path: str, doc: Any, schema: dict) -> bool:
    return path in (ROOT, YAML) or in_document(doc, path) or in_schema(schema, path)


def related(reported: str, expected: str) -> bool:
    """Whether a reported path names the expected field, an enclosing field or a part of it."""
    if reported == expected:
        return True
    if not reported or not expected:
        return False

    def under(inner: str, outer: str) -> bool:
        return inner.startswith(outer) and inner[len(outer)] in ".["

    return under(reported, expected) or under(expected, reported)


def dotted(path: str) -> str:
    """A path with map keys written as the API server's pruning writes them (`a.key`, not
    `a[key]`); list indexes keep their brackets."""
    return re.sub(r"\[([^\]]*)\]", lambda m: m.group(0) if m.group(1).isdigit() else "." + m.group(1), path)


def _resolve(node: Any, rest: str, children) -> bool:
    """Walk `rest` down from `node`; map keys may hold '.', so every split is tried."""
    if rest == "":
        return True
    if rest.startswith("."):
        rest = rest[1:]
    for child, remaining in children(node, rest):
        if _resolve(child, remaining, children):
            return True
    return False


def _boundary(rest: str, length: int) -> bool:
    return len(rest) == length or rest[length] in ".["


def _document_children(node: Any, rest: str):
    if isinstance(node, list):
        m = _INDEX.match(rest)
        if m and int(m.group(1)) < len(node):
            yield node[int(m.group(1))], rest[m.end():]
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        key = str(key)
        if rest.startswith(f"[{key}]"):
            yield value, rest[len(key) + 2:]
        if rest.startswith(key) and _boundary(rest, len(key)):
            yield value, rest[len(key):]


def _schema_children(schema: Any, rest: str):
    if not isinstance(schema, dict):
        return
    if "items" in schema:
        m = _INDEX.match(rest)
        if m:
            yield schema["items"], rest[m.end():]
    for key, sub in (schema.get("properties") or {}).items():
        if rest.startswith(key) and _boundary(rest, len(key)):
            yield sub, rest[len(key):]
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict) and rest.startswith("["):
        # Any key: every `]` that ends a segment could close it.
        for m in re.finditer(r"\]", rest):
            if _boundary(rest, m.end()):
                yield extra, rest[m.end():]
    if schema.get("x-kubernetes-preserve-unknown-fields") and not schema.get("properties"):
        yield {}, ""  # anything below an opaque object exists as far as the schema can say
