"""`pinery logs JOB`: every node's training container of an FSDPJob, each line prefixed `[node-i]`.

The flags are kubectl's (kubernetes/kubectl pkg/cmd/logs/logs.go) where they mean the same:
`-n/--namespace`, `-f/--follow`, `--tail` (-1: all, as for a named pod), `--since`,
`--since-time`, `--timestamps`, `--pod-running-timeout`, `--kubeconfig`, `--context`. Without
`-f` the nodes are printed one after the other (kubectl's sequentialConsumeRequest); with it
they are followed at once and their lines interleave as they arrive, never inside a line
(parallelConsumeRequest). The pure parts are `pinery.fsdpjob.log_streams`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Callable

from pinery.cli.job_access import add_kubeconfig_arguments, add_namespace_argument, connect

# How often a waiting node's pod is looked at again.
POLL_SECONDS = 1.0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "logs",
        help="print the logs of every node of an FSDPJob, each line prefixed [node-i]",
        description=(
            "Print the log of the training container of each node of an FSDPJob, each line prefixed "
            "[node-i]: the current attempt's pods, or those of --attempt K. Pods of an attempt that a "
            "gang restart deleted cannot be read; for those, pinery prints the end of the failing "
            "node's log that the job keeps (status.failures). With -f, every node is followed at "
            "once; a node whose pod has not started yet is waited for (reported on stderr), and the "
            "command ends when every stream has ended (the pods finished) or on Ctrl-C. Exit 1 on "
            "errors: the job not found, an attempt that does not exist, nothing left of it to show."
        ),
    )
    parser.add_argument("job", metavar="JOB", help="name of the FSDPJob")
    add_namespace_argument(parser)
    parser.add_argument("--node", type=int, action="append", dest="nodes", metavar="N",
                        help="only this node (its rank; repeatable); default: every node")
    parser.add_argument("--attempt", type=int, metavar="K",
                        help="the pods of attempt K (label pinery.dev/attempt); default: each node's current attempt")
    parser.add_argument("-f", "--follow", action="store_true", help="stream the logs until every node's pod has finished")
    parser.add_argument("--tail", type=int, default=-1, metavar="LINES",
                        help="lines of the end of each node's log to show (default -1: all)")
    since = parser.add_mutually_exclusive_group()
    since.add_argument("--since", metavar="DURATION", help="only lines newer than this (5s, 2m, 3h; kubectl's --since)")
    since.add_argument("--since-time", metavar="RFC3339", help="only lines after this time (2026-01-02T15:04:05Z)")
    parser.add_argument("--timestamps", action="store_true", help="put each line's time before it (after the prefix)")
    parser.add_argument("--pod-running-timeout", metavar="DURATION",
                        help="with -f, how long to wait for a node's pod to start (default: as long as the job may still start it)")
    add_kubeconfig_arguments(parser)
    parser.set_defaults(func=run)


def _error(message: str) -> int:
    print(f"error: {message}", file=sys.stderr, flush=True)
    return 1


def run(args: argparse.Namespace) -> int:
    from pinery.fsdpjob import log_streams
    from pinery.gateways.kube import KubeError

    if args.tail < -1:
        return _error("--tail must be greater than or equal to -1")
    try:
        since = log_streams.since_seconds(args.since) if args.since else None
        wait = log_streams.parse_duration(args.pod_running_timeout) if args.pod_running_timeout else None
    except ValueError as exc:
        return _error(str(exc))
    if args.attempt is not None and args.attempt < 0:
        return _error("--attempt must be 0 or more")
    try:
        kube, namespace = connect(args)
    except Exception as exc:  # a missing or broken kubeconfig: the client's own words
        return _error(f"cannot load the cluster's configuration: {exc}")
    try:
        job = kube.sync(kube.get("FSDPJob", namespace, args.job))
        if job is None:
            return _error(f"fsdpjob {args.job} not found in namespace {namespace}")
        from pinery.fsdpjob.naming import LABEL_JOB

        pods = kube.sync(kube.list("Pod", namespace, label_selector=f"{LABEL_JOB}={args.job}"))
    except KubeError as exc:
        return _error(exc.message)
    n = int((job.get("spec") or {}).get("numNodes") or 0)
    bad = [r for r in args.nodes or [] if not 0 <= r < n]
    if bad:
        return _error(f"fsdpjob {args.job} has nodes 0 to {n - 1}; there is no node {bad[0]}")
    chosen = log_streams.select(job, pods, args.nodes, args.attempt)
    if args.attempt is not None and args.attempt > chosen.newest:
        return _error(f"fsdpjob {args.job} has no attempt {args.attempt} (its newest is {chosen.newest})")
    if args.attempt is not None and args.attempt < chosen.newest and not chosen.pods:
        return _gone(job, args.attempt, args.nodes)
    options = {"tail_lines": None if args.tail == -1 else args.tail, "since_seconds": since, "since_time": args.since_time,
               "timestamps": args.timestamps}
    reader = _Reader(kube, namespace, args.job, options)
    ranks = sorted(chosen.attempts)
    if args.follow:
        return reader.follow(ranks, chosen, wait)
    return reader.once(ranks, chosen)


def _gone(job: dict[str, Any], attempt: int, nodes: list[int] | None) -> int:
    """An attempt whose pods no longer exist: say so, and print what the job kept of it."""
    from pinery.fsdpjob import log_streams, log_tail

    name = job["metadata"]["name"]
    kept = [r for r in log_tail.kept_for((job.get("status") or {}).get("failures") or [], attempt)
            if nodes is None or r.get("node") in nodes]
    print(f"fsdpjob {name}: the pods of attempt {attempt} are gone (a gang restart deletes them, and their logs with them)",
          file=sys.stderr)
    if not kept:
        print(f"fsdpjob {name} keeps no log of attempt {attempt}: status.failures keeps the end of the failing node's log "
              f"for the last {log_tail.MAX_KEPT} failed attempts", file=sys.stderr, flush=True)
        return 1
    for record in kept:
        code = record.get("exitCode")
        print(f"node {record.get('node')} failed at {record.get('time')}: {record.get('reason')}"
              + (f", exit code {code}" if code is not None else "") + "; the end of its log, as kept in status.failures:",
              file=sys.stderr, flush=True)
        lines = log_streams.kept_lines(record)
        if not lines:
            print(f"(node {record.get('node')}'s log could not be read when it failed)", file=sys.stderr, flush=True)
        for line in lines:
            sys.stdout.write(f"{log_streams.prefix(int(record.get('node') or 0))}{line}\n")
    sys.stdout.flush()
    return 0


class _Reader:
    """Reads the nodes' logs: one after the other, or each in a thread of its own (-f)."""

    def __init__(self, kube: Any, namespace: str, job: str, options: dict[str, Any]):
        self.kube, self.namespace, self.job, self.options = kube, namespace, job, options
        self.failed = False

    def _stream(self, rank: int, follow: bool, emit: Callable[[str], None]) -> None:
        from pinery.fsdpjob import log_streams
        from pinery.fsdpjob.naming import TRAINER_CONTAINER, pod_name

        splitter = log_streams.LineSplitter()
        head = log_streams.prefix(rank)
        chunks = self.kube.pod_log_stream(self.namespace, pod_name(self.job, rank), TRAINER_CONTAINER, follow=follow, **self.options)
        for chunk in chunks:
            for line in splitter.feed(chunk):
                emit(head + line)
        for line in splitter.close():
            emit(head + line)

    def once(self, ranks: list[int], chosen: Any) -> int:
        from pinery.fsdpjob import log_streams
        from pinery.gateways.kube import KubeError

        over = log_streams.job_over(self._job() or {})
        def emit(line: str) -> None:
            sys.stdout.write(line + "\n")

        for rank in ranks:
            state = log_streams.node_log(chosen.pods.get(rank), rank, self.job, over)
            if not state.ready:
                print(f"node {rank}: {state.why}: no log yet", file=sys.stderr, flush=True)
                continue
            try:
                self._stream(rank, False, emit)
            except KubeError as exc:
                print(f"node {rank}: {exc.message}", file=sys.stderr, flush=True)
                self.failed = True
            sys.stdout.flush()
        return 1 if self.failed else 0

    def _job(self) -> dict[str, Any] | None:
        job: dict[str, Any] | None = self.kube.sync(self.kube.get("FSDPJob", self.namespace, self.job))
        return job

    def _pod(self, rank: int) -> dict[str, Any] | None:
        from pinery.fsdpjob.naming import pod_name

        pod: dict[str, Any] | None = self.kube.sync(self.kube.get("Pod", self.namespace, pod_name(self.job, rank)))
        return pod

    def _follow_node(self, rank: int, attempt: int, wait: float | None, out: Any) -> None:
        """Wait for the node's pod of `attempt` to start, then follow its log to the end."""
        import time

        from pinery.fsdpjob import log_streams
        from pinery.fsdpjob.naming import LABEL_ATTEMPT
        from pinery.gateways.kube import KubeError

        deadline = None if wait is None else time.monotonic() + wait
        said = ""
        refusals = 0
        try:
            while True:
                pod = self._pod(rank)
                labels = ((pod or {}).get("metadata") or {}).get("labels") or {}
                if pod is not None and labels.get(LABEL_ATTEMPT) != str(attempt):
                    newer = labels.get(LABEL_ATTEMPT)
                    if newer is not None and newer.isdigit() and int(newer) > attempt:
                        out.put(("err", f"node {rank}: attempt {attempt} is over (its pod now belongs to attempt {newer})"))
                        return
                    pod = None  # an older attempt's pod still going away
                job = self._job()
                if job is None:
                    out.put(("err", f"node {rank}: fsdpjob {self.job} was deleted"))
                    return
                if log_streams.current_attempts(job, []).get(rank, 0) > attempt:
                    out.put(("err", f"node {rank}: attempt {attempt} is over (the node is in a newer attempt)"))
                    return
                state = log_streams.node_log(pod, rank, self.job, log_streams.job_over(job))
                if state.ready:
                    try:
                        self._stream(rank, True, lambda line: out.put(("out", line)))
                        return
                    except KubeError as exc:
                        # 400: the container is reported started before its log can be read (or
                        # restarted in between); look at the pod again, a few times.
                        refusals += 1
                        if exc.status != 400 or refusals > 10:
                            raise
                        time.sleep(POLL_SECONDS)
                        continue
                if state.final:
                    out.put(("err", f"node {rank}: {state.why}"))
                    return
                if state.why != said:
                    out.put(("err", f"node {rank}: {state.why}: waiting for it to start"))
                    said = state.why
                if deadline is not None and time.monotonic() > deadline:
                    out.put(("fail", f"node {rank}: timed out waiting for its pod to start ({state.why})"))
                    return
                time.sleep(POLL_SECONDS)
        except KubeError as exc:
            out.put(("fail", f"node {rank}: {exc.message}"))
        except Exception as exc:  # a dropped connection: this node's stream ends, the others go on
            out.put(("fail", f"node {rank}: {type(exc).__name__}: {exc}"))
        finally:
            out.put(("done", rank))

    def follow(self, ranks: list[int], chosen: Any, wait: float | None) -> int:
        import queue
        import threading

        out: queue.Queue[tuple[str, Any]] = queue.Queue()
        for rank in ranks:
            # Daemon threads: Ctrl-C ends the command at once, whatever a stream is blocked on.
            threading.Thread(target=self._follow_node, args=(rank, chosen.attempts[rank], wait, out),
                             name=f"logs-node-{rank}", daemon=True).start()
        left = len(ranks)
        while left:
            kind, item = out.get()
            if kind == "out":
                sys.stdout.write(item + "\n")
                sys.stdout.flush()
            elif kind in ("err", "fail"):
                print(item, file=sys.stderr, flush=True)
                self.failed = self.failed or kind == "fail"
            else:
                left -= 1
        return 1 if self.failed else 0
