"""The Helm chart, rendered offline with the Helm SDK for the value sets users rely on."""

from __future__ import annotations

import base64
import copy
import json
import re
from dataclasses import fields
from pathlib import Path

import helm_python as helm
import kubernetes_validate
import pytest
import yaml
from openapi_schema_validator import OAS30Validator

from pinery.settings import OperatorSettings, env_name
from tests.conftest import REPO_ROOT
from tests.support.chart import (
    CHART_DIR,
    KUBE_VERSIONS,
    RBAC_KINDS,
    RELEASE_NAMESPACE,
    assert_operator_pod_locked_down,
    chart,
    crds,
    of_kind,
    one,
    permissions,
    render,
    render_notes,
    wildcard_rules,
)

VALUE_SETS = {
    "defaults": {},
    "namespaced": {"watchNamespaces": ["team-a", "team-b"]},
    "ha": {"replicas": 3},
    "ha-namespaced": {"replicas": 2, "watchNamespaces": ["team-a", "team-b"]},
    "ha-one-replica": {"ha": {"enabled": True, "peeringName": "pinery-prod"}},
    "ha-argocd": {"replicas": 2, "ha": {"peeringAsHook": False}},
    "created-secret": {"pinecone": {"apiKeySecret": {"create": True, "apiKey": "pcsk-not-a-real-key"}}},
    "existing-secret": {
        "watchNamespaces": ["ml"],
        "pinecone": {"apiKeySecret": {"name": "shared-key", "key": "token", "namespace": "vault"}},
    },
    "service-monitor": {"metrics": {"serviceMonitor": {"enabled": True, "labels": {"release": "prom"}}}},
    "monitoring": {"grafana": {"dashboards": {"enabled": True}}, "prometheusRule": {"enabled": True, "labels": {"release": "prom"}}},
    "custom-images": {
        "image": {"repository": "registry.example.com/ml/pinery", "tag": "0.1.0-rc1", "pullPolicy": "Always"},
        "trainerImage": {"repository": "registry.example.com/ml/trainer", "digest": "sha256:" + "ab" * 32},
        "imagePullSecrets": [{"name": "regcred"}],
    },
    "metrics-off": {"metrics": {"enabled": False}, "logFormat": "json", "pinecone": {"host": "http://proxy:8443"}},
    "platform-uid": {"runAsUser": None, "extraEnv": [{"name": "HTTPS_PROXY", "value": "http://proxy:3128"}]},
}
IDS = list(VALUE_SETS)

# What the operator may do, from its design: exact verbs, per resource.
NAMESPACED = {
    ("pinery.dev", "vectorindexes"): {"get", "list", "watch", "patch", "update"},
    # The operator deletes a finished job once spec.ttlSecondsAfterFinished has passed.
    ("pinery.dev", "fsdpjobs"): {"get", "list", "watch", "patch", "update", "delete"},
    # A backup schedule makes its backups and deletes those that fall out of retention.
    ("pinery.dev", "vectorindexbackups"): {"get", "list", "watch", "patch", "update", "create", "delete"},
    ("pinery.dev", "vectorindexbackupschedules"): {"get", "list", "watch", "patch", "update"},
    **{("pinery.dev", f"{kind}/status"): {"get", "patch", "update"}
       for kind in ("vectorindexes", "fsdpjobs", "vectorindexbackups", "vectorindexbackupschedules")},
    **{("pinery.dev", f"{kind}/finalizers"): {"update"}
       for kind in ("vectorindexes", "fsdpjobs", "vectorindexbackups", "vectorindexbackupschedules")},
    ("", "pods"): {"get", "list", "watch", "create", "delete"},
    ("", "pods/log"): {"get"},
    # An FSDPJob's PodGroups (spec.gang), read each pass and never watched.
    ("scheduling.x-k8s.io", "podgroups"): {"get", "list", "create", "delete"},
    ("scheduling.volcano.sh", "podgroups"): {"get", "list", "create", "delete"},
    ("", "services"): {"get", "list", "watch", "create", "delete"},
    ("", "configmaps"): {"get", "list", "watch", "create", "update", "patch", "delete"},
    ("", "secrets"): {"get"},
    ("", "persistentvolumeclaims"): {"get", "list", "watch"},
    ("", "events"): {"create", "patch"},
    ("events.k8s.io", "events"): {"create", "patch"},
    # Kueue: the job's Workload (Kopf watches it to wake the job); spec.active and the finalizer by patch.
    ("kueue.x-k8s.io", "workloads"): {"get", "list", "watch", "create", "patch"},
    ("kueue.x-k8s.io", "workloads/status"): {"patch"},
}
CLUSTER_WIDE_ONLY = {("", "namespaces"): {"get", "list", "watch"}}
CLUSTER_SCOPED = {
    ("apiextensions.k8s.io", "customresourcedefinitions"): {"get", "list", "watch"},
    # Kueue: an admission's ResourceFlavors and a Workload's priority class, read by name.
    ("kueue.x-k8s.io", "resourceflavors"): {"get"},
    ("kueue.x-k8s.io", "workloadpriorityclasses"): {"get"},
    ("scheduling.k8s.io", "priorityclasses"): {"get"},
    # Failed-node avoidance counts the nodes left (required or preferred affinity).
    ("", "nodes"): {"list"},
}
PEERING = {("kopf.dev", "kopfpeerings"): {"get", "list", "watch", "patch"}}
CLUSTER_PEERING = {("kopf.dev", "clusterkopfpeerings"): {"get", "list", "watch", "patch"}}


