"""`pinery crds`: write (or check, or print) the CRDs generated from the API models."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "crds",
        help="generate the CustomResourceDefinitions from the API models",
        description=(
            "Write crds/*.yaml and charts/pinery/crds/*.yaml from the API models. With --check, "
            "write nothing and exit 1 when a committed file differs. With --stdout, print the "
            "CRDs (for `pinery crds --stdout | kubectl apply -f -`)."
        ),
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="fail when the files are stale")
    mode.add_argument("--stdout", action="store_true", help="print the CRDs instead of writing them")
    parser.add_argument("--root", type=Path, help="repository root (default: found from the current directory)")
    parser.set_defaults(func=run)


def find_root(start: Path) -> Path | None:
    """The nearest directory at or above `start` holding pinery's pyproject.toml."""
    for folder in (start, *start.parents):
        project = folder / "pyproject.toml"
        if project.is_file() and 'name = "pinery"' in project.read_text():
            return folder
    return None


def run(args: argparse.Namespace) -> int:
    from pinery.api import RESOURCES
    from pinery.generate.crds import render_crd, stale_files, write_crds

    if args.stdout:
        sys.stdout.write("---\n".join(render_crd(res) for res in RESOURCES))
        return 0
    root = args.root or find_root(Path.cwd())
    if root is None:
        print("pinery crds: run inside the pinery repository, or pass --root", file=sys.stderr)
        return 1
    if args.check:
        stale = stale_files(root)
        for rel in stale:
            print(f"stale: {rel} (run `pinery crds`)", file=sys.stderr)
        return 1 if stale else 0
    for rel in write_crds(root):
        print(f"wrote {rel}")
    return 0
