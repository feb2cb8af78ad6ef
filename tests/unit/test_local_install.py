"""The local settings patched into the shipped manifests (`--operator=manifests|kustomize`):
the env the chart's values would give, and the health port the probes name, found by name in
the objects themselves; the kustomize overlay rendered by real kubectl."""

from __future__ import annotations

import copy
import subprocess

import pytest

from pinery import kube_yaml
from pinery.local import install
from pinery.local.apiserver.errors import ApiError
from tests.support.chart import render
from tests.support.kubectl import kubectl_binary

URL = "http://127.0.0.1:20001"


def shipped() -> list[dict]:
    return kube_yaml.load_all(install.MANIFEST.read_text())


def container(objects: list[dict]) -> dict:
    [operator] = [c for c in install.operator_deployment(objects)["spec"]["template"]["spec"]["containers"] if c["name"] == "operator"]
    return operator


def env_of(c: dict) -> dict:
    return {v["name"]: v.get("value", v.get("valueFrom")) for v in c["env"]}


def test_the_patch_sets_the_local_env_and_moves_the_health_port():
    objects = shipped()
    ops = install.local_patch(install.operator_deployment(objects), install.local_env(URL, 20002), 20002)
    c = container(install.patched(objects, ops))
    env = env_of(c)
    assert {k: env[k] for k in install.local_env(URL, 20002)} == install.local_env(URL, 20002)
    assert {p["name"]: p["containerPort"] for p in c["ports"]}["health"] == 20002
    assert c["readinessProbe"]["httpGet"]["port"] == "health"  # the probes follow the port by name
    # Nothing else of the shipped objects changed.
    before, after = shipped(), install.patched(objects, ops)
    assert [o for o in before if o["kind"] != "Deployment"] == [o for o in after if o["kind"] != "Deployment"]
    untouched = {k: v for k, v in env_of(container(before)).items() if k not in install.local_env(URL, 20002)}
    assert {k: env[k] for k in untouched} == untouched


def test_the_local_env_is_what_the_chart_renders_for_the_local_values():
    """One meaning for both forms: the chart with chart_values gives the same env."""
    rendered = render(install.chart_values(URL, 20002))
    deployment = install.operator_deployment(rendered)
    env = env_of(container([deployment]))
    assert {k: env[k] for k in install.local_env(URL, 20002)} == install.local_env(URL, 20002)


def test_a_variable_the_manifest_lacks_is_added():
    objects = shipped()
    deployment = copy.deepcopy(install.operator_deployment(objects))
    c = container([deployment])
    c["env"] = [v for v in c["env"] if v["name"] != "PINERY_CLUSTER_NAME"]
    ops = install.local_patch(deployment, install.local_env(URL, 20002), 20002)
    assert {"op": "add", "path": "/spec/template/spec/containers/0/env/-",
            "value": {"name": "PINERY_CLUSTER_NAME", "value": "local"}} in ops
    assert env_of(container(install.patched([deployment], ops)))["PINERY_CLUSTER_NAME"] == "local"


def test_a_patch_for_another_order_of_env_is_refused_not_misapplied():
    objects = shipped()
    ops = install.local_patch(install.operator_deployment(objects), install.local_env(URL, 20002), 20002)
    reordered = copy.deepcopy(objects)
    c = container(reordered)
    c["env"].reverse()
    with pytest.raises(ApiError, match="test failed"):
        install.patched(reordered, ops)


def test_kubectl_renders_the_overlay_of_deploy_kustomize(tmp_path):
    binary = kubectl_binary()
    ops = install.local_patch(install.operator_deployment(shipped()), install.local_env(URL, 20002), 20002)
    overlay = install.kustomize_overlay(tmp_path / "deep" / "overlay", ops)
    done = subprocess.run([binary, "kustomize", str(overlay)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    built = kube_yaml.load_all(done.stdout)
    assert env_of(container(built))["PINERY_PINECONE_HOST"] == URL
    assert {p["name"]: p["containerPort"] for p in container(built)["ports"]}["health"] == 20002
    # The overlay holds the base by path and changes only the Deployment: the same objects.
    assert sorted((o["kind"], o["metadata"]["name"]) for o in built) == sorted((o["kind"], o["metadata"]["name"]) for o in shipped())
