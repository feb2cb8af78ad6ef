"""Real kubectl (1.32) against the local control plane, used as users type it."""

import base64
import json
import threading

import pytest
import yaml

from tests.conftest import REPO_ROOT
from tests.integration.helpers import pod
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

EXAMPLES = REPO_ROOT / "examples"


@pytest.fixture
def plane(control_plane):
    control_plane.install_crds()
    return control_plane


def ready_condition(status: str = "True") -> dict:
    return {"status": {"phase": "Ready" if status == "True" else "Pending", "conditions": [{
        "type": "Ready", "status": status, "reason": "IndexReady", "message": "the index is ready",
        "lastTransitionTime": "2025-01-01T00:00:00Z", "observedGeneration": 1}]}}


def test_apply_get_describe_delete(plane):
    applied = plane.kubectl("apply", "-f", str(EXAMPLES))
    assert sorted(applied.stdout.split("\n")[:-1]) == sorted([
        "fsdpjob.pinery.dev/tiny-fsdp created", "fsdpjob.pinery.dev/allreduce-smoke created",
        "vectorindex.pinery.dev/product-catalog created", "vectorindex.pinery.dev/docs-search created",
        "vectorindex.pinery.dev/products-hybrid created", "vectorindex.pinery.dev/support-articles created",
        "vectorindex.pinery.dev/docs-search-restored created",
        "vectorindexbackupschedule.pinery.dev/docs-search-nightly created",
        "vectorindexbackup.pinery.dev/docs-search-before-migration created",
    ])
    again = plane.kubectl("apply", "-f", str(EXAMPLES))
    assert again.stdout.count("unchanged") == 9

    table = plane.kubectl("get", "fsdpjobs").stdout.splitlines()
    assert table[0].split() == ["NAME", "NODES", "PROCS", "PHASE", "RESTARTS", "STEP", "AGE"]
    assert [line.split()[:3] for line in table[1:]] == [["allreduce-smoke", "2", "2"], ["tiny-fsdp", "2", "2"]]
    wide = plane.kubectl("get", "fsdpjob", "tiny-fsdp", "-o", "wide").stdout.splitlines()[0].split()
    assert wide[-2:] == ["LOSS", "DISRUPTIONS"]  # priority-1 columns only in wide output

    manifest = yaml.safe_load(plane.kubectl("get", "vi", "docs-search", "-o", "yaml").stdout)
    assert manifest["kind"] == "VectorIndex" and manifest["spec"]["dimension"] == 384
    assert "kubectl.kubernetes.io/last-applied-configuration" in manifest["metadata"]["annotations"]

    plane.core_v1().create_namespaced_event("default", {
        "metadata": {"name": "docs-search.1"}, "type": "Warning", "reason": "CreateFailed", "message": "quota exceeded",
        "involvedObject": {"apiVersion": "pinery.dev/v1alpha1", "kind": "VectorIndex", "name": "docs-search",
                           "namespace": "default", "uid": manifest["metadata"]["uid"]},
        "source": {"component": "pinery"}, "count": 1,
        "firstTimestamp": "2025-01-01T00:00:00Z", "lastTimestamp": "2025-01-01T00:00:00Z",
    })
    described = plane.kubectl("describe", "vectorindex", "docs-search").stdout
    assert "Name:         docs-search" in described
    assert "CreateFailed" in described and "quota exceeded" in described

    # a changed manifest is configured through a three-way merge patch
    changed = (EXAMPLES / "vectorindex-serverless.yaml").read_text().replace("team: search", "team: ranking")
    assert "configured" in plane.kubectl("apply", "-f", "-", input=changed).stdout
    assert plane.custom_objects().get_namespaced_custom_object(
        "pinery.dev", "v1alpha1", "default", "vectorindexes", "docs-search")["spec"]["tags"]["team"] == "ranking"

    deleted = plane.kubectl("delete", "-f", str(EXAMPLES / "fsdpjob-custom-command.yaml"))
    assert deleted.stdout.strip() == 'fsdpjob.pinery.dev "allreduce-smoke" deleted'
    assert plane.kubectl("get", "fsdpjob", "allreduce-smoke", check=False).returncode != 0


