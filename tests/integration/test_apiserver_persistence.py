"""State survives a restart of the local control plane."""

import json
from pathlib import Path

from tests.integration.helpers import configmap, install_widgets, widget, widgets_path
from tests.support.control_plane import running_control_plane


def test_restart_keeps_objects_and_continues_resource_versions(tmp_path: Path):
    state = tmp_path / "state"
    with running_control_plane(state) as cluster:
        v1 = cluster.core_v1()
        cm = v1.create_namespaced_config_map("default", configmap("kept", a="1"))
        install_widgets(cluster)
        made = cluster.http("POST", widgets_path(), json=widget("w", size=2)).json()
        held = configmap("held")
        held["metadata"]["finalizers"] = ["example.com/hold"]
        v1.create_namespaced_config_map("default", held)
        v1.delete_namespaced_config_map("held", "default")
        last = int(cluster.http("GET", "/api/v1/configmaps").json()["metadata"]["resourceVersion"])
        ca = cluster.server.ca_cert.read_bytes()
        kubeconfig = cluster.kubeconfig.read_text()

    snapshot = state / "apiserver" / "objects.json"
    assert json.loads(snapshot.read_text())["resourceVersion"] == str(last)
    assert not list(snapshot.parent.glob("*.tmp"))

    with running_control_plane(state) as cluster:
        assert cluster.server.ca_cert.read_bytes() == ca  # kubeconfigs written before still trust it
        v1 = cluster.core_v1()
        again = v1.read_namespaced_config_map("kept", "default")
        assert (again.metadata.uid, again.metadata.resource_version, again.data) == (cm.metadata.uid, cm.metadata.resource_version, {"a": "1"})
        widget_again = cluster.http("GET", widgets_path(name="w")).json()
        assert widget_again["metadata"]["uid"] == made["metadata"]["uid"] and widget_again["spec"] == {"size": 2, "color": "red"}
        assert v1.read_namespaced_config_map("held", "default").metadata.deletion_timestamp is not None
        assert int(cluster.http("GET", "/api/v1/configmaps").json()["metadata"]["resourceVersion"]) >= last
        newer = v1.create_namespaced_config_map("default", configmap("new"))
        assert int(newer.metadata.resource_version) > last
        # watches from before the restart are told to relist
        old = cluster.http("GET", f"/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={last - 1}")
        assert json.loads(old.text.splitlines()[0])["object"]["code"] == 410
        fresh = cluster.http("GET", f"/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={last}&timeoutSeconds=1")
        assert [json.loads(line)["object"]["metadata"]["name"] for line in fresh.text.splitlines()] == ["new"]
        v1.patch_namespaced_config_map("held", "default", {"metadata": {"finalizers": None}})
        assert cluster.http("GET", "/api/v1/namespaces/default/configmaps/held").status_code == 404
        assert kubeconfig.split("server:")[0] == cluster.kubeconfig.read_text().split("server:")[0]
