"""Server-side apply field ownership, driven by kubectl and the kubernetes Python client.

What a real API server answers (apimachinery managedfields, structured-merge-diff merge):
managedFields per manager, 409 with FieldManagerConflict causes, --force-conflicts taking
fields, Update managers for client-side apply, edit-style replace and patch."""

from __future__ import annotations

import json

import pytest
import yaml

CM_A = """apiVersion: v1
kind: ConfigMap
metadata:
  name: owned
  namespace: default
data:
  shared: "1"
  mine: a
"""
CM_B_CONFLICT = CM_A.replace("mine: a", "mine: b")
CM_B_SAME = CM_A.replace("  mine: a\n", "  other: b\n")


def _managers(plane, kind="configmap", name="owned") -> dict[tuple[str, str], dict]:
    out = plane.kubectl("get", kind, name, "-o", "yaml", "--show-managed-fields")
    obj = yaml.safe_load(out.stdout)
    return {(e["manager"], e["operation"]): e for e in obj["metadata"]["managedFields"]}


def test_kubectl_apply_conflict_then_force(control_plane, tmp_path):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(CM_A)
    b.write_text(CM_B_CONFLICT)
    control_plane.kubectl("apply", "--server-side", "--field-manager=a", "-f", str(a))
    failed = control_plane.kubectl("apply", "--server-side", "--field-manager=b", "-f", str(b), check=False)
    assert failed.returncode == 1
    assert 'Apply failed with 1 conflict: conflict with "a": .data.mine' in failed.stderr
    forced = control_plane.kubectl("apply", "--server-side", "--field-manager=b", "--force-conflicts", "-f", str(b))
    assert "serverside-applied" in forced.stdout
    managers = _managers(control_plane)
    assert managers[("a", "Apply")]["fieldsV1"] == {"f:data": {"f:shared": {}}}
    assert managers[("b", "Apply")]["fieldsV1"] == {"f:data": {"f:mine": {}, "f:shared": {}}}
    assert managers[("b", "Apply")]["fieldsType"] == "FieldsV1" and managers[("b", "Apply")]["time"]


def test_same_value_is_shared_and_released_fields_stay_with_the_other_owner(control_plane, tmp_path):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(CM_A)
    b.write_text(CM_B_SAME)
    control_plane.kubectl("apply", "--server-side", "--field-manager=a", "-f", str(a))
    control_plane.kubectl("apply", "--server-side", "--field-manager=b", "-f", str(b))
    a.write_text(CM_A.replace('  shared: "1"\n', ""))
    control_plane.kubectl("apply", "--server-side", "--field-manager=a", "-f", str(a))
    data = json.loads(control_plane.kubectl("get", "cm", "owned", "-o", "json").stdout)["data"]
    assert data == {"shared": "1", "mine": "a", "other": "b"}  # b still owns shared
    a.write_text(CM_A.replace("  mine: a\n", ""))
    control_plane.kubectl("apply", "--server-side", "--field-manager=a", "-f", str(a))
    data = json.loads(control_plane.kubectl("get", "cm", "owned", "-o", "json").stdout)["data"]
    assert data == {"shared": "1", "other": "b"}  # only a owned mine: removed


def test_client_side_apply_and_patch_record_update_managers(control_plane, tmp_path):
    manifest = tmp_path / "d.yaml"
    manifest.write_text(CM_A)
    control_plane.kubectl("apply", "-f", str(manifest))  # client-side apply: create
    control_plane.kubectl("patch", "cm", "owned", "--type=merge", "-p", '{"data":{"patched":"x"}}')
    managers = _managers(control_plane)
    csa = managers[("kubectl-client-side-apply", "Update")]
    assert csa["apiVersion"] == "v1"
    assert csa["fieldsV1"]["f:data"] == {".": {}, "f:mine": {}, "f:shared": {}}
    assert "f:kubectl.kubernetes.io/last-applied-configuration" in csa["fieldsV1"]["f:metadata"]["f:annotations"]
    assert managers[("kubectl-patch", "Update")]["fieldsV1"] == {"f:data": {"f:patched": {}}}
    # A server-side apply changing a field client-side apply set is a conflict with that Update.
    manifest.write_text(CM_A.replace("mine: a", "mine: z"))
    failed = control_plane.kubectl("apply", "--server-side", "-f", str(manifest), check=False)
    assert failed.returncode == 1
    assert 'conflict with "kubectl-client-side-apply" using v1: .data.mine' in failed.stderr


def test_replace_as_a_second_manager(control_plane, tmp_path):
    manifest = tmp_path / "a.yaml"
    manifest.write_text(CM_A)
    control_plane.kubectl("apply", "--server-side", "--field-manager=a", "-f", str(manifest))
    live = json.loads(control_plane.kubectl("get", "cm", "owned", "-o", "json").stdout)
    live["data"]["mine"] = "edited"
    control_plane.kubectl("replace", "-f", "-", input=json.dumps(live))
    managers = _managers(control_plane)
    assert managers[("kubectl-replace", "Update")]["fieldsV1"] == {"f:data": {"f:mine": {}}}
    assert managers[("a", "Apply")]["fieldsV1"] == {"f:data": {"f:shared": {}}}


def test_python_client_apply_with_force(control_plane):
    from kubernetes.client.rest import ApiException

    api = control_plane.core_v1()
    body = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc"},
            "spec": {"ports": [{"port": 80, "targetPort": 8080}], "selector": {"app": "x"}}}

    def apply(manager, doc, force=False):
        return api.patch_namespaced_service(
            "svc", "default", doc, field_manager=manager, force=force,
            _content_type="application/apply-patch+yaml")

    apply("one", body)
    other = json.loads(json.dumps(body))
    other["spec"]["ports"][0]["targetPort"] = 9090
    with pytest.raises(ApiException) as info:
        apply("two", other)
    assert info.value.status == 409
    status = json.loads(info.value.body)
    assert status["reason"] == "Conflict"
    assert status["details"]["causes"] == [{
        "reason": "FieldManagerConflict", "message": 'conflict with "one"',
        "field": '.spec.ports[port=80,protocol="TCP"].targetPort'}]
    out = apply("two", other, force=True)
    assert out.spec.ports[0].target_port == 9090
    fields = {e.manager: e.fields_v1 for e in out.metadata.managed_fields}
    assert 'k:{"port":80,"protocol":"TCP"}' in fields["two"]["f:spec"]["f:ports"]
