"""The metric names a PromQL expression selects, by a small tokenizer (no PromQL parser here).

Rules from the PromQL reference (prometheus.io/docs/prometheus/latest/querying/basics and
operators): a metric name is an identifier `[a-zA-Z_:][a-zA-Z0-9_:]*` that is not a function
(followed by `(`), not a keyword or aggregation modifier, and not inside a label matcher
`{...}`, a range or subquery `[...]`, a string, or the label list of `by`, `without`, `on`,
`ignoring`, `group_left` or `group_right`. Grafana's `label_values(expr, label)` template query
selects what `expr` selects.
"""

from __future__ import annotations

import re

KEYWORDS = {
    "and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right", "bool",
    "offset", "atan2", "inf", "nan",
}
_STRING = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|`[^`]*`')
_GROUPING = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_MATCHERS = re.compile(r"\{[^}]*\}")
_RANGE = re.compile(r"\[[^\]]*\]")
_IDENT = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_GRAFANA_LABEL_VALUES = re.compile(r"^\s*label_values\((.*),\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)\s*$", re.S)
_GRAFANA_VARIABLE = re.compile(r"\$\{?[a-zA-Z_][a-zA-Z0-9_]*\}?|\$__[a-z_]+")


def metric_names(expr: str) -> set[str]:
    found = _GRAFANA_LABEL_VALUES.match(expr)
    if found:
        expr = found.group(1)
    text = _STRING.sub('""', expr)
    text = _GRAFANA_VARIABLE.sub("1", text)  # $__rate_interval in a range, $var elsewhere
    text = _MATCHERS.sub(" ", text)
    text = _RANGE.sub(" ", text)
    text = _GROUPING.sub(" ", text)
    names = set()
    for match in _IDENT.finditer(text):
        word, rest = match.group(), text[match.end():].lstrip()
        if word.lower() in KEYWORDS or rest.startswith("("):
            continue
        if match.start() > 0 and (text[match.start() - 1].isdigit() or text[match.start() - 1] == "."):
            continue  # the exponent or unit of a number (1e3, 5m)
        names.add(word)
    return names


def balanced(expr: str) -> bool:
    """Brackets nest and close, outside strings."""
    pairs, stack = {")": "(", "]": "[", "}": "{"}, []
    for char in _STRING.sub('""', expr):
        if char in "([{":
            stack.append(char)
        elif char in pairs:
            if not stack or stack.pop() != pairs[char]:
                return False
    return not stack


def grouping_labels(expr: str) -> set[str] | None:
    """The labels of the outermost `by (...)` aggregation, None when there is none."""
    found = re.search(r"\bby\s*\(([^)]*)\)", expr)
    return {label.strip() for label in found.group(1).split(",") if label.strip()} if found else None
