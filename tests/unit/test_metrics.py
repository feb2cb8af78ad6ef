"""The operator's metrics as Prometheus scrapes them: names, types, labels and values of the
text exposition (prometheus_client.generate_latest), parsed back with prometheus_client's parser."""

from __future__ import annotations

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from pinery.metrics import JOB_GAUGES, Metrics


def scrape(metrics: Metrics) -> dict[str, tuple[str, dict[tuple[tuple[str, str], ...], float]]]:
    """{family name: (type, {sorted label pairs of a sample: value})}, failing on a family
    name exposed twice (the text format allows one TYPE line per name)."""
    text = generate_latest(metrics.registry).decode()
    types = [line.split()[2] for line in text.splitlines() if line.startswith("# TYPE ")]
    assert len(types) == len(set(types)), f"a metric name is exposed twice: {sorted(types)}"
    out = {}
    for family in text_string_to_metric_families(text):
        samples = {tuple(sorted(s.labels.items())): s.value for s in family.samples
                   if s.name == family.name or s.name == f"{family.name}_total"}
        out[family.name] = (family.type, samples)
    return out


def job_samples(metrics: Metrics, gauge: str) -> dict:
    kind, samples = scrape(metrics)[f"pinery_fsdpjob_{gauge}"]
    assert kind == "gauge"
    return samples


def labels(namespace: str, job: str) -> tuple:
    return (("fsdpjob", job), ("namespace", namespace))


def test_each_job_has_its_gauges_labelled_by_namespace_and_job_until_forgotten():
    metrics = Metrics()
    metrics.job_gauges("ml", "a", {"step": 40, "loss": 2.5, "tokens_per_second": 1200.0, "status_restarts": 1,
                                   "max_restarts": 3, "disruptions": 0, "stalled": 0})
    metrics.job_gauges("team", "a", {"step": 7, "status_restarts": 0, "max_restarts": 0, "disruptions": 2, "stalled": 1})
    assert job_samples(metrics, "step") == {labels("ml", "a"): 40.0, labels("team", "a"): 7.0}
    assert job_samples(metrics, "loss") == {labels("ml", "a"): 2.5}  # no loss reported by team/a
    assert job_samples(metrics, "tokens_per_second") == {labels("ml", "a"): 1200.0}
    assert job_samples(metrics, "last_checkpoint_step") == {}
    assert job_samples(metrics, "status_restarts") == {labels("ml", "a"): 1.0, labels("team", "a"): 0.0}
    assert job_samples(metrics, "max_restarts") == {labels("ml", "a"): 3.0, labels("team", "a"): 0.0}
    assert job_samples(metrics, "disruptions")[labels("team", "a")] == 2.0
    assert job_samples(metrics, "stalled") == {labels("ml", "a"): 0.0, labels("team", "a"): 1.0}

    metrics.job_gauges("ml", "a", {"step": 50, "status_restarts": 1, "max_restarts": 3, "disruptions": 0, "stalled": 0})
    assert job_samples(metrics, "step")[labels("ml", "a")] == 50.0
    assert job_samples(metrics, "loss") == {}  # replaced, not merged

    metrics.job_phase("ml", "a", "Running")
    metrics.forget_job("ml", "a")
    for gauge in JOB_GAUGES:
        assert labels("ml", "a") not in job_samples(metrics, gauge)
    assert labels("team", "a") in job_samples(metrics, "step")
    assert scrape(metrics)["pinery_fsdpjobs"][1] == {}


def test_the_restart_gauge_and_the_restart_counter_are_two_names():
    metrics = Metrics()
    metrics.fsdpjob_restarts.labels("ml").inc(2)
    metrics.job_gauges("ml", "a", {"status_restarts": 2, "max_restarts": 3, "disruptions": 0, "stalled": 0})
    families = scrape(metrics)
    assert families["pinery_fsdpjob_restarts"] == ("counter", {(("namespace", "ml"),): 2.0})
    assert families["pinery_fsdpjob_status_restarts"][1] == {labels("ml", "a"): 2.0}


def test_an_unknown_gauge_is_refused():
    with pytest.raises(ValueError, match="restarts"):
        Metrics().job_gauges("ml", "a", {"restarts": 1})


def test_vectorindex_readiness_per_object_until_forgotten():
    metrics = Metrics()
    metrics.index_ready("ml", "docs", True)
    metrics.index_ready("ml", "faq", False)
    metrics.index_state("ml", "faq", "Initializing")
    families = scrape(metrics)
    assert families["pinery_vectorindex_ready"] == ("gauge", {
        (("namespace", "ml"), ("vectorindex", "docs")): 1.0, (("namespace", "ml"), ("vectorindex", "faq")): 0.0})
    assert families["pinery_vectorindexes"][1] == {(("state", "Initializing"),): 1.0}
    metrics.forget_index("ml", "faq")
    families = scrape(metrics)
    assert families["pinery_vectorindex_ready"][1] == {(("namespace", "ml"), ("vectorindex", "docs")): 1.0}
    assert families["pinery_vectorindexes"][1] == {}


def test_pinecone_calls_are_counted_by_operation_and_outcome():
    metrics = Metrics()
    metrics.pinecone_call("describe_index", "ok")
    metrics.pinecone_call("describe_index", "429")
    metrics.pinecone_call("describe_index", "429")
    kind, samples = scrape(metrics)["pinery_pinecone_calls"]
    assert kind == "counter"
    assert samples == {(("operation", "describe_index"), ("outcome", "ok")): 1.0,
                       (("operation", "describe_index"), ("outcome", "429")): 2.0}
