"""apps/v1 Deployments and ReplicaSets driven by real kubectl and the `kubernetes` client, with
the pod runner running the pods (apps_policy.py, apps_controllers.py, scale.py)."""

from __future__ import annotations

import json

import pytest

from tests.support.waiting import wait_for

pytestmark = pytest.mark.timeout(300)

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: web}}
  template:
    metadata:
      labels: {{app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: main
        image: busybox:{tag}
        command: ["sleep", "3600"]
"""


def _pods(plane):
    items = json.loads(plane.kubectl("get", "pods", "-l", "app=web", "-o", "json").stdout)["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def test_rollout_scale_restart_undo_and_cascading_delete(pod_runner):
    plane = pod_runner.plane
    plane.kubectl("apply", "-f", "-", input=DEPLOYMENT.format(replicas=2, tag="1"))
    rollout = plane.kubectl("rollout", "status", "deploy/web", "--timeout=120s", timeout=150)
    assert 'deployment "web" successfully rolled out' in rollout.stdout

    columns = plane.kubectl("get", "deploy", "web").stdout.split("\n")[0].split()
    assert columns == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert plane.kubectl("get", "deploy", "web", "--no-headers").stdout.split()[1:4] == ["2/2", "2", "2"]
    assert plane.kubectl("get", "rs").stdout.split("\n")[0].split() == ["NAME", "DESIRED", "CURRENT", "READY", "AGE"]

    import kubernetes

    apps = kubernetes.client.AppsV1Api(plane.api_client())
    d = apps.read_namespaced_deployment("web", "default")
    assert d.spec.strategy.rolling_update.max_surge == "25%" and d.spec.revision_history_limit == 10
    assert d.metadata.annotations["deployment.kubernetes.io/revision"] == "1"
    assert {c.type: c.reason for c in d.status.conditions} == {"Available": "MinimumReplicasAvailable", "Progressing": "NewReplicaSetAvailable"}
    [rs] = apps.list_namespaced_replica_set("default").items
    assert rs.metadata.name == f"web-{rs.metadata.labels['pod-template-hash']}"
    assert all(p["metadata"]["ownerReferences"][0]["name"] == rs.metadata.name for p in _pods(plane))
    # Writes of the controllers are recorded under kube-controller-manager, as on a cluster.
    assert {(m.manager, m.operation, m.subresource) for m in rs.metadata.managed_fields} == {
        ("kube-controller-manager", "Update", None), ("kube-controller-manager", "Update", "status")}
    assert ("kube-controller-manager", "status") in {(m.manager, m.subresource) for m in d.metadata.managed_fields}

    # A deleted pod is replaced.
    victim = _pods(plane)[0]["metadata"]["name"]
    plane.kubectl("delete", "pod", victim, "--wait=false")
    wait_for(lambda: len(_pods(plane)) == 2 and victim not in [p["metadata"]["name"] for p in _pods(plane)], timeout=60, what="replacement pod")

    plane.kubectl("scale", "deploy/web", "--replicas=3")
    wait_for(lambda: apps.read_namespaced_deployment("web", "default").status.available_replicas == 3, timeout=90, what="3 available")
    assert apps.read_namespaced_deployment_scale("web", "default").spec.replicas == 3

    # A new template rolls out into a second ReplicaSet; undo goes back to the first one's template.
    plane.kubectl("apply", "-f", "-", input=DEPLOYMENT.format(replicas=3, tag="2"))
    plane.kubectl("rollout", "status", "deploy/web", "--timeout=120s", timeout=150)
    assert len(apps.list_namespaced_replica_set("default").items) == 2
    plane.kubectl("rollout", "undo", "deploy/web")
    plane.kubectl("rollout", "status", "deploy/web", "--timeout=120s", timeout=150)
    d = apps.read_namespaced_deployment("web", "default")
    assert d.spec.template.spec.containers[0].image == "busybox:1"
    assert d.metadata.annotations["deployment.kubernetes.io/revision"] == "3"

    plane.kubectl("rollout", "restart", "deploy/web")
    plane.kubectl("rollout", "status", "deploy/web", "--timeout=120s", timeout=150)
    d = apps.read_namespaced_deployment("web", "default")
    assert "kubectl.kubernetes.io/restartedAt" in d.spec.template.metadata.annotations
    assert all(p["metadata"]["annotations"].get("kubectl.kubernetes.io/restartedAt") for p in _pods(plane))

    plane.kubectl("delete", "deploy", "web")
    wait_for(lambda: not apps.list_namespaced_replica_set("default").items and not _pods(plane), timeout=90, what="cascading delete")


def test_selector_must_match_and_is_immutable(control_plane):
    bad = DEPLOYMENT.format(replicas=1, tag="1").replace("labels: {app: web}", "labels: {app: other}")
    result = control_plane.kubectl("apply", "-f", "-", input=bad, check=False)
    assert result.returncode != 0 and "`selector` does not match template `labels`" in result.stderr
    control_plane.kubectl("apply", "-f", "-", input=DEPLOYMENT.format(replicas=1, tag="1"))
    changed = DEPLOYMENT.format(replicas=1, tag="1").replace("app: web", "app: x")
    result = control_plane.kubectl("apply", "-f", "-", input=changed, check=False)
    assert result.returncode != 0 and "spec.selector: Invalid value" in result.stderr and "field is immutable" in result.stderr


def test_apply_of_the_install_manifest_gets_past_validation(control_plane):
    result = control_plane.kubectl("apply", "-f", "deploy/pinery.yaml", check=False)
    assert "error validating" not in result.stderr
    assert "deployment.apps/pinery created" in result.stdout
