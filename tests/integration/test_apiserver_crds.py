"""CRDs on the local control plane: discovery that follows them, Established, and their schemas
enforced (validation with causes, pruning, defaulting, CEL rules, fieldValidation)."""

import copy

import pytest
import yaml
from kubernetes.client.rest import ApiException

from tests.conftest import REPO_ROOT
from tests.integration.helpers import (
    WIDGET_GROUP,
    WIDGET_VERSION,
    install_widgets,
    status_of,
    widget,
    widget_crd,
    widgets_path,
)
from tests.support.waiting import wait_for

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
MERGE = {"Content-Type": "application/merge-patch+json"}


def served_plurals(cluster, group_version: str) -> list[str]:
    response = cluster.http("GET", f"/apis/{group_version}")
    return [r["name"] for r in response.json()["resources"]] if response.ok else []


def test_discovery_lists_built_ins(control_plane):
    core = control_plane.http("GET", "/api/v1").json()
    assert core["groupVersion"] == "v1" and core["kind"] == "APIResourceList"
    names = {r["name"] for r in core["resources"]}
    assert names >= {"namespaces", "pods", "pods/status", "pods/log", "services", "configmaps", "secrets", "events",
                     "serviceaccounts", "persistentvolumeclaims", "endpoints", "namespaces/finalize"}
    pods = next(r for r in core["resources"] if r["name"] == "pods")
    assert pods["namespaced"] and pods["kind"] == "Pod" and "watch" in pods["verbs"] and pods["shortNames"] == ["po"]
    assert control_plane.http("GET", "/api").json()["versions"] == ["v1"]
    groups = {g["name"]: g for g in control_plane.http("GET", "/apis").json()["groups"]}
    assert set(groups) >= {"apiextensions.k8s.io", "coordination.k8s.io", "events.k8s.io", "kopf.dev"}
    assert groups["kopf.dev"]["preferredVersion"] == {"groupVersion": "kopf.dev/v1", "version": "v1"}
    assert {r["name"] for r in control_plane.http("GET", "/apis/kopf.dev/v1").json()["resources"]} == {"kopfpeerings", "clusterkopfpeerings"}
    assert control_plane.http("GET", "/apis/coordination.k8s.io").json()["kind"] == "APIGroup"


def test_discovery_follows_crds_and_crds_become_established(control_plane):
    assert "widgets" not in served_plurals(control_plane, f"{WIDGET_GROUP}/{WIDGET_VERSION}")
    created = control_plane.http("POST", CRDS, json=widget_crd())
    assert created.status_code == 201
    crd = wait_for(lambda: (c := control_plane.http("GET", f"{CRDS}/widgets.test.pinery.dev").json()).get("status", {}).get("conditions") and c,
                   what="CRD status")
    conditions = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
    assert conditions == {"NamesAccepted": "True", "Established": "True"}
    assert crd["status"]["acceptedNames"]["kind"] == "Widget"
    assert crd["status"]["storedVersions"] == ["v1"]
    wait_for(lambda: "widgets" in served_plurals(control_plane, "test.pinery.dev/v1"), what="widgets in discovery")
    resources = control_plane.http("GET", "/apis/test.pinery.dev/v1").json()["resources"]
    assert {r["name"] for r in resources} == {"widgets", "widgets/status"}
    assert any(g["name"] == WIDGET_GROUP for g in control_plane.http("GET", "/apis").json()["groups"])

    control_plane.http("POST", widgets_path(), json=widget("w", size=1))
    control_plane.http("DELETE", f"{CRDS}/widgets.test.pinery.dev")
    wait_for(lambda: control_plane.http("GET", f"{CRDS}/widgets.test.pinery.dev").status_code == 404, what="CRD gone")
    assert "widgets" not in served_plurals(control_plane, f"{WIDGET_GROUP}/{WIDGET_VERSION}")
    assert not any(g["name"] == WIDGET_GROUP for g in control_plane.http("GET", "/apis").json()["groups"])
    assert control_plane.http("GET", widgets_path()).status_code == 404


