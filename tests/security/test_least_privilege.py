"""Least privilege in what pinery ships and builds: RBAC without wildcards in the plain manifests
and their kustomize build (the chart's own renderings are checked in tests/contract/test_chart),
the operator's pod locked down there too, and training pods that run as non-root with privilege
escalation off, every capability dropped and the RuntimeDefault seccomp profile, unless the user
gives a security context of their own, which then wins unchanged."""

from __future__ import annotations

import copy

import yaml
from hypothesis import given

from pinery.api import FSDPJobSpec
from pinery.fsdpjob import JobRef, build_children
from pinery.fsdpjob.children import DEFAULT_CONTAINER_SECURITY, DEFAULT_POD_SECURITY
from pinery.settings import OperatorSettings
from tests.conftest import REPO_ROOT, run_pinery
from tests.support.budget import share
from tests.support.chart import KUSTOMIZE_BASE, assert_operator_pod_locked_down, kustomize, of_kind, wildcard_rules
from tests.support.k8s import assert_valid
from tests.support.manifests import valid_manifests

PLAIN = REPO_ROOT / "deploy" / "pinery.yaml"
NON_ROOT_POD = {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
LOCKED_CONTAINER = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


def test_plain_manifests_and_their_kustomize_build_grant_no_wildcards():
    for objects in ([d for d in yaml.safe_load_all(PLAIN.read_text()) if d], kustomize(KUSTOMIZE_BASE)):
        assert of_kind(objects, "ClusterRole") and of_kind(objects, "ClusterRoleBinding")
        assert wildcard_rules(objects) == []
        (deployment,) = of_kind(objects, "Deployment")
        assert_operator_pod_locked_down(deployment["spec"]["template"]["spec"])


def assert_training_pod_least_privilege(pod: dict, spec: dict) -> None:
    template = spec.get("podTemplate") or {}
    pod_spec = pod["spec"]
    if template.get("securityContext"):
        assert pod_spec["securityContext"] == template["securityContext"]  # the user's, unchanged
    else:
        assert pod_spec["securityContext"] == DEFAULT_POD_SECURITY
        assert NON_ROOT_POD.items() <= pod_spec["securityContext"].items()
    (trainer,) = pod_spec["containers"]
    if template.get("containerSecurityContext"):
        assert trainer["securityContext"] == template["containerSecurityContext"]
    else:
        assert trainer["securityContext"] == DEFAULT_CONTAINER_SECURITY == LOCKED_CONTAINER
    for init in pod_spec.get("initContainers", []):  # pinery's own: always locked down
        assert init["securityContext"] == LOCKED_CONTAINER
    assert pod_spec.get("automountServiceAccountToken") is (False if not template.get("serviceAccountName") else None)
    assert not any(pod_spec.get(k) for k in ("hostNetwork", "hostPID", "hostIPC"))


def test_every_example_job_renders_least_privilege_pods():
    result = run_pinery("render", "-f", "examples/")
    assert result.returncode == 0, result.stderr
    rendered = [d for d in yaml.safe_load_all(result.stdout) if d]
    jobs = {d["metadata"]["name"]: d["spec"] for p in sorted((REPO_ROOT / "examples").rglob("*.yaml"))
            for d in yaml.safe_load_all(p.read_text()) if d and d["kind"] == "FSDPJob"}
    pods = of_kind(rendered, "Pod")
    assert jobs and {p["metadata"]["ownerReferences"][0]["name"] for p in pods} == set(jobs)
    for pod in pods:
        assert_training_pod_least_privilege(pod, jobs[pod["metadata"]["ownerReferences"][0]["name"]])


@share(0.5)
@given(valid_manifests("FSDPJob"))
def test_generated_jobs_build_least_privilege_pods(doc):
    spec = FSDPJobSpec.model_validate(copy.deepcopy(doc["spec"]))
    children = build_children(JobRef(doc["metadata"]["name"], "default", "uid-1"), spec, OperatorSettings())
    pods = [c for c in children if c["kind"] == "Pod" and "pinery.dev/node-rank" in c["metadata"]["labels"]]
    assert len(pods) == spec.num_nodes
    # An elastic job's rendezvous store: no node, but a pod as locked down as one.
    for store in (c for c in children if c["kind"] == "Pod" and c not in pods):
        assert store["spec"]["automountServiceAccountToken"] is False and store["spec"]["securityContext"]
        assert_valid(store)
    for pod in pods[:2]:  # every pod is built alike; rank 0 and rank 1 differ (the init container)
        assert_training_pod_least_privilege(pod, doc["spec"])
        assert_valid(pod)
