"""What handlers share: settings and the gateways to Kubernetes, Pinecone and metrics."""

from __future__ import annotations

from dataclasses import dataclass, field

from pinery.clock import WallClock
from pinery.fsdpjob.timing import JobTiming
from pinery.gateways.kube import Kube, load_api_client
from pinery.gateways.pinecone import SDK_TIMEOUT_SECONDS, PineconeGateway
from pinery.metrics import Metrics
from pinery.settings import OperatorSettings
from pinery.vectorindex.schedule import Timing


@dataclass
class Services:
    settings: OperatorSettings
    kube: Kube
    pinecone: PineconeGateway
    metrics: Metrics
    # How fast VectorIndexes are polled and retried (tests shrink it; the resync interval is a setting).
    vectorindex_timing: Timing = field(default_factory=Timing)
    # How fast FSDPJobs are polled and retried (tests shrink it too).
    fsdpjob_timing: JobTiming = field(default_factory=JobTiming)
    # The time backup schedules run by (tests run it faster).
    clock: WallClock = field(default_factory=WallClock)

    @classmethod
    def create(cls, settings: OperatorSettings, kubeconfig: str | None = None, *,
               timing: Timing | None = None, pinecone_timeout: float = SDK_TIMEOUT_SECONDS,
               fsdpjob_timing: JobTiming | None = None) -> "Services":
        """The operator's services; tests pass shorter clocks (`timing`, `fsdpjob_timing`,
        `pinecone_timeout`)."""
        metrics = Metrics()
        return cls(
            settings=settings,
            kube=Kube(load_api_client(kubeconfig)),
            pinecone=PineconeGateway(settings.pinecone_host, settings.pinecone_concurrency,
                                     on_call=metrics.pinecone_call, timeout=pinecone_timeout),
            metrics=metrics,
            vectorindex_timing=timing or Timing(),
            fsdpjob_timing=fsdpjob_timing or JobTiming(progress=settings.fsdpjob_progress_seconds),
        )
