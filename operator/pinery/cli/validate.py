"""`pinery validate -f FILE`: validate VectorIndex and FSDPJob manifests without a cluster."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "validate",
        help="validate manifests against the CRDs and pinery's rules",
        description=(
            "Validate VectorIndex and FSDPJob manifests (YAML or JSON, one or many documents) "
            "against the CRD schemas and pinery's rules. Exit 0 when all are valid; otherwise "
            "print one line per problem on stderr, '<Kind>/<name>: <field path>: <message>', "
            "and exit 1."
        ),
    )
    add_filename_argument(parser)
    parser.set_defaults(func=run)


def add_filename_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-f", "--filename", action="append", required=True, metavar="FILE",
        help="a file, a directory (its .yaml/.yml/.json files, recursively) or - for stdin; repeatable",
    )


def load_inputs(names: list[str], command: str) -> list[tuple[str, str]] | None:
    """read_inputs, or None after telling the user which input could not be read."""
    try:
        return read_inputs(names)
    except (OSError, UnicodeDecodeError) as exc:
        what = getattr(exc, "filename", "") or "input"
        print(f"pinery {command}: cannot read {what}: {exc.strerror if isinstance(exc, OSError) else exc}", file=sys.stderr)
        return None


def read_inputs(names: list[str]) -> list[tuple[str, str]]:
    """(source, text) for every input; unreadable inputs raise OSError with a clear message."""
    inputs = []
    for name in names:
        if name == "-":
            inputs.append(("<stdin>", sys.stdin.read()))
            continue
        path = Path(name)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.suffix in MANIFEST_SUFFIXES and p.is_file())
            inputs.extend((str(p), p.read_text()) for p in files)
        else:
            inputs.append((name, path.read_text()))
    return inputs


def run(args: argparse.Namespace) -> int:
    from pinery.manifest_check import validate_text

    inputs = load_inputs(args.filename, "validate")
    if inputs is None:
        return 1
    counts: Counter[str] = Counter()
    failed = 0
    for source, text in inputs:
        problems, valid = validate_text(text)
        prefix = f"{source}: " if len(inputs) > 1 else ""
        for problem in problems:
            print(f"{prefix}{problem}", file=sys.stderr)
        failed += len(problems)
        counts.update(kind for kind, _ in valid)
    if failed:
        return 1
    summary = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())) or "no objects"
    print(f"valid: {summary}")
    return 0
