"""The operator started the way the chart's Deployment starts it, against the local control plane.

The container's args and environment come from the rendered chart (the downward API filled in as
the kubelet would); the process is `pinery run`, exactly what the image's entrypoint runs. The
probes' endpoint and the metrics Service's port must answer where the chart says they are.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request

import pytest

from pinery.local.cluster import LocalCluster, free_port
from tests.support.chart import RELEASE_NAMESPACE, one, render

pytestmark = pytest.mark.slow


@pytest.fixture
def control_plane(tmp_path):
    cluster = LocalCluster(tmp_path / "local", with_pinecone=False, with_pod_runner=False, with_operator=False)
    cluster.start_in_thread()
    yield cluster
    cluster.stop_thread()


def container_process(objects, kubeconfig, log_path):
    """Start the Deployment's container as a local process: entrypoint `pinery`, the chart's args
    and env, a kubeconfig standing in for the in-cluster service account."""
    deployment = one(objects, "Deployment")
    pod_name = f"{deployment['metadata']['name']}-5d9c7b-x2x7q"
    field_values = {"metadata.namespace": RELEASE_NAMESPACE, "metadata.name": pod_name}
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PINERY_")}
    for var in container["env"]:
        env[var["name"]] = var["value"] if "value" in var else field_values[var["valueFrom"]["fieldRef"]["fieldPath"]]
    env["KUBECONFIG"] = str(kubeconfig)
    log = open(log_path, "wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "pinery", *container["args"]], env=env, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    log.close()
    return process, container


def http_get(url: str, deadline: float) -> tuple[int, str, str]:
    last_error = None
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return response.status, response.headers.get("Content-Type", ""), response.read().decode()
        except OSError as exc:
            last_error = exc
            time.sleep(0.2)
    raise AssertionError(f"{url} did not answer: {last_error}")


def test_operator_serves_probes_and_metrics_where_the_chart_points(control_plane, tmp_path):
    health_port, metrics_port = free_port(), free_port()
    objects = render({"health": {"port": health_port}, "metrics": {"port": metrics_port, "service": {"port": 9090}}})
    process, container = container_process(objects, control_plane.kubeconfig, tmp_path / "operator.log")
    try:
        deadline = time.monotonic() + 60
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        probe = container["livenessProbe"]["httpGet"]
        status, _, _ = http_get(f"http://127.0.0.1:{ports[probe['port']]}{probe['path']}", deadline)
        assert status == 200
        service = one(objects, "Service")
        target = service["spec"]["ports"][0]["targetPort"]
        status, content_type, body = http_get(f"http://127.0.0.1:{ports[target]}/metrics", deadline)
        assert status == 200 and content_type.startswith("text/plain")
        assert "# TYPE" in body and "pinery" in body
        assert process.poll() is None, "the operator exited"
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    log = (tmp_path / "operator.log").read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]
