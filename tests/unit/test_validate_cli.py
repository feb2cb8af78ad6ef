"""`pinery validate`: valid, invalid and malformed input, through the real CLI."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pinery.manifest_check import parse_documents, split_documents, validate_text
from tests.conftest import REPO_ROOT, run_pinery

VI = """apiVersion: pinery.dev/v1alpha1
kind: VectorIndex
metadata:
  name: {name}
spec:
{spec}
"""


def vi(spec: str, name: str = "idx") -> str:
    return VI.format(name=name, spec="\n".join("  " + line for line in spec.strip().splitlines()))


SERVERLESS = "serverless: {cloud: aws, region: us-east-1}"


def problems_of(text: str) -> list[str]:
    return [str(p) for p in validate_text(text)[0]]


def test_examples_are_valid_through_the_cli():
    result = run_pinery("validate", "-f", "examples/")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "valid: 3 FSDPJob, 5 VectorIndex, 1 VectorIndexBackup, 1 VectorIndexBackupSchedule"  # examples/progress/ too
    assert result.stderr == ""


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "pinery"
    result = subprocess.run([str(script), "validate", "-f", str(REPO_ROOT / "examples/vectorindex-pod.yaml")], capture_output=True, text=True)
    assert result.returncode == 0 and "1 VectorIndex" in result.stdout


def test_stdin_and_exit_code_one_with_one_line_per_problem():
    text = vi(f"dimension: 0\nmetric: manhattan\n{SERVERLESS}")
    result = run_pinery("validate", "-f", "-", stdin=text)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "VectorIndex/idx: spec.dimension: Invalid value: 0: spec.dimension in body should be greater than or equal to 1",
        'VectorIndex/idx: spec.metric: Unsupported value: "manhattan": supported values: "cosine", "euclidean", "dotproduct"',
    ]


@pytest.mark.parametrize(
    "text, expected",
    [
        # every single-field rule comes from the CRD schema
        (vi(f"dimension: 8\nbogus: 1\n{SERVERLESS}"), 'VectorIndex/idx: spec.bogus: unknown field "spec.bogus"'),
        (vi("dimension: 8\nserverless: {cloud: ibm, region: x}"), 'VectorIndex/idx: spec.serverless.cloud: Unsupported value: "ibm"'),
        (vi("dimension: 8\nserverless: {cloud: aws}"), "VectorIndex/idx: spec.serverless.region: Required value"),
        (vi(f"dimension: eight\n{SERVERLESS}"),
         "VectorIndex/idx: spec.dimension: Invalid value: \"string\": spec.dimension in body must be of type integer: \"string\""),
        (vi(f"dimension: 8\ntags: {{team: 'a/b'}}\n{SERVERLESS}"), "VectorIndex/idx: spec.tags[team]: Invalid value"),
        # cross-field rules come from the models
        (vi("dimension: 8"), "VectorIndex/idx: spec: exactly one of serverless, pod and byoc must be set"),
        (vi(SERVERLESS), "VectorIndex/idx: spec.dimension: required for dense and hybrid indexes"),
        (vi(f"vectorType: sparse\nmetric: cosine\n{SERVERLESS}"), "VectorIndex/idx: spec.metric: sparse indexes require dotproduct"),
        (vi(f"dimension: 8\ntags: {{pinery-owner: me}}\n{SERVERLESS}"),
         "VectorIndex/idx: spec.tags[pinery-owner]: tag keys starting with 'pinery-' are reserved"),
        (vi(f"dimension: 8\n{SERVERLESS}", name="Bad.Name"), "VectorIndex/Bad.Name: metadata.name: Invalid value"),
        (vi(f"dimension: 8\n{SERVERLESS}", name="dotted.name"), "VectorIndex/dotted.name: metadata.name: 'dotted.name' is not a valid Pinecone index name"),
    ],
)
def test_vectorindex_problems(text, expected):
    found = problems_of(text)
    assert any(p.startswith(expected) for p in found), found


JOB = """apiVersion: pinery.dev/v1alpha1
kind: FSDPJob
metadata:
  name: {name}
