"""Watches on the local control plane: resume, bookmarks, timeouts, 410 Gone, initial events and
selectors."""

import json
import socket
import threading
import time
from pathlib import Path

import pytest
from kubernetes import watch
from kubernetes.client.rest import ApiException

from tests.integration.helpers import configmap
from tests.support.control_plane import running_control_plane
from tests.support.waiting import wait_for


class Stream:
    """Collects the events of a watch request in a background thread."""

    def __init__(self, cluster, path: str) -> None:
        self.events: list[dict] = []
        self.done = threading.Event()
        self.response = cluster.http("GET", path, stream=True, timeout=30)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            for line in self.response.iter_lines():
                if line:
                    self.events.append(json.loads(line))
        except (AttributeError, OSError, ValueError):
            pass  # closed by close()
        finally:
            self.done.set()

    def types(self) -> list[tuple[str, str]]:
        return [(e["type"], e["object"].get("metadata", {}).get("name", "")) for e in self.events]

    def wait(self, count: int, timeout: float = 5.0) -> list[dict]:
        wait_for(lambda: len(self.events) >= count, timeout, what=f"{count} watch events (have {self.types()})")
        return self.events

    def close(self) -> None:
        """Hang up (closing the response would first drain the stream until the server ends it)."""
        connection = self.response.raw.connection
        if connection is not None and connection.sock is not None:
            connection.sock.shutdown(socket.SHUT_RDWR)
        self.done.wait(5)
        self.response.close()


def current_rv(cluster, path="/api/v1/namespaces/default/configmaps") -> int:
    return int(cluster.http("GET", path).json()["metadata"]["resourceVersion"])


def test_watch_resumes_from_a_resource_version(control_plane):
    v1 = control_plane.core_v1()
    v1.create_namespaced_config_map("default", configmap("before"))
    since = current_rv(control_plane)
    v1.create_namespaced_config_map("default", configmap("after"))
    v1.patch_namespaced_config_map("after", "default", {"data": {"x": "1"}})
    v1.delete_namespaced_config_map("before", "default")
    stream = Stream(control_plane, f"/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={since}&timeoutSeconds=1")
    stream.done.wait(5)
    assert stream.types() == [("ADDED", "after"), ("MODIFIED", "after"), ("DELETED", "before")]
    versions = [int(e["object"]["metadata"]["resourceVersion"]) for e in stream.events]
    assert versions == sorted(versions) and versions[0] > since
    assert all(e["object"]["kind"] == "ConfigMap" and e["object"]["apiVersion"] == "v1" for e in stream.events)


def test_watch_without_version_starts_with_the_current_state_then_follows(control_plane):
    v1 = control_plane.core_v1()
    v1.create_namespaced_config_map("default", configmap("old"))
    stream = Stream(control_plane, "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=5")
    stream.wait(1)
    v1.create_namespaced_config_map("default", configmap("new"))
    v1.create_namespaced_config_map("kube-system", configmap("other-namespace"))
    v1.delete_namespaced_config_map("new", "default")
    stream.wait(3)
    stream.close()
    assert stream.types()[:3] == [("ADDED", "old"), ("ADDED", "new"), ("DELETED", "new")]


def test_watch_through_the_client_library(control_plane):
    v1 = control_plane.core_v1()
    since = current_rv(control_plane)
    for i in range(3):
        v1.create_namespaced_config_map("default", configmap(f"w{i}"))
    seen = [(e["type"], e["object"].metadata.name)
            for e in watch.Watch().stream(v1.list_namespaced_config_map, "default", resource_version=str(since), timeout_seconds=1)]
    assert seen == [("ADDED", "w0"), ("ADDED", "w1"), ("ADDED", "w2")]


def test_timeout_seconds_ends_the_stream(control_plane):
    started = time.monotonic()
    response = control_plane.http("GET", "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0&timeoutSeconds=1")
    elapsed = time.monotonic() - started
    assert response.status_code == 200
    assert 0.9 <= elapsed < 4


def test_bookmarks(tmp_path: Path):
    with running_control_plane(tmp_path, bookmark_interval=0.2) as cluster:
        since = current_rv(cluster)
        stream = Stream(cluster, f"/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={since}&allowWatchBookmarks=true&timeoutSeconds=1")
        time.sleep(0.1)
        cluster.core_v1().create_namespaced_config_map("default", configmap("marked"))
        stream.done.wait(5)
        kinds = [e["type"] for e in stream.events]
        assert kinds[0] == "ADDED" and kinds.count("BOOKMARK") >= 2 and kinds[-1] == "BOOKMARK"
        last = stream.events[-1]["object"]
        assert last["kind"] == "ConfigMap" and int(last["metadata"]["resourceVersion"]) >= since + 1
        # without allowWatchBookmarks there are none
        quiet = Stream(cluster, f"/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={since}&timeoutSeconds=1")
        quiet.done.wait(5)
        assert [e["type"] for e in quiet.events] == ["ADDED"]


