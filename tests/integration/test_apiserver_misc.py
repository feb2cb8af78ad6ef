"""Events, health and version endpoints, authentication and pod logs on the local control plane."""

import threading
import time

import pytest
import requests
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.integration.helpers import configmap, pod
from tests.support.waiting import wait_for


def test_version_and_health(control_plane):
    version = requests.get(control_plane.url + "/version", verify=str(control_plane.server.ca_cert), timeout=5).json()
    assert (version["major"], version["minor"]) == ("1", "32") and version["gitVersion"].startswith("v1.32")
    for path in ("/healthz", "/readyz", "/livez", "/readyz/ping"):
        response = requests.get(control_plane.url + path, verify=str(control_plane.server.ca_cert), timeout=5)
        assert (response.status_code, response.text) == (200, "ok"), path


def test_bearer_token(control_plane):
    ca = str(control_plane.server.ca_cert)
    wrong = requests.get(control_plane.url + "/api/v1/namespaces", headers={"Authorization": "Bearer wrong"}, verify=ca, timeout=5)
    assert wrong.status_code == 401
    assert wrong.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                            "message": "Unauthorized", "reason": "Unauthorized", "code": 401}
    assert requests.get(control_plane.url + "/version", headers={"Authorization": "Bearer wrong"}, verify=ca, timeout=5).status_code == 401
    assert requests.get(control_plane.url + "/api/v1/namespaces", verify=ca, timeout=5).status_code == 401
    assert control_plane.http("GET", "/api/v1/namespaces").status_code == 200
    config = client.Configuration()
    config.host = control_plane.url
    config.ssl_ca_cert = ca
    config.api_key = {"authorization": "Bearer wrong"}
    with pytest.raises(ApiException) as info:
        client.CoreV1Api(client.ApiClient(config)).list_namespace()
    assert info.value.status == 401


def test_kubeconfig_names_cluster_user_and_context(control_plane):
    import yaml

    config = yaml.safe_load(control_plane.kubeconfig.read_text())
    context = config["contexts"][0]["context"]
    assert config["current-context"] == config["contexts"][0]["name"]
    assert context["namespace"] == "default"
    assert config["users"][0]["user"] == {"token": control_plane.token}
    cluster = config["clusters"][0]["cluster"]
    assert cluster["server"] == control_plane.url and cluster["server"].startswith("https://127.0.0.1:")
    assert cluster["certificate-authority-data"]


def test_core_events_and_events_k8s_io_are_the_same_objects(control_plane):
    v1 = control_plane.core_v1()
    target = v1.create_namespaced_config_map("default", configmap("subject"))
    involved = {"apiVersion": "v1", "kind": "ConfigMap", "name": "subject", "namespace": "default", "uid": target.metadata.uid}
    core = v1.create_namespaced_event("default", {
        "metadata": {"generateName": "subject."}, "involvedObject": involved, "reason": "Checked", "message": "core event",
        "type": "Normal", "source": {"component": "tester"}, "count": 2,
        "firstTimestamp": "2025-01-01T00:00:00Z", "lastTimestamp": "2025-01-01T00:01:00Z",
        # the Python client cannot read events.k8s.io Events without eventTime (from any server)
        "eventTime": "2025-01-01T00:01:00.000000Z",
    })
    events_api = client.EventsV1Api(control_plane.api_client())
    new = events_api.create_namespaced_event("default", {
        "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "subject.new"},
        "regarding": involved, "reason": "Noted", "note": "new event", "type": "Warning", "action": "Check",
        "eventTime": "2025-01-01T00:02:00.000000Z", "reportingController": "example.com/tester", "reportingInstance": "t-1",
    })
    assert new.regarding.name == "subject" and new.note == "new event"
    seen_new = {e.metadata.name: e for e in events_api.list_namespaced_event("default").items}
    assert seen_new[core.metadata.name].note == "core event"
    assert seen_new[core.metadata.name].deprecated_count == 2
    assert seen_new[core.metadata.name].regarding.uid == target.metadata.uid
    seen_core = {e.metadata.name: e for e in v1.list_namespaced_event("default").items}
    assert seen_core["subject.new"].message == "new event"
    assert seen_core["subject.new"].reporting_component == "example.com/tester"
    assert seen_core["subject.new"].involved_object.kind == "ConfigMap"
    listing = control_plane.http("GET", "/apis/events.k8s.io/v1/namespaces/default/events").json()
    assert listing["apiVersion"] == "events.k8s.io/v1" and listing["kind"] == "EventList"
    mismatched = {"metadata": {"name": "x"}, "involvedObject": {**involved, "namespace": "kube-system"}, "reason": "R", "message": "m"}
    assert control_plane.http("POST", "/api/v1/namespaces/default/events", json=mismatched).status_code == 422