spec:
  numNodes: 2
{extra}
"""


def job(extra: str = "", name: str = "train") -> str:
    return JOB.format(name=name, extra="\n".join("  " + line for line in extra.strip().splitlines()))


@pytest.mark.parametrize(
    "text, expected",
    [
        (job("nprocPerNode: 0"), "FSDPJob/train: spec.nprocPerNode: Invalid value"),
        (job("env: [{name: MASTER_ADDR, value: x}]"), "FSDPJob/train: spec.env[0].name: MASTER_ADDR is set by pinery and cannot be overridden"),
        (job("command: [torchrun]\ntrainer: {steps: 3}"), "FSDPJob/train: spec.trainer: is used only without spec.command"),
        (job("trainer: {steps: 3, optim: {warmupSteps: 5}}"), "FSDPJob/train: spec.trainer.optim.warmupSteps: must not exceed steps (3)"),
        (job("trainer: {model: {preset: huge}}"), 'FSDPJob/train: spec.trainer.model.preset: Unsupported value: "huge"'),
        (job("elastic: {minNodes: 3}"), "FSDPJob/train: spec.elastic.minNodes: must not exceed maxNodes (2)"),
        (job("shmSize: big"), "FSDPJob/train: spec.shmSize: Invalid value"),
        (job(name="Train_1"), "FSDPJob/Train_1: metadata.name: Invalid value"),
        (job(name="a" * 51), "FSDPJob/" + "a" * 51 + ": metadata.name: Too long"),
        (job(name="9lives"), "FSDPJob/9lives: metadata.name: Invalid value"),
    ],
)
def test_fsdpjob_problems(text, expected):
    found = problems_of(text)
    assert any(p.startswith(expected) for p in found), found


def test_a_bad_object_name_is_worded_as_the_api_server_words_it():
    # tests/integration/test_apiserver_crud.py checks the local API server's wording, which is
    # apimachinery's IsDNS1123Subdomain message (pinery.schema.crd_names).
    found = problems_of(vi(f"dimension: 8\n{SERVERLESS}", name="Bad_Name"))
    assert found[0] == ("VectorIndex/Bad_Name: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 "
                        "subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and "
                        "end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
                        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


def test_several_problems_of_one_object_are_all_reported():
    found = problems_of(job("env: [{name: RANK, value: '1'}]\ncommand: [x]\ntrainer: {}"))
    assert len(found) == 2


@pytest.mark.parametrize(
    "text, expected",
    [
        ("kind: ConfigMap\napiVersion: v1\nmetadata: {name: cm}\n",
         'ConfigMap/cm: kind: unknown kind "ConfigMap": pinery validates VectorIndex, FSDPJob, VectorIndexBackup and '
         'VectorIndexBackupSchedule (pinery.dev/v1alpha1)'),
        ("apiVersion: pinery.dev/v1\nkind: FSDPJob\nmetadata: {name: j}\nspec: {numNodes: 1}\n",
         'FSDPJob/j: apiVersion: Unsupported value: "pinery.dev/v1": supported values: "pinery.dev/v1alpha1"'),
        ("apiVersion: pinery.dev/v1alpha1\nmetadata: {name: j}\n", "Unknown/j: kind: Required value"),
        ("apiVersion: pinery.dev/v1alpha1\nkind: FSDPJob\nspec: {numNodes: 1}\n", "FSDPJob/document 1 (line 1): metadata: Required value"),
        ("apiVersion: pinery.dev/v1alpha1\nkind: FSDPJob\nmetadata: {labels: {}}\nspec: {numNodes: 1}\n",
         "FSDPJob/document 1 (line 1): metadata.name: Required value"),
        ("apiVersion: pinery.dev/v1alpha1\nkind: FSDPJob\nmetadata: {name: j}\n", "FSDPJob/j: spec: Required value"),
        ("- just\n- a list\n", "Unknown/document 1 (line 1): (root): must be a mapping with apiVersion, kind, metadata and spec, not a list"),
        ("plain text\n", "Unknown/document 1 (line 1): (root): must be a mapping"),
        ("a: [\n", "Unknown/document 1 (line 1): yaml: "),
        ("a: b: c\n", "Unknown/document 1 (line 1): yaml: mapping values are not allowed here (line 1, column 5)"),
    ],
)
def test_unknown_kinds_and_malformed_input_are_problems(text, expected):
    found = problems_of(text)
    assert any(p.startswith(expected) for p in found), found


def test_a_bad_document_hides_no_other_document():
    text = vi(f"dimension: 8\n{SERVERLESS}", name="first") + "---\nkey: [unclosed\n---\n" + vi("dimension: 8", name="third")
    found = problems_of(text)
    assert [p.split(":")[0] for p in found] == ["Unknown/document 2 (line 9)", "VectorIndex/third"]
    assert validate_text(text)[1] == [("VectorIndex", "first")]


def test_document_splitting_and_line_numbers():
    text = "# comment\n---\na: 1\n--- {b: 2}\n...\n---\n\n"
    assert [(d.number, d.line, d.obj) for d in parse_documents(text)] == [(1, 3, {"a": 1}), (2, 4, {"b": 2})]
    assert list(split_documents("x: 1"))[0] == (1, "x: 1")


def test_json_input_and_list_kind():
    text = '{"apiVersion": "v1", "kind": "List", "items": [%s]}' % (
        '{"apiVersion": "pinery.dev/v1alpha1", "kind": "FSDPJob", "metadata": {"name": "j"}, "spec": {"numNodes": 1}}'
    )
    assert validate_text(text) == ([], [("FSDPJob", "j")])


def test_empty_input_is_valid_with_nothing_to_say():
    result = run_pinery("validate", "-f", "-", stdin="# nothing here\n")
    assert result.returncode == 0 and result.stdout.strip() == "valid: no objects"


def test_directories_and_several_files_prefix_the_source(tmp_path):
    shutil.copy(REPO_ROOT / "examples/vectorindex-pod.yaml", tmp_path / "good.yaml")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "bad.yml").write_text(vi("dimension: 8"))
    (tmp_path / "notes.txt").write_text("not a manifest")
    result = run_pinery("validate", "-f", str(tmp_path))
    assert result.returncode == 1
    assert result.stderr.splitlines() == [f"{tmp_path}/sub/bad.yml: VectorIndex/idx: spec: exactly one of serverless, pod and byoc must be set"]


def test_missing_file_is_a_clear_error():
    result = run_pinery("validate", "-f", "/no/such/file.yaml")
    assert result.returncode == 1 and "cannot read /no/such/file.yaml" in result.stderr


def test_status_is_ignored_as_on_create():
    text = vi(f"dimension: 8\n{SERVERLESS}") + "status: {phase: Whatever}\n"
    assert problems_of(text) == []


def test_custom_resource_definitions_are_checked_as_kube_apiserver_checks_them():
    result = run_pinery("validate", "-f", "crds/")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "valid: 4 CustomResourceDefinition"
    crd = yaml.safe_load((REPO_ROOT / "crds" / "fsdpjobs.pinery.dev.yaml").read_text())
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["metadata"]["description"] = "Standard object metadata."
    crd["spec"]["scope"] = "Global"
    result = run_pinery("validate", "-f", "-", stdin=yaml.safe_dump(crd))
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        'CustomResourceDefinition/fsdpjobs.pinery.dev: spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"',
        "CustomResourceDefinition/fsdpjobs.pinery.dev: spec.validation.openAPIV3Schema.properties[metadata]: Forbidden: "
        "must not specify anything other than name and generateName, but metadata is implicitly specified",
    ]


def test_problems_come_in_the_same_order_in_every_process(tmp_path):
    # Three problems on metadata.name: their order once followed the process's string hashing.
    path = tmp_path / "long.yaml"
    path.write_text(vi(SERVERLESS + "\ndimension: 8", name="x" * 260))
    outputs = set()
    for seed in ("1", "2", "3"):
        result = subprocess.run([sys.executable, "-m", "pinery", "validate", "-f", str(path)], capture_output=True,
                                text=True, cwd=REPO_ROOT, timeout=120, env={**os.environ, "PYTHONHASHSEED": seed})
        assert result.returncode == 1 and result.stderr.count("metadata.name") == 3, result.stderr
        outputs.add(result.stderr)
    assert len(outputs) == 1
