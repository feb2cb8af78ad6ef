"""The committed CRDs: generated from the models, fresh, documented, and faithful to the models."""

import copy
import shutil

import pytest
import yaml
from openapi_schema_validator import OAS30Validator

from pinery.api import FSDP_JOB, RESOURCES, VECTOR_INDEX
from pinery.generate.crds import CRD_DIRS, build_crd, crd_files, object_schema, stale_files
from pinery.schema.crd_validation import validate_crd
from pinery.schema.prune import apply_defaults
from pinery.schema.value_validation import validate
from tests.conftest import REPO_ROOT, run_pinery

EXAMPLES = sorted((REPO_ROOT / "examples").glob("*.yaml"))


def test_committed_crds_match_the_models():
    assert stale_files(REPO_ROOT) == [], "run `pinery crds` and commit the result"


SHIPPED = ["crds", "charts/pinery/crds", "deploy/pinery.yaml", "deploy/kustomize/crds.yaml"]


@pytest.mark.parametrize("where", SHIPPED)
def test_every_shipped_crd_is_one_the_api_server_accepts(where):
    """Each way a user installs pinery (the CRD files, the chart, the plain manifest, kustomize)
    carries CRDs that kube-apiserver's ValidateCustomResourceDefinition, as ported, accepts."""
    path = REPO_ROOT / where
    files = sorted(path.glob("*.yaml")) if path.is_dir() else [path]
    crds = [d for f in files for d in yaml.safe_load_all(f.read_text()) if d and d.get("kind") == "CustomResourceDefinition"]
    assert sorted(c["metadata"]["name"] for c in crds) == sorted(r.crd_name for r in RESOURCES)
    for crd in crds:
        assert validate_crd(crd) == [], crd["metadata"]["name"]


def test_chart_crds_are_identical_to_top_level_crds():
    for res in RESOURCES:
        top = (REPO_ROOT / "crds" / f"{res.crd_name}.yaml").read_text()
        assert (REPO_ROOT / "charts/pinery/crds" / f"{res.crd_name}.yaml").read_text() == top


def test_crds_check_command_detects_staleness(tmp_path):
    for folder in CRD_DIRS:
        shutil.copytree(REPO_ROOT / folder, tmp_path / folder)
    (tmp_path / "docs").mkdir()
    shutil.copy(REPO_ROOT / "docs" / "api-reference.md", tmp_path / "docs")
    assert run_pinery("crds", "--check", "--root", str(tmp_path)).returncode == 0
    target = tmp_path / "crds" / f"{VECTOR_INDEX.crd_name}.yaml"
    target.write_text(target.read_text().replace("maximum: 20000", "maximum: 30000"))
    result = run_pinery("crds", "--check", "--root", str(tmp_path))
    assert result.returncode == 1 and f"stale: crds/{VECTOR_INDEX.crd_name}.yaml" in result.stderr
    assert run_pinery("crds", "--root", str(tmp_path)).returncode == 0
    assert stale_files(tmp_path) == []


def test_crds_stdout_is_applyable_yaml():
    result = run_pinery("crds", "--stdout")
    docs = list(yaml.safe_load_all(result.stdout))
    assert [d["metadata"]["name"] for d in docs] == [r.crd_name for r in RESOURCES]


@pytest.mark.parametrize("res", RESOURCES, ids=lambda r: r.kind)
def test_crd_shape(res):
    crd = build_crd(res)
    names = crd["spec"]["names"]
    assert crd["apiVersion"] == "apiextensions.k8s.io/v1"
    assert crd["spec"]["group"] == "pinery.dev" and crd["spec"]["scope"] == "Namespaced"
    assert names["categories"] == ["pinery"] and names["shortNames"] == list(res.short_names)
    version = crd["spec"]["versions"][0]
    assert version["name"] == "v1alpha1" and version["served"] and version["storage"]
    assert version["subresources"] == {"status": {}}


@pytest.mark.parametrize("res", RESOURCES, ids=lambda r: r.kind)
def test_every_field_has_a_description(res):
    missing = []

    def walk(node, path):
        for name, sub in (node.get("properties") or {}).items():
            field = f"{path}.{name}" if path else name
            # The root metadata may carry no description (the API server refuses one; it
            # publishes ObjectMeta's own documentation there), only its name restrictions.
            if not sub.get("description") and field != "metadata":
                missing.append(field)
            walk(sub, field)
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), dict):
                walk(node[key], path + "[*]")

    walk(object_schema(res), "")
    assert missing == []