def test_crd_deletion_waits_for_custom_resource_finalizers(control_plane):
    install_widgets(control_plane)
    body = widget("kept", size=1)
    body["metadata"]["finalizers"] = ["example.com/hold"]
    control_plane.http("POST", widgets_path(), json=body)
    control_plane.http("DELETE", f"{CRDS}/widgets.test.pinery.dev")
    crd = wait_for(lambda: (c := control_plane.http("GET", f"{CRDS}/widgets.test.pinery.dev").json())
                   and any(x["type"] == "Terminating" for x in c["status"]["conditions"]) and c, what="CRD terminating")
    assert crd["metadata"]["finalizers"] == ["customresourcecleanup.apiextensions.k8s.io"]
    assert wait_for(lambda: control_plane.http("GET", widgets_path(name="kept")).json()["metadata"].get("deletionTimestamp"))
    assert control_plane.http("POST", widgets_path(), json=widget("new", size=1)).status_code == 405
    control_plane.http("PATCH", widgets_path(name="kept"), json={"metadata": {"finalizers": None}}, headers=MERGE)
    wait_for(lambda: control_plane.http("GET", f"{CRDS}/widgets.test.pinery.dev").status_code == 404, what="CRD gone")


def test_invalid_crds_are_422(control_plane):
    crd = widget_crd()
    crd["metadata"]["name"] = "wrong.name"
    assert control_plane.http("POST", CRDS, json=crd).status_code == 422
    crd = widget_crd()
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["untyped"] = {"description": "no type"}
    response = control_plane.http("POST", CRDS, json=crd)
    assert response.status_code == 422
    assert any("untyped" in c["field"] for c in response.json()["details"]["causes"])


def test_schema_validation_answers_422_with_field_causes(control_plane):
    install_widgets(control_plane)
    response = control_plane.http("POST", widgets_path(), json=widget("bad", size=50, color="green"))
    assert response.status_code == 422
    body = response.json()
    assert body["reason"] == "Invalid"
    assert body["details"]["kind"] == "Widget" and body["details"]["group"] == WIDGET_GROUP
    causes = {c["field"]: c for c in body["details"]["causes"]}
    assert causes["spec.size"]["reason"] == "FieldValueInvalid"
    assert causes["spec.size"]["message"] == "Invalid value: 50: spec.size in body should be less than or equal to 10"
    assert causes["spec.color"]["reason"] == "FieldValueNotSupported"
    assert body["message"].startswith('Widget.test.pinery.dev "bad" is invalid: [')
    missing = control_plane.http("POST", widgets_path(), json=widget("empty"))
    assert missing.json()["details"]["causes"] == [{"reason": "FieldValueRequired", "message": "Required value", "field": "spec.size"}]


def test_pruning_and_defaulting(control_plane):
    install_widgets(control_plane)
    body = widget("pruned", size=1, unknown="dropped", free={"anything": {"goes": True}})
    body["extra"] = "dropped too"
    created = control_plane.http("POST", widgets_path(), json=body)
    assert created.status_code == 201
    obj = created.json()
    assert obj["spec"] == {"size": 1, "color": "red", "free": {"anything": {"goes": True}}}
    assert "extra" not in obj
    warnings = created.headers.get("Warning", "")
    assert 'unknown field \\"spec.unknown\\"' in warnings and 'unknown field \\"extra\\"' in warnings


def test_field_validation_strict_warn_ignore(control_plane):
    install_widgets(control_plane)
    body = widget("fv", size=1, typo=1)
    strict = control_plane.http("POST", widgets_path() + "?fieldValidation=Strict", json=body)
    assert strict.status_code == 400
    assert strict.json()["message"] == 'strict decoding error: unknown field "spec.typo"'
    ignore = control_plane.http("POST", widgets_path() + "?fieldValidation=Ignore", json=body)
    assert ignore.status_code == 201 and "Warning" not in ignore.headers
    warn = control_plane.http("PATCH", widgets_path(name="fv") + "?fieldValidation=Warn", json={"spec": {"typo": 2}}, headers=MERGE)
    assert warn.status_code == 200 and "spec.typo" in warn.headers["Warning"]
    duplicate = '{"apiVersion": "test.pinery.dev/v1", "kind": "Widget", "metadata": {"name": "dup"}, "spec": {"size": 1, "size": 2}}'
    refused = control_plane.http("POST", widgets_path() + "?fieldValidation=Strict", data=duplicate, headers={"Content-Type": "application/json"})
    assert refused.status_code == 400 and 'duplicate field \\"size\\"' in refused.text
    assert control_plane.http("POST", widgets_path() + "?fieldValidation=Sometimes", json=widget("x", size=1)).status_code == 400


