"""The FSDPJob operator (real Kopf, real handlers) against the local control plane; the test is
the kubelet: it writes pod statuses and removes deleted pods (see fsdpjob_harness)."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from typing import Iterator

import pytest
import yaml

from pinery.fsdpjob.naming import LABEL_ATTEMPT, pod_name
from tests.conftest import REPO_ROOT
from tests.integration import fsdpjob_harness as h
from tests.integration.helpers import wait_for

_names = itertools.count()


@pytest.fixture(scope="module")
def plane(control_plane_module):
    control_plane_module.install_crds()
    return control_plane_module


@pytest.fixture
def ns(plane) -> str:
    name = f"fj-{next(_names)}"
    response = plane.http("POST", "/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    assert response.status_code == 201, response.text
    return name


@pytest.fixture
def kubelet(plane, ns) -> Iterator[h.TestKubelet]:
    with h.TestKubelet(plane, ns) as k:
        yield k


@pytest.fixture
def op(plane, ns, kubelet) -> Iterator[h.Operator]:
    with h.job_operator(plane, ns) as operator:
        yield operator


def strip_server_fields(expected, actual, path="") -> None:
    """Every field the renderer printed is in the created object with the same value (the
    server adds its defaults, uid and status beside them)."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: {actual!r} is not an object"
        for key, value in expected.items():
            assert key in actual, f"{path}.{key} missing from the created object"
            strip_server_fields(value, actual[key], f"{path}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), f"{path}: {actual!r} != {expected!r}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            strip_server_fields(e, a, f"{path}[{i}]")
    else:
        assert expected == actual, f"{path}: {actual!r} != {expected!r}"


def render(job: dict, uid: str, ns: str, tmp_path) -> list[dict]:
    source = tmp_path / "job.yaml"
    source.write_text(yaml.safe_dump(job))
    env = {**os.environ, "PINERY_OPERATOR_IMAGE": h.SETTINGS.operator_image, "PINERY_TRAINER_IMAGE": h.SETTINGS.trainer_image}
    result = subprocess.run([sys.executable, "-m", "pinery", "render", "-f", str(source), "--uid", uid, "-n", ns],
                            capture_output=True, text=True, env=env, cwd=REPO_ROOT, timeout=60)
    assert result.returncode == 0, result.stderr
    return list(yaml.safe_load_all(result.stdout))


def test_children_are_what_render_prints_and_the_job_succeeds_only_when_every_node_exited_0(plane, ns, kubelet, op, tmp_path):
    trainer = {"model": {"preset": "tiny"}, "steps": 10}
    created = h.create_job(plane, ns, "tiny", numNodes=2, trainer=trainer, command=None)
    uid = created["metadata"]["uid"]
    pods = kubelet.wait_pods("tiny", 2)
    job = op.wait_phase("tiny", "Pending")

    expected = render(h.job_body("tiny", numNodes=2, trainer=trainer), uid, ns, tmp_path)
    assert [o["kind"] for o in expected] == ["Service", "ConfigMap", "Pod", "Pod"]
    service = plane.http("GET", f"/api/v1/namespaces/{ns}/services/tiny").json()
    config_map = plane.http("GET", f"/api/v1/namespaces/{ns}/configmaps/tiny-trainer").json()
    pods = [kubelet.pod(p["metadata"]["name"]) for p in pods]
    for want, got in zip(expected, [service, config_map, *pods]):
        strip_server_fields(want, got, f"{want['kind']}/{want['metadata']['name']}")
    assert service["spec"]["clusterIP"] == "None" and service["spec"]["publishNotReadyAddresses"] is True
    for rank, pod in enumerate(pods):
        assert pod["metadata"]["name"] == f"tiny-node-{rank}"
        assert pod["spec"]["hostname"] == f"tiny-node-{rank}" and pod["spec"]["subdomain"] == "tiny"
        assert pod["metadata"]["labels"]["pinery.dev/node-rank"] == str(rank)
        assert pod["metadata"]["labels"][LABEL_ATTEMPT] == "0"
        (owner,) = pod["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["uid"], owner["controller"]) == ("FSDPJob", uid, True)
    assert [n["phase"] for n in h.status(job)["nodes"]] == ["Pending", "Pending"]
    assert op.phase_gauge("Pending") == 1

    kubelet.run("tiny", 0)
    op.wait(tiny := "tiny", lambda j: h.status(j)["nodes"][0].get("phase") == "Running")
    assert h.status(h.get_job(plane, ns, tiny))["phase"] == "Pending"  # one node is not the gang
    kubelet.run("tiny", 1)
    job = op.wait_phase("tiny", "Running")
    assert h.condition(job, "Running")["reason"] == "NodesRunning"
    assert op.phase_gauge("Running") == 1 and op.phase_gauge("Pending") == 0

    kubelet.exit("tiny", 0, 0)
    op.wait("tiny", lambda j: h.status(j)["nodes"][0].get("phase") == "Succeeded")
    job = h.get_job(plane, ns, "tiny")
    assert h.status(job)["phase"] == "Running"  # rank 1 still runs: not Succeeded yet
    assert not h.condition(job, "Succeeded")
    kubelet.exit("tiny", 1, 0)
    job = op.wait_phase("tiny", "Succeeded")
    assert h.condition(job, "Succeeded")["reason"] == "AllNodesSucceeded"
    assert h.status(job)["completionTime"] and h.status(job)["restarts"] == 0
    assert [(n["phase"], n["exitCode"]) for n in h.status(job)["nodes"]] == [("Succeeded", 0), ("Succeeded", 0)]
    assert op.phase_gauge("Succeeded") == 1 and op.phase_gauge("Running") == 0
    wait_for(lambda: h.reasons(plane, ns, "tiny")[-1:] == ["AllNodesSucceeded"], what="the success event")
    assert h.reasons(plane, ns, "tiny") == ["Created", "NodesRunning", "AllNodesSucceeded"]
    # finished pods stay for their logs; nothing was created twice
    assert len(kubelet.pods("tiny")) == 2
    assert [r.name for r in kubelet.created("tiny")] == ["tiny-node-0", "tiny-node-1"]
