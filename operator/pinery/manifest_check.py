"""`pinery validate`: check manifests against the CRD schemas and the models' rules.

Works on text, so it serves files, stdin and tests alike. Each problem is reported as
`<Kind>/<name>: <field path>: <message>`; unparsable YAML and unknown kinds are problems too.
CustomResourceDefinitions are checked as kube-apiserver checks them (pinery.schema.crd_validation).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Iterator

import yaml
from pydantic import ValidationError

from pinery import kube_yaml
from pinery.api import RESOURCES, resource_for_kind
from pinery.api.resource import ResourceInfo
from pinery.generate.crd_schema import object_schema
from pinery.schema import field
from pinery.schema.crd_names import is_dns1123_subdomain
from pinery.schema.crd_validation import validate_crd
from pinery.schema.errors import FieldError, join_path
from pinery.schema.prune import apply_defaults, prune
from pinery.schema.value_validation import validate

_DOC_SEPARATOR = re.compile(r"^(---|\.\.\.)(\s.*)?$")

UNKNOWN_KIND = "Unknown"
CRD_API_VERSION = "apiextensions.k8s.io/v1"


@dataclass(frozen=True)
class Problem:
    kind: str
    name: str
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.kind}/{self.name}: {self.path or '(root)'}: {self.message}"


@dataclass(frozen=True)
class Document:
    """One YAML document of a stream: its position, and the parsed object or the parse error."""

    number: int
    line: int
    obj: Any = None
    error: str | None = None

    @property
    def label(self) -> str:
        return f"document {self.number} (line {self.line})"


def split_documents(text: str) -> Iterator[tuple[int, str]]:
    """(first line number, text) of each YAML document; `---` at column 0 always separates."""
    start = 1
    lines: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = _DOC_SEPARATOR.match(line)
        if match:
            yield start, "\n".join(lines)
            rest = (match.group(2) or "").strip()
            if rest and not rest.startswith("#"):
                start, lines = number, [rest]  # `--- {inline: document}`
            else:
                start, lines = number + 1, []
        else:
            lines.append(line)
    yield start, "\n".join(lines)


def parse_documents(text: str) -> list[Document]:
    """Every non-empty document, parsed on its own so that one bad document hides no other."""
    docs: list[Document] = []
    for line, chunk in split_documents(text):
        try:
            obj = kube_yaml.load(chunk)
        except yaml.YAMLError as exc:
            docs.append(Document(len(docs) + 1, line, error=_yaml_message(exc, line)))
            continue
        if obj is not None:
            docs.append(Document(len(docs) + 1, line, obj=_join_surrogates(obj)))
    return docs


def _join_surrogates(value: Any) -> Any:
    """Strings with characters beyond U+FFFF as JSON writes them (`"\\ud83d\\ude00"`): PyYAML
    keeps the two halves apart, where every JSON reader (the API server's too) joins them."""
    if isinstance(value, str):
        if any("\ud800" <= c <= "\udfff" for c in value):
            try:
                return value.encode("utf-16", "surrogatepass").decode("utf-16")
            except UnicodeDecodeError:
                return value  # a lone half: reported as an invalid string
        return value
    if isinstance(value, list):
        return [_join_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_join_surrogates(k): _join_surrogates(v) for k, v in value.items()}
    return value


def _yaml_message(exc: yaml.YAMLError, first_line: int) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    if mark is not None:
        return f"{problem} (line {first_line + mark.line}, column {mark.column + 1})"
    return problem


def validate_text(text: str) -> tuple[list[Problem], list[tuple[str, str]]]:
    """(problems, (kind, name) of every valid object) for a YAML or JSON stream."""
    problems: list[Problem] = []
    valid: list[tuple[str, str]] = []
    for doc in parse_documents(text):
        if doc.error is not None:
            problems.append(Problem(UNKNOWN_KIND, doc.label, "yaml", doc.error))
            continue
        for kind, name, found in _validate_items(doc.obj, doc.label):
            if found:
                problems.extend(found)
            else:
                valid.append((kind, name))
    return problems, valid


def _validate_items(obj: Any, label: str) -> Iterator[tuple[str, str, list[Problem]]]:
    """Validate an object, or each item of a `kind: List`."""
    if isinstance(obj, dict) and obj.get("kind") == "List" and isinstance(obj.get("items"), list):
        for i, item in enumerate(obj["items"]):
            yield from _validate_items(item, f"{label} item {i}")
        return
    kind, name = _identify(obj, label)
    yield kind, name, [Problem(kind, name, e.path, e.message) for e in validate_object(obj)]


def _identify(obj: Any, label: str) -> tuple[str, str]:
    if not isinstance(obj, dict):
        return UNKNOWN_KIND, label
    raw_kind, raw_meta = obj.get("kind"), obj.get("metadata")
    kind = raw_kind if isinstance(raw_kind, str) and raw_kind else UNKNOWN_KIND
    meta = raw_meta if isinstance(raw_meta, dict) else {}
    name = meta.get("name") or meta.get("generateName") or label
    return kind, str(name)


def validate_object(obj: Any) -> list[FieldError]:
    """Every problem of one manifest, as the API server and the operator would see it."""
    if not isinstance(obj, dict):
        return [FieldError("", f"must be a mapping with apiVersion, kind, metadata and spec, not {_type_name(obj)}")]
    if obj.get("kind") == "CustomResourceDefinition" and obj.get("apiVersion") == CRD_API_VERSION:
        # Any CRD (pinery's, or one beside it in a GitOps folder) with kube-apiserver's own rules.
        return validate_crd(obj)
    problems = _type_problems(obj)
    # Without problems, the kind is a pinery kind.
    res = None if problems else resource_for_kind(obj["kind"])
    if res is None:
        return problems
    return _metadata_problems(obj) + _resource_problems(res, obj)


def _type_problems(obj: dict) -> list[FieldError]:
    """apiVersion and kind: without a pinery kind nothing else can be checked."""
    names = [r.kind for r in RESOURCES]
    kinds = ", ".join(names[:-1]) + " and " + names[-1]
    api_version = RESOURCES[0].api_version
    kind, version = obj.get("kind"), obj.get("apiVersion")
    problems = []
    if not kind:
        problems.append(FieldError("kind", "Required value"))
    elif not isinstance(kind, str) or resource_for_kind(kind) is None:
        problems.append(FieldError("kind", f"unknown kind {_show(kind)}: pinery validates {kinds} ({api_version})"))
    if not version:
        problems.append(FieldError("apiVersion", "Required value"))
    elif version != api_version and not problems:
        problems.append(FieldError("apiVersion", f"Unsupported value: {_show(version)}: supported values: {_show(api_version)}"))
    return problems


def _metadata_problems(obj: dict) -> list[FieldError]:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return [FieldError("metadata", "Required value")]
    name = meta.get("name")
    if not name and not meta.get("generateName"):
        return [FieldError("metadata.name", "Required value: name or generateName is required")]
    if name and not isinstance(name, str):
        return [field.invalid("metadata.name", name, "must be a string")]
    # The API server's words: apimachinery ValidateObjectMeta with NameIsDNSSubdomain (crd_names).
    return [field.invalid("metadata.name", name, msg) for msg in (is_dns1123_subdomain(name) if name else [])]


def _resource_problems(res: ResourceInfo, obj: dict) -> list[FieldError]:
    schema = object_schema(res)
    obj = {k: v for k, v in obj.items() if k != "status"}  # the API server ignores status on create
    pruned, unknown = prune(schema, obj, root=True)
    problems = [FieldError(path, f"unknown field {_show(path)}") for path in unknown]
    defaulted = apply_defaults(schema, pruned)
    problems += validate(schema, defaulted, rules=False)
    if not problems:
        problems += _model_problems(res, defaulted["spec"])
    meta = defaulted.get("metadata") if isinstance(defaulted.get("metadata"), dict) else {}
    name = meta.get("name") if isinstance(meta.get("name"), str) else None  # else already reported
    if res.metadata_problems is not None and isinstance(defaulted.get("spec"), dict):
        problems += res.metadata_problems(name, defaulted["spec"])
    # Without duplicates, in the order found within one path: a set's order changes with the
    # process's string hashing, and `pinery validate` must print the same in every run.
    return sorted(dict.fromkeys(problems), key=lambda p: p.path)


def _model_problems(res: ResourceInfo, spec: dict) -> list[FieldError]:
    """The models' cross-field rules (the schema already checked every single field)."""
    sink: list[FieldError] = []
    try:
        res.spec_model.model_validate(spec, context={"problems": sink})
    except ValidationError as exc:
        for err in exc.errors():
            sink.append(FieldError(_loc_path(object_schema(res), ("spec", *err["loc"])), err["msg"]))
    return sink


def _loc_path(schema: dict, loc: tuple) -> str:
    """A pydantic error location as a field path (`spec.tags[team]`), walked along the schema to
    tell map keys from fields; pydantic's own steps (union members, `[key]`) name no field."""
    path, node = "", schema
    for part in loc:
        props = node.get("properties") or {}
        if isinstance(part, int) and isinstance(node.get("items"), dict):
            path, node = join_path(path, part), node["items"]
        elif part in props:
            path, node = join_path(path, part), props[part]
        elif isinstance(node.get("additionalProperties"), dict) and part != "[key]":
            path, node = join_path(path, f"[{part}]"), node["additionalProperties"]
    return path


def _show(value: Any) -> str:
    return json.dumps(value, default=str)


def _type_name(value: Any) -> str:
    return {list: "a list", str: "a string", int: "a number", float: "a number", bool: "a boolean"}.get(type(value), type(value).__name__)