def test_cel_rules_and_transition_rules(control_plane):
    install_widgets(control_plane)
    both = control_plane.http("POST", widgets_path(), json=widget("ab", size=1, a="x", b="y"))
    assert both.status_code == 422
    assert both.json()["details"]["causes"][0]["message"].endswith("at most one of a and b may be set")
    created = control_plane.http("POST", widgets_path(), json=widget("z", size=1, zone="eu"))
    assert created.status_code == 201  # transition rules do not run on create
    moved = control_plane.http("PATCH", widgets_path(name="z"), json={"spec": {"zone": "us"}}, headers=MERGE)
    assert moved.status_code == 422
    assert moved.json()["details"]["causes"] == [{"reason": "FieldValueInvalid", "message": 'Invalid value: "string": zone is immutable', "field": "spec.zone"}]
    assert control_plane.http("PATCH", widgets_path(name="z"), json={"spec": {"size": 2}}, headers=MERGE).status_code == 200


def test_pinery_crds_enforce_their_rules(control_plane):
    control_plane.install_crds()
    co = control_plane.custom_objects()
    index = yaml.safe_load((REPO_ROOT / "examples" / "vectorindex-serverless.yaml").read_text())
    created = co.create_namespaced_custom_object("pinery.dev", "v1alpha1", "default", "vectorindexes", index)
    assert created["spec"]["dimension"] == 384
    two_kinds = copy.deepcopy(index)
    two_kinds["metadata"]["name"] = "two-kinds"
    two_kinds["spec"]["pod"] = {"environment": "us-east-1-aws", "podType": "p1.x1"}
    with pytest.raises(ApiException) as info:
        co.create_namespaced_custom_object("pinery.dev", "v1alpha1", "default", "vectorindexes", two_kinds)
    assert info.value.status == 422
    assert "exactly one of serverless, pod and byoc must be set" in status_of(info.value)["message"]
    job = yaml.safe_load((REPO_ROOT / "examples" / "fsdpjob-custom-command.yaml").read_text())
    job["spec"]["env"].append({"name": "WORLD_SIZE", "value": "3"})
    with pytest.raises(ApiException) as info:
        co.create_namespaced_custom_object("pinery.dev", "v1alpha1", "default", "fsdpjobs", job)
    assert info.value.status == 422


# What kube-apiserver answers for refused CRDs, word for word (pinery.schema.crd_validation), and
# CRDs that every real API server accepts.

_CRD_KIND = "CustomResourceDefinition.apiextensions.k8s.io"


def _refusal(control_plane, crd: dict) -> dict:
    import json

    import kubernetes

    api = kubernetes.client.ApiextensionsV1Api(control_plane.api_client())
    with pytest.raises(ApiException) as info:
        api.create_custom_resource_definition(crd)
    assert info.value.status == 422
    body = json.loads(info.value.body)
    assert body["reason"] == "Invalid" and body["code"] == 422
    assert body["details"]["kind"] == "CustomResourceDefinition" and body["details"]["group"] == "apiextensions.k8s.io"
    return body


def _version_repr(name: str) -> str:
    return (
        f'apiextensions.CustomResourceDefinitionVersion{{Name:"{name}", Served:true, Storage:true, Deprecated:false, '
        "DeprecationWarning:(*string)(nil), Schema:(*apiextensions.CustomResourceValidation)(nil), "
        "Subresources:(*apiextensions.CustomResourceSubresources)(nil), "
        "AdditionalPrinterColumns:[]apiextensions.CustomResourceColumnDefinition(nil), "
        "SelectableFields:[]apiextensions.SelectableField(nil)}"
    )


