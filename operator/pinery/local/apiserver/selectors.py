"""Label and field selectors, parsed and matched as the API server does.

Label selectors: `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, `k>1`, `k<1`.
Field selectors: `path=v`, `path==v`, `path!=v` on `metadata.name`, `metadata.namespace` and
any other dotted path (a missing field reads as ""); `\\,`, `\\=` and `\\\\` escape. Events also
accept `source` (the reporting component), as the API server does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterator

from pinery.local.apiserver.errors import ApiError, bad_request

_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def label_key_problem(key: str) -> str | None:
    """Why `key` is not a valid label key (as the API server words it), or None."""
    prefix, _, name = key.rpartition("/")
    if "/" in key and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.fullmatch(prefix)):
        return (
            "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
            "and must start and end with an alphanumeric character"
        )
    if not name:
        return "name part must be non-empty"
    if len(name) > 63:
        return "name part must be no more than 63 characters"
    if not _LABEL_NAME.fullmatch(name):
        return (
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
            "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
            "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        )
    return None


def label_value_problem(value: str) -> str | None:
    if len(value) > 63:
        return "must be no more than 63 characters"
    if not _LABEL_VALUE.fullmatch(value):
        return (
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
            "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        )
    return None


@dataclass(frozen=True)
class Requirement:
    key: str
    op: str  # "=", "!=", "in", "notin", "exists", "!", ">", "<"
    values: tuple[str, ...] = ()

    def matches(self, labels: dict[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key)
        if self.op in ("=", "in"):
            return present and value in self.values
        if self.op in ("!=", "notin"):
            return not present or value not in self.values
        if self.op == "exists":
            return present
        if self.op == "!":
            return not present
        if not present:
            return False
        try:
            number = int(value)  # type: ignore[arg-type]
        except ValueError:
            return False
        bound = int(self.values[0])
        return number > bound if self.op == ">" else number < bound


@dataclass(frozen=True)
class LabelSelector:
    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: dict[str, str] | None) -> bool:
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    def equalities(self) -> list[tuple[str, tuple[str, ...]]]:
        """(key, allowed values) of the requirements a label index can answer."""
        return [(r.key, r.values) for r in self.requirements if r.op in ("=", "in")]

    def __bool__(self) -> bool:
        return bool(self.requirements)


_TOKEN = re.compile(r"\s*(==|!=|=|\(|\)|,|!|>|<|[^\s=!(),<>]+)")


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match:
            break
        if match.group(1):
            out.append(match.group(1))
        pos = match.end()
        if text[pos:].strip() == "":
            break
    return out


def parse_label_selector(text: str | None) -> LabelSelector:
    """Parse a label selector; a bad one is 400 BadRequest, as on a real server."""
    if not text or not text.strip():
        return LabelSelector()
    tokens = _tokens(text)
    reqs: list[Requirement] = []
    i = 0

    def fail(why: str) -> ApiError:
        return bad_request(f"unable to parse requirement: {why}")

    def word(at: int) -> str:
        if at >= len(tokens) or tokens[at] in ("==", "!=", "=", "(", ")", ",", "!", ">", "<"):
            raise fail(f"found '{tokens[at] if at < len(tokens) else ''}', expected: identifier")
        return tokens[at]

    while i < len(tokens):
        if tokens[i] == "!":
            key = word(i + 1)
            reqs.append(Requirement(key, "!"))
            i += 2
        else:
            key = word(i)
            i += 1
            op = tokens[i] if i < len(tokens) else ","
            if op == ",":
                reqs.append(Requirement(key, "exists"))
            elif op in ("=", "==", "!="):
                value = tokens[i + 1] if i + 1 < len(tokens) and tokens[i + 1] not in (",", ")", "(") else ""
                reqs.append(Requirement(key, "!=" if op == "!=" else "=", (value,)))
                i += 2 if value else 1
            elif op in (">", "<"):
                value = word(i + 1)
                if not re.fullmatch(r"-?\d+", value):
                    raise fail("for 'Gt', 'Lt' operators, the value must be an integer")
                reqs.append(Requirement(key, op, (value,)))
                i += 2
            elif op in ("in", "notin"):
                if i + 1 >= len(tokens) or tokens[i + 1] != "(":
                    raise fail("found '', expected: '('")
                i += 2
                values = []
                while i < len(tokens) and tokens[i] != ")":
                    if tokens[i] != ",":
                        values.append(tokens[i])
                    i += 1
                if i >= len(tokens):
                    raise fail("found '', expected: ')'")
                i += 1
                reqs.append(Requirement(key, op, tuple(values)))
            else:
                raise fail(f"found '{op}', expected: in, notin, =, ==, !=, gt, lt")
        if i < len(tokens):
            if tokens[i] != ",":
                raise fail(f"found '{tokens[i]}', expected: ','")
            i += 1
    for r in reqs:
        problem = label_key_problem(r.key)
        if problem:
            raise bad_request(f'unable to parse requirement: values[0][{r.key}]: Invalid value: "{r.key}": {problem}')
        for v in r.values:
            problem = label_value_problem(v)
            if problem and r.op not in (">", "<"):
                raise bad_request(f'unable to parse requirement: values[0][{r.key}]: Invalid value: "{v}": {problem}')
    return LabelSelector(tuple(reqs))


@dataclass(frozen=True)
class FieldRequirement:
    path: str
    value: str
    negate: bool

    def matches(self, obj: dict[str, Any], kind: str) -> bool:
        found = field_value(obj, self.path, kind)
        return (found != self.value) if self.negate else (found == self.value)


@dataclass(frozen=True)
class FieldSelector:
    requirements: tuple[FieldRequirement, ...] = ()

    def matches(self, obj: dict[str, Any], kind: str = "") -> bool:
        return all(r.matches(obj, kind) for r in self.requirements)

    def name(self) -> str | None:
        """The `metadata.name=` the selector pins, if any (a list can go straight to it)."""
        for r in self.requirements:
            if r.path == "metadata.name" and not r.negate:
                return r.value
        return None

    def namespace(self) -> str | None:
        for r in self.requirements:
            if r.path == "metadata.namespace" and not r.negate:
                return r.value
        return None

    def __bool__(self) -> bool:
        return bool(self.requirements)


def _split_unescaped(text: str, sep: str) -> Iterator[str]:
    part, escaped = [], False
    for ch in text:
        if escaped:
            part.append("\\" + ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == sep:
            yield "".join(part)
            part = []
        else:
            part.append(ch)
    yield "".join(part)


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def parse_field_selector(text: str | None) -> FieldSelector:
    if not text or not text.strip():
        return FieldSelector()
    reqs = []
    for term in _split_unescaped(text, ","):
        if not term.strip():
            continue
        match = re.match(r"^(.*?)(?<!\\)(==|!=|=)(.*)$", term)
        if not match:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{term}'")
        path, op, value = match.groups()
        path = path.strip()
        if not path:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{term}'")
        reqs.append(FieldRequirement(path, _unescape(value.strip()), op == "!="))
    return FieldSelector(tuple(reqs))


_EVENT_ALIASES = {"source": "source.component"}


def field_value(obj: dict[str, Any], path: str, kind: str = "") -> str:
    """The value of a dotted path as a field selector sees it; absent fields read as ""."""
    if kind == "Event" and path in _EVENT_ALIASES and "involvedObject" in obj:
        path = _EVENT_ALIASES[path]
    node: Any = obj
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return ""
        node = node[part]
    if node is None:
        return ""
    if isinstance(node, bool):
        return "true" if node else "false"
    if isinstance(node, (dict, list)):
        return ""
    return str(node)
