"""Prometheus metrics of the operator (prometheus-client), on their own registry.

Counters for reconciles, errors and Pinecone calls; a histogram of handler durations; gauges of
how many objects are in each VectorIndex state and FSDPJob phase (counted from the operator's
own view, so that cardinality does not grow with the number of objects).
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
        self._index_states: dict[tuple[str, str], str] = {}
        self._job_phases: dict[tuple[str, str], str] = {}
        self.registry.register(_StateCollector(self))

    def reconciled(self, resource: str, outcome: str) -> None:
        self.reconciles.labels(resource, outcome).inc()

    def pinecone_call(self, operation: str, outcome: str) -> None:
        self.pinecone_calls.labels(operation, outcome).inc()

    def index_state(self, namespace: str, name: str, state: str | None) -> None:
        if state:
            self._index_states[(namespace, name)] = state

    def forget_index(self, namespace: str, name: str) -> None:
        self._index_states.pop((namespace, name), None)

    def job_phase(self, namespace: str, name: str, phase: str | None) -> None:
        if phase:
            self._job_phases[(namespace, name)] = phase

    def forget_job(self, namespace: str, name: str) -> None:
        self._job_phases.pop((namespace, name), None)

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
