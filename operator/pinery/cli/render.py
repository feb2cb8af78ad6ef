"""`pinery render -f FILE`: the children the operator would create, for review without a cluster."""

from __future__ import annotations

import argparse
import sys

from pinery.cli.validate import add_filename_argument, load_inputs

PLACEHOLDER_UID = "00000000-0000-0000-0000-000000000000"


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "render",
        help="print the Service, Workload, ConfigMap, PodGroup and pods the operator would create for FSDPJobs",
        description=(
            "Print, as a YAML stream, exactly the children the operator creates for each FSDPJob "
            "in the input (the same builder functions), in the order it creates them, for review in "
            "Git without a cluster. Other pinery kinds are validated and produce nothing. Invalid "
            "input: the messages of `pinery validate` on stderr and exit 1. Images and the cluster "
            "domain come from the PINERY_* settings, as in the operator. "
            "A job labelled kueue.x-k8s.io/queue-name gets its Service and Kueue Workload first; its "
            "ConfigMap, PodGroup and pods exist only once Kueue admits the Workload, and are printed "
            "as that admission would make them, which render has to assume: all numNodes admitted, "
            "ResourceFlavors without node labels or tolerations, no admission-check updates, and the "
            "ClusterQueue of --cluster-queue (its pod label is left out without it). The Workload's "
            "priority is the value of the class it names, which the operator reads from the cluster: "
            "render writes --priority instead."
        ),
    )
    add_filename_argument(parser)
    parser.add_argument("-n", "--namespace", default="default", help="namespace of jobs that name none (default: default)")
    parser.add_argument("--uid", default=PLACEHOLDER_UID, help="uid to put in the owner references (default: a placeholder)")
    parser.add_argument("--cluster-queue", default="", help="ClusterQueue assumed to admit queued jobs (default: none named)")
    parser.add_argument("--priority", type=int, default=0,
                        help="value of the (Workload)PriorityClass a queued job names, as the cluster would give it (default: 0)")
    parser.set_defaults(func=run)


def _objects(text: str):
    from pinery.manifest_check import parse_documents

    for doc in parse_documents(text):
        items = doc.obj["items"] if isinstance(doc.obj, dict) and doc.obj.get("kind") == "List" else [doc.obj]
        yield from items


def render_text(text: str, namespace: str, uid: str, settings, cluster_queue: str = "", priority: int = 0) -> list[dict]:
    """The children of every FSDPJob in an already validated YAML/JSON stream; for a job in a
    Kueue queue, its Workload after the Service, then the rest as after an admission (see the
    command's description for what that assumes)."""
    from pinery.api import FSDPJobSpec
    from pinery.fsdpjob import JobRef, build_children, kueue
    from pinery.fsdpjob.children import build_pod

    children: list[dict] = []
    for obj in _objects(text):
        if obj.get("kind") != "FSDPJob":
            continue
        meta = obj["metadata"]
        spec = FSDPJobSpec.model_validate(obj["spec"])
        ref = JobRef(meta["name"], meta.get("namespace") or namespace, uid)
        job = {**obj, "metadata": {**meta, "namespace": ref.namespace, "uid": uid}}
        if not kueue.queue_name(job):
            children.extend(build_children(ref, spec, settings))
            continue
        ref_ = kueue.priority_ref(job)
        pod = build_pod(ref, spec, 0, 0, settings)
        wl = kueue.workload(job, spec, pod, (ref_, priority) if ref_ is not None else None)
        result = kueue.admission(_admitted(wl, cluster_queue), {}, pod)
        if result is None or result.admission is None:  # only a conflict with pinery's own labels could
            raise ValueError(f"FSDPJob {ref.name}: {result.conflict if result else 'not admitted'}")
        service, *rest = build_children(ref, spec, settings, admission=result.admission.placement)
        children.extend([service, wl, *rest])
    return children


def _admitted(wl: dict, cluster_queue: str) -> dict:
    """The Workload as Kueue's scheduler would leave it admitting all of pod set "node" into
    `cluster_queue`, with flavors that add nothing to the pods (`SetQuotaReservation`, then
    Admitted once no admission check is pending)."""
    pod_set = wl["spec"]["podSets"][0]
    conditions = [{"type": t, "status": "True", "reason": t} for t in ("QuotaReserved", "Admitted")]
    admission = {"clusterQueue": cluster_queue, "podSetAssignments": [{"name": pod_set["name"], "flavors": {}, "count": pod_set["count"]}]}
    return {**wl, "status": {"conditions": conditions, "admission": admission}}


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
    try:
        children = [child for _, text in inputs
                    for child in render_text(text, args.namespace, args.uid, settings, args.cluster_queue, args.priority)]
    except ValueError as exc:
        print(f"pinery render: {exc}", file=sys.stderr)
        return 1
    if children:
        sys.stdout.write(kube_yaml.dump_all(children, width=120))
    return 0
