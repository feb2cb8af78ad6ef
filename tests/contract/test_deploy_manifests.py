"""deploy/pinery.yaml and the kustomize base: fresh, ordered, valid, and the same objects."""

from __future__ import annotations

import re
import shutil

import kubernetes_validate
import pytest
import yaml

from pinery.api import RESOURCES
from tests.conftest import REPO_ROOT
from tests.support.chart import KUBE_VERSIONS, KUSTOMIZE_BASE, kustomize, render
from tools import render_deploy

PLAIN = REPO_ROOT / "deploy" / "pinery.yaml"


def plain_objects():
    return [doc for doc in yaml.safe_load_all(PLAIN.read_text()) if doc]


def key(obj):
    return obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"]


def test_committed_manifests_are_what_the_chart_renders_now():
    assert render_deploy.stale_files() == [], "run `make deploy` and commit the result"


def test_staleness_is_detected(tmp_path):
    for rel in render_deploy.generated_files():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO_ROOT / rel, tmp_path / rel)
    assert render_deploy.stale_files(tmp_path) == []
    target = tmp_path / "deploy" / "pinery.yaml"
    target.write_text(target.read_text().replace("cpu: 100m", "cpu: 200m"))
    assert render_deploy.stale_files(tmp_path) == ["deploy/pinery.yaml"]


def test_crds_come_first_then_the_namespace_then_the_operator():
    objects = plain_objects()
    kinds = [o["kind"] for o in objects]
    n = len(RESOURCES)
    assert kinds[:n + 1] == ["CustomResourceDefinition"] * n + ["Namespace"]
    assert objects[n]["metadata"]["name"] == "pinery-system"
    assert {o["metadata"]["name"] for o in objects[:n]} == {res.crd_name for res in RESOURCES}
    assert kinds.index("ServiceAccount") < kinds.index("ClusterRoleBinding") < kinds.index("Deployment")
    assert "CustomResourceDefinition" not in kinds[n:]


def test_plain_manifest_holds_the_chart_defaults_without_helm_bookkeeping():
    objects = plain_objects()
    crds = [yaml.safe_load(p.read_text()) for p in sorted((REPO_ROOT / "crds").glob("*.yaml"))]
    n = len(crds)
    assert objects[:n] == crds
    rest = objects[n + 1:]
    assert {key(o) for o in rest} == {key(o) for o in render()}
    for obj in rest:
        labels = obj["metadata"]["labels"]
        assert "helm.sh/chart" not in labels and "app.kubernetes.io/managed-by" not in labels
        if obj["kind"] not in ("ClusterRole", "ClusterRoleBinding"):
            assert obj["metadata"]["namespace"] == "pinery-system"
    # The key Secret is created by the user, never shipped in a manifest.
    assert "Secret" not in [o["kind"] for o in objects]
    assert "pod-security.kubernetes.io/enforce" in objects[n]["metadata"]["labels"]


@pytest.mark.parametrize("version", KUBE_VERSIONS)
def test_plain_manifest_is_valid_kubernetes(version):
    for obj in plain_objects():
        kubernetes_validate.validate(obj, version, strict=True)


def test_kustomize_base_builds_offline_to_the_same_objects():
    built = kustomize(KUSTOMIZE_BASE)
    assert sorted(map(key, built)) == sorted(map(key, plain_objects()))
    by_key = {key(o): o for o in plain_objects()}
    for obj in built:
        assert obj == by_key[key(obj)]


def test_install_doc_overlay_works_against_the_base(tmp_path):
    """The overlay shown in docs/install.md, pointed at the local base instead of GitHub."""
    text = (REPO_ROOT / "docs" / "install.md").read_text()
    block = re.search(r"```yaml\n(# kustomization.yaml of your overlay\n.*?)```", text, re.S).group(1)
    overlay = yaml.safe_load(block)
    # kustomize takes local bases by relative path: lay out a copy of the base beside the overlay.
    shutil.copytree(KUSTOMIZE_BASE, tmp_path / "base")
    overlay["resources"] = ["../base"]
    (tmp_path / "overlay").mkdir()
    (tmp_path / "overlay" / "kustomization.yaml").write_text(yaml.safe_dump(overlay))
    built = kustomize(tmp_path / "overlay")
    deployment = next(o for o in built if o["kind"] == "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "registry.example.com/mirror/pinery:0.1.0"
    assert [e.get("value") for e in container["env"] if e["name"] == "PINERY_LOG_FORMAT"] == ["text", "json"]
