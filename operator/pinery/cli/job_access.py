"""How the commands that read one FSDPJob reach it (`pinery logs`, `pinery progress`): kubectl's
-n, --kubeconfig and --context, and the namespace of the kubeconfig context by default."""

from __future__ import annotations

import argparse
from typing import Any


def add_namespace_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-n", "--namespace", help="namespace of the job (default: the kubeconfig context's, else default)")


def add_kubeconfig_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
    parser.add_argument("--context", help="kubeconfig context (default: the current context)")


def connect(args: argparse.Namespace) -> tuple[Any, str]:
    """The cluster's client and the job's namespace; raises what the kubeconfig's loading raises."""
    from pinery.gateways.kube import Kube, context_namespace, load_api_client

    kube = Kube(load_api_client(args.kubeconfig, args.context))
    return kube, args.namespace or context_namespace(args.kubeconfig, args.context)
