"""`pinery render`: the operator's children of each FSDPJob, through the real CLI."""

import yaml

from pinery.fsdpjob import kueue, plan
from pinery.settings import OperatorSettings
from tests.conftest import REPO_ROOT, run_pinery
from tests.support.k8s import assert_valid
from tests.unit.fsdpjob.cluster import T0

JOB = """apiVersion: pinery.dev/v1alpha1
kind: FSDPJob
metadata:
  name: train
  namespace: ml
spec:
  numNodes: 2
  nprocPerNode: 2
  shmSize: 1Gi
"""


def test_renders_exactly_what_the_first_reconcile_creates():
    result = run_pinery("render", "-f", "-", "--uid", "abc", stdin=JOB)
    assert result.returncode == 0, result.stderr
    docs = list(yaml.safe_load_all(result.stdout))
    assert [(d["kind"], d["metadata"]["name"]) for d in docs] == [
        ("Service", "train"), ("ConfigMap", "train-trainer"), ("Pod", "train-node-0"), ("Pod", "train-node-1"),
    ]
    assert "&id" not in result.stdout and result.stderr == ""
    job = yaml.safe_load(JOB)
    job["metadata"]["uid"] = "abc"
    assert list(plan(job, [], T0, settings=OperatorSettings()).create) == docs
    for doc in docs:
        assert_valid(doc)


def test_a_gang_job_renders_its_podgroup_before_the_pods_as_the_reconciles_create_them():
    text = JOB + "  gang:\n    scheduler: volcano\n    queue: research\n"
    result = run_pinery("render", "-f", "-", "--uid", "abc", stdin=text)
    assert result.returncode == 0, result.stderr
    docs = list(yaml.safe_load_all(result.stdout))
    assert [(d["kind"], d["metadata"]["name"]) for d in docs] == [
        ("Service", "train"), ("ConfigMap", "train-trainer"), ("PodGroup", "train-0"), ("Pod", "train-node-0"), ("Pod", "train-node-1"),
    ]
    assert docs[2]["apiVersion"] == "scheduling.volcano.sh/v1beta1" and docs[2]["spec"]["queue"] == "research"
    assert {d["metadata"]["annotations"]["scheduling.k8s.io/group-name"] for d in docs[3:]} == {"train-0"}
    # The operator's first pass creates the group, the next (the group read back) the pods.
    job = yaml.safe_load(text)
    job["metadata"]["uid"] = "abc"
    first = plan(job, [], T0, settings=OperatorSettings(), pod_groups=[])
    service, config_map, group = first.create
    second = plan({**job, "status": first.status}, [], T0, settings=OperatorSettings(), service=service, config_map=config_map,
                  pod_groups=[group])
    assert [*first.create, *second.create] == docs
    for doc in docs:
        if doc["kind"] != "PodGroup":  # a custom resource: tests/unit/test_fsdpjob_gang.py validates it against its CRD
            assert_valid(doc)


