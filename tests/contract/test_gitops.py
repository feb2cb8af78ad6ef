"""GitOps support: the Argo CD Lua health checks run for real, and docs/gitops.md is exact."""

from __future__ import annotations

import re
import shutil

import pytest
import yaml
from lupa import lua51

from pinery.api import FSDP_JOB, VECTOR_INDEX
from pinery.generate.crds import object_schema
from tests.conftest import REPO_ROOT
from tests.support.chart import CHART_DIR, KUSTOMIZE_BASE, chart, kustomize

GITOPS = REPO_ROOT / "docs" / "gitops.md"
LUA = {
    "pinery.dev_VectorIndex": REPO_ROOT / "deploy" / "argocd" / "vectorindex-health.lua",
    "pinery.dev_FSDPJob": REPO_ROOT / "deploy" / "argocd" / "fsdpjob-health.lua",
}


def yaml_blocks() -> list[list[dict]]:
    blocks = re.findall(r"```yaml\n(.*?)```", GITOPS.read_text(), re.S)
    return [[d for d in yaml.safe_load_all(block) if d] for block in blocks]


def doc_objects(kind: str) -> list[dict]:
    return [d for block in yaml_blocks() for d in block if d.get("kind") == kind]


def health(key: str, obj: dict) -> tuple[str, str]:
    """Run a health check as Argo CD does (gopher-lua is Lua 5.1): `obj` global, a table back."""
    lua = lua51.LuaRuntime()
    lua.globals().obj = lua.table_from(obj, recursive=True)
    result = lua.execute(LUA[key].read_text())
    return result["status"], result["message"]


def condition(kind, status, message="", reason="R"):
    return {"type": kind, "status": status, "reason": reason, "message": message,
            "lastTransitionTime": "2026-01-01T00:00:00Z"}


def index(generation=2, **status):
    obj = {"apiVersion": "pinery.dev/v1alpha1", "kind": "VectorIndex",
           "metadata": {"name": "docs", "namespace": "ml", "generation": generation}, "spec": {"dimension": 8}}
    if status:
        obj["status"] = status
    return obj


READY = condition("Ready", "True", "Index is ready")


@pytest.mark.parametrize(
    "obj, expected, message",
    [
        (index(), "Progressing", "Waiting for the operator"),
        (index(phase="Creating", observedGeneration=2, conditions=[condition("Ready", "False", "Pinecone is initializing the index")]),
         "Progressing", "Pinecone is initializing the index"),
        (index(phase="Ready", observedGeneration=2, host="docs-abc.svc.pinecone.io", conditions=[READY]),
         "Healthy", "Ready at docs-abc.svc.pinecone.io"),
        (index(phase="Ready", observedGeneration=2, conditions=[condition("Synced", "True"), READY]), "Healthy", "Ready"),
        # Ready, but for an older spec: the change has not been acted on yet.
        (index(generation=3, phase="Ready", observedGeneration=2, conditions=[READY]),
         "Progressing", "Waiting for the operator to act on generation 3"),
        (index(phase="Ready", conditions=[READY]), "Progressing", "Waiting for the operator to act on generation 2"),
        (index(phase="Failed", observedGeneration=2, conditions=[condition("Ready", "False", "spec.dimension: too large for the pod type")]),
         "Degraded", "spec.dimension: too large for the pod type"),
        # Failed while the index still serves: Synced carries the reason.
        (index(phase="Failed", observedGeneration=2, conditions=[READY, condition("Synced", "False", "quota exceeded")]),
         "Degraded", "quota exceeded"),
        (index(phase="Failed", observedGeneration=2), "Degraded", "Failed"),
        (index(phase="Error", observedGeneration=2, conditions=[condition("Ready", "False", "Pinecone answered 503; retrying")]),
         "Progressing", "Pinecone answered 503; retrying"),
        (index(phase="Updating", observedGeneration=2), "Progressing", "Updating"),
    ],
)
def test_vectorindex_health(obj, expected, message):
    assert health("pinery.dev_VectorIndex", obj) == (expected, message)


def job(**status):
    obj = {"apiVersion": "pinery.dev/v1alpha1", "kind": "FSDPJob",
           "metadata": {"name": "train", "namespace": "ml", "generation": 1}, "spec": {"numNodes": 2}}
    if status:
        obj["status"] = status
    return obj


