"""The chart's Grafana dashboard and PrometheusRule: off by default, well formed, and asking
only for metrics the operator really exports (a real `Metrics` registry, exercised)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
import yaml

from pinery.fsdpjob.gauges import job_gauges
from pinery.metrics import Metrics
from tests.support.chart import CHART_DIR, RELEASE_NAMESPACE, of_kind, one, render
from tests.support.promql import balanced, grouping_labels, metric_names

ENABLED = {"grafana": {"dashboards": {"enabled": True}}, "prometheusRule": {"enabled": True}}
ALERTS = {"FSDPJobStalled", "FSDPJobRestartBudgetNearlySpent", "VectorIndexNotReady", "PineconeCallsFailing",
          "VectorIndexBackupsFailing", "VectorIndexBackupTooOld"}
# A Prometheus duration (prometheus.io/docs/prometheus/latest/configuration/configuration, <duration>).
DURATION = re.compile(r"^(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?$")


def exported() -> dict[str, set[str]]:
    """{sample name: its label names} of every series the operator's registry can expose,
    after touching every metric once (as a running operator does)."""
    metrics = Metrics()
    status = {"phase": "Running", "restarts": 1, "conditions": [],
              "progress": {"step": 1, "loss": 1.0, "tokensPerSecond": 1.0, "lastCheckpointStep": 1}}
    metrics.job_gauges("ns", "job", job_gauges(status, {"maxRestarts": 3}))
    metrics.job_phase("ns", "job", "Running")
    metrics.index_state("ns", "index", "Ready")
    metrics.index_ready("ns", "index", True)
    metrics.reconciled("FSDPJob", "idle")
    metrics.pinecone_call("describe_index", "ok")
    metrics.fsdpjob_restarts.labels("ns").inc()
    metrics.backup_finished("ns", "nightly", ready=True)
    metrics.backup_finished("ns", "nightly", ready=False)
    metrics.schedule_success("ns", "nightly", 1.8e9)
    metrics.handler_seconds.labels("VectorIndex", "reconcile").observe(0.1)
    metrics.handler_errors.labels("VectorIndex", "reconcile").inc()
    names: dict[str, set[str]] = {}
    for family in metrics.registry.collect():
        for sample in family.samples:
            names.setdefault(sample.name, set()).update(sample.labels)
    return names


EXPORTED = exported()


def test_the_exporter_is_exercised_as_a_whole():
    assert {"pinery_fsdpjob_loss", "pinery_fsdpjob_finished", "pinery_vectorindex_ready", "pinery_pinecone_calls_total",
            "pinery_handler_duration_seconds_bucket", "pinery_fsdpjob_restarts_total"} <= set(EXPORTED)


def test_both_are_off_by_default():
    objects = render()
    assert of_kind(objects, "PrometheusRule") == []
    assert [c for c in of_kind(objects, "ConfigMap") if "grafana_dashboard" in c["metadata"]["labels"]] == []


# ---- the dashboard ----


def dashboard_config_map(values=None) -> dict:
    return one(render(values or ENABLED), "ConfigMap")


def panels(dashboard: dict):
    for panel in dashboard["panels"]:
        yield panel
        yield from panels(panel) if panel.get("panels") else ()


def test_the_dashboard_configmap_is_labelled_for_grafanas_sidecar():
    # The Grafana chart's sidecar loads ConfigMaps with the label `grafana_dashboard`
    # (grafana/helm-charts, charts/grafana/values.yaml: sidecar.dashboards.label; any value when
    # its labelValue is empty, as by default; kube-prometheus-stack sets labelValue "1").
    cm = dashboard_config_map()
    assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert cm["metadata"]["namespace"] == RELEASE_NAMESPACE
    assert set(cm["data"]) == {p.name for p in (CHART_DIR / "dashboards").glob("*.json")} == {"pinery.json"}
    moved = dashboard_config_map({"grafana": {"dashboards": {
        "enabled": True, "namespace": "monitoring", "labels": {"grafana_dashboard": "pinery"},
        "annotations": {"grafana_folder": "ML"}}}})
    assert moved["metadata"]["namespace"] == "monitoring" and moved["metadata"]["labels"]["grafana_dashboard"] == "pinery"
    assert moved["metadata"]["annotations"] == {"grafana_folder": "ML"}


def test_the_dashboard_is_valid_json_with_the_panels_people_look_at():
    text = dashboard_config_map()["data"]["pinery.json"]
    assert text == (CHART_DIR / "dashboards" / "pinery.json").read_text().rstrip("\n")
    dashboard = json.loads(text)
    assert dashboard["uid"] and dashboard["title"] and isinstance(dashboard["schemaVersion"], int)
    ids = [p["id"] for p in panels(dashboard)]
    assert len(ids) == len(set(ids))
    titles = {p["title"] for p in panels(dashboard)}
    assert {"Training loss", "Throughput", "Restart budget", "VectorIndexes not Ready", "Pinecone call errors"} <= titles
    for panel in panels(dashboard):
        assert set(panel["gridPos"]) == {"x", "y", "w", "h"} and panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24
        if panel["type"] != "row":
            assert panel["targets"], panel["title"]
            assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
    variables = {v["name"] for v in dashboard["templating"]["list"]}
    for panel in panels(dashboard):
        for target in panel.get("targets", []):
            used = set(re.findall(r"\$\{?([a-zA-Z_]\w*)", target["expr"]))
            assert used <= variables, (panel["title"], used - variables)


def dashboard_queries() -> list[str]:
    dashboard = json.loads(dashboard_config_map()["data"]["pinery.json"])
    queries = [t["expr"] for p in panels(dashboard) for t in p.get("targets", [])]
    queries += [v["query"]["query"] for v in dashboard["templating"]["list"] if v["type"] == "query"]
    return queries


@pytest.mark.parametrize("expr", dashboard_queries())
def test_every_dashboard_query_names_only_exported_metrics(expr):
    names = metric_names(expr)
    assert names, f"no metric in {expr!r}"
    assert names <= set(EXPORTED), f"{expr!r} asks for {sorted(names - set(EXPORTED))}, which the operator does not export"
    assert balanced(expr)


def test_the_dashboard_shows_each_job_gauge():
    used = set().union(*(metric_names(q) for q in dashboard_queries()))
    assert {f"pinery_fsdpjob_{g}" for g in ("loss", "tokens_per_second", "step", "last_checkpoint_step",
                                            "status_restarts", "max_restarts", "disruptions", "stalled")} <= used


# ---- the alerts ----


def rule_object() -> dict:
    return one(render({"prometheusRule": {"enabled": True, "labels": {"release": "prom"}}}), "PrometheusRule")


def rules() -> list[dict]:
    return [rule for group in rule_object()["spec"]["groups"] for rule in group["rules"]]


def test_the_prometheusrule_has_the_shape_of_the_prometheus_operator_api():
    # monitoring.coreos.com/v1 PrometheusRule (prometheus-operator Documentation/api-reference:
    # PrometheusRuleSpec.groups[] of RuleGroup {name, interval?, rules[]}, Rule {record | alert,
    # expr, for?, labels?, annotations?}); no CRD of it is at hand, so the fields are checked here.
    obj = rule_object()
    assert obj["apiVersion"] == "monitoring.coreos.com/v1" and obj["kind"] == "PrometheusRule"
    assert obj["metadata"]["namespace"] == RELEASE_NAMESPACE and obj["metadata"]["labels"]["release"] == "prom"
    assert set(obj["spec"]) == {"groups"}
    names = [g["name"] for g in obj["spec"]["groups"]]
    assert len(names) == len(set(names))
    for group in obj["spec"]["groups"]:
        assert set(group) <= {"name", "interval", "rules"} and group["rules"]
        for rule in group["rules"]:
            assert set(rule) <= {"alert", "expr", "for", "labels", "annotations"}, rule
            assert isinstance(rule["expr"], str) and DURATION.match(rule["for"]), rule
            assert rule["labels"]["severity"] in ("warning", "critical")
            assert rule["annotations"]["summary"] and rule["annotations"]["description"]
    assert {r["alert"] for r in rules()} == ALERTS
    # what the chart ships is the rule file, not a Helm-templated copy of it
    assert obj["spec"] == yaml.safe_load((CHART_DIR / "rules" / "alerts.yaml").read_text())


@pytest.mark.parametrize("rule", rules(), ids=lambda r: r["alert"])
def test_every_alert_names_only_exported_metrics_and_labels(rule):
    expr = rule["expr"]
    names = metric_names(expr)
    assert names and names <= set(EXPORTED), f"{rule['alert']}: {sorted(names - set(EXPORTED))} are not exported"
    assert balanced(expr)
    # The annotations' {{ $labels.x }} must be labels the alert's series carry.
    carried = grouping_labels(expr)
    if carried is None:
        carried = set.intersection(*(EXPORTED[n] for n in names))
    for text in (*rule["annotations"].values(), *rule["labels"].values()):
        assert balanced(text.replace("{{", "(").replace("}}", ")"))
        for label in re.findall(r"\$labels\.(\w+)", text):
            assert label in carried, f"{rule['alert']}: {label} is not a label of {sorted(names)}"


def test_rules_pass_promtool_when_it_is_installed(tmp_path):
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool is not installed (docs/operations.md says what is checked without it)")
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump(rule_object()["spec"]))
    result = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
