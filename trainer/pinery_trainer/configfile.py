"""Reading the trainer's configuration: a YAML/JSON file, the environment, then `--set` overrides.

Torch-free, so that a bad configuration is reported in a fraction of a second, before any
process group exists. Every error names the field (or variable) it is about.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from pinery_trainer.config import TrainerConfig

# Set by the FSDPJob's checkpoint volume; they override the file (and `--set` overrides them).
ENV_OVERRIDES: dict[str, tuple[str, ...]] = {
    "PINERY_CHECKPOINT_DIR": ("checkpoint", "dir"),
    "PINERY_CHECKPOINT_INTERVAL": ("checkpoint", "intervalSteps"),
}

_EXPONENT_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")


class ConfigError(Exception):
    """An invalid configuration: each problem is (field path, message)."""

    def __init__(self, problems: Sequence[tuple[str, str]]):
        self.problems = list(problems)
        super().__init__("; ".join(f"{path}: {message}" if path else message for path, message in self.problems))


def load_config(
    path: str | os.PathLike | None,
    sets: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
) -> TrainerConfig:
    """The validated configuration from the file, the PINERY_* variables and `--set PATH=VALUE`."""
    environ = os.environ if environ is None else environ
    data = read_file(Path(path)) if path is not None else {}
    for name, field_path in ENV_OVERRIDES.items():
        value = environ.get(name)
        if value is not None and value != "":
            set_path(data, field_path, parse_env(name, value))
    for assignment in sets:
        field_path, value = parse_assignment(assignment)
        set_path(data, field_path, value)
    return validate(data)


def read_file(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text()
    except OSError as e:
        raise ConfigError([("--config", f"cannot read {path}: {e.strerror or e}")]) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfigError([("--config", f"{path} is not valid YAML or JSON: {e}")]) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError([("--config", f"{path} must hold a mapping of fields, not {type(data).__name__}")])
    return data


def parse_env(name: str, value: str) -> Any:
    if name == "PINERY_CHECKPOINT_INTERVAL":
        try:
            return int(value)
        except ValueError:
            raise ConfigError([(name, f"must be a whole number of steps, not {value!r}")]) from None
    return value


def parse_assignment(assignment: str) -> tuple[tuple[str, ...], Any]:
    """`a.b=VALUE` -> (("a", "b"), VALUE), the value read as a YAML scalar (20, true, text)."""
    key, sep, raw = assignment.partition("=")
    if not sep or not key.strip():
        raise ConfigError([("--set", f"expected PATH=VALUE, got {assignment!r}")])
    parts = tuple(part.strip() for part in key.split("."))
    if any(not part for part in parts):
        raise ConfigError([("--set", f"{key!r} is not a field path like optim.lr")])
    try:
        value = yaml.safe_load(raw) if raw.strip() else raw
    except yaml.YAMLError:
        value = raw
    if isinstance(value, str) and _EXPONENT_NUMBER.fullmatch(value):
        value = float(value)  # YAML 1.1 reads 1e-3 as text; people mean a number
    return parts, value


def set_path(data: dict[str, Any], path: Sequence[str], value: Any) -> None:
    node = data
    for i, part in enumerate(path[:-1]):
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        elif not isinstance(child, dict):
            raise ConfigError([(".".join(path[: i + 1]), "is not a group of fields")])
        node = child
    node[path[-1]] = value


def validate(data: Mapping[str, Any]) -> TrainerConfig:
    try:
        # The context defers the cross-field rules, so that they are reported with their paths.
        config = TrainerConfig.model_validate(data, context={"problems": "deferred"})
    except ValidationError as e:
        raise ConfigError([(field_path(err["loc"]), err["msg"]) for err in e.errors()]) from None
    problems = config.problems()
    if problems:
        raise ConfigError(problems)
    return config


def field_path(loc: Sequence[Any]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
