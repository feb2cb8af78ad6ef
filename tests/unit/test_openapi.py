"""The OpenAPI v3 documents kubectl reads to validate, patch and explain."""

from __future__ import annotations

import copy
import json
import re

import pytest
import yaml

from pinery.api import FSDP_JOB, RESOURCES
from pinery.generate.crds import build_crd
from pinery.local.apiserver import protobuf
from pinery.local.apiserver.openapi import OBJECT_META, schema_name, v3_document, v3_index
from pinery.local.apiserver.resources import BUILTIN_TYPES, ResourceType, types_from_crd
from tests.conftest import REPO_ROOT
from tests.support.kubectl import KubectlStub, kubectl_binary

CRD_TYPES = [t for res in RESOURCES for t in types_from_crd(build_crd(res))]
TYPES = [*BUILTIN_TYPES, *CRD_TYPES]
GVK = "x-kubernetes-group-version-kind"


def write_ops(document: dict) -> list[tuple[str, str, dict]]:
    return [(path, verb, op) for path, item in document["paths"].items()
            for verb, op in item.items() if verb in ("post", "put", "patch")]


def refs(node) -> list[str]:
    if isinstance(node, dict):
        return ([node["$ref"]] if "$ref" in node else []) + [r for v in node.values() for r in refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in refs(v)]
    return []


def test_index_lists_every_group_version_with_a_content_hash():
    index = v3_index(TYPES)
    assert set(index["paths"]) == {
        "api/v1", "apis/events.k8s.io/v1", "apis/coordination.k8s.io/v1", "apis/apiextensions.k8s.io/v1",
        "apis/kopf.dev/v1", "apis/pinery.dev/v1alpha1", "apis/apps/v1", "apis/authentication.k8s.io/v1",
        "apis/authorization.k8s.io/v1", "apis/rbac.authorization.k8s.io/v1",
    }
    for key, entry in index["paths"].items():
        assert re.fullmatch(rf"/openapi/v3/{re.escape(key)}\?hash=[0-9A-F]{{128}}", entry["serverRelativeURL"])
    assert v3_index(TYPES) == index


def test_the_hash_changes_with_the_document_only():
    crd = build_crd(FSDP_JOB)
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["description"] = "changed"
    changed = [*BUILTIN_TYPES, *types_from_crd(crd), *[t for t in CRD_TYPES if t.kind != "FSDPJob"]]
    before, after = v3_index(TYPES)["paths"], v3_index(changed)["paths"]
    assert before["apis/pinery.dev/v1alpha1"] != after["apis/pinery.dev/v1alpha1"]
    assert before["api/v1"] == after["api/v1"]


@pytest.mark.parametrize(("group", "version"), [("", "v1"), ("pinery.dev", "v1alpha1"), ("apiextensions.k8s.io", "v1")])
def test_every_write_operation_offers_field_validation_and_names_its_kind(group, version):
    document = v3_document(group, version, TYPES)
    assert document["openapi"].startswith("3.0")
    ops = write_ops(document)
    assert ops
    for path, verb, op in ops:
        params = {p["name"]: p for p in op["parameters"]}
        assert params["fieldValidation"]["in"] == "query", (path, verb)
        assert {"dryRun", "fieldManager"} <= set(params)
        assert op[GVK]["group"] == group and op[GVK]["version"] == version
        assert op["x-kubernetes-action"] == verb
        assert op["requestBody"]["content"]
    json.dumps(document)  # plain JSON, as served


def test_fsdpjob_paths_and_patch_types():
    document = v3_document("pinery.dev", "v1alpha1", TYPES)
    base = "/apis/pinery.dev/v1alpha1/namespaces/{namespace}/fsdpjobs"
    assert {base, base + "/{name}", base + "/{name}/status"} <= set(document["paths"])
    assert set(document["paths"][base]) == {"parameters", "get", "post", "delete"}
    assert set(document["paths"][base + "/{name}"]) == {"parameters", "get", "put", "patch", "delete"}
    patch = document["paths"][base + "/{name}"]["patch"]
    assert patch[GVK] == {"group": "pinery.dev", "version": "v1alpha1", "kind": "FSDPJob"}
    # No strategic merge patch for custom resources: kubectl apply then sends a JSON merge patch.
    assert set(patch["requestBody"]["content"]) == {
        "application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"}
    assert [p["name"] for p in document["paths"][base + "/{name}"]["parameters"]] == ["name", "namespace"]


def test_builtin_patches_take_strategic_merge_and_cluster_scoped_paths_have_no_namespace():
    document = v3_document("", "v1", TYPES)
    assert "application/strategic-merge-patch+json" in (
        document["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}"]["patch"]["requestBody"]["content"])
    assert document["paths"]["/api/v1/namespaces/{name}"]["patch"][GVK]["kind"] == "Namespace"
    assert "/api/v1/namespaces/{namespace}/pods/{name}/status" in document["paths"]
    assert "/api/v1/namespaces/{namespace}/pods/{name}/log" not in document["paths"]
    crds = v3_document("apiextensions.k8s.io", "v1", TYPES)["paths"]
    assert "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}" in crds


