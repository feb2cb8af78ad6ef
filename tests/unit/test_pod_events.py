"""Pod events: client-go's eventLogger folding (tools/record/events_cache.go) and the kubelet's
messages and field paths."""

from datetime import datetime, timezone

import pytest

from pinery.local.podrunner import events

POD = {"metadata": {"name": "p", "namespace": "ns", "uid": "u-1", "resourceVersion": "7"},
       "spec": {"initContainers": [{"name": "setup"}], "containers": [{"name": "main"}]}}
AT = datetime(2026, 1, 2, 3, 4, 5, 600000, tzinfo=timezone.utc)


def event(reason="BackOff", message="m", type_="Warning", component="kubelet", host="node", path="spec.containers{main}", at=AT):
    return events.new_event(events.pod_ref(POD, path), type_, reason, message, component, host, at)


def test_a_new_event_is_named_and_stamped_as_the_recorder_does():
    e = event()
    assert e["metadata"] == {"name": f"p.{int(AT.timestamp() * 1e9):x}", "namespace": "ns"}
    assert e["count"] == 1 and e["firstTimestamp"] == e["lastTimestamp"] == "2026-01-02T03:04:05Z"
    assert e["source"] == {"component": "kubelet", "host": "node"} and e["reportingComponent"] == "kubelet"
    assert e["involvedObject"] == {"kind": "Pod", "namespace": "ns", "name": "p", "uid": "u-1", "apiVersion": "v1",
                                   "resourceVersion": "7", "fieldPath": "spec.containers{main}"}


@pytest.mark.parametrize("second, repeats", [
    ({}, True),                                   # identical: counted on the first event
    ({"message": "other"}, False),                # eventLogger's key includes the message
    ({"reason": "Failed"}, False),
    ({"type_": "Normal"}, False),
    ({"path": "spec.initContainers{setup}"}, False),
    ({"component": "default-scheduler", "host": ""}, False),
    ({"at": datetime(2026, 1, 2, 3, 9, tzinfo=timezone.utc)}, True),  # the time is not part of the key
])
def test_folding_counts_only_identical_events(second, repeats):
    folding = events.Folding()
    first, repeated = folding.fold(event())
    assert not repeated
    again, repeated = folding.fold(event(**second))
    assert repeated is repeats
    if repeats:
        assert again["metadata"]["name"] == first["metadata"]["name"] and again["count"] == 2
        assert folding.fold(event(**second))[0]["count"] == 3
    else:
        assert again["count"] == 1


def test_container_field_paths_follow_generate_container_ref():
    assert events.container_field_path(POD, "setup") == "spec.initContainers{setup}"
    assert events.container_field_path(POD, "main") == "spec.containers{main}"


@pytest.mark.parametrize("message, expected", [
    (events.scheduled(POD, "pinery-local"), "Successfully assigned ns/p to pinery-local"),
    (events.pulled("busybox:1.36"), 'Container image "busybox:1.36" already present on machine'),
    (events.created("main"), "Created container: main"),
    (events.started("main"), "Started container main"),
    (events.killing("main"), "Stopping container main"),
    (events.failed('secret "s" not found'), 'Error: secret "s" not found'),
    (events.back_off("main", POD), "Back-off restarting failed container main in pod p_ns(u-1)"),
    (events.failed_mount("cfg", 'configmap "c" not found'), 'MountVolume.SetUp failed for volume "cfg" : configmap "c" not found'),
])
def test_messages_are_upstreams(message, expected):
    assert message == expected