@pytest.fixture(scope="module", params=IDS)
def rendered(request):
    return request.param, VALUE_SETS[request.param], render(VALUE_SETS[request.param])


def deployment_container(objects):
    pod = one(objects, "Deployment")["spec"]["template"]["spec"]
    assert len(pod["containers"]) == 1
    return pod, pod["containers"][0]


def env_of(container) -> dict[str, object]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def is_ha(values) -> bool:
    return values.get("replicas", 1) > 1 or values.get("ha", {}).get("enabled", False)


# ---- lint and schema validation ----


@pytest.mark.parametrize("name", IDS)
def test_lint_is_clean_in_strict_mode(name):
    report = helm.lint(str(CHART_DIR), VALUE_SETS[name], strict=True, namespace=RELEASE_NAMESPACE, kube_version="v1.32.0")
    problems = [m for m in report["messages"] if m["severity"] >= 2]
    assert report["errors"] == [] and problems == [], problems


@pytest.mark.parametrize("version", KUBE_VERSIONS)
def test_every_rendered_object_is_valid_kubernetes(version):
    """Built-in kinds against the Kubernetes schemas (strict: unknown fields fail); CRs of the
    peering CRDs against those CRDs; ServiceMonitor and PrometheusRule are checked for shape in
    their own tests (no CRD of the Prometheus Operator here)."""
    checked = 0
    for values in VALUE_SETS.values():
        objects = crds() + render(values)
        peering_crds = {c["spec"]["names"]["kind"]: c for c in of_kind(objects, "CustomResourceDefinition")}
        for obj in objects:
            if obj["apiVersion"] == "kopf.dev/v1":
                schema = peering_crds[obj["kind"]]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
                assert list(OAS30Validator(schema).iter_errors(obj)) == []
            elif obj["kind"] not in ("ServiceMonitor", "PrometheusRule"):
                kubernetes_validate.validate(obj, version, strict=True)
            checked += 1
    assert checked > 60


def test_helm_loads_the_generated_crds_unchanged():
    """What Helm installs from the chart's crds/ is byte for byte the top-level crds/."""
    loaded = {Path(crd["name"]).name: crd["data"] for crd in chart().crds}
    top = {p.name: p.read_text() for p in (REPO_ROOT / "crds").glob("*.yaml")}
    assert loaded == top and len(top) == 4


@pytest.mark.parametrize("name", IDS)
def test_schema_accepts_every_value_set(name):
    chart().validate_schema(VALUE_SETS[name])