def test_only_the_verbs_of_a_type_are_published():
    readonly = ResourceType("example.com", "v1", "Report", "reports", True, verbs=("get", "list"))
    paths = v3_document("example.com", "v1", [readonly])["paths"]
    assert set(paths["/apis/example.com/v1/namespaces/{namespace}/reports"]) == {"parameters", "get"}
    assert set(paths["/apis/example.com/v1/namespaces/{namespace}/reports/{name}"]) == {"parameters", "get"}
    assert v3_document("example.com", "v2", [readonly])["paths"] == {}


def test_crd_schema_is_published_with_its_kind_and_full_object_meta():
    schemas = v3_document("pinery.dev", "v1alpha1", TYPES)["components"]["schemas"]
    published = schemas["dev.pinery.v1alpha1.FSDPJob"]
    original = copy.deepcopy(build_crd(FSDP_JOB)["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
    assert published[GVK] == [{"group": "pinery.dev", "version": "v1alpha1", "kind": "FSDPJob"}]
    assert published["properties"]["metadata"]["allOf"] == [{"$ref": f"#/components/schemas/{OBJECT_META}"}]
    assert published["properties"]["spec"] == original["properties"]["spec"]
    assert published["properties"]["status"] == original["properties"]["status"]
    assert schemas["dev.pinery.v1alpha1.FSDPJobList"][GVK][0]["kind"] == "FSDPJobList"
    # The CRD itself is untouched.
    assert build_crd(FSDP_JOB)["spec"]["versions"][0]["schema"]["openAPIV3Schema"] == original


@pytest.mark.parametrize(("group", "version"), [("", "v1"), ("pinery.dev", "v1alpha1"), ("kopf.dev", "v1"),
                                                 ("events.k8s.io", "v1"), ("coordination.k8s.io", "v1")])
def test_every_reference_resolves(group, version):
    document = v3_document(group, version, TYPES)
    names = set(document["components"]["schemas"])
    for ref in refs(document):
        assert ref.removeprefix("#/components/schemas/") in names, ref


def test_only_complete_builtin_schemas_carry_their_kind():
    # kubectl apply builds strategic merge patches from a tagged schema and warns on any field it
    # lacks; untagged, it uses its compiled-in types, as it does for a real cluster.
    schemas = v3_document("", "v1", TYPES)["components"]["schemas"]
    tagged = {s[GVK][0]["kind"] for s in schemas.values() if GVK in s and not s[GVK][0]["kind"].endswith("List")}
    assert tagged == {"Namespace", "ConfigMap", "Secret", "ServiceAccount"}
    assert schemas["io.k8s.api.core.v1.Pod"]["x-kubernetes-preserve-unknown-fields"] is True


@pytest.mark.parametrize("kind", ["Namespace", "ConfigMap", "Secret", "ServiceAccount"])
def test_complete_builtin_schemas_have_every_field_of_the_kind(kind):
    # The protobuf decoder's field tables come from k8s.io/api's generated.proto.
    schema = v3_document("", "v1", TYPES)["components"]["schemas"][f"io.k8s.api.core.v1.{kind}"]
    fields = {name for name, _ in protobuf.KINDS[("v1", kind)].values()}
    assert set(schema["properties"]) == fields | {"apiVersion", "kind"}


def test_object_meta_has_every_field_of_the_wire_format():
    schemas = v3_document("", "v1", TYPES)["components"]["schemas"]
    meta = protobuf.KINDS[("v1", "ConfigMap")][1][1]
    assert {name for name, _ in meta.values()} <= set(schemas[OBJECT_META]["properties"])
    assert schemas[OBJECT_META]["properties"]["ownerReferences"]["x-kubernetes-patch-merge-key"] == "uid"


def test_schema_names():
    by_kind = {(t.group, t.kind): schema_name(t) for t in TYPES}
    assert by_kind[("", "Pod")] == "io.k8s.api.core.v1.Pod"
    assert by_kind[("events.k8s.io", "Event")] == "io.k8s.api.events.v1.Event"
    assert by_kind[("coordination.k8s.io", "Lease")] == "io.k8s.api.coordination.v1.Lease"
    assert by_kind[("apiextensions.k8s.io", "CustomResourceDefinition")] == (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition")
    assert by_kind[("kopf.dev", "KopfPeering")] == "dev.kopf.v1.KopfPeering"
    assert by_kind[("pinery.dev", "VectorIndex")] == "dev.pinery.v1alpha1.VectorIndex"


# --- what real kubectl does with these documents ----------------------------------------------


@pytest.fixture
def stub(tmp_path):
    kubectl_binary()
    with KubectlStub(TYPES, tmp_path) as server:
        yield server


def test_kubectl_apply_leaves_validation_to_the_server(stub):
    result = stub.kubectl("apply", "-f", "examples/fsdpjob-builtin-trainer.yaml", cwd=REPO_ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "fsdpjob.pinery.dev/tiny-fsdp created"
    paths = stub.paths()
    assert "GET /openapi/v2" not in paths
    assert paths.index("GET /openapi/v3") < paths.index("GET /openapi/v3/apis/pinery.dev/v1alpha1")
    assert paths[-2:] == [
        "GET /apis/pinery.dev/v1alpha1/namespaces/default/fsdpjobs/tiny-fsdp",
        "POST /apis/pinery.dev/v1alpha1/namespaces/default/fsdpjobs",
    ]
    post = stub.posts()[-1]
    assert post.query == {"fieldManager": "kubectl-client-side-apply", "fieldValidation": "Strict"}
    sent = json.loads(post.body)
    manifest = yaml.safe_load((REPO_ROOT / "examples" / "fsdpjob-builtin-trainer.yaml").read_text())
    assert sent["spec"] == manifest["spec"]


def test_without_the_documents_kubectl_apply_needs_openapi_v2(tmp_path):
    # What the documents save: kubectl falls back to client-side validation from /openapi/v2.
    kubectl_binary()
    with KubectlStub(TYPES, tmp_path, serve_openapi=False) as server:
        result = server.kubectl("apply", "-f", "examples/fsdpjob-builtin-trainer.yaml", cwd=REPO_ROOT)
    assert result.returncode != 0
    assert "failed to download openapi" in result.stderr
    assert "GET /openapi/v2" in server.paths()
    assert server.posts() == []


def test_kubectl_reapply_of_a_secret_patches_from_the_published_schema(stub):
    manifest = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: pinecone\n  labels: {team: a}\nstringData:\n  apiKey: first\n"
    (stub.workdir / "secret.yaml").write_text(manifest)
    assert stub.kubectl("apply", "-f", "secret.yaml", cwd=stub.workdir).returncode == 0
    (stub.workdir / "secret.yaml").write_text(manifest.replace("first", "second").replace("team: a", "team: b"))
    result = stub.kubectl("apply", "-f", "secret.yaml", cwd=stub.workdir)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # no "error calculating patch from openapi v3 spec" warning
    patch = stub.requests[-1]
    assert (patch.method, patch.content_type) == ("PATCH", "application/strategic-merge-patch+json")
    assert patch.query["fieldValidation"] == "Strict"
    body = json.loads(patch.body)
    assert body["stringData"] == {"apiKey": "second"} and body["metadata"]["labels"] == {"team": "b"}
    assert "GET /openapi/v2" not in stub.paths()


def test_kubectl_reapply_of_a_custom_resource_sends_a_merge_patch(stub):
    job = (REPO_ROOT / "examples" / "fsdpjob-builtin-trainer.yaml").read_text()
    (stub.workdir / "job.yaml").write_text(job)
    assert stub.kubectl("apply", "-f", "job.yaml", cwd=stub.workdir).returncode == 0
    (stub.workdir / "job.yaml").write_text(job.replace("maxRestarts: 2", "maxRestarts: 3"))
    result = stub.kubectl("apply", "-f", "job.yaml", cwd=stub.workdir)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    patch = stub.requests[-1]
    assert (patch.method, patch.content_type) == ("PATCH", "application/merge-patch+json")
    assert json.loads(patch.body)["spec"] == {"maxRestarts": 3}
    # kubectl asks /openapi/v2 for custom resources on every client-side patch, as against a real
    # cluster; a 404 there is harmless.
    assert "GET /openapi/v2" in stub.paths()


def test_kubectl_explain_reads_the_v3_documents(stub):
    result = stub.kubectl("explain", "fsdpjob.spec.numNodes")
    assert result.returncode == 0, result.stderr
    assert "FIELD: numNodes <integer>" in result.stdout
    description = FSDP_JOB.spec_model.model_fields["num_nodes"].description
    assert " ".join(description.split()) in " ".join(result.stdout.split())
    assert "GET /openapi/v3/apis/pinery.dev/v1alpha1" in stub.paths()
    assert "GET /openapi/v2" not in stub.paths()
    whole = stub.kubectl("explain", "vectorindexes")
    assert whole.returncode == 0, whole.stderr
    assert "metadata\t<ObjectMeta>" in whole.stdout and "spec\t<Object> -required-" in whole.stdout
    labels = stub.kubectl("explain", "fsdpjob.metadata.labels")
    assert "FIELD: labels <map[string]string>" in labels.stdout
    assert "FIELD: data <map[string]string>" in stub.kubectl("explain", "secret.data").stdout
