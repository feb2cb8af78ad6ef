"""The pod runner's choice of node (pinery.local.podrunner.scheduling), case by case as
component-helpers/scheduling/corev1/nodeaffinity and kube-scheduler's NodeAffinity plugin decide."""

from __future__ import annotations

import pytest

from pinery.local.podrunner.scheduling import choose_node, fits, score


def node(name: str, **labels: str) -> dict:
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}}}


NODES = [node("pinery-local", zone="a", gen="3"), node("pinery-local-2", zone="b", gen="5"), node("pinery-local-3", zone="b")]


def pod(node_selector: dict | None = None, required: list | None = None, preferred: list | None = None) -> dict:
    affinity: dict = {}
    if required is not None:
        affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": required}
    if preferred is not None:
        affinity["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
    spec: dict = {"nodeSelector": node_selector} if node_selector else {}
    if affinity:
        spec["affinity"] = {"nodeAffinity": affinity}
    return {"metadata": {"name": "p"}, "spec": spec}


def expr(key: str, op: str, *values: str) -> dict:
    return {"key": key, "operator": op, "values": list(values)} if values else {"key": key, "operator": op}


def name_not_in(name: str) -> dict:
    return {"key": "metadata.name", "operator": "NotIn", "values": [name]}


@pytest.mark.parametrize(
    "p, expected",
    [
        pytest.param(pod(), ["pinery-local", "pinery-local-2", "pinery-local-3"], id="no-constraints"),
        pytest.param(pod({"zone": "b"}), ["pinery-local-2", "pinery-local-3"], id="node-selector-exact"),
        pytest.param(pod({"zone": "b", "gen": "5"}), ["pinery-local-2"], id="node-selector-every-key"),
        pytest.param(pod(required=[{"matchFields": [name_not_in("pinery-local"), name_not_in("pinery-local-2")]}]), ["pinery-local-3"],
                     id="fields-anded"),
        pytest.param(pod(required=[{"matchExpressions": [expr("zone", "In", "a")]}, {"matchExpressions": [expr("gen", "Exists")]}]),
                     ["pinery-local", "pinery-local-2"], id="terms-ored"),
        pytest.param(pod(required=[{"matchExpressions": [expr("zone", "In", "b")], "matchFields": [name_not_in("pinery-local-2")]}]),
                     ["pinery-local-3"], id="expressions-and-fields-anded"),
        pytest.param(pod(required=[{"matchExpressions": [expr("gen", "NotIn", "3")]}]), ["pinery-local-2", "pinery-local-3"],
                     id="notin-matches-a-missing-label"),
        pytest.param(pod(required=[{"matchExpressions": [expr("gen", "DoesNotExist")]}]), ["pinery-local-3"], id="does-not-exist"),
        pytest.param(pod(required=[{"matchExpressions": [expr("gen", "Gt", "4")]}]), ["pinery-local-2"], id="gt-integers"),
        pytest.param(pod(required=[{"matchExpressions": [expr("gen", "Lt", "4")]}]), ["pinery-local"], id="lt-integers"),
        pytest.param(pod(required=[{}]), [], id="an-empty-term-matches-nothing"),
        pytest.param(pod(required=[]), [], id="no-terms-matches-nothing"),
        pytest.param(pod(required=[{"matchFields": [{"key": "spec.unknown", "operator": "In", "values": ["x"]}]}]), [],
                     id="only-metadata-name-is-a-field"),
    ],
)
def test_which_nodes_a_pod_fits(p, expected):
    assert [n["metadata"]["name"] for n in NODES if fits(p, n)] == expected


def test_preferred_terms_add_their_weights():
    p = pod(preferred=[{"weight": 100, "preference": {"matchFields": [name_not_in("pinery-local")]}},
                       {"weight": 10, "preference": {"matchExpressions": [expr("gen", "Exists")]}}])
    assert [score(p, n) for n in NODES] == [10, 110, 100]


def test_the_best_scored_node_wins_then_the_least_loaded_then_the_first_by_name():
    assert choose_node(pod(), NODES, {}) == "pinery-local"
    assert choose_node(pod(), NODES, {"pinery-local": 1}) == "pinery-local-2"
    assert choose_node(pod(), NODES, {"pinery-local": 1, "pinery-local-2": 1, "pinery-local-3": 1}) == "pinery-local"
    avoid = pod(preferred=[{"weight": 100, "preference": {"matchFields": [name_not_in("pinery-local")]}}])
    assert choose_node(avoid, NODES, {"pinery-local-2": 3}) == "pinery-local-3"
    assert choose_node(avoid, NODES, {"pinery-local-2": 3, "pinery-local-3": 3}) == "pinery-local-2"  # the weight beats the load
    assert choose_node(pod(required=[{}]), NODES, {}) is None
