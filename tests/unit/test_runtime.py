"""Operator runtime pieces that need no server: settings from flags, Kopf settings, login,
metrics exposition, and the Pinecone gateway's error reduction."""


import kubernetes
from prometheus_client import generate_latest

from pinery.cli import build_parser
from pinery.cli.run import settings_from_args
from pinery.gateways.pinecone import failure_from, key_id
from pinery.metrics import Metrics
from pinery.runtime import QuietSpies, connection_info, kopf_settings, operator_kwargs
from pinery.settings import OperatorSettings


def parse(*argv):
    return build_parser().parse_args(["run", *argv])


def test_flags_override_environment():
    env = {"PINERY_NAMESPACES": "a", "PINERY_PEERING": "pinery", "PINERY_METRICS_PORT": "9000"}
    s = settings_from_args(parse("-n", "x", "-n", "y", "--standalone", "--log-format", "json"), env)
    assert s.namespaces == ("x", "y") and s.peering == "" and s.log_format == "json" and s.metrics_port == 9000
    s = settings_from_args(parse(), env)
    assert s.namespaces == ("a",) and s.peering == "pinery"


def test_kopf_settings_and_operator_arguments():
    ks = kopf_settings(OperatorSettings(peering="pinery", namespaces=("a",)))
    assert ks.persistence.finalizer == "pinery.dev/finalizer"
    assert ks.peering.name == "pinery" and ks.peering.standalone is False and ks.peering.clusterwide is False
    kw = operator_kwargs(OperatorSettings())
    assert kw["standalone"] and kw["clusterwide"] and kw["liveness_endpoint"] == "http://0.0.0.0:8081/healthz"
    assert operator_kwargs(OperatorSettings(health_port=0))["liveness_endpoint"] is None
    assert kw["priority"] is None
    priorities = {operator_kwargs(OperatorSettings(peering="p"))["priority"] for _ in range(5)}
    assert len(priorities) > 1 and all(p > 0 for p in priorities)


def test_login_uses_the_clients_configuration():
    cfg = kubernetes.client.Configuration()
    cfg.host = "http://127.0.0.1:1234"
    cfg.api_key = {"authorization": "Bearer tok"}
    info = connection_info(cfg)
    assert (info.server, info.scheme, info.token) == ("http://127.0.0.1:1234", "Bearer", "tok")


def test_metrics_exposition():
    m = Metrics()
    m.reconciled("VectorIndex", "create")
    m.pinecone_call("describe_index", "ok")
    m.index_state("ns", "a", "Ready")
    m.index_state("ns", "b", "Ready")
    m.index_state("ns", "c", "Initializing")
    m.job_phase("ns", "j", "Running")
    text = generate_latest(m.registry).decode()
    assert 'pinery_reconciles_total{outcome="create",resource="VectorIndex"} 1.0' in text
    assert 'pinery_pinecone_calls_total{operation="describe_index",outcome="ok"} 1.0' in text
    assert 'pinery_vectorindexes{state="Ready"} 2.0' in text
    assert 'pinery_fsdpjobs{phase="Running"} 1.0' in text
    m.forget_index("ns", "a")
    assert 'pinery_vectorindexes{state="Ready"} 1.0' in generate_latest(m.registry).decode()


async def test_timed_handlers_count_errors():
    m = Metrics()

    @m.timed("FSDPJob", "reconcile")
    async def failing():
        raise RuntimeError("x")

    try:
        await failing()
    except RuntimeError:
        pass
    text = generate_latest(m.registry).decode()
    assert 'pinery_handler_errors_total{handler="reconcile",resource="FSDPJob"} 1.0' in text
    assert 'pinery_handler_duration_seconds_count{handler="reconcile",resource="FSDPJob"} 1.0' in text


def test_sdk_failures_are_reduced_without_the_key():
    from pinecone.errors.exceptions import (
        ForbiddenError,
        PineconeConnectionError,
        PineconeTimeoutError,
        PineconeValueError,
        RateLimitError,
    )

    key = "pcsk_very_secret_key"
    f = failure_from(RateLimitError(f"slow down {key}", retry_after=7.0, error_code="RESOURCE_EXHAUSTED"), "create_index", key)
    assert (f.status, f.code, f.retry_after) == (429, "RESOURCE_EXHAUSTED", 7.0) and key not in f.message
    f = failure_from(ForbiddenError("quota", error_code="QUOTA_EXCEEDED"), "create_index", key)
    assert (f.status, f.code) == (403, "QUOTA_EXCEEDED")
    assert failure_from(PineconeValueError("bad name"), "create_index", key).status == 400
    assert failure_from(PineconeTimeoutError("slow"), "describe_index", key).status is None
    assert failure_from(PineconeConnectionError("refused"), "describe_index", key).code == "PineconeConnectionError"
    assert key_id(key) == key_id(key) and key not in key_id(key)


def test_wake_up_spies_do_not_log_each_event():
    import logging

    def record(message):
        return logging.LogRecord("kopf.objects", logging.INFO, __file__, 1, message, None, None)

    quiet = QuietSpies()
    assert not quiet.filter(record("Handler 'vectorindex_event' succeeded."))
    assert not quiet.filter(record("Handler 'register.<locals>.fsdpjob_pod_event' succeeded."))
    assert quiet.filter(record("Handler 'vectorindex_delete' succeeded."))
    assert quiet.filter(record("Handler 'vectorindex_event' failed with an exception and will stop now: x"))
