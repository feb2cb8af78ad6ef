"""Label and field selectors of the local control plane, as the API server parses and matches them."""

import pytest

from pinery.local.apiserver.errors import ApiError
from pinery.local.apiserver.selectors import field_value, parse_field_selector, parse_label_selector

LABELS = {"app": "web", "tier": "front", "release": "3"}


@pytest.mark.parametrize(
    "selector, matches",
    [
        ("", True),
        ("app=web", True),
        ("app==web", True),
        ("app!=web", False),
        ("app=db", False),
        ("missing!=x", True),
        ("app in (web, db)", True),
        ("app in (db)", False),
        ("app notin (db,cache)", True),
        ("app notin (web)", False),
        ("missing notin (web)", True),
        ("app", True),
        ("missing", False),
        ("!missing", True),
        ("!app", False),
        ("app=web,tier=front", True),
        ("app=web,tier=back", False),
        ("app=web, tier in (front,back), !gone", True),
        ("release>2", True),
        ("release<3", False),
        ("missing>1", False),
        ("app=", False),
    ],
)
def test_label_selector_matching(selector, matches):
    assert parse_label_selector(selector).matches(LABELS) is matches


def test_empty_value_matches_empty_label():
    assert parse_label_selector("flag=").matches({"flag": ""})


@pytest.mark.parametrize("selector", ["app in web", "app in (web", "=web", "app=web=x", "Bad Key=1", "app=-bad-"])
def test_bad_label_selectors_are_400(selector):
    with pytest.raises(ApiError) as info:
        parse_label_selector(selector)
    assert info.value.code == 400
    assert "unable to parse requirement" in info.value.message


def test_label_selector_equalities_feed_the_index():
    sel = parse_label_selector("app=web,tier in (a,b),x!=y,!z")
    assert sel.equalities() == [("app", ("web",)), ("tier", ("a", "b"))]


POD = {
    "metadata": {"name": "p", "namespace": "ns"},
    "spec": {"nodeName": "local", "restartPolicy": "Never", "hostNetwork": False},
    "status": {"phase": "Running"},
}


@pytest.mark.parametrize(
    "selector, matches",
    [
        ("metadata.name=p", True),
        ("metadata.name==p", True),
        ("metadata.name!=p", False),
        ("metadata.namespace=ns", True),
        ("status.phase=Running", True),
        ("status.phase!=Succeeded,status.phase!=Failed", True),
        ("spec.nodeName=local", True),
        ("spec.nodeName=", False),
        ("spec.schedulerName=", True),  # absent fields read as ""
        ("spec.hostNetwork=false", True),
        ("spec=x", False),
    ],
)
def test_field_selector_matching(selector, matches):
    assert parse_field_selector(selector).matches(POD, "Pod") is matches


def test_field_selector_escapes_and_pins():
    sel = parse_field_selector(r"metadata.name=a\,b,metadata.namespace=ns")
    assert sel.name() == "a,b"
    assert sel.namespace() == "ns"
    assert sel.matches({"metadata": {"name": "a,b", "namespace": "ns"}})


def test_event_source_alias():
    event = {"involvedObject": {"kind": "Pod"}, "source": {"component": "kubelet"}}
    assert field_value(event, "source", "Event") == "kubelet"
    assert field_value(event, "involvedObject.kind", "Event") == "Pod"


@pytest.mark.parametrize("selector", ["metadata.name", "=x"])
def test_bad_field_selectors_are_400(selector):
    with pytest.raises(ApiError) as info:
        parse_field_selector(selector)
    assert info.value.code == 400
