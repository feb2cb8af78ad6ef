"""`pinery progress JOB`: the loss curve of an FSDPJob, drawn in the terminal, and where it stands.

The curve comes from rank 0's log, where every progress line is (status.progress and the
metrics hold only the newest values); the summary from the job's status. Only the current
attempt's log exists: a gang restart deletes the pods, and their logs with them, so after a
restart the curve starts where the run resumed. The pure parts are
`pinery.fsdpjob.progress.progress_points` and `pinery.cli.plot`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Optional

from pinery.cli.job_access import add_kubeconfig_arguments, add_namespace_argument, connect
from pinery.cli.plot import line_chart, number
from pinery.fsdpjob.gauges import DEFAULT_MAX_RESTARTS


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "progress",
        help="draw the loss curve of an FSDPJob from rank 0's log, with its step, throughput and restarts",
        description=(
            "Draw the training loss of an FSDPJob over its steps, read from the progress lines in rank 0's "
            "log (docs/fsdpjob.md, Progress), under a summary of the job's status: phase, step, loss, "
            "tokens per second, last checkpoint, restarts. The chart is as wide as the terminal (or "
            "$COLUMNS, else 80 columns). Exit 1 when the job is not found."
        ),
    )
    parser.add_argument("job", metavar="JOB", help="name of the FSDPJob")
    add_namespace_argument(parser)
    add_kubeconfig_arguments(parser)
    parser.add_argument("--width", type=int, metavar="COLUMNS", help="width of the chart (default: the terminal's)")
    parser.add_argument("--height", type=int, default=12, metavar="ROWS", help="rows of the chart (default 12)")
    parser.add_argument("--ascii", action="store_true", help="draw with ASCII characters only")
    parser.set_defaults(func=run)


def summary(job: dict[str, Any]) -> str:
    meta, spec, status = job["metadata"], job.get("spec") or {}, job.get("status") or {}
    progress = status.get("progress") or {}
    parts = [f"fsdpjob {meta.get('namespace')}/{meta['name']}: {status.get('phase') or 'Pending'}"]
    if progress.get("step") is not None:
        total = progress.get("totalSteps")
        parts.append(f"step {progress['step']}" + (f"/{total}" if total is not None else ""))
    if progress.get("loss") is not None:
        parts.append(f"loss {number(progress['loss'])}")
    if progress.get("tokensPerSecond") is not None:
        parts.append(f"{number(progress['tokensPerSecond'])} tokens/s")
    if progress.get("lastCheckpointStep") is not None:
        parts.append(f"last checkpoint at step {progress['lastCheckpointStep']}")
    budget = spec.get("maxRestarts", DEFAULT_MAX_RESTARTS)
    parts.append(f"restarts {status.get('restarts') or 0}/{budget}")
    if status.get("disruptions"):
        parts.append(f"disruptions {status['disruptions']}")
    return ", ".join(parts)


def report(job: dict[str, Any], log: Optional[str], width: int, height: int, ascii: bool) -> list[str]:
    """What the command prints: the summary, then the curve or why there is none."""
    from pinery.fsdpjob.progress import progress_points

    lines = [summary(job)]
    if log is None:
        lines.append("no log of rank 0 to draw from (its pod does not exist, or has not started)")
        return lines
    points = [(p.step, p.loss) for p in progress_points(log) if p.loss is not None]
    if not points:
        lines.append("rank 0 has printed no progress line with a loss yet")
        return lines
    steps = [s for s, _ in points]
    lines.append(f"loss over {len(points)} progress lines of rank 0, steps {min(steps)} to {max(steps)}:")
    lines.extend(line_chart(points, width, height, x_label="step", ascii=ascii))
    throughput = [p.tokens_per_second for p in progress_points(log) if p.tokens_per_second is not None]
    if throughput:
        lines.append(f"tokens/s: last {number(throughput[-1])}, mean {number(sum(throughput) / len(throughput))}, "
                     f"min {number(min(throughput))}, max {number(max(throughput))}")
    return lines


def can_draw_unicode(stream: Any) -> bool:
    try:
        "•│└─".encode(getattr(stream, "encoding", None) or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def run(args: argparse.Namespace) -> int:
    import shutil

    from pinery.fsdpjob.naming import TRAINER_CONTAINER, pod_name
    from pinery.gateways.kube import KubeError

    try:
        kube, args.namespace = connect(args)
    except Exception as exc:  # a missing or broken kubeconfig: the client's own words
        print(f"error: cannot load the cluster's configuration: {exc}", file=sys.stderr)
        return 1

    async def read() -> tuple[Optional[dict[str, Any]], Optional[str]]:
        job = await kube.get("FSDPJob", args.namespace, args.job)
        if job is None:
            return None, None
        try:
            log = await kube.pod_log(args.namespace, pod_name(args.job, 0), container=TRAINER_CONTAINER)
        except KubeError:
            log = None  # no pod (yet, or any more), or no log yet
        return job, log

    try:
        job, log = kube.sync(read())
    except KubeError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    if job is None:
        print(f"error: fsdpjob {args.job} not found in namespace {args.namespace}", file=sys.stderr)
        return 1
    width = args.width or shutil.get_terminal_size((80, 24)).columns
    ascii = args.ascii or not can_draw_unicode(sys.stdout)
    for line in report(job, log, width, args.height, ascii):
        print(line)
    return 0
