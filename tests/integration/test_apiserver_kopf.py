"""Kopf operators (under kopf.testing.KopfRunner) against the local control plane."""

from pathlib import Path

import kopf.testing
import pytest

from tests.integration.helpers import WIDGET_GROUP, WIDGET_PLURAL, WIDGET_VERSION, install_widgets, widget
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

OPERATOR = Path(__file__).parent / "operators" / "widgets.py"
FINALIZER = "test.pinery.dev/cleanup"


def events_about(plane, name: str) -> list[str]:
    selector = f"involvedObject.name={name},involvedObject.kind=Widget"
    return [e.reason for e in plane.core_v1().list_namespaced_event("default", field_selector=selector).items]


def test_operator_create_update_delete(control_plane):
    plane = control_plane
    install_widgets(plane)
    co = plane.custom_objects()
    v1 = plane.core_v1()
    args = (WIDGET_GROUP, WIDGET_VERSION, "default", WIDGET_PLURAL)

    def current() -> dict:
        return co.get_namespaced_custom_object(*args, "w1")

    with plane.kopf_login(), kopf.testing.KopfRunner(["run", "--standalone", "-A", "--verbose", str(OPERATOR)], timeout=60) as runner:
        created = co.create_namespaced_custom_object(*args, widget("w1", size=1))
        ready = wait_for(lambda: (w := current()).get("status", {}).get("phase") == "Ready" and w, timeout=15, what="create handled")
        # handler results and the status patch land in status (the status subresource)
        assert ready["status"]["create_fn"] == {"child": "w1-child"}
        assert ready["status"]["size"] == 1
        # the finalizer was added with a JSON patch guarded by a resourceVersion test
        assert ready["metadata"]["finalizers"] == [FINALIZER]
        assert "kopf.zalando.org/last-handled-configuration" in ready["metadata"]["annotations"]
        assert ready["metadata"]["generation"] == 1

        child = v1.read_namespaced_config_map("w1-child", "default")
        (owner,) = child.metadata.owner_references
        assert (owner.uid, owner.kind, owner.controller, owner.block_owner_deletion) == (created["metadata"]["uid"], "Widget", True, True)
        wait_for(lambda: "ChildCreated" in events_about(plane, "w1"), what="the ChildCreated event")

        co.patch_namespaced_custom_object(*args, "w1", {"spec": {"size": 3}})
        wait_for(lambda: current().get("status", {}).get("size") == 3, timeout=15, what="update handled")
        assert v1.read_namespaced_config_map("w1-child", "default").data == {"size": "3"}
        assert current()["metadata"]["generation"] == 2

        co.delete_namespaced_custom_object(*args, "w1")
        wait_for(lambda: not any(i["metadata"]["name"] == "w1" for i in co.list_namespaced_custom_object(*args)["items"]),
                 timeout=15, what="the finalizer released and the widget gone")
        wait_for(lambda: not [c for c in v1.list_namespaced_config_map("default").items if c.metadata.name == "w1-child"],
                 what="the child collected")
        wait_for(lambda: "Deleting" in events_about(plane, "w1"), what="the Deleting event")

    assert runner.exception is None
    assert runner.exit_code == 0
    # --standalone: no peering objects were made or needed
    assert plane.http("GET", "/apis/kopf.dev/v1/clusterkopfpeerings").json()["items"] == []
    assert plane.http("GET", "/apis/kopf.dev/v1/kopfpeerings").json()["items"] == []


def test_operator_resumes_existing_objects_and_sees_deletions_of_others(control_plane):
    """Objects created before the operator starts are listed, then watched from the list's
    resourceVersion; deleting them goes through the delete handler."""
    plane = control_plane
    install_widgets(plane)
    co = plane.custom_objects()
    args = (WIDGET_GROUP, WIDGET_VERSION, "default", WIDGET_PLURAL)
    for name in ("early-1", "early-2"):
        co.create_namespaced_custom_object(*args, widget(name, size=2))
    with plane.kopf_login(), kopf.testing.KopfRunner(["run", "--standalone", "--namespace=default", str(OPERATOR)], timeout=60) as runner:
        for name in ("early-1", "early-2"):
            wait_for(lambda n=name: co.get_namespaced_custom_object(*args, n).get("status", {}).get("phase") == "Ready",
                     timeout=15, what=f"{name} handled")
        co.delete_namespaced_custom_object(*args, "early-1")
        wait_for(lambda: [i["metadata"]["name"] for i in co.list_namespaced_custom_object(*args)["items"]] == ["early-2"],
                 timeout=15, what="early-1 deleted")
    assert runner.exception is None and runner.exit_code == 0
