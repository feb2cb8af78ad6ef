"""Every Workload and PodGroup `pinery render` prints is valid under the upstream CRDs
(../shared/kube-crds, commits in its README): their openAPIV3Schema with its CEL rules
(pinery.schema.value_validation), nothing pruned, and accepted when created in the local
control plane with those CRDs installed (which validates with the same schemas and rules, as
a real API server does). The jobs: with and without the Kueue queue label, with and without
spec.gang (coscheduling, volcano), elastic and not, with a priority class."""

from __future__ import annotations

from typing import Iterator

import pytest
import yaml

from pinery.cli.render import PLACEHOLDER_UID, render_text
from pinery.schema.prune import prune
from pinery.schema.value_validation import validate
from pinery.settings import OperatorSettings
from tests.conftest import shared_path
from tests.support.control_plane import control_plane_module  # noqa: F401
from tests.support.kueue import install_kueue_crds
from tests.support.podgroups import install_pod_group_crds

QUEUE = {"kueue.x-k8s.io/queue-name": "team-a"}
PRIORITY = {**QUEUE, "kueue.x-k8s.io/priority-class": "high"}
GPU = {"requests": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": 4}, "limits": {"nvidia.com/gpu": 4}}

# name -> (labels, spec)
JOBS = {
    "queued": (QUEUE, {"numNodes": 2}),
    "queued-elastic": (QUEUE, {"numNodes": 4, "elastic": {"minNodes": 2}, "resources": GPU}),
    "queued-priority": (PRIORITY, {"numNodes": 2, "podTemplate": {"priorityClassName": "batch"}}),
    "queued-cosched": (QUEUE, {"numNodes": 4, "resources": GPU, "gang": {"scheduler": "coscheduling", "scheduleTimeoutSeconds": 300}}),
    "queued-cosched-elastic": (QUEUE, {"numNodes": 8, "elastic": {"minNodes": 2}, "gang": {"scheduler": "coscheduling"}}),
    "queued-volcano": (QUEUE, {"numNodes": 2, "resources": GPU, "gang": {"scheduler": "volcano", "queue": "research"},
                               "podTemplate": {"priorityClassName": "high"}}),
    "queued-volcano-elastic": (PRIORITY, {"numNodes": 3, "elastic": {"minNodes": 1}, "gang": {"scheduler": "volcano"}}),
    "cosched": ({}, {"numNodes": 2, "gang": {"scheduler": "coscheduling"}}),
    "cosched-elastic": ({}, {"numNodes": 5, "elastic": {"minNodes": 3}, "resources": GPU, "gang": {"scheduler": "coscheduling"}}),
    "volcano": ({}, {"numNodes": 2, "gang": {"scheduler": "volcano", "queue": "research"}}),
    "volcano-elastic": ({}, {"numNodes": 4, "elastic": {"minNodes": 2}, "gang": {"scheduler": "volcano"}}),
}

CRDS = {  # (apiVersion, kind) -> the CRD file
    ("kueue.x-k8s.io/v1beta2", "Workload"): ("kueue", "kueue.x-k8s.io_workloads.yaml"),
    ("scheduling.x-k8s.io/v1alpha1", "PodGroup"): ("scheduler-plugins", "scheduling.x-k8s.io_podgroups.yaml"),
    ("scheduling.volcano.sh/v1beta1", "PodGroup"): ("volcano", "scheduling.volcano.sh_podgroups.yaml"),
}


def rendered(name: str) -> list[dict]:
    labels, spec = JOBS[name]
    job = {"apiVersion": "pinery.dev/v1alpha1", "kind": "FSDPJob", "metadata": {"name": name, "labels": labels},
           "spec": {"nprocPerNode": 1, "command": ["python", "train.py"], **spec}}
    return render_text(yaml.safe_dump(job), "default", PLACEHOLDER_UID, OperatorSettings(), cluster_queue="cq", priority=100)


def custom_resources(name: str) -> list[dict]:
    return [d for d in rendered(name) if (d["apiVersion"], d["kind"]) in CRDS]


def schema_of(obj: dict) -> dict:
    folder, file = CRDS[(obj["apiVersion"], obj["kind"])]
    (crd,) = [d for d in yaml.safe_load_all(shared_path("kube-crds", folder, file).read_text()) if d]
    version = obj["apiVersion"].split("/")[1]
    (served,) = [v for v in crd["spec"]["versions"] if v["name"] == version and v["served"]]
    return served["schema"]["openAPIV3Schema"]


def test_each_job_renders_the_custom_resources_its_kind_of_job_needs():
    kinds = {name: [(d["apiVersion"], d["kind"]) for d in custom_resources(name)] for name in JOBS}
    assert kinds["queued"] == [("kueue.x-k8s.io/v1beta2", "Workload")]
    assert kinds["queued-cosched"] == [("kueue.x-k8s.io/v1beta2", "Workload"), ("scheduling.x-k8s.io/v1alpha1", "PodGroup")]
    assert kinds["queued-volcano"] == [("kueue.x-k8s.io/v1beta2", "Workload"), ("scheduling.volcano.sh/v1beta1", "PodGroup")]
    assert kinds["volcano"] == [("scheduling.volcano.sh/v1beta1", "PodGroup")]
    (wl,) = [d for d in custom_resources("queued-elastic") if d["kind"] == "Workload"]
    assert wl["spec"]["podSets"][0]["minCount"] == 2  # partial admission for an elastic job
    (wl,) = [d for d in custom_resources("queued-priority") if d["kind"] == "Workload"]
    assert wl["spec"]["priorityClassRef"] == {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "high"}


@pytest.mark.parametrize("name", sorted(JOBS))
def test_rendered_workloads_and_pod_groups_are_valid_under_the_upstream_crds_and_lose_nothing_to_pruning(name):
    objects = custom_resources(name)
    assert objects
    for obj in objects:
        schema = schema_of(obj)
        assert validate(schema, obj) == [], (obj["kind"], obj["metadata"]["name"])
        pruned, unknown = prune(schema, obj, root=True)
        assert unknown == [] and pruned["spec"] == obj["spec"], (obj["kind"], unknown)


def test_the_schema_check_would_catch_a_broken_one():
    (wl,) = [d for d in custom_resources("queued-priority") if d["kind"] == "Workload"]
    broken = {**wl, "spec": {k: v for k, v in wl["spec"].items() if k != "priority"}}
    assert [e for e in validate(schema_of(wl), broken) if "priority should not be nil" in str(e)]


@pytest.fixture(scope="module")
def crd_plane(control_plane_module) -> Iterator:  # noqa: F811
    install_kueue_crds(control_plane_module)
    install_pod_group_crds(control_plane_module)
    yield control_plane_module


def collection(obj: dict) -> str:
    group_version = obj["apiVersion"]
    plural = {"Workload": "workloads", "PodGroup": "podgroups"}[obj["kind"]]
    return f"/apis/{group_version}/namespaces/{obj['metadata']['namespace']}/{plural}"


@pytest.mark.parametrize("name", sorted(JOBS))
def test_the_local_control_plane_with_the_upstream_crds_accepts_them(crd_plane, name):
    for obj in custom_resources(name):
        response = crd_plane.http("POST", collection(obj), json=obj)
        assert response.status_code == 201, (obj["kind"], response.text[:2000])
        stored = response.json()
        assert all(stored["spec"].get(k) == v for k, v in obj["spec"].items())  # defaulted, nothing pruned or changed
