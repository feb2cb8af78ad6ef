"""`pinery local up`: start local mode and run until Ctrl-C or `pinery local down`."""

from __future__ import annotations

import argparse
from pathlib import Path

from pinery.local.install import FORMS


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "up",
        help="start local mode: control plane, Pinecone emulator, pod runner and operator",
        description=(
            "Start, on loopback, a Kubernetes control plane with pinery's CRDs, the Pinecone "
            "emulator (with a local API key in the Secret pinecone-api-key of pinery-system and "
            "default), the pod runner (pods run as local processes) and the operator. Writes "
            "STATE_DIR/kubeconfig for kubectl, and runs until Ctrl-C or `pinery local down`. A "
            "second `up` on the same state directory finds its objects and indexes again; pods "
            "that were running lost their processes with it (docs/local-mode.md)."
        ),
    )
    parser.add_argument("--state-dir", type=Path, default=Path(".pinery"), help="state directory (default ./.pinery)")
    parser.add_argument("--pinecone-ready-delay", type=float, default=2.0, metavar="S",
                        help="seconds a new emulated index stays Initializing (default 2)")
    parser.add_argument("--operator", choices=FORMS, default="process",
                        help="process: run `pinery run` as a child process (default); chart: install "
                        "charts/pinery with Helm; manifests: kubectl apply -f deploy/pinery.yaml; kustomize: "
                        "kubectl apply --server-side -k with an overlay of deploy/kustomize. In the last three "
                        "the Deployment runs the operator as a pod, as its ServiceAccount under its RBAC")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import asyncio
    import logging

    from pinery.local.updown import up

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    return asyncio.run(up(args.state_dir, pinecone_ready_delay=args.pinecone_ready_delay, operator_form=args.operator))