@pytest.mark.parametrize(
    "obj, expected, message",
    [
        (job(), "Progressing", "Waiting for the operator"),
        (job(restarts=0), "Progressing", "Waiting for the operator"),
        (job(phase="Pending", conditions=[condition("Created", "True")]), "Progressing", "Pending"),
        (job(phase="Running", conditions=[condition("Running", "True", "2/2 nodes running")], progress={"step": 12, "totalSteps": 20}),
         "Progressing", "Running: 2/2 nodes running (step 12/20)"),
        (job(phase="Running", progress={"step": 3}), "Progressing", "Running (step 3)"),
        (job(phase="Queued", conditions=[condition("Queued", "True", "waiting for quota in ClusterQueue gpus")]),
         "Progressing", "Queued: waiting for quota in ClusterQueue gpus"),
        (job(phase="Restarting", restarts=1, conditions=[condition("Restarting", "True", "node 1 exited with 137")]),
         "Progressing", "Restarting: node 1 exited with 137"),
        (job(phase="Succeeded", conditions=[condition("Succeeded", "True", "all nodes exited 0")]), "Healthy", "Succeeded: all nodes exited 0"),
        (job(phase="Failed", restarts=2, conditions=[condition("Failed", "True", "restart budget of 2 spent")]),
         "Degraded", "Failed: restart budget of 2 spent"),
        (job(phase="Suspended", conditions=[condition("Suspended", "True", "spec.suspend is true")]),
         "Suspended", "Suspended: spec.suspend is true"),
    ],
)
def test_fsdpjob_health(obj, expected, message):
    assert health("pinery.dev_FSDPJob", obj) == (expected, message)


def test_phases_of_the_api_are_all_covered():
    """Every phase the models can report maps to the intended Argo CD status."""
    expected = {"Pending": "Progressing", "Queued": "Progressing", "Running": "Progressing", "Restarting": "Progressing",
                "Succeeded": "Healthy", "Failed": "Degraded", "Suspended": "Suspended"}
    phases = object_schema(FSDP_JOB)["properties"]["status"]["properties"]["phase"]["enum"]
    assert sorted(phases) == sorted(expected)
    for phase in phases:
        assert health("pinery.dev_FSDPJob", job(phase=phase))[0] == expected[phase]
    for phase in object_schema(VECTOR_INDEX)["properties"]["status"]["properties"]["phase"]["enum"]:
        status = health("pinery.dev_VectorIndex", index(phase=phase, observedGeneration=2))[0]
        assert status == ("Degraded" if phase == "Failed" else "Progressing"), phase


def test_gitops_doc_includes_the_lua_files_verbatim():
    (config_map,) = [d for d in doc_objects("ConfigMap") if d["metadata"]["name"] == "argocd-cm"]
    for key, path in LUA.items():
        assert config_map["data"][f"resource.customizations.health.{key}"] == path.read_text()


def test_status_is_kstatus_shaped():
    """observedGeneration on the status, and metav1.Condition-shaped conditions keyed by type."""
    for res in (VECTOR_INDEX, FSDP_JOB):
        status = object_schema(res)["properties"]["status"]["properties"]
        assert status["observedGeneration"]["type"] == "integer"
        conditions = status["conditions"]
        assert conditions["x-kubernetes-list-type"] == "map" and conditions["x-kubernetes-list-map-keys"] == ["type"]
        fields = conditions["items"]["properties"]
        assert {"type", "status", "reason", "message", "lastTransitionTime", "observedGeneration"} <= fields.keys()
    assert "Ready" in object_schema(VECTOR_INDEX)["properties"]["status"]["properties"]["conditions"]["description"]


def test_chart_values_in_the_examples_are_valid():
    (application,) = doc_objects("Application")
    assert application["spec"]["source"]["path"] == "charts/pinery"
    chart().validate_schema(application["spec"]["source"]["helm"]["valuesObject"])
    (release,) = doc_objects("HelmRelease")
    assert (REPO_ROOT / release["spec"]["chart"]["spec"]["chart"]) == CHART_DIR
    chart().validate_schema(release["spec"]["values"])
    assert release["spec"]["install"]["crds"] == release["spec"]["upgrade"]["crds"] == "CreateReplace"


def test_sync_wave_overlay_builds_and_keeps_existing_annotations(tmp_path):
    kustomization = next(b[0] for b in yaml_blocks() if b and b[0].get("kind") == "Kustomization" and "patches" in b[0])
    shutil.copytree(KUSTOMIZE_BASE, tmp_path / "base")
    (tmp_path / "app").mkdir()
    index_doc = yaml.safe_load((REPO_ROOT / "examples" / "vectorindex-serverless.yaml").read_text())
    index_doc["metadata"]["annotations"] = {"team.example.com/owner": "search"}
    (tmp_path / "app" / "my-indexes.yaml").write_text(yaml.safe_dump(index_doc))
    kustomization["resources"] = ["../base", "my-indexes.yaml"]
    (tmp_path / "app" / "kustomization.yaml").write_text(yaml.safe_dump(kustomization))
    built = kustomize(tmp_path / "app")
    waves = {o["kind"]: o["metadata"].get("annotations", {}).get("argocd.argoproj.io/sync-wave") for o in built}
    assert waves["CustomResourceDefinition"] == "-1" and waves["VectorIndex"] == "1" and waves["Deployment"] is None
    vi = next(o for o in built if o["kind"] == "VectorIndex")
    assert vi["metadata"]["annotations"]["team.example.com/owner"] == "search"
    assert vi["metadata"]["annotations"]["argocd.argoproj.io/sync-options"] == "SkipDryRunOnMissingResource=true"
    assert vi["spec"] == index_doc["spec"]