def test_apply_refuses_invalid_manifests_with_the_servers_message(plane):
    bad = (EXAMPLES / "vectorindex-serverless.yaml").read_text().replace("dimension: 384", "dimension: -1")
    result = plane.kubectl("apply", "-f", "-", input=bad, check=False)
    assert result.returncode != 0
    assert 'The VectorIndex "docs-search" is invalid' in result.stderr and "spec.dimension" in result.stderr
    typo = (EXAMPLES / "vectorindex-serverless.yaml").read_text().replace("metric: cosine", "metric: cosine\n  metrik: dotproduct")
    result = plane.kubectl("apply", "-f", "-", input=typo, check=False)
    assert result.returncode != 0 and 'unknown field "spec.metrik"' in result.stderr


def test_wait_for_a_condition(plane):
    plane.kubectl("apply", "-f", str(EXAMPLES / "vectorindex-serverless.yaml"))
    co = plane.custom_objects()
    args = ("pinery.dev", "v1alpha1", "default", "vectorindexes", "docs-search")
    result: dict = {}

    def wait():
        result["done"] = plane.kubectl("wait", "--for=condition=Ready", "vectorindex/docs-search", "--timeout=20s", check=False)

    thread = threading.Thread(target=wait)
    thread.start()
    wait_for(lambda: plane.server.store and plane.server.store.hub.watcher_count() > 0, timeout=15, what="kubectl wait watching")
    co.patch_namespaced_custom_object_status(*args, ready_condition("True"))
    thread.join(25)
    assert result["done"].returncode == 0, result["done"].stderr
    assert result["done"].stdout.strip() == "vectorindex.pinery.dev/docs-search condition met"
    # already true: wait returns at once; jsonpath waits work too
    plane.kubectl("wait", "--for=condition=Ready", "vi/docs-search", "--timeout=5s")
    plane.kubectl("wait", "--for=jsonpath={.status.phase}=Ready", "vi/docs-search", "--timeout=5s")
    plane.kubectl("delete", "vi", "docs-search", "--wait=false")
    plane.kubectl("wait", "--for=delete", "vi/docs-search", "--timeout=10s")


def test_generator_commands_send_protobuf(plane):
    assert plane.kubectl("create", "namespace", "team-a").stdout.strip() == "namespace/team-a created"
    assert plane.core_v1().read_namespace("team-a").status.phase == "Active"
    plane.kubectl("create", "secret", "generic", "pinecone-api-key", "--from-literal=api-key=pc-secret", "-n", "team-a")
    secret = plane.core_v1().read_namespaced_secret("pinecone-api-key", "team-a")
    assert base64.b64decode(secret.data["api-key"]) == b"pc-secret" and secret.type == "Opaque"
    config = plane.state_dir / "settings.ini"
    config.write_text("[index]\nname = docs\n")
    plane.kubectl("create", "configmap", "settings", f"--from-file={config}", "-n", "team-a")
    assert plane.core_v1().read_namespaced_config_map("settings", "team-a").data == {"settings.ini": "[index]\nname = docs\n"}
    plane.kubectl("create", "serviceaccount", "robot", "-n", "team-a")
    assert plane.core_v1().read_namespaced_service_account("robot", "team-a").metadata.name == "robot"
    listed = plane.kubectl("get", "ns").stdout.splitlines()
    assert listed[0].split() == ["NAME", "STATUS", "AGE"] and any(line.split()[:2] == ["team-a", "Active"] for line in listed)
    plane.kubectl("delete", "namespace", "team-a")
    assert plane.kubectl("get", "ns", "team-a", check=False).returncode != 0


def test_logs(plane):
    v1 = plane.core_v1()
    v1.create_namespaced_pod("default", pod("trainer-0", containers=[{"name": "trainer", "image": "x"}, {"name": "sidecar", "image": "x"}]))
    folder = plane.state_dir / "logs" / "default" / "trainer-0"
    folder.mkdir(parents=True)
    (folder / "trainer.log").write_text("step 1 loss 2.0\nstep 2 loss 1.5\n")
    (folder / "sidecar.log").write_text("sidecar up\n")
    assert plane.kubectl("logs", "trainer-0", "-c", "trainer").stdout == "step 1 loss 2.0\nstep 2 loss 1.5\n"
    assert plane.kubectl("logs", "trainer-0", "-c", "trainer", "--tail=1").stdout == "step 2 loss 1.5\n"
    defaulted = plane.kubectl("logs", "trainer-0")
    assert 'Defaulted container "trainer" out of: trainer, sidecar' in defaulted.stderr
    v1.patch_namespaced_pod_status("trainer-0", "default", {"status": {"phase": "Succeeded"}})
    assert plane.kubectl("logs", "-f", "trainer-0", "-c", "sidecar", timeout=10).stdout == "sidecar up\n"