def test_expired_resource_version_is_410_gone(tmp_path: Path):
    with running_control_plane(tmp_path, history=5) as cluster:
        v1 = cluster.core_v1()
        since = current_rv(cluster)
        for i in range(10):
            v1.create_namespaced_config_map("default", configmap(f"e{i}"))
        response = cluster.http("GET", f"/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={since}")
        assert response.status_code == 200
        (event,) = [json.loads(line) for line in response.text.splitlines()]
        assert event["type"] == "ERROR"
        assert event["object"]["code"] == 410 and event["object"]["reason"] == "Expired"
        assert event["object"]["message"].startswith(f"too old resource version: {since}")
        with pytest.raises(ApiException) as info:
            list(watch.Watch().stream(v1.list_namespaced_config_map, "default", resource_version=str(since), timeout_seconds=1))
        assert info.value.status == 410
        # the last versions are still in the window
        recent = current_rv(cluster) - 2
        resumed = cluster.http("GET", f"/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={recent}&timeoutSeconds=1")
        assert [json.loads(line)["type"] for line in resumed.text.splitlines()] == ["ADDED", "ADDED"]


def test_send_initial_events(control_plane):
    v1 = control_plane.core_v1()
    for name in ("i1", "i2"):
        v1.create_namespaced_config_map("default", configmap(name))
    path = ("/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
            "&allowWatchBookmarks=true&timeoutSeconds=5")
    stream = Stream(control_plane, path)
    stream.wait(3)
    v1.create_namespaced_config_map("default", configmap("live"))
    stream.wait(4)
    stream.close()
    assert stream.types()[:2] == [("ADDED", "i1"), ("ADDED", "i2")]
    end = stream.events[2]
    assert end["type"] == "BOOKMARK"
    assert end["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert stream.types()[3] == ("ADDED", "live")
    for bad in ("&sendInitialEvents=true&allowWatchBookmarks=true", "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan",
                "&resourceVersionMatch=NotOlderThan"):
        response = control_plane.http("GET", "/api/v1/namespaces/default/configmaps?watch=true" + bad)
        assert response.status_code == 422, bad
    as_list = control_plane.http("GET", "/api/v1/namespaces/default/configmaps?sendInitialEvents=true")
    assert as_list.status_code == 422


def test_watch_selectors_turn_relabels_into_added_and_deleted(control_plane):
    v1 = control_plane.core_v1()
    since = current_rv(control_plane)
    v1.create_namespaced_config_map("default", configmap("sel", labels={"team": "a"}))
    v1.patch_namespaced_config_map("sel", "default", {"metadata": {"labels": {"team": "b"}}})
    v1.patch_namespaced_config_map("sel", "default", {"data": {"x": "1"}})
    v1.patch_namespaced_config_map("sel", "default", {"metadata": {"labels": {"team": "a"}}})
    v1.create_namespaced_config_map("default", configmap("unrelated", labels={"team": "c"}))
    by_label = Stream(control_plane, f"/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={since}&labelSelector=team%3Da&timeoutSeconds=1")
    by_field = Stream(control_plane, f"/api/v1/configmaps?watch=1&resourceVersion={since}&fieldSelector=metadata.name%3Dunrelated&timeoutSeconds=1")
    by_label.done.wait(5)
    by_field.done.wait(5)
    assert by_label.types() == [("ADDED", "sel"), ("DELETED", "sel"), ("ADDED", "sel")]
    assert by_field.types() == [("ADDED", "unrelated")]


def test_hung_up_watches_are_released(control_plane):
    streams = [Stream(control_plane, "/api/v1/namespaces/default/configmaps?watch=true") for _ in range(3)]
    hub = control_plane.server.store.hub
    wait_for(lambda: hub.watcher_count() == 3, what="three watchers")
    for stream in streams:
        stream.close()
    wait_for(lambda: hub.watcher_count() == 0, what="the watchers released")


def test_a_client_resuming_from_each_watch_s_last_version_misses_nothing(tmp_path: Path):
    """A kubelet or informer resumes each watch from the last resourceVersion it got, a
    BOOKMARK's included. So a bookmark may never carry a version past an event the watch has not
    sent yet: upstream's cacher dispatches bookmarks through the same ordered channel as the
    events (staging/src/k8s.io/apiserver/pkg/storage/cacher/cacher.go, dispatchEvents), and a
    watch that ends at its deadline first sends what it holds. Short watches end while a writer
    keeps creating objects; every object is seen once, in order."""
    with running_control_plane(tmp_path) as cluster:
        path = "/api/v1/namespaces/default/configmaps"
        since = current_rv(cluster, path)
        created: list[str] = []
        writing = threading.Event()

        def write() -> None:
            i = 0
            while not writing.is_set():
                name = f"w{i:05d}"
                if cluster.http("POST", path, json=configmap(name)).status_code == 201:
                    created.append(name)
                i += 1

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        seen: list[str] = []
        versions: list[int] = []
        rv = since
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline or not writing.is_set():
            if time.monotonic() >= deadline:
                writing.set()
                writer.join(10)
            params = {"watch": "true", "resourceVersion": str(rv), "timeoutSeconds": "1", "allowWatchBookmarks": "true"}
            with cluster.http("GET", path, params=params, stream=True, timeout=10) as response:
                for line in response.iter_lines():
                    if not line:
                        continue
                    event = json.loads(line)
                    rv = int(event["object"]["metadata"]["resourceVersion"])
                    versions.append(rv)
                    if event["type"] == "ADDED":
                        seen.append(event["object"]["metadata"]["name"])
            if writing.is_set():
                break
        assert len(created) > 50
        assert seen == created
        assert versions == sorted(versions)
