"""Evaluate `x-kubernetes-validations` CEL rules, as the Kubernetes API server does.

Rules are compiled once (cel-python) and cached. Kubernetes binds `self` to the value at the
rule's node and `oldSelf` to the previous value on updates; rules that mention `oldSelf`
("transition rules") run only on updates where the old value exists.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import celpy

_OLD_SELF = re.compile(r"\boldSelf\b")
_ENV = celpy.Environment()


class CelCompileError(ValueError):
    """A rule that does not compile."""


def is_transition_rule(rule: str) -> bool:
    return bool(_OLD_SELF.search(rule))


@lru_cache(maxsize=4096)
def _program(rule: str) -> celpy.Runner:
    try:
        return _ENV.program(_ENV.compile(rule))
    except Exception as exc:  # cel-python raises several error types
        raise CelCompileError(f"rule {rule!r} does not compile: {exc}") from None


def compile_rule(rule: str) -> None:
    """Raise CelCompileError when `rule` does not compile."""
    _program(rule)


def evaluate(rule: str, self_value: Any, old_value: Any = None) -> bool:
    """True when the rule holds. Evaluation errors count as failures (as in Kubernetes)."""
    activation = {"self": celpy.json_to_cel(self_value)}
    if old_value is not None:
        activation["oldSelf"] = celpy.json_to_cel(old_value)
    try:
        result = _program(rule).evaluate(activation)
    except Exception:
        return False
    return isinstance(result, celpy.celtypes.BoolType) and bool(result)