@pytest.mark.parametrize(
    "values, where",
    [
        ({"replicas": 0}, "/replicas"),
        ({"logFormat": "xml"}, "/logFormat"),
        ({"watchNamespaces": ["Team_A"]}, "/watchNamespaces/0"),
        ({"watchNamespaces": ["a", "a"]}, "/watchNamespaces"),
        ({"watchNamespaces": "team-a"}, "/watchNamespaces"),
        ({"image": {"pullPolicy": "Sometimes"}}, "/image/pullPolicy"),
        ({"image": {"digest": "latest"}}, "/image/digest"),
        ({"trainerImage": {"tag": "bad tag"}}, "/trainerImage/tag"),
        ({"pinecone": {"apiKeySecret": {"create": True}}}, "/pinecone/apiKeySecret"),
        ({"pinecone": {"concurrency": 0}}, "/pinecone/concurrency"),
        ({"metrics": {"port": 70000}}, "/metrics/port"),
        ({"metrics": {"serviceMonitor": {"interval": "soon"}}}, "/metrics/serviceMonitor/interval"),
        ({"resyncSeconds": 0}, "/resyncSeconds"),
        ({"fsdpjobProgressSeconds": 0}, "/fsdpjobProgressSeconds"),
        ({"runAsUser": 0}, "/runAsUser"),
        ({"replica": 2}, "additional properties 'replica'"),
        ({"ha": {"enable": True}}, "additional properties 'enable'"),
    ],
)
def test_schema_rejects_bad_values(values, where):
    with pytest.raises(helm.HelmValuesError) as raised:
        chart().validate_schema(values)
    assert where in str(raised.value)
    # An install validates the same schema before rendering anything.
    with pytest.raises(helm.HelmError):
        render(values)


def test_install_refuses_a_created_secret_without_a_key():
    with pytest.raises(helm.HelmError) as raised:
        install_dry_run({"pinecone": {"apiKeySecret": {"create": True, "apiKey": ""}}})
    assert "apiKey" in str(raised.value)


# ---- RBAC ----


def rbac_objects(objects):
    return {kind: of_kind(objects, kind) for kind in RBAC_KINDS}


AGGREGATE_TO = "rbac.authorization.k8s.io/aggregate-to-"


def for_users(obj) -> bool:
    """The user-facing ClusterRoles that aggregate into admin/edit/view (no binding of the chart's)."""
    return any(k.startswith(AGGREGATE_TO) for k in (obj["metadata"].get("labels") or {}))


def operator_objects(objects):
    return [o for o in objects if not for_users(o)]


def test_no_wildcards_anywhere(rendered):
    _, _, objects = rendered
    assert rbac_objects(objects)["ClusterRole"], "no RBAC rendered: nothing was checked"
    assert wildcard_rules(objects) == []


def test_cluster_wide_mode_grants_exactly_what_the_operator_needs():
    for values, extra in (({}, {}), ({"replicas": 3}, CLUSTER_PEERING)):
        objects = operator_objects(render(values))
        rbac = rbac_objects(objects)
        assert rbac["Role"] == [] and rbac["RoleBinding"] == []
        role = one(objects, "ClusterRole")
        assert permissions(role["rules"]) == {**NAMESPACED, **CLUSTER_WIDE_ONLY, **CLUSTER_SCOPED, **extra}
        binding = one(objects, "ClusterRoleBinding")
        assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role["metadata"]["name"]}
        assert_binds_operator(binding, objects)