def write_log(cluster, pod_name: str, container: str, text: str, previous: bool = False):
    folder = cluster.state_dir / "logs" / "default" / pod_name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{container}{'.previous' if previous else ''}.log"
    path.write_text(text)
    return path


def test_pod_logs(control_plane):
    v1 = control_plane.core_v1()
    v1.create_namespaced_pod("default", pod("single"))
    with pytest.raises(ApiException) as info:
        v1.read_namespaced_pod_log("single", "default")
    assert info.value.status == 400 and "is waiting to start" in info.value.body
    write_log(control_plane, "single", "main", "one\ntwo\nthree\n")
    assert v1.read_namespaced_pod_log("single", "default") == "one\ntwo\nthree\n"
    assert v1.read_namespaced_pod_log("single", "default", tail_lines=2) == "two\nthree\n"
    assert v1.read_namespaced_pod_log("single", "default", container="main", limit_bytes=3) == "one"
    with pytest.raises(ApiException) as info:
        v1.read_namespaced_pod_log("single", "default", previous=True)
    assert info.value.status == 400 and "previous terminated container" in info.value.body
    write_log(control_plane, "single", "main", "earlier run\n", previous=True)
    assert v1.read_namespaced_pod_log("single", "default", previous=True) == "earlier run\n"
    with pytest.raises(ApiException) as info:
        v1.read_namespaced_pod_log("missing", "default")
    assert info.value.status == 404

    v1.create_namespaced_pod("default", pod("multi", containers=[{"name": "a", "image": "x"}, {"name": "b", "image": "x"}]))
    with pytest.raises(ApiException) as info:
        v1.read_namespaced_pod_log("multi", "default")
    assert info.value.status == 400 and "a container name must be specified for pod multi, choose one of: [a b]" in info.value.body
    with pytest.raises(ApiException) as info:
        v1.read_namespaced_pod_log("multi", "default", container="c")
    assert info.value.status == 400


def test_pod_log_follow_ends_with_the_pod(control_plane):
    v1 = control_plane.core_v1()
    v1.create_namespaced_pod("default", pod("follow"))
    path = write_log(control_plane, "follow", "main", "start\n")
    received: list[bytes] = []
    done = threading.Event()

    def read():
        response = control_plane.http("GET", "/api/v1/namespaces/default/pods/follow/log?follow=true", stream=True)
        for chunk in response.iter_content(chunk_size=None):
            received.append(chunk)
        done.set()

    threading.Thread(target=read, daemon=True).start()
    wait_for(lambda: b"".join(received) == b"start\n", what="the first line")
    with open(path, "a") as fh:
        fh.write("more\n")
    wait_for(lambda: b"".join(received) == b"start\nmore\n", what="the appended line")
    assert not done.is_set()
    with open(path, "a") as fh:
        fh.write("last\n")
    v1.patch_namespaced_pod_status("follow", "default", {"status": {"phase": "Succeeded"}})
    assert done.wait(5)
    assert b"".join(received) == b"start\nmore\nlast\n"

    v1.create_namespaced_pod("default", pod("vanishing"))
    write_log(control_plane, "vanishing", "main", "x\n")
    started = time.monotonic()
    ended = threading.Event()
    threading.Thread(target=lambda: (control_plane.http("GET", "/api/v1/namespaces/default/pods/vanishing/log?follow=true"), ended.set()), daemon=True).start()
    time.sleep(0.2)
    v1.delete_namespaced_pod("vanishing", "default")
    assert ended.wait(5) and time.monotonic() - started < 5


def test_request_counts_by_verb_and_resource(control_plane):
    before = control_plane.server.request_counts()
    v1 = control_plane.core_v1()
    v1.create_namespaced_config_map("default", configmap("counted"))
    v1.read_namespaced_config_map("counted", "default")
    v1.list_namespaced_config_map("default")
    v1.patch_namespaced_config_map("counted", "default", {"data": {"k": "v"}})
    v1.delete_namespaced_config_map("counted", "default")
    assert control_plane.http("GET", "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1").ok
    assert control_plane.http("GET", "/apis").ok and control_plane.http("GET", "/api/v1").ok
    assert control_plane.http("GET", "/api/v1/namespaces/default/pods/nothing/status").status_code == 404
    after = control_plane.server.request_counts()
    added = {k: n - before.get(k, 0) for k, n in after.items() if n != before.get(k, 0)}
    assert added == {
        "create configmaps": 1, "get configmaps": 1, "list configmaps": 1, "patch configmaps": 1,
        "delete configmaps": 1, "watch configmaps": 1, "get discovery": 2, "get pods/status": 1,
    }
