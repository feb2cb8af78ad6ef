"""The floors of the operator benchmarks: Kopf operators that do the least the task needs.

    python benchmarks/floor_operator.py fsdpjob --kubeconfig PATH
    python benchmarks/floor_operator.py steady --kubeconfig PATH
    python benchmarks/floor_operator.py noop --kubeconfig PATH

Set up exactly as pinery is (`kopf_settings`, `operator_kwargs`, the login handler built from
the same client, standalone, all namespaces; only Kopf's diff base is Kopf's own, as the floor
has change handlers on FSDPJobs), with other handlers:

- `fsdpjob`: one `on.create` handler per FSDPJob that creates the children pinery would (the
  same pure builders: Service, trainer ConfigMap, one pod per node) and writes the status once;
  no reads, no planning, no daemon.
- `steady`: `fsdpjob`, and a Kopf timer per FSDPJob every PINERY_FSDPJOB_PROGRESS_SECONDS that
  reads rank 0's log since its last read and writes the progress into the status: what
  publishing a running job's progress costs at the least (one log read and one status write
  per interval; the children change only when the kubelet changes them, and that arrives by
  watch).
- `noop`: a no-op `on.event` handler for FSDPJobs and VectorIndexes: what Kopf itself costs to
  list, watch and remember objects.
"""

from __future__ import annotations

import argparse
import asyncio
from datetime import datetime, timezone
from typing import Any

import kopf

from pinery import tls_buffers
from pinery.api.base import GROUP, VERSION
from pinery.api.fsdpjob import FSDPJobSpec
from pinery.fsdpjob import progress_from_logs
from pinery.fsdpjob.children import build_children
from pinery.fsdpjob.log_cursor import TAIL_LINES, LogCursor
from pinery.fsdpjob.naming import TRAINER_CONTAINER, JobRef, pod_name
from pinery.gateways.kube import KubeError
from pinery.kopf_connections import bounded_session, connection_limit
from pinery.runtime import configure_logging, connection_info, kopf_settings, operator_kwargs
from pinery.services import Services
from pinery.settings import OperatorSettings


def registry_for(mode: str, services: Services) -> kopf.OperatorRegistry:
    registry = kopf.OperatorRegistry()

    @kopf.on.login(registry=registry)
    async def login(**_: Any) -> kopf.AiohttpSession:
        # Kopf's client bounded as pinery's is (pinery.kopf_connections)
        info = connection_info(services.kube.api_client.configuration)
        return bounded_session(info, connection_limit(services.settings.namespaces))

    @kopf.on.cleanup(registry=registry)
    async def close(**_: Any) -> None:
        await services.kube.close()

    if mode in ("fsdpjob", "steady"):
        @kopf.on.create(GROUP, VERSION, "fsdpjobs", registry=registry)
        async def create_children(body, spec, namespace, name, meta, **_):
            job = JobRef(name, namespace, meta["uid"])
            for child in build_children(job, FSDPJobSpec.model_validate(dict(spec)), services.settings):
                await services.kube.create(child)
            status = {"phase": "Pending", "observedGeneration": meta.get("generation")}
            await services.kube.merge_patch("FSDPJob", namespace, name, {"status": status}, subresource="status")
    if mode == "steady":
        cursors: dict[tuple[str, str], LogCursor] = {}

        @kopf.timer(GROUP, VERSION, "fsdpjobs", interval=services.settings.fsdpjob_progress_seconds, registry=registry)
        async def publish_progress(namespace, name, **_):
            cursor = cursors.setdefault((namespace, name), LogCursor())
            try:
                text = await services.kube.pod_log(namespace, pod_name(name, 0), container=TRAINER_CONTAINER, tail_lines=TAIL_LINES,
                                                   timestamps=True, since_time=cursor.since)
            except KubeError:
                return
            cursor.advance(None, text)
            progress = progress_from_logs(text, datetime.now(timezone.utc))
            await services.kube.merge_patch("FSDPJob", namespace, name, {"status": {"progress": progress}}, subresource="status")
    if mode == "noop":
        @kopf.on.event(GROUP, VERSION, "fsdpjobs", registry=registry)
        async def fsdpjob_seen(**_):
            pass

        @kopf.on.event(GROUP, VERSION, "vectorindexes", registry=registry)
        async def vectorindex_seen(**_):
            pass

    return registry


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("fsdpjob", "steady", "noop"))
    parser.add_argument("--kubeconfig", required=True)
    args = parser.parse_args()
    settings = OperatorSettings.from_env()
    configure_logging(settings)
    services = Services.create(settings, args.kubeconfig)
    tls_buffers.shrink()  # as `pinery.runtime.operate` does
    asyncio.run(kopf.operator(
        # Kopf's own diff base for every kind: the floor's FSDPJob handlers are change handlers
        # (pinery.kopf_diffbase).
        registry=registry_for(args.mode, services), settings=kopf_settings(settings, event_only_kinds=()),
        **operator_kwargs(settings),
    ))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
