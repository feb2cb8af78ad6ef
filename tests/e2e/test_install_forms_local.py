"""Local mode in the forms a cluster installs pinery: `pinery local up --operator=chart` (Helm's
Go SDK installs charts/pinery), `--operator=manifests` (`kubectl apply -f deploy/pinery.yaml`)
and `--operator=kustomize` (`kubectl apply --server-side -k` on an overlay of deploy/kustomize).
In each the Deployment runs the operator as a pod, as its ServiceAccount under its RBAC: a
permission the manifests forgot, or an env var the Deployment gets wrong, fails these tests.
kubectl, the kubernetes Python client and Helm drive them. The whole path (a VectorIndex and a
two-node FSDPJob) runs in the chart form; the plain forms, made from the same chart by
`make deploy`, run the operator and a VectorIndex.
"""

from __future__ import annotations

import json
from typing import Iterator

import kubernetes
import pytest

from pinery.local import install
from pinery.local.cluster import OPERATOR_NAMESPACE, LocalCluster, leftover_processes
from pinery.local.podrunner import processes
from tests.e2e.conftest import Kubectl, LocalMode, example
from tests.support.kubectl import kubectl_binary
from tests.support.ports import free_port
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture(scope="module", params=["chart", "manifests", "kustomize"])
def installed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalMode]:
    if request.param == "chart":
        pytest.importorskip("helm_python")
    kubectl_binary()
    state_dir = tmp_path_factory.mktemp(request.param)
    cluster = LocalCluster(state_dir, pinecone_ready_delay=0.5, operator_form=request.param).start_in_thread(timeout=180)
    try:
        yield LocalMode(cluster, Kubectl(cluster.kubeconfig, state_dir))
    finally:
        cluster.stop_thread()
        left = leftover_processes(cluster.state_dir)
        processes.kill_marked(processes.OWNER_VARIABLE, str((cluster.state_dir / "pods").resolve()))
        assert not left, f"processes outlived local mode: {left}"


def operator_pod(kubectl: Kubectl) -> dict:
    pods = kubectl.get("pods", OPERATOR_NAMESPACE)["items"]
    [pod] = [p for p in pods if p["metadata"]["labels"].get("app.kubernetes.io/component") == "operator"
             and not p["metadata"].get("deletionTimestamp")]
    return pod


def operator_log(kubectl: Kubectl) -> str:
    return kubectl("logs", "deploy/pinery", "-n", OPERATOR_NAMESPACE).stdout


def assert_nothing_refused(kubectl: Kubectl) -> None:
    log = operator_log(kubectl)
    assert "403" not in log and "forbidden" not in log.lower(), log[-3000:]


