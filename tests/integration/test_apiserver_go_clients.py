"""Go clients against the local control plane: kubectl's server-side apply of the chart's CRDs,
and Helm (its Go SDK, through helm-python-sdk) installing, upgrading, rolling back, listing and
uninstalling a release.

Both send what the API server reads as Go does: apply patches in YAML or JSON (read as
sigs.k8s.io/yaml YAMLToJSON does, so the CRDs' `default: 1e-08` stays a number), Helm's release
Secrets in protobuf, and Helm's purge of them with a protobuf DeleteOptions body.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

CRDS = REPO_ROOT / "charts" / "pinery" / "crds"
EPS = ("spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec", "properties", "trainer",
       "properties", "optim", "properties", "eps", "default")


def _eps_default(crd: dict) -> object:
    value = crd
    for key in EPS:
        value = value[key]
    return value


def test_kubectl_server_side_apply_of_the_chart_crds(control_plane):
    out = control_plane.kubectl("apply", "--server-side", "-f", str(CRDS))
    assert "serverside-applied" in out.stdout
    crd = json.loads(control_plane.kubectl("get", "crd", "fsdpjobs.pinery.dev", "-o", "json").stdout)
    assert _eps_default(crd) == 1e-08
    # the upgrade step of docs/install.md: applying again is accepted
    control_plane.kubectl("apply", "--server-side", "-f", str(CRDS))


def _test_chart(root: Path) -> Path:
    chart = root / "probe"
    (chart / "templates").mkdir(parents=True)
    shutil.copytree(CRDS, chart / "crds")
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: probe\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("greeting: hello\n")
    (chart / "templates" / "objects.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\n"
        "data:\n  greeting: {{ .Values.greeting | quote }}\n  revision: \"{{ .Release.Revision }}\"\n"
        "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}-secret\n"
        "stringData:\n  token: not-a-real-token\n"
    )
    return chart


def test_helm_install_upgrade_rollback_uninstall(control_plane, tmp_path):
    helm = pytest.importorskip("helm_python")
    chart = _test_chart(tmp_path)
    core = control_plane.core_v1()
    config = helm.Config(kubeconfig_path=str(control_plane.kubeconfig), namespace="default")
    try:
        release = config.install(str(chart), "probe")
        assert release["status"] == "deployed" and release["revision"] == 1
        crd = json.loads(control_plane.kubectl("get", "crd", "fsdpjobs.pinery.dev", "-o", "json").stdout)
        assert _eps_default(crd) == 1e-08
        assert core.read_namespaced_config_map("probe-cm", "default").data["greeting"] == "hello"

        config.upgrade(str(chart), "probe", {"greeting": "bonjour"})
        assert core.read_namespaced_config_map("probe-cm", "default").data["greeting"] == "bonjour"
        config.rollback("probe", version=1)
        assert core.read_namespaced_config_map("probe-cm", "default").data["greeting"] == "hello"

        assert [r["name"] for r in config.list()] == ["probe"]
        assert config.status("probe")["revision"] == 3
        stored = core.list_namespaced_secret("default", label_selector="owner=helm,name=probe").items
        assert sorted(s.metadata.name for s in stored) == [f"sh.helm.release.v1.probe.v{n}" for n in (1, 2, 3)]

        config.uninstall("probe")
        assert core.list_namespaced_secret("default", label_selector="owner=helm,name=probe").items == []
        assert config.list() == []
        names = [s.metadata.name for s in core.list_namespaced_secret("default").items]
        assert "probe-secret" not in names
    finally:
        config.close()
