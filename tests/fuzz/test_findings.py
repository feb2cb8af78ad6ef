"""What the fuzz suite found, each kept as the smallest example that showed it (docs/reliability.md
lists them). Every test here failed before its fix."""

from __future__ import annotations

import json

import pytest
import requests

from pinery.api.fsdpjob import SUB_PATH_PATTERN
from pinery.api.vectorindex import MAX_USER_TAGS
from pinery.kube_yaml import dump_all
from pinery.manifest_check import validate_text
from pinery.schema.value_validation import schema_regex
from pinery.vectorindex.ownership import OWNERSHIP_KEYS
from tests.conftest import run_pinery
from tests.support.emulator import TEST_API_KEY

SERVERLESS = {"cloud": "aws", "region": "us-east-1"}


def vectorindex(name="docs", **spec) -> dict:
    return {"apiVersion": "pinery.dev/v1alpha1", "kind": "VectorIndex", "metadata": {"name": name},
            "spec": {"dimension": 8, "serverless": SERVERLESS, **spec}}


def fsdpjob(name="train", **spec) -> dict:
    return {"apiVersion": "pinery.dev/v1alpha1", "kind": "FSDPJob", "metadata": {"name": name}, "spec": {"numNodes": 1, **spec}}


def problems_of(doc) -> list[tuple[str, str]]:
    problems, _ = validate_text(json.dumps(doc))
    return [(p.path, p.message) for p in problems]


def paths_of(doc) -> list[str]:
    return [path for path, _ in problems_of(doc)]


# ---- pinery validate --------------------------------------------------------------------


def test_validate_reports_a_name_that_is_not_a_string_instead_of_crashing():
    assert set(paths_of(vectorindex(name=12345))) == {"metadata.name"}


def test_validate_joins_json_surrogate_pairs_as_every_json_reader_does():
    doc = vectorindex()
    doc["spec"] = {"dimension": 8, "pod": {"environment": "\U00010000"}}
    text = json.dumps(doc)
    assert "\\ud800\\udc00" in text
    assert validate_text(text) == ([], [("VectorIndex", "docs")])


def test_validate_reads_exponents_without_a_dot_as_numbers_like_kubectl():
    text = "apiVersion: pinery.dev/v1alpha1\nkind: FSDPJob\nmetadata: {name: t}\nspec:\n  numNodes: 1\n  trainer: {optim: {lr: 1e-4, eps: 1e-8}}\n"
    assert validate_text(text) == ([], [("FSDPJob", "t")])


def test_render_quotes_strings_that_kubectl_would_read_as_numbers():
    job = fsdpjob(command=["python", "train.py"], env=[{"name": "LR", "value": "1e-4"}])
    result = run_pinery("render", "-f", "-", stdin=json.dumps(job))
    assert result.returncode == 0, result.stderr
    assert "value: '1e-4'" in result.stdout
    assert dump_all([{"v": ".5e3"}]) == "v: '.5e3'\n"


def test_validate_names_the_map_key_a_key_rule_refuses():
    assert paths_of(vectorindex(tags={"bad key": "v"})) == ["spec.tags[bad key]"]
    assert paths_of(fsdpjob(podTemplate={"labels": {"": "x"}})) == ["spec.podTemplate.labels[]"]


@pytest.mark.parametrize("doc, path", [
    (fsdpjob(name="train\n"), "metadata.name"),
    (vectorindex(name="docs\n", indexName="docs"), "metadata.name"),
    (vectorindex(serverless={"cloud": "aws", "region": "us-east-1\n"}), "spec.serverless.region"),
    (fsdpjob(env=[{"name": "A\n", "value": "1"}]), "spec.env[0].name"),
])
def test_a_final_newline_does_not_satisfy_a_pattern(doc, path):
    """Python's `$` also matches before a final newline; Kubernetes' RE2 does not."""
    assert path in paths_of(doc)
    assert schema_regex("^[a-z]+$").search("abc\n") is None


# ---- the API: what pinery accepted but Kubernetes or Pinecone would refuse ---------------