def test_the_operator_runs_as_its_service_account(installed):
    kubectl, state_dir = installed.kubectl, installed.state_dir
    pod = operator_pod(kubectl)
    assert pod["spec"]["serviceAccountName"] == "pinery" and pod["status"]["phase"] == "Running"
    # The operator's requests carry the token the pod runner mounted: ask the API who that is.
    [token] = state_dir.glob(f"pods/pods/{OPERATOR_NAMESPACE}/{pod['metadata']['name']}-*/volumes/kube-api-access/token")
    config = kubernetes.client.Configuration()
    config.host = installed.cluster.apiserver.url
    config.ssl_ca_cert = str(token.with_name("ca.crt"))
    config.api_key = {"authorization": "Bearer " + token.read_text()}
    with kubernetes.client.ApiClient(config) as api:
        review = kubernetes.client.AuthenticationV1Api(api).create_self_subject_review(
            {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
        # RBAC is enforced for that token: the operator may read Secrets, not delete them.
        access = kubernetes.client.AuthorizationV1Api(api)
        allowed = {verb: access.create_self_subject_access_review({
            "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {"verb": verb, "resource": "secrets", "namespace": OPERATOR_NAMESPACE}}}).status.allowed
            for verb in ("get", "delete")}
        with pytest.raises(kubernetes.client.ApiException) as refused:
            kubernetes.client.CoreV1Api(api).delete_namespaced_secret("pinecone-api-key", OPERATOR_NAMESPACE)
    assert review.status.user_info.username == f"system:serviceaccount:{OPERATOR_NAMESPACE}:pinery"
    assert allowed == {"get": True, "delete": False} and refused.value.status == 403
    # The operator's log is the pod's log.
    wait_for(lambda: "Initial authentication has finished" in operator_log(kubectl),
             timeout=60, interval=0.5, what="the operator's log through kubectl logs deploy/pinery")


def test_the_applied_objects_are_the_shipped_ones(installed):
    """The form applied what a cluster gets: the chart's objects, or the manifests' under
    kubectl's field manager (client-side apply records its last-applied annotation)."""
    kubectl = installed.kubectl
    deployment = json.loads(kubectl("get", "deploy/pinery", "-n", OPERATOR_NAMESPACE, "-o", "json", "--show-managed-fields").stdout)
    managers = {(m["manager"], m["operation"]) for m in deployment["metadata"]["managedFields"]}
    # Helm v4 applies server-side under its program's name (os.Args[0]: `helm` from its CLI,
    # `python` through helm-python-sdk).
    expected = {"chart": ("python", "Apply"), "manifests": ("kubectl-client-side-apply", "Update"), "kustomize": ("kubectl", "Apply")}
    assert expected[installed.cluster.operator_form] in managers, managers
    for kind, name in (("clusterrole", "pinery"), ("clusterrolebinding", "pinery"), ("serviceaccount", "pinery")):
        kubectl("get", f"{kind}/{name}", "-n", OPERATOR_NAMESPACE)
    env = {v["name"]: v.get("value") for v in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["PINERY_PINECONE_HOST"] == installed.cluster.pinecone_url and env["PINERY_CLUSTER_NAME"] == "local"


def test_a_vectorindex_becomes_ready(installed):
    kubectl = installed.kubectl
    name = f"docs-{installed.cluster.operator_form}"
    kubectl.apply(example("vectorindex-serverless.yaml", metadata_name=name, spec_indexName=name))
    kubectl.wait_for(f"vi/{name}", "Ready", timeout=90)
    assert kubectl.get(f"vi/{name}")["status"]["host"].startswith(installed.cluster.pinecone_url)
    kubectl("delete", f"vi/{name}", "--timeout=60s")
    assert_nothing_refused(kubectl)


@pytest.mark.parametrize("installed", ["chart"], indirect=True)
def test_a_two_node_job_trains(installed):
    kubectl = installed.kubectl
    job = example("fsdpjob-builtin-trainer.yaml", metadata_name="chart-trainer", spec_masterPort=free_port(), spec_nprocPerNode=1)
    job["spec"]["trainer"].update({"steps": 8, "logEvery": 4})
    job["spec"]["trainer"]["model"]["seqLen"] = 32
    assert job["spec"]["numNodes"] == 2
    kubectl.apply(job)
    kubectl.wait_for("fsdpjob/chart-trainer", "Succeeded", timeout=150)
    status = kubectl.get("fsdpjob/chart-trainer")["status"]
    assert status["progress"]["step"] == 8 and status["restarts"] == 0
    assert_nothing_refused(kubectl)


@pytest.mark.parametrize("installed", ["chart"], indirect=True)
def test_helm_upgrade_rollback_status_list_uninstall_of_the_chart(installed):
    """charts/pinery itself through Helm's Go SDK: an upgrade rolls the operator's pod, a rollback
    brings the first values back, and an uninstall removes the release but not the CRDs."""
    import helm_python

    kubectl, cluster = installed.kubectl, installed.cluster
    config = helm_python.Config(kubeconfig_path=str(cluster.kubeconfig), namespace=OPERATOR_NAMESPACE)
    try:
        first = config.get_values(install.RELEASE)
        changed = {**first, "resyncSeconds": 61}
        revision = config.status(install.RELEASE)["revision"]
        config.upgrade(str(install.CHART), install.RELEASE, changed, wait="watcher", timeout=120)
        assert resync_of(kubectl) == "61"
        config.rollback(install.RELEASE, version=revision, wait="watcher", timeout=120)
        assert resync_of(kubectl) == "60"
        status = config.status(install.RELEASE)
        assert status["revision"] == revision + 2 and [r["name"] for r in config.list()] == [install.RELEASE]
        assert [h["revision"] for h in config.history(install.RELEASE)][-3:] == [revision, revision + 1, revision + 2]

        config.uninstall(install.RELEASE, wait="watcher", timeout=120)
        assert config.list() == []
        gone = kubectl("get", "deploy/pinery", "serviceaccount/pinery", "clusterrole/pinery", "-n", OPERATOR_NAMESPACE, check=False)
        assert gone.stdout.strip() == "" and gone.stderr.count("NotFound") == 3, gone
        secrets = kubectl("get", "secrets", "-n", OPERATOR_NAMESPACE, "-l", "owner=helm", "-o", "name").stdout
        assert secrets.strip() == ""
        kubectl("get", "crd/vectorindexes.pinery.dev", "crd/fsdpjobs.pinery.dev")  # CRDs stay, as Helm keeps them
        # Install again, for the tests of this form that follow.
        config.install(str(install.CHART), install.RELEASE, first, wait="watcher", timeout=120)
    finally:
        config.close()
    wait_for(lambda: operator_pod(kubectl)["status"]["phase"] == "Running", timeout=90, interval=0.5, what="the reinstalled operator")


def resync_of(kubectl: Kubectl) -> str:
    """PINERY_RESYNC_SECONDS of the one running operator pod (Recreate: the old one is gone)."""
    pod = operator_pod(kubectl)
    assert pod["status"]["phase"] == "Running"
    return next(v["value"] for v in pod["spec"]["containers"][0]["env"] if v["name"] == "PINERY_RESYNC_SECONDS")
