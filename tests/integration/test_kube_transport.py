"""The operator's Kubernetes client (pinery.gateways.kube over kube_http) against the local
control plane over TLS, with asyncio's TLS read buffer shrunk as `pinery run` shrinks it
(pinery.tls_buffers); and the paged listing Kopf does at start (pinery.runtime, LIST_CHUNK), as
real kubectl pages it."""

from __future__ import annotations

import asyncio
import json
from asyncio import sslproto

import pytest

from pinery import tls_buffers
from pinery.gateways.kube import Kube, KubeError, load_api_client


@pytest.fixture
def shrunk(monkeypatch):
    monkeypatch.setattr(sslproto.SSLProtocol, "max_size", sslproto.SSLProtocol.max_size)  # restored after
    tls_buffers.shrink()


def config_map(name: str, size: int = 10) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}, "data": {"blob": "x" * size}}


def test_answers_larger_than_the_read_buffer_arrive_whole(control_plane, shrunk):
    """A 600 KiB ConfigMap and a list of 2 MiB: many TLS records and many reads each."""
    assert control_plane.url.startswith("https://")
    kube = Kube(load_api_client(str(control_plane.kubeconfig)))

    async def run():
        try:
            big = await kube.create(config_map("big", 600 * 1024))
            for i in range(4):
                await kube.create(config_map(f"more-{i}", 400 * 1024))
            read = await kube.get("ConfigMap", "default", "big")
            listed = await kube.list("ConfigMap", "default")
            return big, read, listed
        finally:
            await kube.close()

    big, read, listed = asyncio.run(run())
    assert read["data"]["blob"] == big["data"]["blob"] == "x" * 600 * 1024
    assert sorted(c["metadata"]["name"] for c in listed if c["metadata"]["name"] != "kube-root-ca.crt") == ["big", "more-0", "more-1", "more-2", "more-3"]


def test_answers_and_errors(control_plane):
    """404 on get is None, 409 on create returns the existing object, other errors carry the
    API server's message; a merge patch goes with its content type."""
    kube = Kube(load_api_client(str(control_plane.kubeconfig)))

    async def run():
        try:
            assert await kube.get("ConfigMap", "default", "absent") is None
            first = await kube.create(config_map("cm"))
            again = await kube.create(config_map("cm", 20))  # exists: the existing one, unchanged
            patched = await kube.merge_patch("ConfigMap", "default", "cm", {"data": {"extra": "1"}})
            with pytest.raises(KubeError) as refused:
                await kube.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Not_Valid", "namespace": "default"}})
            deleted, gone = await kube.delete("ConfigMap", "default", "cm"), await kube.delete("ConfigMap", "default", "cm")
            return first, again, patched, refused.value, deleted, gone
        finally:
            await kube.close()

    first, again, patched, refused, deleted, gone = asyncio.run(run())
    assert again["metadata"]["uid"] == first["metadata"]["uid"] and again["data"] == {"blob": "x" * 10}
    assert patched["data"] == {"blob": "x" * 10, "extra": "1"}
    assert refused.status == 422 and "Not_Valid" in refused.message
    assert (deleted, gone) == (True, False)


def test_kubectl_pages_a_list_as_kopf_does_at_start(control_plane):
    """Kopf lists with `limit` and follows `continue` until it is empty or absent
    (kopf/_cogs/clients/fetching.py, `fetch_objs`); kubectl's --chunk-size does the same."""
    kube = Kube(load_api_client(str(control_plane.kubeconfig)))

    async def create():
        try:
            for i in range(7):
                await kube.create(config_map(f"page-{i}"))
        finally:
            await kube.close()

    asyncio.run(create())
    out = control_plane.kubectl("get", "configmaps", "-n", "default", "--chunk-size=2", "-o", "json")
    names = [c["metadata"]["name"] for c in json.loads(out.stdout)["items"]]
    assert [n for n in names if n.startswith("page-")] == [f"page-{i}" for i in range(7)]
    first = control_plane.http("GET", "/api/v1/namespaces/default/configmaps?limit=2").json()
    assert len(first["items"]) == 2 and first["metadata"]["continue"]
