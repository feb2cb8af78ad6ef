"""`pinery local pinecone`: run the Pinecone emulator in the foreground."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "pinecone",
        help="run the local Pinecone emulator (API 2025-10)",
        description=(
            "Serve Pinecone's 2025-10 control plane and every index's data plane on one port. "
            "Point the SDK at it with Pinecone(api_key=KEY, host='http://127.0.0.1:PORT'); each "
            "index reports its own host (a URL under the same port) for pc.Index(host=...). "
            "Without --api-key any key is accepted. Admin routes for faults and counters are "
            "under /_emulator/."
        ),
    )
    parser.add_argument("--port", type=int, default=5080, help="port to listen on (default 5080; 0 picks a free one)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--api-key", default=os.environ.get("PINERY_PINECONE_API_KEY"),
                        help="the only API key accepted (default: $PINERY_PINECONE_API_KEY, else any key)")
    parser.add_argument("--state-dir", type=Path,
                        help="directory where indexes and vectors persist (default: in memory only)")
    parser.add_argument("--ready-delay", type=float, default=1.0, metavar="S",
                        help="seconds a new index stays Initializing, and scaling or deletion takes (default 1)")
    parser.add_argument("--index-quota", type=int, help="indexes allowed per project (403 QUOTA_EXCEEDED beyond)")
    parser.add_argument("--advertised-url", help="base URL reported in index hosts (default http://HOST:PORT)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import asyncio
    import logging

    from pinery.local.pinecone import PineconeEmulator
    from pinery.local.pinecone.server import serve_forever

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.ready_delay < 0:
        print("pinery local pinecone: --ready-delay must be >= 0", file=sys.stderr)
        return 2
    emulator = PineconeEmulator(
        state_dir=args.state_dir, host=args.host, port=args.port, api_key=args.api_key,
        ready_delay=args.ready_delay, index_quota=args.index_quota, advertised_url=args.advertised_url,
    )
    try:
        asyncio.run(serve_forever(emulator))
    except OSError as exc:
        print(f"pinery local pinecone: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    return 0
