"""Prometheus metrics of the operator (prometheus-client), on their own registry.

Counters for reconciles, errors and Pinecone calls; a histogram of handler durations; gauges of
how many objects are in each VectorIndex state and FSDPJob phase; and, per object (labelled by
namespace and name only, so one series per gauge and object), each FSDPJob's progress and
restart budget and whether each VectorIndex is Ready. All gauges come from the operator's own
view: what it last wrote to the objects' status. Names follow Prometheus' conventions
(prometheus.io/docs/practices/naming: base units, `_total` only on counters).
"""

from __future__ import annotations

import functools
import time
from collections import Counter as Tally
from typing import Any, Awaitable, Callable

from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server
from prometheus_client.core import GaugeMetricFamily


class Metrics:
    def __init__(self, registry: CollectorRegistry | None = None):
        self.registry = registry or CollectorRegistry()
        self.reconciles = Counter(
            "pinery_reconciles", "Reconcile passes by resource and outcome.", ["resource", "outcome"], registry=self.registry
        )
        self.handler_seconds = Histogram(
            "pinery_handler_duration_seconds", "Duration of Kopf handlers.", ["resource", "handler"], registry=self.registry
        )
        self.handler_errors = Counter(
            "pinery_handler_errors", "Handlers that raised, by resource and handler.", ["resource", "handler"], registry=self.registry
        )
        self.pinecone_calls = Counter(
            "pinery_pinecone_calls", "Pinecone API calls by operation and outcome (HTTP status or ok).",
            ["operation", "outcome"], registry=self.registry,
        )
        self.fsdpjob_restarts = Counter(
            "pinery_fsdpjob_restarts", "Gang restarts of FSDPJobs.", ["namespace"], registry=self.registry
        )
        self.fsdpjob_stalls = Counter(
            "pinery_fsdpjob_stalls", "FSDPJob gangs found stalled (progressDeadlineSeconds), restarted or failed.", ["namespace"],
            registry=self.registry,
        )
        # Backups (VectorIndexBackup): made and failed, by namespace and the schedule that made
        # them ("" for one made by hand); the newest ready backup of each schedule, as a time.
        self.backups_made = Counter(
            "pinery_backups_made", "Pinecone backups that became ready.", ["namespace", "schedule"], registry=self.registry
        )
        self.backups_failed = Counter(
            "pinery_backups_failed", "Pinecone backups that failed.", ["namespace", "schedule"], registry=self.registry
        )
        self._schedule_success: dict[tuple[str, str], float] = {}
        self._index_states: dict[tuple[str, str], str] = {}
        self._index_ready: dict[tuple[str, str], bool] = {}
        self._job_phases: dict[tuple[str, str], str] = {}
        self._job_gauges: dict[tuple[str, str], dict[str, float]] = {}
        self.registry.register(_StateCollector(self))

    def reconciled(self, resource: str, outcome: str) -> None:
        self.reconciles.labels(resource, outcome).inc()

    def pinecone_call(self, operation: str, outcome: str) -> None:
        self.pinecone_calls.labels(operation, outcome).inc()

    def backup_finished(self, namespace: str, schedule: str, ready: bool) -> None:
        (self.backups_made if ready else self.backups_failed).labels(namespace, schedule).inc()

    def schedule_success(self, namespace: str, name: str, at: float | None) -> None:
        """The scheduled time (Unix seconds) of the schedule's newest ready backup."""
        if at is not None:
            self._schedule_success[(namespace, name)] = at

    def forget_schedule(self, namespace: str, name: str) -> None:
        self._schedule_success.pop((namespace, name), None)

    def index_state(self, namespace: str, name: str, state: str | None) -> None:
        if state:
            self._index_states[(namespace, name)] = state

    def index_ready(self, namespace: str, name: str, ready: bool) -> None:
        self._index_ready[(namespace, name)] = ready

    def forget_index(self, namespace: str, name: str) -> None:
        self._index_states.pop((namespace, name), None)
        self._index_ready.pop((namespace, name), None)

    def job_phase(self, namespace: str, name: str, phase: str | None) -> None:
        if phase:
            self._job_phases[(namespace, name)] = phase

    def job_gauges(self, namespace: str, name: str, values: dict[str, float]) -> None:
        """The job's gauges (keys of JOB_GAUGES; pinery.fsdpjob.gauges computes them)."""
        unknown = set(values) - set(JOB_GAUGES)
        if unknown:
            raise ValueError(f"no such FSDPJob gauge: {sorted(unknown)}")
        self._job_gauges[(namespace, name)] = dict(values)

    def forget_job(self, namespace: str, name: str) -> None:
        self._job_phases.pop((namespace, name), None)
        self._job_gauges.pop((namespace, name), None)

    def timed(self, resource: str, handler: str) -> Callable:
        """Decorate an async handler to record its duration and failures."""
        def wrap(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
            @functools.wraps(fn)
            async def timed_handler(*args: Any, **kwargs: Any) -> Any:
                started = time.perf_counter()
                try:
                    return await fn(*args, **kwargs)
                except Exception:
                    self.handler_errors.labels(resource, handler).inc()
                    raise
                finally:
                    self.handler_seconds.labels(resource, handler).observe(time.perf_counter() - started)
            return timed_handler
        return wrap

    def serve(self, port: int, addr: str = "0.0.0.0") -> None:
        start_http_server(port, addr=addr, registry=self.registry)


# The per-job gauges, exported as pinery_fsdpjob_<key>{namespace, fsdpjob}. Not `job`: Prometheus
# attaches its own `job` label to every scraped series and renames a clashing one to
# `exported_job` (prometheus.io/docs/prometheus/latest/configuration/configuration, honor_labels). `status_restarts` is
# status.restarts: the name pinery_fsdpjob_restarts is the family of the restart counter
# (pinery_fsdpjob_restarts_total), and one name may have only one type in an exposition.
JOB_GAUGES = {
    "step": "Last completed optimizer step the trainer reported (status.progress.step).",
    "loss": "Training loss at that step (status.progress.loss).",
    "tokens_per_second": "Training throughput the trainer reported (status.progress.tokensPerSecond).",
    "last_checkpoint_step": "Step of the newest complete checkpoint (status.progress.lastCheckpointStep).",
    "status_restarts": "Gang restarts spent from the budget so far (status.restarts).",
    "max_restarts": "Gang restarts allowed before the job fails (spec.maxRestarts).",
    "disruptions": "Gang restarts after disruptions, which do not spend maxRestarts (status.disruptions).",
    "stalled": "1 while the gang is restarted or failed because it stopped making progress (reason Stalled), else 0.",
    "finished": "1 once the job has Succeeded or Failed, else 0.",
}


class _StateCollector:
    def __init__(self, metrics: Metrics):
        self.metrics = metrics

    def collect(self):
        states = GaugeMetricFamily("pinery_vectorindexes", "VectorIndexes by Pinecone state.", labels=["state"])
        for state, count in sorted(Tally(self.metrics._index_states.values()).items()):
            states.add_metric([state], count)
        yield states
        phases = GaugeMetricFamily("pinery_fsdpjobs", "FSDPJobs by phase.", labels=["phase"])
        for phase, count in sorted(Tally(self.metrics._job_phases.values()).items()):
            phases.add_metric([phase], count)
        yield phases
        ready = GaugeMetricFamily("pinery_vectorindex_ready", "1 when the VectorIndex's Ready condition is True, else 0.",
                                  labels=["namespace", "vectorindex"])
        for (namespace, name), is_ready in sorted(self.metrics._index_ready.items()):
            ready.add_metric([namespace, name], 1.0 if is_ready else 0.0)
        yield ready
        jobs = sorted(self.metrics._job_gauges.items())
        for key, help_text in JOB_GAUGES.items():
            family = GaugeMetricFamily(f"pinery_fsdpjob_{key}", help_text, labels=["namespace", "fsdpjob"])
            for (namespace, name), values in jobs:
                if key in values:
                    family.add_metric([namespace, name], values[key])
            yield family
        success = GaugeMetricFamily(
            "pinery_backup_schedule_last_success_timestamp_seconds",
            "Scheduled time of the schedule's newest ready backup (Unix seconds); alert when it is too old.",
            labels=["namespace", "schedule"])
        for (namespace, name), at in sorted(self.metrics._schedule_success.items()):
            success.add_metric([namespace, name], at)
        yield success
