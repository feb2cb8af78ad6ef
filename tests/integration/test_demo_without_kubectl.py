"""The demo without kubectl: the same apply and `get pinery` through the API."""

from __future__ import annotations

from types import SimpleNamespace

import yaml

from pinery.local.demo import EXAMPLES, Cluster
from pinery.local.kubeclient import KubeClient


async def test_apply_and_get_pinery_through_the_api(control_plane):
    control_plane.install_crds()
    async with KubeClient.from_kubeconfig(control_plane.kubeconfig) as client:
        cluster = Cluster(SimpleNamespace(kubeconfig=control_plane.kubeconfig, state_dir=control_plane.state_dir), client)
        cluster.kubectl = None
        for name in ("vectorindex-serverless.yaml", "fsdpjob-builtin-trainer.yaml"):
            obj = yaml.safe_load((EXAMPLES / name).read_text())
            assert await cluster.apply(obj) == f"{obj['kind'].lower()}.pinery.dev/{obj['metadata']['name']} created"
        assert (await cluster.get("VectorIndex", "docs-search"))["spec"]["dimension"] == 384
        lines = await cluster.get_pinery()

    # As kubectl prints it: a table per kind, names qualified, columns from the CRDs.
    blank = lines.index("")
    assert lines[0].split() == ["NAME", "INDEX", "TYPE", "PHASE", "HOST", "AGE"]
    assert lines[1].split()[0] == "vectorindex.pinery.dev/docs-search"
    assert lines[blank + 1].split() == ["NAME", "NODES", "PROCS", "PHASE", "RESTARTS", "STEP", "AGE"]
    assert lines[blank + 2].split()[:3] == ["fsdpjob.pinery.dev/tiny-fsdp", "2", "2"]
    kubectl_view = control_plane.kubectl("get", "pinery").stdout.splitlines()
    assert [line.split()[0] for line in kubectl_view if line.strip()] == [line.split()[0] for line in lines if line]
