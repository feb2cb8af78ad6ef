"""The `pinery` command line. Each subcommand lives in its own module with `register()`.

Modules import their heavy dependencies inside `run`, so that `pinery validate` does not pay
for Kopf or aiohttp.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from pinery import __version__

# Subcommand modules under pinery.cli, in the order `pinery --help` lists them.
COMMANDS = ("validate", "render", "crds", "run", "logs", "local", "progress", "wait-for")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pinery",
        description="pinery: a Kubernetes operator for Pinecone vector indexes and PyTorch FSDP jobs.",
    )
    parser.add_argument("--version", action="version", version=f"pinery {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"pinery.cli.{name.replace('-', '_')}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
