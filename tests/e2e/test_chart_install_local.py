"""Local mode in the chart form (`pinery local up --operator=chart`): Helm's Go SDK installs
charts/pinery and the chart's Deployment runs the operator as a pod, as the chart's
ServiceAccount under the chart's RBAC. A permission the chart forgot, or an env var the
Deployment gets wrong, fails these tests; kubectl and the kubernetes Python client drive them.
"""

from __future__ import annotations

from typing import Iterator

import kubernetes
import pytest

from pinery.local.cluster import OPERATOR_NAMESPACE, LocalCluster, leftover_processes
from pinery.local.podrunner import processes
from tests.e2e.conftest import EXAMPLES, Kubectl, LocalMode, example
from tests.integration.helpers import wait_for
from tests.integration.trainer_harness import free_port
from tests.unit.kubectl_stub import kubectl_binary

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
pytest.importorskip("helm_python")


@pytest.fixture(scope="module")
def chart_mode(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalMode]:
    kubectl_binary()
    state_dir = tmp_path_factory.mktemp("chart")
    cluster = LocalCluster(state_dir, pinecone_ready_delay=0.5, operator_form="chart").start_in_thread(timeout=180)
    try:
        yield LocalMode(cluster, Kubectl(cluster.kubeconfig, state_dir))
    finally:
        cluster.stop_thread()
        left = leftover_processes(cluster.state_dir)
        processes.kill_marked(processes.OWNER_VARIABLE, str((cluster.state_dir / "pods").resolve()))
        assert not left, f"processes outlived local mode: {left}"


def operator_pod(kubectl: Kubectl) -> dict:
    pods = kubectl.get("pods", OPERATOR_NAMESPACE)["items"]
    return next(p for p in pods if p["metadata"]["labels"].get("app.kubernetes.io/component") == "operator")


def test_the_operator_runs_from_the_chart_as_its_service_account(chart_mode):
    kubectl, state_dir = chart_mode.kubectl, chart_mode.state_dir
    pod = operator_pod(kubectl)
    assert pod["spec"]["serviceAccountName"] == "pinery" and pod["status"]["phase"] == "Running"
    # The operator's requests carry the token the pod runner mounted: ask the API who that is.
    [token] = state_dir.glob(f"pods/pods/{OPERATOR_NAMESPACE}/{pod['metadata']['name']}-*/volumes/kube-api-access/token")
    config = kubernetes.client.Configuration()
    config.host = chart_mode.cluster.apiserver.url
    config.ssl_ca_cert = str(token.with_name("ca.crt"))
    config.api_key = {"authorization": "Bearer " + token.read_text()}
    with kubernetes.client.ApiClient(config) as api:
        review = kubernetes.client.AuthenticationV1Api(api).create_self_subject_review(
            {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    assert review.status.user_info.username == f"system:serviceaccount:{OPERATOR_NAMESPACE}:pinery"
    # The operator's log is the pod's log.
    wait_for(lambda: "Initial authentication has finished" in kubectl("logs", "deploy/pinery", "-n", OPERATOR_NAMESPACE).stdout,
             timeout=60, interval=0.5, what="the operator's log through kubectl logs deploy/pinery")


def test_a_vectorindex_becomes_ready_and_a_two_node_job_trains(chart_mode):
    kubectl = chart_mode.kubectl
    kubectl("apply", "-f", str(EXAMPLES / "vectorindex-serverless.yaml"))
    job = example("fsdpjob-builtin-trainer.yaml", metadata_name="chart-trainer", spec_masterPort=free_port(), spec_nprocPerNode=1)
    job["spec"]["trainer"].update({"steps": 8, "logEvery": 4})
    job["spec"]["trainer"]["model"]["seqLen"] = 32
    kubectl.apply(job)
    kubectl.wait_for("vi/docs-search", "Ready", timeout=90)
    assert kubectl.get("vi/docs-search")["status"]["host"].startswith(chart_mode.cluster.pinecone_url)
    kubectl.wait_for("fsdpjob/chart-trainer", "Succeeded", timeout=150)
    status = kubectl.get("fsdpjob/chart-trainer")["status"]
    assert status["progress"]["step"] == 8 and status["restarts"] == 0
    kubectl("delete", "vi/docs-search", "--timeout=60s")
    # Nothing the operator did was refused under the chart's RBAC.
    log = kubectl("logs", "deploy/pinery", "-n", OPERATOR_NAMESPACE).stdout
    assert "403" not in log and "forbidden" not in log.lower(), log[-3000:]
