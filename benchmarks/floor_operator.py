"""The floors of the operator benchmarks: Kopf operators that do the least the task needs.

    python benchmarks/floor_operator.py fsdpjob --kubeconfig PATH
    python benchmarks/floor_operator.py noop --kubeconfig PATH

Set up exactly as pinery is (`kopf_settings`, `operator_kwargs`, the login handler built from
the same client, standalone, all namespaces), with other handlers:

- `fsdpjob`: one `on.create` handler per FSDPJob that creates the children pinery would (the
  same pure builders: Service, trainer ConfigMap, one pod per node) and writes the status once;
  no reads, no planning, no daemon.
- `noop`: a no-op `on.event` handler for FSDPJobs and VectorIndexes: what Kopf itself costs to
  list, watch and remember objects.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

import kopf

from pinery.api.base import GROUP, VERSION
from pinery.api.fsdpjob import FSDPJobSpec
from pinery.fsdpjob.children import build_children
from pinery.fsdpjob.naming import JobRef
from pinery.runtime import configure_logging, connection_info, kopf_settings, operator_kwargs
from pinery.services import Services
from pinery.settings import OperatorSettings


def registry_for(mode: str, services: Services) -> kopf.OperatorRegistry:
    registry = kopf.OperatorRegistry()

    @kopf.on.login(registry=registry)
    def login(**_: Any) -> kopf.ConnectionInfo:
        return connection_info(services.kube.api_client.configuration)

    if mode == "fsdpjob":
        @kopf.on.create(GROUP, VERSION, "fsdpjobs", registry=registry)
        async def create_children(body, spec, namespace, name, meta, **_):
            job = JobRef(name, namespace, meta["uid"])
            for child in build_children(job, FSDPJobSpec.model_validate(dict(spec)), services.settings):
                await services.kube.create(child)
            status = {"phase": "Pending", "observedGeneration": meta.get("generation")}
            await services.kube.merge_patch("FSDPJob", namespace, name, {"status": status}, subresource="status")
    else:
        @kopf.on.event(GROUP, VERSION, "fsdpjobs", registry=registry)
        async def fsdpjob_seen(**_):
            pass

        @kopf.on.event(GROUP, VERSION, "vectorindexes", registry=registry)
        async def vectorindex_seen(**_):
            pass

    return registry


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("fsdpjob", "noop"))
    parser.add_argument("--kubeconfig", required=True)
    args = parser.parse_args()
    settings = OperatorSettings.from_env()
    configure_logging(settings)
    services = Services.create(settings, args.kubeconfig)
    asyncio.run(kopf.operator(
        registry=registry_for(args.mode, services), settings=kopf_settings(settings), **operator_kwargs(settings),
    ))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