@pytest.mark.parametrize("name", ["namespaced", "ha-namespaced"])
def test_namespaced_mode_has_a_role_in_each_watched_namespace(name):
    values = VALUE_SETS[name]
    objects = operator_objects(render(values))
    roles = {(r["metadata"]["namespace"], r["metadata"]["name"]): r for r in of_kind(objects, "Role")}
    bindings = {(b["metadata"]["namespace"], b["metadata"]["name"]): b for b in of_kind(objects, "RoleBinding")}
    assert roles.keys() == bindings.keys()
    expected = {**NAMESPACED, **(PEERING if is_ha(values) else {})}
    for ns in values["watchNamespaces"]:
        assert permissions(roles[(ns, "pinery")]["rules"]) == expected
        assert bindings[(ns, "pinery")]["roleRef"]["name"] == "pinery"
        assert_binds_operator(bindings[(ns, "pinery")], objects)
    # The default Secret lives in the release namespace, which is not watched: one Secret, read only.
    key_role = roles[(RELEASE_NAMESPACE, "pinery-api-key")]
    assert key_role["rules"] == [{"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["pinecone-api-key"], "verbs": ["get"]}]
    assert_binds_operator(bindings[(RELEASE_NAMESPACE, "pinery-api-key")], objects)
    assert {ns for ns, _ in roles} == set(values["watchNamespaces"]) | {RELEASE_NAMESPACE}
    # Cluster-wide it may only read CRDs: no namespaces, no cluster-wide access to anything else.
    assert permissions(one(objects, "ClusterRole")["rules"]) == CLUSTER_SCOPED
    assert_binds_operator(one(objects, "ClusterRoleBinding"), objects)


def test_secret_namespace_role_follows_the_configured_secret():
    objects = render(VALUE_SETS["existing-secret"])
    key_role = next(r for r in of_kind(objects, "Role") if r["metadata"]["name"] == "pinery-api-key")
    assert key_role["metadata"]["namespace"] == "vault"
    assert key_role["rules"][0]["resourceNames"] == ["shared-key"]
    # A watched namespace already grants secrets: get, so no extra Role is made there.
    objects = render({"watchNamespaces": ["ml", RELEASE_NAMESPACE]})
    assert all(r["metadata"]["name"] == "pinery" for r in of_kind(objects, "Role"))


def test_rbac_can_be_left_to_the_cluster_admin():
    objects = render({"rbac": {"create": False}, "serviceAccount": {"create": False, "name": "ops"}})
    assert not any(rbac_objects(objects).values()) and of_kind(objects, "ServiceAccount") == []
    pod, _ = deployment_container(objects)
    assert pod["serviceAccountName"] == "ops"


PINERY_KINDS = ("vectorindexes", "fsdpjobs", "vectorindexbackups", "vectorindexbackupschedules")
EDIT_VERBS = {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}


@pytest.mark.parametrize("name", ["default", "namespaced"])
def test_user_roles_aggregate_into_the_default_roles(name):
    """pinery-edit (into admin and edit) and pinery-view (into view), as cert-manager ships its
    cert-manager-edit/-view: labels only, never bound by the chart, in both watch modes."""
    objects = render({} if name == "default" else VALUE_SETS[name])
    roles = {o["metadata"]["name"]: o for o in of_kind(objects, "ClusterRole") if for_users(o)}
    assert roles.keys() == {"pinery-edit", "pinery-view"}
    aggregate = {n: {k[len(AGGREGATE_TO):] for k, v in r["metadata"]["labels"].items() if k.startswith(AGGREGATE_TO) and v == "true"}
                 for n, r in roles.items()}
    assert aggregate == {"pinery-edit": {"admin", "edit"}, "pinery-view": {"view"}}
    assert permissions(roles["pinery-edit"]["rules"]) == {
        **{("pinery.dev", r): EDIT_VERBS for r in PINERY_KINDS}, **{("pinery.dev", f"{r}/status"): {"get"} for r in PINERY_KINDS}}
    assert permissions(roles["pinery-view"]["rules"]) == {
        ("pinery.dev", r): {"get", "list", "watch"} for k in PINERY_KINDS for r in (k, f"{k}/status")}
    refs = [b["roleRef"]["name"] for b in objects if b["kind"] in ("ClusterRoleBinding", "RoleBinding")]
    assert not set(refs) & roles.keys()


def test_user_roles_can_be_turned_off():
    for values in ({"rbac": {"aggregateToDefaultRoles": False}}, {"rbac": {"create": False}}):
        objects = render(values)
        assert not [o for o in objects if for_users(o)], values
    # Turning them off leaves the operator's own RBAC as it was.
    kept = [(o["kind"], o["metadata"]["name"]) for o in render({"rbac": {"aggregateToDefaultRoles": False}}) if o["kind"] in RBAC_KINDS]
    assert kept == [(o["kind"], o["metadata"]["name"]) for o in operator_objects(render({})) if o["kind"] in RBAC_KINDS]


def test_kueue_may_read_fsdpjobs_when_enabled():
    """Kueue's manager follows pod owners to an external framework's job: get, list, watch on
    fsdpjobs, bound to Kueue's ServiceAccount (its manager role has no aggregationRule)."""
    assert not [o for o in render({}) if o["metadata"]["name"].endswith("-kueue")]
    for values in ({"kueue": {"enabled": True}}, {"kueue": {"enabled": True, "serviceAccount": {"name": "kq", "namespace": "queues"}}},
                   {"kueue": {"enabled": True}, "watchNamespaces": ["team-a"]}):
        objects = render(values)
        role = next(o for o in of_kind(objects, "ClusterRole") if o["metadata"]["name"] == "pinery-kueue")
        assert permissions(role["rules"]) == {("pinery.dev", "fsdpjobs"): {"get", "list", "watch"}}
        binding = next(o for o in of_kind(objects, "ClusterRoleBinding") if o["metadata"]["name"] == "pinery-kueue")
        sa = values["kueue"].get("serviceAccount", {"name": "kueue-controller-manager", "namespace": "kueue-system"})
        assert binding["subjects"] == [{"kind": "ServiceAccount", **sa}]
        assert binding["roleRef"]["name"] == "pinery-kueue"
    assert not [o for o in render({"kueue": {"enabled": True}, "rbac": {"create": False}}) if o["metadata"]["name"].endswith("-kueue")]


def assert_binds_operator(binding, objects):
    sa = one(objects, "ServiceAccount")
    pod, _ = deployment_container(objects)
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": sa["metadata"]["name"], "namespace": RELEASE_NAMESPACE}]
    assert pod["serviceAccountName"] == sa["metadata"]["name"]


def test_install_doc_lists_the_same_permissions():
    """docs/install.md has a table `| API group | resource | verbs | when |`; it must match the chart."""
    text = doc_section(REPO_ROOT / "docs" / "install.md", "Permissions")
    rows = re.findall(r"^\| `([^`]*)` \| `([^`]+)` \| ([^|]+) \| ([^|]+) \|$", text, re.M)
    documented = {(g if g != "core" else "", r): {v.strip(" `") for v in verbs.split(",")} for g, r, verbs, _ in rows}
    expected = {**NAMESPACED, **CLUSTER_WIDE_ONLY, **CLUSTER_SCOPED, **PEERING, **CLUSTER_PEERING}
    assert documented == expected


def doc_section(path, title):
    """The text of one `## title` section of a Markdown file."""
    text = path.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


def test_install_doc_lists_every_operator_setting():
    text = doc_section(REPO_ROOT / "docs" / "install.md", "Configuration")
    documented = set(re.findall(r"^\| `(PINERY_[A-Z_]+)` \|", text, re.M))
    assert documented == {env_name(f.name) for f in fields(OperatorSettings)}


# ---- the operator's pod ----


def test_pod_is_locked_down(rendered):
    name, values, objects = rendered
    pod, container = deployment_container(objects)
    assert_operator_pod_locked_down(pod, run_as_user=name != "platform-uid")
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    assert "emptyDir" in volumes[mounts["/tmp"]]
    assert container["resources"]["requests"] and container["resources"]["limits"]["memory"]


def test_probes_use_kopfs_liveness_endpoint(rendered):
    _, _, objects = rendered
    _, container = deployment_container(objects)
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    for probe in ("livenessProbe", "readinessProbe"):
        assert container[probe]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert str(ports["health"]) == env_of(container)["PINERY_HEALTH_PORT"] == "8081"


def test_container_runs_pinery_run_configured_by_settings(rendered):
    """Every setting of OperatorSettings comes from the chart, and the env parses."""
    name, values, objects = rendered
    _, container = deployment_container(objects)
    assert container["args"] == ["run"] and "command" not in container
    env = env_of(container)
    setting_vars = {env_name(f.name) for f in fields(OperatorSettings)}
    assert setting_vars == {k for k in env if k.startswith("PINERY_")}
    assert env["PINERY_OPERATOR_NAMESPACE"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
    assert env["POD_ID"] == {"fieldRef": {"fieldPath": "metadata.name"}}
    resolved = {k: (RELEASE_NAMESPACE if k == "PINERY_OPERATOR_NAMESPACE" else v) for k, v in env.items()}
    settings = OperatorSettings.from_env({k: v for k, v in resolved.items() if k.startswith("PINERY_")})
    assert settings.namespaces == tuple(values.get("watchNamespaces", ()))
    assert settings.operator_namespace == RELEASE_NAMESPACE
    assert settings.operator_image == container["image"]
    assert settings.peering == (values.get("ha", {}).get("peeringName", "pinery") if is_ha(values) else "")
    assert settings.metrics_port == (0 if name == "metrics-off" else 8080)
    assert settings.health_port == 8081
    assert settings.log_format == values.get("logFormat", "text")
    assert settings.pinecone_host == values.get("pinecone", {}).get("host", "")
    secret = values.get("pinecone", {}).get("apiKeySecret", {})
    assert settings.pinecone_secret_name == secret.get("name", "pinecone-api-key")
    assert settings.pinecone_secret_key == secret.get("key", "api-key")
    assert settings.default_secret_namespace == secret.get("namespace", RELEASE_NAMESPACE)
    defaults = OperatorSettings()
    for field in ("resync_seconds", "pinecone_concurrency", "cluster_name", "cluster_domain"):
        assert getattr(settings, field) == getattr(defaults, field)


def test_chart_defaults_agree_with_operator_defaults():
    env = {k: v for k, v in env_of(deployment_container(render())[1]).items() if isinstance(v, str)}
    settings = OperatorSettings.from_env({**env, "PINERY_OPERATOR_NAMESPACE": "pinery-system"})
    # The chart names the Secret's namespace explicitly; the operator would pick the same one.
    assert settings == OperatorSettings(pinecone_secret_namespace="pinery-system")
    assert settings.default_secret_namespace == OperatorSettings().default_secret_namespace


def test_images_default_to_the_app_version_and_can_be_replaced():
    _, container = deployment_container(render())
    env = env_of(container)
    assert container["image"] == "ghcr.io/pinery-dev/pinery:0.1.0" == env["PINERY_OPERATOR_IMAGE"]
    assert env["PINERY_TRAINER_IMAGE"] == "ghcr.io/pinery-dev/pinery-trainer:0.1.0"
    assert chart().metadata["appVersion"] == "0.1.0"
    pod, container = deployment_container(render(VALUE_SETS["custom-images"]))
    env = env_of(container)
    assert container["image"] == "registry.example.com/ml/pinery:0.1.0-rc1" == env["PINERY_OPERATOR_IMAGE"]
    assert container["imagePullPolicy"] == "Always"
    assert env["PINERY_TRAINER_IMAGE"] == "registry.example.com/ml/trainer@sha256:" + "ab" * 32
    assert pod["imagePullSecrets"] == [{"name": "regcred"}]


def test_extra_env_is_appended():
    _, container = deployment_container(render(VALUE_SETS["platform-uid"]))
    assert container["env"][-1] == {"name": "HTTPS_PROXY", "value": "http://proxy:3128"}


# ---- high availability ----


@pytest.mark.parametrize("name", ["ha", "ha-namespaced", "ha-one-replica"])
def test_ha_renders_peering_crds_and_objects(name):
    values = VALUE_SETS[name]
    objects = render(values)
    peering_name = values.get("ha", {}).get("peeringName", "pinery")
    crd_names = {c["metadata"]["name"] for c in of_kind(objects, "CustomResourceDefinition")}
    assert crd_names == {"kopfpeerings.kopf.dev", "clusterkopfpeerings.kopf.dev"}
    if values.get("watchNamespaces"):
        peerings = of_kind(objects, "KopfPeering")
        assert {p["metadata"]["namespace"] for p in peerings} == set(values["watchNamespaces"])
        assert of_kind(objects, "ClusterKopfPeering") == []
    else:
        peerings = of_kind(objects, "ClusterKopfPeering")
        assert len(peerings) == 1 and of_kind(objects, "KopfPeering") == []
    for peering in peerings:
        assert peering["metadata"]["name"] == peering_name
        # Created after the CRDs: Helm cannot map a kind whose CRD it creates in the same step.
        assert peering["metadata"]["annotations"]["helm.sh/hook"] == "post-install,post-upgrade"
        assert peering["metadata"]["annotations"]["helm.sh/hook-delete-policy"] == "before-hook-creation"
    for crd in of_kind(objects, "CustomResourceDefinition"):
        assert "helm.sh/hook" not in crd["metadata"].get("annotations", {})


def install_dry_run(values):
    return helm.Config(namespace=RELEASE_NAMESPACE, storage_driver="memory").install(
        str(CHART_DIR), "pinery", values, dry_run="client"
    )


def test_helm_install_keeps_peering_objects_out_of_the_main_manifest():
    """What `helm install` itself does with the chart: the peering objects are hooks, created
    after the manifest (and its CRDs) is applied, so Helm never has to map their kind up front."""
    hooked = [d["kind"] for d in yaml.safe_load_all(install_dry_run({"replicas": 3})["manifest"]) if d]
    assert hooked.count("CustomResourceDefinition") == 2 and "ClusterKopfPeering" not in hooked
    plain = [d["kind"] for d in yaml.safe_load_all(install_dry_run(VALUE_SETS["ha-argocd"])["manifest"]) if d]
    assert "ClusterKopfPeering" in plain


def test_peering_objects_can_be_ordinary_objects_for_argo_cd():
    objects = render(VALUE_SETS["ha-argocd"])
    peering = one(objects, "ClusterKopfPeering")
    assert peering["metadata"]["annotations"] == {"argocd.argoproj.io/sync-options": "SkipDryRunOnMissingResource=true"}


def test_several_replicas_get_a_disruption_budget_and_a_rolling_update():
    objects = render(VALUE_SETS["ha"])
    deployment = one(objects, "Deployment")
    pdb = one(objects, "PodDisruptionBudget")
    assert deployment["spec"]["replicas"] == 3
    assert pdb["spec"]["minAvailable"] == 1
    assert pdb["spec"]["selector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]
    assert deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
    anti = deployment["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]
    assert anti["preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"


def test_one_replica_without_peering_never_overlaps():
    objects = render()
    assert one(objects, "Deployment")["spec"]["strategy"] == {"type": "Recreate"}
    for kind in ("PodDisruptionBudget", "CustomResourceDefinition", "ClusterKopfPeering", "KopfPeering"):
        assert of_kind(objects, kind) == []
    assert of_kind(render(VALUE_SETS["ha-one-replica"]), "PodDisruptionBudget") == []


# ---- Secret, metrics, NOTES ----


def test_api_key_secret_created_from_a_value():
    objects = render(VALUE_SETS["created-secret"])
    secret = one(objects, "Secret")
    assert secret["metadata"] == {**secret["metadata"], "name": "pinecone-api-key", "namespace": RELEASE_NAMESPACE}
    assert base64.b64decode(secret["data"]["api-key"]).decode() == "pcsk-not-a-real-key"
    # The key is in the Secret and nowhere else.
    others = [o for o in objects if o["kind"] != "Secret"]
    assert "pcsk-not-a-real-key" not in json.dumps(others)
    assert "pcsk-not-a-real-key" not in render_notes(VALUE_SETS["created-secret"])


@pytest.mark.parametrize("name", ["defaults", "existing-secret"])
def test_existing_secret_is_referenced_not_created(name):
    assert of_kind(render(VALUE_SETS[name]), "Secret") == []
    notes = render_notes(VALUE_SETS[name])
    secret = VALUE_SETS[name].get("pinecone", {}).get("apiKeySecret", {})
    command = (
        f"kubectl -n {secret.get('namespace', RELEASE_NAMESPACE)} create secret generic "
        f"{secret.get('name', 'pinecone-api-key')} --from-literal={secret.get('key', 'api-key')}="
    )
    assert command in notes


def test_metrics_service_and_service_monitor():
    objects = render(VALUE_SETS["service-monitor"])
    service = one(objects, "Service")
    _, container = deployment_container(objects)
    pod_labels = one(objects, "Deployment")["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= pod_labels.items()
    assert service["spec"]["ports"] == [{"name": "metrics", "port": 8080, "targetPort": "metrics", "protocol": "TCP"}]
    assert {"name": "metrics", "containerPort": 8080, "protocol": "TCP"} in container["ports"]
    monitor = one(objects, "ServiceMonitor")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["metadata"]["labels"]["release"] == "prom"
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": [RELEASE_NAMESPACE]}
    assert monitor["spec"]["endpoints"][0]["port"] == "metrics" and monitor["spec"]["endpoints"][0]["path"] == "/metrics"
    assert of_kind(render(), "ServiceMonitor") == []


def test_metrics_off_removes_service_and_port():
    objects = render(VALUE_SETS["metrics-off"])
    _, container = deployment_container(objects)
    assert of_kind(objects, "Service") == [] and of_kind(objects, "ServiceMonitor") == []
    assert [p["name"] for p in container["ports"]] == ["health"]


def test_notes_tell_how_to_check_and_use_the_operator():
    notes = render_notes()
    assert "kubectl -n pinery-system rollout status deployment/pinery" in notes
    for example, kind, condition in (
        ("vectorindex-serverless.yaml", "vectorindex", "Ready"),
        ("fsdpjob-builtin-trainer.yaml", "fsdpjob", "Succeeded"),
    ):
        name = yaml.safe_load((REPO_ROOT / "examples" / example).read_text())["metadata"]["name"]
        assert f"/examples/{example}" in notes
        assert f"kubectl wait {kind}/{name} --for=condition={condition}" in notes
    namespaced = render_notes(VALUE_SETS["namespaced"])
    assert "kubectl -n team-a wait vectorindex/" in namespaced and "team-a, team-b" in namespaced
    assert "one is active" in render_notes(VALUE_SETS["ha"])


def test_every_object_carries_the_chart_labels(rendered):
    _, _, objects = rendered
    for obj in objects:
        labels = obj["metadata"]["labels"]
        assert labels["app.kubernetes.io/name"] == "pinery" and labels["app.kubernetes.io/instance"] == "pinery"
        if obj["kind"] not in ("ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "ClusterKopfPeering"):
            assert obj["metadata"]["namespace"] in (RELEASE_NAMESPACE, *VALUE_SETS_NAMESPACES)


VALUE_SETS_NAMESPACES = {ns for v in VALUE_SETS.values() for ns in v.get("watchNamespaces", [])} | {"vault"}


# ---- documentation of the values ----


def leaf_paths(node, prefix=""):
    if isinstance(node, dict) and node:
        for key, value in node.items():
            yield from leaf_paths(value, f"{prefix}.{key}" if prefix else key)
    else:
        yield prefix


def readme_keys():
    text = (CHART_DIR / "README.md").read_text()
    return re.findall(r"^\| `([A-Za-z0-9_.]+)` \|", text, re.M)


def test_every_value_is_in_the_readme_table():
    values = yaml.safe_load((CHART_DIR / "values.yaml").read_text())
    documented = set(readme_keys())
    for path in leaf_paths(values):
        parts = path.split(".")
        assert any(".".join(parts[:i]) in documented for i in range(1, len(parts) + 1)), path
    for key in documented:
        node = values
        for part in key.split("."):
            assert isinstance(node, dict) and part in node, f"README documents {key}, which values.yaml lacks"
            node = node[part]


def test_every_documented_value_has_a_comment_in_values_yaml():
    lines = (CHART_DIR / "values.yaml").read_text().splitlines()
    for key in readme_keys():
        line = -1
        for depth, part in enumerate(key.split(".")):
            pattern = re.compile(rf"^{'  ' * depth}{re.escape(part)}:")
            line = next(i for i in range(line + 1, len(lines)) if pattern.match(lines[i]))
        assert lines[line - 1].lstrip().startswith("#"), f"{key} has no comment above it in values.yaml"


def test_every_schema_property_is_described():
    schema = json.loads((CHART_DIR / "values.schema.json").read_text())

    def walk(node, path):
        for name, sub in node.get("properties", {}).items():
            assert sub.get("description"), f"{path}{name}"
            walk(sub, f"{path}{name}.")

    walk(schema, "")
    assert schema["additionalProperties"] is False


def test_values_yaml_defaults_validate_and_are_what_the_chart_loads():
    values = yaml.safe_load((CHART_DIR / "values.yaml").read_text())
    assert chart().values == values
    chart().validate_schema(copy.deepcopy(values))
