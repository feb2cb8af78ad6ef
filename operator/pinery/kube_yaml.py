"""YAML read and written as kubectl reads it.

PyYAML follows YAML 1.1, where `1e-8` (no dot, unsigned exponent) is a string; kubectl's YAML
reader, like JSON, takes it for a number. Reading with the same rule keeps `pinery validate`
honest about `eps: 1e-8`, and writing with it quotes the strings kubectl would misread (an env
value "1e-4" printed bare would reach the API server as a number).
"""

from __future__ import annotations

import re
from typing import Any, Iterable

import yaml

# Go's YAML reader takes every plain scalar of this shape for a float (or an int, when integral).
_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_FIRST = list("-+.0123456789")


class Loader(yaml.SafeLoader):
    pass


class Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True  # no `&id001` anchors: every object reads on its own


for _cls in (Loader, Dumper):
    _cls.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT, _FIRST)


def load(text: str) -> Any:
    return yaml.load(text, Loader=Loader)  # noqa: S506 - a SafeLoader


def load_all(text: str) -> list[Any]:
    """The documents of a multi-document stream, without the empty ones (a lone `---`)."""
    return [doc for doc in yaml.load_all(text, Loader=Loader) if doc is not None]  # noqa: S506 - a SafeLoader


def dump_all(docs: Iterable[Any], **options: Any) -> str:
    return yaml.dump_all(list(docs), Dumper=Dumper, **{"sort_keys": False, **options})
