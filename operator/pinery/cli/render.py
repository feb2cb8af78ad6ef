"""`pinery render -f FILE`: the children the operator would create, for review without a cluster."""

from __future__ import annotations

import argparse
import sys

from pinery.cli.validate import add_filename_argument, load_inputs

PLACEHOLDER_UID = "00000000-0000-0000-0000-000000000000"


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "render",
        help="print the Service, ConfigMap, PodGroup and pods the operator would create for FSDPJobs",
        description=(
            "Print, as a YAML stream, exactly the children the operator creates for each FSDPJob "
            "in the input (the same builder functions), for review in Git without a cluster. "
            "Other pinery kinds are validated and produce nothing. Invalid input: the messages "
            "of `pinery validate` on stderr and exit 1. Images and the cluster domain come from "
            "the PINERY_* settings, as in the operator."
        ),
    )
    add_filename_argument(parser)
    parser.add_argument("-n", "--namespace", default="default", help="namespace of jobs that name none (default: default)")
    parser.add_argument("--uid", default=PLACEHOLDER_UID, help="uid to put in the owner references (default: a placeholder)")
    parser.set_defaults(func=run)


def _objects(text: str):
    from pinery.manifest_check import parse_documents

    for doc in parse_documents(text):
        items = doc.obj["items"] if isinstance(doc.obj, dict) and doc.obj.get("kind") == "List" else [doc.obj]
        yield from items


def render_text(text: str, namespace: str, uid: str, settings) -> list[dict]:
    """The children of every FSDPJob in an already validated YAML/JSON stream."""
    from pinery.api import FSDPJobSpec
    from pinery.fsdpjob import JobRef, build_children

    children: list[dict] = []
    for obj in _objects(text):
        if obj.get("kind") != "FSDPJob":
            continue
        meta = obj["metadata"]
        spec = FSDPJobSpec.model_validate(obj["spec"])
        ref = JobRef(meta["name"], meta.get("namespace") or namespace, uid)
        children.extend(build_children(ref, spec, settings))
    return children


def run(args: argparse.Namespace) -> int:
    from pinery import kube_yaml
    from pinery.manifest_check import validate_text
    from pinery.settings import OperatorSettings

    try:
        settings = OperatorSettings.from_env()
    except ValueError as exc:
        print(f"pinery render: {exc}", file=sys.stderr)
        return 1
    inputs = load_inputs(args.filename, "render")
    if inputs is None:
        return 1
    failed = False
    for source, text in inputs:
        problems, _ = validate_text(text)
        prefix = f"{source}: " if len(inputs) > 1 else ""
        for problem in problems:
            print(f"{prefix}{problem}", file=sys.stderr)
        failed = failed or bool(problems)
    if failed:
        return 1
    children = [child for _, text in inputs for child in render_text(text, args.namespace, args.uid, settings)]
    if children:
        sys.stdout.write(kube_yaml.dump_all(children, width=120))
    return 0
