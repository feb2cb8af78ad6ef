"""What the packaging tests share: rendering the chart, validating objects, reading RBAC rules."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from pinery import kube_yaml
from tests.conftest import IN_CI, REPO_ROOT
from tools.render_deploy import chart_crds, load_chart, render_objects

CHART_DIR = REPO_ROOT / "charts" / "pinery"
KUSTOMIZE_BASE = REPO_ROOT / "deploy" / "kustomize"
RELEASE_NAMESPACE = "pinery-system"
# Kubernetes versions the chart supports (Chart.yaml's kubeVersion is >=1.28).
KUBE_VERSIONS = ("1.28.0", "1.30.0", "1.32.0", "1.34.0")


@lru_cache(maxsize=None)
def chart():
    return load_chart()


def render(values: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    return render_objects(values or {}, namespace=RELEASE_NAMESPACE, chart=chart())


def render_notes(values: dict[str, Any] | None = None) -> str:
    rendered = chart().render(values or {}, name="pinery", namespace=RELEASE_NAMESPACE, is_install=True)
    return next(text for path, text in rendered.items() if path.endswith("NOTES.txt"))


def crds() -> list[dict[str, Any]]:
    return chart_crds(chart())


def of_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def one(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = of_kind(objects, kind)
    assert len(found) == 1, f"expected one {kind}, found {len(found)}"
    return found[0]


def permissions(rules: list[dict[str, Any]]) -> dict[tuple[str, str], set[str]]:
    """{(apiGroup, resource): verbs} of RBAC rules; a pair granted twice is an error."""
    granted: dict[tuple[str, str], set[str]] = {}
    for rule in rules:
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                key = (group, resource)
                assert key not in granted, f"{key} is granted by two rules"
                granted[key] = set(rule["verbs"])
    return granted


RBAC_KINDS = ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")


def wildcard_rules(objects: list[dict[str, Any]]) -> list[tuple[str, str, dict]]:
    """(kind, name, rule) of every RBAC rule that grants with a `*` anywhere."""
    found = []
    for obj in objects:
        if obj["kind"] not in RBAC_KINDS:
            continue
        for rule in obj.get("rules", []):
            fields = ("apiGroups", "resources", "verbs", "resourceNames", "nonResourceURLs")
            if any("*" in value for field in fields for value in rule.get(field, [])):
                found.append((obj["kind"], obj["metadata"]["name"], rule))
    return found


def assert_operator_pod_locked_down(pod: dict[str, Any], *, run_as_user: bool = True) -> None:
    """The operator's pod meets the `restricted` Pod Security Standard, and then some."""
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert ("runAsUser" in pod["securityContext"]) is run_as_user
    for container in pod["containers"]:
        sc = container["securityContext"]
        assert sc["allowPrivilegeEscalation"] is False and sc["readOnlyRootFilesystem"] is True
        assert sc["capabilities"] == {"drop": ["ALL"]} and sc["runAsNonRoot"] is True
        assert sc["seccompProfile"] == {"type": "RuntimeDefault"} and not sc.get("privileged")
    assert not any(pod.get(k) for k in ("hostNetwork", "hostPID", "hostIPC"))


def require_tool(name: str) -> str:
    """Path of a command-line tool: skipped when absent on a user's machine, a failure in CI."""
    found = shutil.which(name) or _venv_tool(name)
    if found:
        return found
    if IN_CI:
        pytest.fail(f"{name} is not installed, and CI must not skip tests that need it")
    pytest.skip(f"{name} is not installed")


def _venv_tool(name: str) -> str | None:
    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.is_file() and os.access(candidate, os.X_OK) else None


def kustomize(path) -> list[dict]:
    kubectl = require_tool("kubectl")
    result = subprocess.run([kubectl, "kustomize", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    # kustomize writes 1e-08, which kubectl (and kube_yaml, unlike plain PyYAML) reads as a number.
    return [doc for doc in yaml.load_all(result.stdout, Loader=kube_yaml.Loader) if doc]