@pytest.mark.parametrize("res", RESOURCES, ids=lambda r: r.kind)
def test_printer_columns_point_at_schema_fields(res):
    schema = object_schema(res)
    for column in res.printer_columns:
        node = schema
        for part in column.json_path.strip(".").split("."):
            if part == "metadata":
                break
            node = node["properties"][part]


def test_expected_printer_columns():
    assert [c.name for c in VECTOR_INDEX.printer_columns if not c.priority] == ["Index", "Type", "Phase", "Host", "Age"]
    assert [c.name for c in FSDP_JOB.printer_columns if not c.priority] == ["Nodes", "Procs", "Phase", "Restarts", "Step", "Age"]


def _independent_validator(res):
    """openapi-schema-validator on the CRD schema: a second, independent implementation."""
    return OAS30Validator(object_schema(res))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_validate_against_the_crds_independently(path):
    for doc in yaml.safe_load_all(path.read_text()):
        res = next(r for r in RESOURCES if r.kind == doc["kind"])
        errors = [e.message for e in _independent_validator(res).iter_errors(doc)]
        assert errors == []
        assert validate(object_schema(res), apply_defaults(object_schema(res), doc)) == []


@pytest.mark.parametrize(
    "res, spec",
    [
        (VECTOR_INDEX, {"dimension": "eight", "serverless": {"cloud": "aws", "region": "x"}}),
        (VECTOR_INDEX, {"dimension": 8, "metric": "manhattan", "serverless": {"cloud": "aws", "region": "x"}}),
        (FSDP_JOB, {"numNodes": 0}),
        (FSDP_JOB, {"numNodes": 1, "masterPort": "x"}),
    ],
)
def test_both_validators_reject_bad_fields(res, spec):
    doc = {"apiVersion": res.api_version, "kind": res.kind, "metadata": {"name": "x"}, "spec": spec}
    assert list(_independent_validator(res).iter_errors(doc))
    assert validate(object_schema(res), doc)


def _spec_node(res):
    return object_schema(res)["properties"]["spec"]


def _cel_accepts(res, spec):
    node = _spec_node(res)
    return validate(node, apply_defaults(node, spec)) == []


def _model_accepts(res, spec):
    sink = []
    try:
        res.spec_model.model_validate(apply_defaults(_spec_node(res), spec), context={"problems": sink})
    except Exception:
        return False
    return not sink


