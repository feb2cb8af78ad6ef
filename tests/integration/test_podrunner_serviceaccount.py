"""Pods get in-cluster credentials as a kubelet gives them: the kubernetes Python client's
load_incluster_config() works from a pod, and its token is the pod's ServiceAccount under RBAC."""

from __future__ import annotations

import sys

from pinery.local.podrunner import images
from tests.conftest import REPO_ROOT
from tests.integration.conftest_podrunner import container_status, create, pod_log, pod_manifest, wait_for_phase

WHOAMI = """
import kubernetes
kubernetes.config.load_incluster_config()
api = kubernetes.client.ApiClient()
review = kubernetes.client.AuthenticationV1Api(api).create_self_subject_review({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
print("user", review.status.user_info.username)
try:
    kubernetes.client.CoreV1Api(api).list_namespaced_secret("default")
except kubernetes.client.ApiException as exc:
    print("secrets", exc.status)
print("namespace", open(kubernetes.config.incluster_config.SERVICE_TOKEN_FILENAME.replace("token", "namespace")).read())
"""


def test_a_pod_authenticates_in_cluster_as_its_service_account(pod_runner):
    plane = pod_runner.plane
    pod = pod_manifest("whoami", [sys.executable, "-c", WHOAMI])
    create(plane, pod)
    wait_for_phase(plane, "whoami", "Succeeded", timeout=60)
    out = pod_log(plane, "whoami")
    assert "user system:serviceaccount:default:default" in out
    assert "secrets 403" in out  # RBAC applies: the default account may not list Secrets
    assert "namespace default" in out


def test_automount_false_gives_no_token_and_no_environment_is_lost(pod_runner):
    plane = pod_runner.plane
    script = "import os; print(os.path.exists('/var/run/secrets/kubernetes.io/serviceaccount/token'), os.environ['KUBERNETES_SERVICE_HOST'], os.environ['KUBERNETES_PORT'].startswith('tcp://'))"
    pod = pod_manifest("no-token", ["sh", "-c", f"ls /var/run/secrets/kubernetes.io/serviceaccount 2>&1; {sys.executable} -c \"{script}\""])
    pod["spec"]["automountServiceAccountToken"] = False
    create(plane, pod)
    wait_for_phase(plane, "no-token", "Succeeded", "Failed", timeout=60)
    out = pod_log(plane, "no-token")
    assert "False 127.0.0.1 True" in out, out
    assert container_status(get := plane.http("GET", "/api/v1/namespaces/default/pods/no-token").json())["state"]["terminated"]["exitCode"] == 0, get


def test_the_operator_image_runs_its_dockerfile_entrypoint():
    dockerfile = (REPO_ROOT / "Dockerfile").read_text()
    entrypoint, cmd = images.KNOWN[images.repository("ghcr.io/pinery-dev/pinery:1.2.3")]
    assert f"ENTRYPOINT {entrypoint}".replace("'", '"') in dockerfile
    assert f"CMD {cmd}".replace("'", '"') in dockerfile
    assert images.argv({"image": "ghcr.io/pinery-dev/pinery@sha256:ab", "args": ["run", "-v"]}) == ["pinery", "run", "-v"]
    assert images.argv({"image": "ghcr.io/pinery-dev/pinery:1", "command": ["sh"]}) == ["sh"]
    assert images.argv({"image": "busybox", "args": ["x"]}) is None