def test_examples_render_valid_objects_with_namespace_and_settings_from_the_environment():
    import os
    import subprocess
    import sys

    env = {**os.environ, "PINERY_OPERATOR_IMAGE": "registry.local/pinery:dev", "PINERY_CLUSTER_DOMAIN": "corp.internal"}
    result = subprocess.run([sys.executable, "-m", "pinery", "render", "-f", "examples/", "-n", "team-a"],
                            capture_output=True, text=True, cwd=REPO_ROOT, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    docs = list(yaml.safe_load_all(result.stdout))
    assert {d["metadata"]["namespace"] for d in docs} == {"team-a"}
    inits = [d["spec"]["initContainers"][0] for d in docs if d["kind"] == "Pod" and "initContainers" in d["spec"]]
    assert inits and all(i["image"] == "registry.local/pinery:dev" for i in inits)
    assert all(".svc.corp.internal:" in i["command"][2] for i in inits)
    for doc in docs:
        assert_valid(doc)


def test_invalid_input_gives_validates_messages_and_exit_1():
    bad = JOB.replace("numNodes: 2", "numNodes: 0") + "---\nkind: ConfigMap\napiVersion: v1\nmetadata: {name: cm}\n"
    rendered = run_pinery("render", "-f", "-", stdin=bad)
    validated = run_pinery("validate", "-f", "-", stdin=bad)
    assert rendered.returncode == validated.returncode == 1
    assert rendered.stdout == "" and rendered.stderr == validated.stderr
    assert "FSDPJob/train: spec.numNodes: Invalid value: 0" in rendered.stderr


def test_vectorindexes_render_nothing_and_missing_files_are_clear():
    result = run_pinery("render", "-f", "examples/vectorindex-serverless.yaml")
    assert result.returncode == 0 and result.stdout == ""
    result = run_pinery("render", "-f", "/no/such.yaml")
    assert result.returncode == 1 and "cannot read /no/such.yaml" in result.stderr


QUEUED = JOB.replace("  namespace: ml\n", "  namespace: ml\n  labels:\n    kueue.x-k8s.io/queue-name: team-a\n")


def _admit(wl: dict, cluster_queue: str) -> dict:
    """Kueue's scheduler admitting all of pod set "node", with a flavor that adds nothing."""
    conditions = [{"type": t, "status": "True", "reason": t, "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}
                  for t in ("QuotaReserved", "Admitted")]
    return {**wl, "status": {"conditions": conditions, "admission": {"clusterQueue": cluster_queue, "podSetAssignments": [
        {"name": "node", "flavors": {"cpu": "default"}, "count": wl["spec"]["podSets"][0]["count"]}]}}}


def _reconciles(job: dict, cluster_queue: str, priority: int | None = None) -> list[dict]:
    """What the operator's passes create for a queued job admitted by `cluster_queue`: the
    first pass the Service and Workload, the admission recorded, then the ConfigMap and the
    pods (a gang: the PodGroup, then once it is read back the pods)."""
    settings = OperatorSettings()
    flavors = {"default": {"metadata": {"name": "default"}, "spec": {}}}
    ref = kueue.priority_ref(job)
    first = plan(job, [], T0, settings=settings, pod_groups=[], priority=(ref, priority) if ref else None)
    service, created_wl = first.create
    wl = _admit({**created_wl, "metadata": {**created_wl["metadata"], "resourceVersion": "1"}}, cluster_queue)
    created, status, groups = [service, created_wl], first.status, []
    for _ in range(4):
        p = plan({**job, "status": status}, [], T0, settings=settings, service=service, workload=wl, flavors=flavors,
                 config_map=next((c for c in created if c["kind"] == "ConfigMap"), None), pod_groups=groups)
        created += list(p.create)
        groups += [c for c in p.create if c["kind"] == "PodGroup"]
        status = p.status
        if any(c["kind"] == "Pod" for c in p.create):
            break
    return created


def test_a_queued_job_renders_its_workload_first_then_the_children_an_admission_creates():
    result = run_pinery("render", "-f", "-", "--uid", "abc", "--cluster-queue", "cq", stdin=QUEUED)
    assert result.returncode == 0, result.stderr
    docs = list(yaml.safe_load_all(result.stdout))
    assert [d["kind"] for d in docs] == ["Service", "Workload", "ConfigMap", "Pod", "Pod"]
    assert docs[1]["spec"]["queueName"] == "team-a" and docs[1]["spec"]["podSets"][0]["count"] == 2
    assert {d["metadata"]["labels"]["kueue.x-k8s.io/cluster-queue-name"] for d in docs[3:]} == {"cq"}
    job = yaml.safe_load(QUEUED)
    job["metadata"]["uid"] = "abc"
    assert _reconciles(job, "cq") == docs
    for doc in docs:
        if doc["kind"] != "Workload":  # tests/contract/test_rendered_crs.py validates it against the CRD
            assert_valid(doc)
    # Without --cluster-queue the ClusterQueue's label is left out, nothing else changes.
    plain = list(yaml.safe_load_all(run_pinery("render", "-f", "-", "--uid", "abc", stdin=QUEUED).stdout))
    assert all("kueue.x-k8s.io/cluster-queue-name" not in d["metadata"].get("labels", {}) for d in plain)
    assert [d["kind"] for d in plain] == [d["kind"] for d in docs]


def test_a_queued_gang_job_with_a_priority_class_renders_as_the_reconciles_create_it():
    text = QUEUED.replace("queue-name: team-a\n", "queue-name: team-a\n    kueue.x-k8s.io/priority-class: high\n")
    text += "  gang:\n    scheduler: coscheduling\n"
    result = run_pinery("render", "-f", "-", "--uid", "abc", "--cluster-queue", "cq", "--priority", "1000", stdin=text)
    assert result.returncode == 0, result.stderr
    docs = list(yaml.safe_load_all(result.stdout))
    assert [d["kind"] for d in docs] == ["Service", "Workload", "ConfigMap", "PodGroup", "Pod", "Pod"]
    assert docs[1]["spec"]["priorityClassRef"]["name"] == "high" and docs[1]["spec"]["priority"] == 1000
    job = yaml.safe_load(text)
    job["metadata"]["uid"] = "abc"
    assert _reconciles(job, "cq", 1000) == docs
