"""`pinery local ...`: the local-mode command group.

Each subcommand lives in its own module `pinery.cli.local_<name>` with `register(subparsers)`;
add new ones to SUBCOMMANDS.
"""

from __future__ import annotations

import argparse
import importlib

# Subcommand modules under pinery.cli, named local_<name>, in the order `--help` lists them.
SUBCOMMANDS = ("pinecone",)


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "local",
        help="run pinery's local mode (no cluster, no Pinecone account)",
        description="Local mode: the pieces that let pinery run on one machine without a cluster.",
    )
    local_sub = parser.add_subparsers(dest="local_command", required=True, metavar="COMMAND")
    for name in SUBCOMMANDS:
        importlib.import_module(f"pinery.cli.local_{name.replace('-', '_')}").register(local_sub)