SL = {"cloud": "aws", "region": "us-east-1"}
RULE_CASES = [
    (VECTOR_INDEX, {"dimension": 8, "serverless": SL}),
    (VECTOR_INDEX, {"dimension": 8}),
    (VECTOR_INDEX, {"dimension": 8, "serverless": SL, "pod": {"environment": "e"}}),
    (VECTOR_INDEX, {"dimension": 8, "byoc": {"environment": "e"}}),
    (VECTOR_INDEX, {"serverless": SL}),
    (VECTOR_INDEX, {"vectorType": "sparse", "serverless": SL}),
    (VECTOR_INDEX, {"vectorType": "sparse", "dimension": 8, "serverless": SL}),
    (VECTOR_INDEX, {"vectorType": "sparse", "metric": "cosine", "serverless": SL}),
    (VECTOR_INDEX, {"vectorType": "sparse", "metric": "dotproduct", "serverless": SL}),
    (VECTOR_INDEX, {"vectorType": "sparse", "pod": {"environment": "e"}}),
    (VECTOR_INDEX, {"dimension": 8, "serverless": SL, "tags": {"pinery-x": "y"}}),
    (VECTOR_INDEX, {"dimension": 8, "serverless": SL, "tags": {"team": "y"}}),
    (VECTOR_INDEX, {"dimension": 8, "pod": {"environment": "e", "replicas": 2, "shards": 3, "pods": 6}}),
    (VECTOR_INDEX, {"dimension": 8, "pod": {"environment": "e", "replicas": 2, "shards": 3, "pods": 5}}),
    (FSDP_JOB, {"numNodes": 2}),
    (FSDP_JOB, {"numNodes": 2, "env": [{"name": "WORLD_SIZE", "value": "3"}]}),
    (FSDP_JOB, {"numNodes": 2, "env": [{"name": "PET_NNODES", "value": "3"}]}),
    (FSDP_JOB, {"numNodes": 2, "env": [{"name": "NCCL_DEBUG", "value": "INFO"}]}),
    (FSDP_JOB, {"numNodes": 2, "env": [{"name": "TOKEN", "value": "x", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]}),
    (FSDP_JOB, {"numNodes": 2, "env": [{"name": "TOKEN", "value": "", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]}),
    (FSDP_JOB, {"numNodes": 2, "command": ["torchrun"], "trainer": {}}),
    (FSDP_JOB, {"numNodes": 2, "elastic": {"minNodes": 3}}),
    (FSDP_JOB, {"numNodes": 2, "elastic": {"minNodes": 1, "maxNodes": 3}}),
    (FSDP_JOB, {"numNodes": 4, "elastic": {"minNodes": 1, "maxNodes": 3}}),
    (FSDP_JOB, {"numNodes": 2, "elastic": {"minNodes": 3, "maxNodes": 2}}),
    (FSDP_JOB, {"numNodes": 2, "gang": {"scheduler": "coscheduling", "scheduleTimeoutSeconds": 60}}),
    (FSDP_JOB, {"numNodes": 2, "gang": {"scheduler": "volcano", "scheduleTimeoutSeconds": 60}}),
    (FSDP_JOB, {"numNodes": 2, "gang": {"scheduler": "volcano", "queue": "research"}}),
    (FSDP_JOB, {"numNodes": 2, "gang": {"scheduler": "coscheduling", "queue": "research"}}),
    (FSDP_JOB, {"numNodes": 2, "podTemplate": {"volumeMounts": [{"name": "d", "mountPath": "/d"}]}}),
    (FSDP_JOB, {"numNodes": 2, "podTemplate": {"volumes": [{"name": "d", "emptyDir": {}}], "volumeMounts": [{"name": "d", "mountPath": "/d"}]}}),
    (FSDP_JOB, {"numNodes": 2, "podTemplate": {"volumes": [{"name": "pinery-shm", "emptyDir": {}}]}}),
    (FSDP_JOB, {"numNodes": 2, "podTemplate": {"volumes": [{"name": "pinery", "emptyDir": {}}]}}),
    (FSDP_JOB, {"numNodes": 2, "shmSize": "1Gi",
                "podTemplate": {"volumes": [{"name": "d", "emptyDir": {}}], "volumeMounts": [{"name": "d", "mountPath": "/dev/shm"}]}}),
    (FSDP_JOB, {"numNodes": 2, "podTemplate": {"volumes": [{"name": "d", "emptyDir": {}}], "volumeMounts": [{"name": "d", "mountPath": "/dev/shm"}]}}),
    (FSDP_JOB, {"numNodes": 2, "podTemplate": {"volumes": [{"name": "d", "emptyDir": {}}], "volumeMounts": [{"name": "d", "mountPath": "/etc/pinery"}]}}),
    (FSDP_JOB, {"numNodes": 2, "command": ["x"],
                "podTemplate": {"volumes": [{"name": "d", "emptyDir": {}}], "volumeMounts": [{"name": "d", "mountPath": "/etc/pinery"}]}}),
    (FSDP_JOB, {"numNodes": 2, "checkpoint": {"volumeClaimName": "c", "path": "/ckpt"},
                "podTemplate": {"volumes": [{"name": "d", "emptyDir": {}}], "volumeMounts": [{"name": "d", "mountPath": "/ckpt"}]}}),
    (FSDP_JOB, {"numNodes": 2, "checkpoint": {"volumeClaimName": "c"},
                "podTemplate": {"volumes": [{"name": "d", "emptyDir": {}}], "volumeMounts": [{"name": "d", "mountPath": "/checkpoints"}]}}),
    (FSDP_JOB, {"numNodes": 2, "checkpoint": {"volumeClaimName": "c"},
                "podTemplate": {"volumes": [{"name": "d", "emptyDir": {}}], "volumeMounts": [{"name": "d", "mountPath": "/ckpt"}]}}),
    (FSDP_JOB, {"numNodes": 2, "nprocPerNode": "auto"}),
    (FSDP_JOB, {"numNodes": 2, "nprocPerNode": "all"}),
    (FSDP_JOB, {"numNodes": 2, "nprocPerNode": 0}),
]


@pytest.mark.parametrize("res, spec", RULE_CASES, ids=lambda x: getattr(x, "kind", None))
def test_cel_rules_and_model_rules_agree(res, spec):
    """Each rule is written twice (CEL for the API server, Python for the operator and
    `pinery validate`): both must accept and reject the same specs."""
    assert _cel_accepts(res, spec) == _model_accepts(res, spec)


def test_rule_cases_cover_accepts_and_rejects():
    results = [_model_accepts(r, s) for r, s in RULE_CASES]
    assert results.count(True) >= 8 and results.count(False) >= 15


def _update(res, old_spec, new_spec, name="x"):
    schema = object_schema(res)
    def obj(spec):
        return apply_defaults(schema, {"apiVersion": res.api_version, "kind": res.kind, "metadata": {"name": name}, "spec": spec})
    return validate(schema, obj(new_spec), old=obj(old_spec))


POD = {"dimension": 8, "pod": {"environment": "e", "podType": "p1.x1", "replicas": 1, "shards": 1}}


@pytest.mark.parametrize(
    "change, allowed",
    [
        ({"deletionProtection": True}, True),
        ({"tags": {"a": "b"}}, True),
        ({"deletionPolicy": "Retain"}, True),
        ({"adoptExisting": True}, True),
        ({"apiKeySecretRef": {"name": "other"}}, True),
        ({"connectionConfigMap": "conn"}, True),
        ({"pod": {**POD["pod"], "replicas": 3}}, True),
        ({"pod": {**POD["pod"], "podType": "p1.x2"}}, True),
        ({"dimension": 9}, False),
        ({"metric": "euclidean"}, False),
        ({"indexName": "other"}, False),
        ({"pod": {**POD["pod"], "shards": 2}}, False),
        ({"pod": {**POD["pod"], "environment": "f"}}, False),
        ({"pod": {**POD["pod"], "metadataConfig": {"indexed": ["a"]}}}, False),
        ({"pod": None, "serverless": SL}, False),
    ],
)
def test_vectorindex_immutability(change, allowed):
    new = {k: v for k, v in {**copy.deepcopy(POD), **change}.items() if v is not None}
    errors = _update(VECTOR_INDEX, POD, new)
    assert (errors == []) is allowed, errors


JOB = {"numNodes": 2, "nprocPerNode": 2, "command": ["torchrun", "x.py"]}


@pytest.mark.parametrize(
    "change, allowed",
    [
        ({"suspend": True}, True),
        ({"activeDeadlineSeconds": 60}, True),
        ({"progressDeadlineSeconds": 600, "firstProgressDeadlineSeconds": 1800}, True),
        ({"ttlSecondsAfterFinished": 0}, True),
        ({"numNodes": 3}, False),
        ({"nprocPerNode": 4}, False),
        ({"command": ["python", "x.py"]}, False),
        ({"image": "other"}, False),
        ({"maxRestarts": 9}, False),
        ({"env": [{"name": "A", "value": "1"}]}, False),
        ({"shmSize": "1Gi"}, False),
        ({"podTemplate": {"labels": {"a": "b"}}}, False),
    ],
)
def test_fsdpjob_immutability(change, allowed):
    errors = _update(FSDP_JOB, JOB, {**JOB, **change})
    assert (errors == []) is allowed, errors


def test_root_rule_on_vectorindex_names():
    schema = object_schema(VECTOR_INDEX)
    good = {"apiVersion": "pinery.dev/v1alpha1", "kind": "VectorIndex", "metadata": {"name": "ok-name"}, "spec": {"dimension": 8, "serverless": SL}}
    bad = copy.deepcopy(good)
    bad["metadata"]["name"] = "dotted.name"
    assert validate(schema, apply_defaults(schema, good)) == []
    assert validate(schema, apply_defaults(schema, bad))
    bad["spec"]["indexName"] = "fine"
    assert validate(schema, apply_defaults(schema, bad)) == []


def test_fsdpjob_name_is_restricted_by_the_crd():
    schema = object_schema(FSDP_JOB)
    doc = {"apiVersion": "pinery.dev/v1alpha1", "kind": "FSDPJob", "metadata": {"name": "1job"}, "spec": {"numNodes": 1}}
    assert any(e.path == "metadata.name" for e in validate(schema, doc))
    doc["metadata"]["name"] = "j" * 51
    assert any(e.path == "metadata.name" for e in validate(schema, doc))


def test_generated_files_cover_both_folders():
    assert sorted(crd_files()) == sorted(f"{d}/{r.crd_name}.yaml" for d in CRD_DIRS for r in RESOURCES)


def test_api_reference_is_generated_and_fresh():
    from pinery.generate.apidocs import render_reference

    text = (REPO_ROOT / "docs" / "api-reference.md").read_text()
    assert text == render_reference()
    for field in ("`numNodes`", "`nprocPerNode`", "`trainer.model.preset`", "`pod.replicas`", "`conditions[].reason`"):
        assert field in text
    assert "| `numNodes` | integer (>=1 and <=1000) |  | yes |" in text
    assert "| `suspend` | boolean | `false` |  |" in text
    assert "| `serverless.cloud` | string (one of `aws`, `gcp`, `azure`) |  | yes |" in text
