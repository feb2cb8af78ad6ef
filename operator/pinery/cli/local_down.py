"""`pinery local down`: stop the local mode running on a state directory."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "down",
        help="stop local mode",
        description="Stop the `pinery local up` running on STATE_DIR and wait until everything has stopped.",
    )
    parser.add_argument("--state-dir", type=Path, default=Path(".pinery"), help="state directory (default ./.pinery)")
    parser.add_argument("--timeout", type=float, default=60, help="seconds to wait (default 60)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pinery.local.updown import down

    return down(args.state_dir, timeout=args.timeout)