def test_other_everyday_commands(plane):
    plane.kubectl("apply", "-f", str(EXAMPLES / "fsdpjob-builtin-trainer.yaml"))
    plane.kubectl("label", "fsdpjob", "tiny-fsdp", "team=ml")
    plane.kubectl("annotate", "fsdpjob", "tiny-fsdp", "note=first")
    assert plane.kubectl("get", "fj", "-l", "team=ml", "-o", "name").stdout.strip() == "fsdpjob.pinery.dev/tiny-fsdp"
    plane.kubectl("patch", "fsdpjob", "tiny-fsdp", "--type=merge", "-p", json.dumps({"spec": {"activeDeadlineSeconds": 600}}))
    assert plane.kubectl("get", "fj", "tiny-fsdp", "-o", "jsonpath={.spec.activeDeadlineSeconds} {.metadata.generation}").stdout == "600 2"
    refused = plane.kubectl("patch", "fsdpjob", "tiny-fsdp", "--type=merge", "-p", json.dumps({"spec": {"numNodes": 4}}), check=False)
    assert refused.returncode != 0 and "numNodes is immutable" in refused.stderr
    plane.kubectl("create", "configmap", "plain", "--from-literal=a=1")
    plane.kubectl("patch", "configmap", "plain", "-p", json.dumps({"data": {"b": "2"}}))  # strategic merge
    assert plane.core_v1().read_namespaced_config_map("plain", "default").data == {"a": "1", "b": "2"}
    server_side = plane.kubectl("apply", "--server-side", "-f", str(EXAMPLES / "vectorindex-pod.yaml"))
    assert server_side.stdout.strip() == "vectorindex.pinery.dev/product-catalog serverside-applied"
    resources = plane.kubectl("api-resources", "--api-group=pinery.dev").stdout
    assert "fsdpjobs" in resources and "vectorindexes" in resources
    explained = plane.kubectl("explain", "fsdpjob.spec.numNodes").stdout
    assert "FIELD: numNodes <integer>" in explained
    assert "namespace/default" in plane.kubectl("get", "namespaces", "-o", "name").stdout


def test_kubectl_apply_of_a_crd_with_a_root_metadata_description_fails_as_on_a_cluster(control_plane):
    """The CRDs of an earlier release carried `description` on the root metadata schema, which
    every kube-apiserver refuses; kubectl must see that refusal here too, and the CRDs shipped
    now must go in."""
    old = yaml.safe_load((REPO_ROOT / "crds" / "vectorindexes.pinery.dev.yaml").read_text())
    old["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["metadata"]["description"] = "Standard object metadata."
    result = control_plane.kubectl("apply", "-f", "-", input=yaml.safe_dump(old), check=False)
    assert result.returncode != 0
    # word for word what users of real clusters report (crossplane/crossplane#7206, for one)
    assert result.stderr == (
        'The CustomResourceDefinition "vectorindexes.pinery.dev" is invalid: '
        "spec.validation.openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything "
        "other than name and generateName, but metadata is implicitly specified\n"
    )
    applied = control_plane.kubectl("apply", "-f", str(REPO_ROOT / "crds"))
    assert sorted(applied.stdout.split()) == sorted([
        "customresourcedefinition.apiextensions.k8s.io/fsdpjobs.pinery.dev", "created",
        "customresourcedefinition.apiextensions.k8s.io/vectorindexes.pinery.dev", "created",
        "customresourcedefinition.apiextensions.k8s.io/vectorindexbackups.pinery.dev", "created",
        "customresourcedefinition.apiextensions.k8s.io/vectorindexbackupschedules.pinery.dev", "created",
    ])
