"""`pinery run`: start the operator."""

from __future__ import annotations

import argparse
import dataclasses


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "run",
        help="run the operator",
        description=(
            "Run the pinery operator. Every setting comes from PINERY_* environment variables "
            "(see docs/operations.md); the flags below override them."
        ),
    )
    parser.add_argument("-n", "--namespace", action="append", dest="namespaces", metavar="NS",
                        help="watch this namespace (repeatable); default: all namespaces")
    parser.add_argument("--kubeconfig", help="kubeconfig file (default: in-cluster, then $KUBECONFIG)")
    ha = parser.add_mutually_exclusive_group()
    ha.add_argument("--standalone", action="store_true", help="run without peering (a single replica)")
    ha.add_argument("--peering", metavar="NAME", help="Kopf peering name for HA: one active replica")
    parser.add_argument("--log-format", choices=("text", "json"))
    parser.add_argument("--metrics-port", type=int, help="Prometheus metrics port (0 disables)")
    parser.add_argument("--health-port", type=int, help="liveness endpoint port (0 disables)")
    parser.add_argument("--pinecone-host", help="Pinecone control-plane host (an emulator or proxy)")
    parser.add_argument("--verbose", action="store_true", help="debug logging")
    parser.set_defaults(func=run)


def settings_from_args(args: argparse.Namespace, environ=None):
    from pinery.settings import OperatorSettings

    settings = OperatorSettings.from_env(environ)
    overrides = {
        "namespaces": tuple(args.namespaces) if args.namespaces else None,
        "peering": "" if args.standalone else args.peering,
        "log_format": args.log_format,
        "metrics_port": args.metrics_port,
        "health_port": args.health_port,
        "pinecone_host": args.pinecone_host,
    }
    return dataclasses.replace(settings, **{k: v for k, v in overrides.items() if v is not None})


def run(args: argparse.Namespace) -> int:
    import asyncio

    from pinery.runtime import configure_logging, operate
    from pinery.services import Services

    settings = settings_from_args(args)
    configure_logging(settings, verbose=args.verbose)
    asyncio.run(operate(Services.create(settings, args.kubeconfig)))
    return 0
