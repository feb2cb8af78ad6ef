"""The operator's configuration: one immutable object, read from PINERY_* environment variables.

`pinery run` flags and the Helm chart's values both end up here. Nothing else in the operator
reads the environment.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from typing import Mapping

from pinery import __version__

IMAGE_REPOSITORY = "ghcr.io/pinery-dev"


@dataclass(frozen=True)
class OperatorSettings:
    # Namespaces to watch; empty means all namespaces.
    namespaces: tuple[str, ...] = ()
    # Namespace the operator runs in (set by the Deployment through the downward API).
    operator_namespace: str = "pinery-system"
    # Default Pinecone API key Secret for VectorIndexes without apiKeySecretRef.
    pinecone_secret_name: str = "pinecone-api-key"
    pinecone_secret_key: str = "api-key"
    # Namespace of the default Secret; empty means the operator's namespace.
    pinecone_secret_namespace: str = ""
    # Pinecone control-plane host override (the local emulator, a proxy); empty means Pinecone's.
    pinecone_host: str = ""
    # Seconds between drift-repair sweeps of VectorIndexes.
    resync_seconds: float = 300.0
    # Seconds between reads of a running FSDPJob's progress (rank 0's new log lines).
    fsdpjob_progress_seconds: float = 30.0
    # Most passes of one kind (VectorIndex, FSDPJob) running at once (pinery.handlers.pass_queue).
    workers: int = 32
    # Most Pinecone API calls in flight at once.
    pinecone_concurrency: int = 8
    # Identifies this cluster in the ownership tags of the Pinecone indexes it creates.
    cluster_name: str = "default"
    # Image of the operator (FSDPJob init containers run `pinery wait-for` from it).
    operator_image: str = f"{IMAGE_REPOSITORY}/pinery:{__version__}"
    # Image for FSDPJobs that do not name one (the built-in trainer).
    trainer_image: str = f"{IMAGE_REPOSITORY}/pinery-trainer:{__version__}"
    # DNS suffix of the cluster, used in the rendezvous addresses of FSDPJob pods.
    cluster_domain: str = "cluster.local"
    # Logs: "text" or "json".
    log_format: str = "text"
    # Prometheus metrics port (0 disables); Kopf liveness endpoint port (0 disables).
    metrics_port: int = 8080
    health_port: int = 8081
    # Kopf peering object for HA (several replicas, one active); empty means standalone.
    peering: str = ""

    @property
    def default_secret_namespace(self) -> str:
        return self.pinecone_secret_namespace or self.operator_namespace

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "OperatorSettings":
        """Settings from PINERY_<FIELD> variables (upper case); absent ones keep their default."""
        environ = os.environ if environ is None else environ
        values: dict = {}
        for f in fields(cls):
            raw = environ.get(env_name(f.name))
            if raw is None:
                continue
            values[f.name] = _parse(f.name, raw, type(getattr(cls(), f.name)))
        return cls(**values)

    def to_env(self) -> dict[str, str]:
        """The PINERY_* variables that reproduce these settings (for child processes)."""
        env = {}
        for f in fields(self):
            value = getattr(self, f.name)
            env[env_name(f.name)] = ",".join(value) if isinstance(value, tuple) else str(value)
        return env


def env_name(field_name: str) -> str:
    return "PINERY_" + field_name.upper()


def _parse(name: str, raw: str, kind: type):
    try:
        if kind is tuple:
            return tuple(part.strip() for part in raw.split(",") if part.strip())
        if kind is bool:
            return raw.lower() in ("1", "true", "yes")
        return kind(raw)
    except ValueError:
        raise ValueError(f"{env_name(name)}={raw!r} is not a valid {kind.__name__}") from None