@pytest.mark.parametrize("spec, path", [
    ({"podTemplate": {"labels": {"team": "ML platform"}}}, "spec.podTemplate.labels[team]"),
    ({"podTemplate": {"labels": {"no spaces": "x"}}}, "spec.podTemplate.labels[no spaces]"),
    ({"podTemplate": {"nodeSelector": {"zone": "-a"}}}, "spec.podTemplate.nodeSelector[zone]"),
    ({"podTemplate": {"annotations": {"not/a/key": "x"}}}, "spec.podTemplate.annotations[not/a/key]"),
    ({"resources": {"limits": {"cpu": "-1"}}}, "spec.resources.limits[cpu]"),
    ({"resources": {"limits": {"cpu": -1}}}, "spec.resources.limits[cpu]"),
    ({"resources": {"requests": {"my gpu": 1}}}, "spec.resources.requests[my gpu]"),
    ({"shmSize": "-1Gi"}, "spec.shmSize"),
    ({"image": " trainer:1"}, "spec.image"),
    ({"podTemplate": {"schedulerName": "Gang Scheduler"}}, "spec.podTemplate.schedulerName"),
    ({"env": [{"name": "T", "value": "x", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]}, "spec.env[0].valueFrom"),
    ({"command": ["x"], "podTemplate": {"volumes": [{"name": "d", "emptyDir": {}}],
      "volumeMounts": [{"name": "d", "mountPath": "/d"}, {"name": "d", "mountPath": "/d"}]}}, "spec.podTemplate.volumeMounts[1]"),
    ({"command": ["x"], "podTemplate": {"volumes": [{"name": "d", "emptyDir": {}}],
      "volumeMounts": [{"name": "d", "mountPath": "/d", "subPath": "../etc"}]}}, "spec.podTemplate.volumeMounts[0].subPath"),
])
def test_pod_settings_kubernetes_refuses_are_refused_up_front(spec, path):
    """Before, the job was accepted and its pods were refused when the operator created them."""
    assert path in paths_of(fsdpjob(**spec))


def test_sub_paths_stay_inside_the_volume():
    accepted = ["", "a", "a/b", ".a", "a..", "...", "a/./b"]
    refused = ["/a", "..", "../a", "a/..", "a/../b"]
    assert [p for p in accepted if not schema_regex(SUB_PATH_PATTERN).search(p)] == []
    assert [p for p in refused if schema_regex(SUB_PATH_PATTERN).search(p)] == []


def test_no_more_tags_than_pinecone_keeps_beside_the_ownership_tags():
    assert MAX_USER_TAGS + len(OWNERSHIP_KEYS) == 20
    tags = {f"t{i}": "v" for i in range(MAX_USER_TAGS + 1)}
    assert "spec.tags" in paths_of(vectorindex(tags=tags))


@pytest.mark.sdk9  # the emulator's refusal under 2025-10; the 10.x SDK refuses 21 tags itself, before sending
def test_pinecone_refuses_more_than_twenty_tags(pinecone_emulator):
    from pinecone import Pinecone, ServerlessSpec

    pc = Pinecone(api_key=TEST_API_KEY, host=pinecone_emulator.url)
    ok = {f"t{i}": "v" for i in range(20)}
    pc.create_index(name="full", dimension=4, spec=ServerlessSpec(cloud="aws", region="us-east-1"), tags=ok, timeout=-1)
    with pytest.raises(Exception, match="at most 20 tags"):
        pc.create_index(name="over", dimension=4, spec=ServerlessSpec(cloud="aws", region="us-east-1"),
                        tags={**ok, "t20": "v"}, timeout=-1)


# ---- the local control plane ------------------------------------------------------------


def post(plane, doc, **params) -> requests.Response:
    return plane.http("POST", "/apis/pinery.dev/v1alpha1/namespaces/default/vectorindexes", json=doc, params=params)


@pytest.mark.parametrize("metadata, field", [
    ({"name": 12345}, "metadata.name"),
    ({"name": "a", "labels": ["x"]}, "metadata.labels"),
    ({"name": "a", "finalizers": "x"}, "metadata.finalizers"),
    ({"name": "a", "namespace": 7}, "metadata.namespace"),
])
def test_control_plane_answers_metadata_of_the_wrong_type_with_400_not_500(control_plane, metadata, field):
    control_plane.install_crds()
    response = post(control_plane, {**vectorindex(), "metadata": metadata})
    assert response.status_code == 400, response.text
    assert response.json()["reason"] == "BadRequest" and f"ObjectMeta.{field} " in response.json()["message"]


def test_control_plane_names_the_field_of_the_index_name_rule(control_plane):
    control_plane.install_crds()
    response = post(control_plane, vectorindex(name="dotted.name"))
    assert response.status_code == 422
    assert [c["field"] for c in response.json()["details"]["causes"]] == ["metadata.name"]


def test_control_plane_refuses_a_final_newline_in_patterned_fields(control_plane):
    control_plane.install_crds()
    response = post(control_plane, vectorindex(serverless={"cloud": "aws", "region": "us-east-1\n"}))
    assert response.status_code == 422
    assert [c["field"] for c in response.json()["details"]["causes"]] == ["spec.serverless.region"]
    response = post(control_plane, vectorindex(name="docs\n"))
    assert response.status_code == 422 and response.json()["details"]["causes"][0]["field"] == "metadata.name"


def test_control_plane_serves_pod_quantities_as_strings(control_plane):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "image": "python:3.11", "resources": {"limits": {"cpu": 2, "memory": "1Gi"}, "requests": {"cpu": 0.5}}}]}}
    response = control_plane.http("POST", "/api/v1/namespaces/default/pods", json=pod)
    assert response.status_code == 201, response.text
    assert response.json()["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "0.5"}}
    # Typed clients read it (they could not while quantities came back as numbers).
    assert control_plane.core_v1().read_namespaced_pod("p", "default").spec.containers[0].resources.limits["cpu"] == "2"