def test_a_crd_named_otherwise_than_plural_dot_group_is_refused_as_kube_apiserver_refuses_it(control_plane):
    crd = widget_crd()
    crd["metadata"]["name"] = "wrong.name"
    body = _refusal(control_plane, crd)
    assert body["message"] == f'{_CRD_KIND} "wrong.name" is invalid: metadata.name: Invalid value: "wrong.name": must be spec.names.plural+"."+spec.group'
    assert body["details"]["causes"] == [
        {"reason": "FieldValueInvalid", "message": 'Invalid value: "wrong.name": must be spec.names.plural+"."+spec.group', "field": "metadata.name"}
    ]


def test_a_crd_with_two_storage_versions_is_refused_as_kube_apiserver_refuses_it(control_plane):
    crd = widget_crd()
    second = copy.deepcopy(crd["spec"]["versions"][0])
    second["name"] = "v2"
    crd["spec"]["versions"].append(second)
    body = _refusal(control_plane, crd)
    listed = "[]apiextensions.CustomResourceDefinitionVersion{" + _version_repr("v1") + ", " + _version_repr("v2") + "}"
    # status.storedVersions holds the first storage version only, so the second is missing there.
    assert body["message"] == (
        f'{_CRD_KIND} "widgets.test.pinery.dev" is invalid: [spec.versions: Invalid value: {listed}: '
        'must have exactly one version marked as storage version, status.storedVersions: Invalid value: '
        '[]string{"v1"}: must have the storage version v2]'
    )
    assert [c["field"] for c in body["details"]["causes"]] == ["spec.versions", "status.storedVersions"]


def test_a_crd_whose_root_metadata_has_a_description_is_refused_as_kube_apiserver_refuses_it(control_plane):
    crd = widget_crd()
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["metadata"] = {"type": "object", "description": "Standard object metadata."}
    body = _refusal(control_plane, crd)
    # One version: its schema moves to spec.validation in the internal form, where it is checked.
    assert body["message"] == (
        f'{_CRD_KIND} "widgets.test.pinery.dev" is invalid: spec.validation.openAPIV3Schema.properties[metadata]: '
        "Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"
    )
    assert body["details"]["causes"][0]["reason"] == "FieldValueForbidden"


def test_the_message_names_each_distinct_error_once_and_every_error_is_a_cause(control_plane):
    crd = widget_crd()
    crd["spec"]["names"]["shortNames"] = ["Bad", "Bad"]
    body = _refusal(control_plane, crd)
    label = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
             "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
             "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")
    assert body["message"] == (
        f'{_CRD_KIND} "widgets.test.pinery.dev" is invalid: [spec.names.shortNames[0]: Invalid value: "Bad": {label}, '
        f'spec.names.shortNames[1]: Invalid value: "Bad": {label}]'
    )
    assert [c["field"] for c in body["details"]["causes"]] == ["spec.names.shortNames[0]", "spec.names.shortNames[1]"]


def _crd_documents(paths) -> list[dict]:
    docs = []
    for path in paths:
        docs += [d for d in yaml.safe_load_all(path.read_text()) if d and d.get("kind") == "CustomResourceDefinition"]
    return docs


def test_upstream_crds_that_every_api_server_accepts_are_accepted(control_plane):
    from tests.conftest import shared_path

    docs = _crd_documents(sorted(shared_path("kube-crds").rglob("*.yaml")))
    assert len(docs) == 11
    for crd in docs:
        response = control_plane.http("POST", CRDS, json=crd)
        assert response.status_code == 201, (crd["metadata"]["name"], response.json().get("message"))


def test_pinerys_own_crds_are_accepted(control_plane):
    docs = _crd_documents(sorted((REPO_ROOT / "crds").glob("*.yaml")))
    assert {d["metadata"]["name"] for d in docs} == {"fsdpjobs.pinery.dev", "vectorindexes.pinery.dev",
                                                    "vectorindexbackups.pinery.dev", "vectorindexbackupschedules.pinery.dev"}
    for crd in docs:
        response = control_plane.http("POST", CRDS, json=crd)
        assert response.status_code == 201, (crd["metadata"]["name"], response.json().get("message"))
