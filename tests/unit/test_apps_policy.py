"""Table tests of apps_policy.py from upstream's own cases, kubernetes
`pkg/controller/deployment/util/deployment_util_test.go` (TestResolveFenceposts,
TestNewRSNewReplicas, TestMaxUnavailable, TestDeploymentComplete, TestDeploymentProgressing,
TestEqualIgnoreHash), and the validation rules of `pkg/apis/apps/validation`."""

import pytest

from pinery.local.apiserver import apps_policy as p


@pytest.mark.parametrize("surge, unavailable, desired, want", [
    ("0%", "0%", 0, (0, 1)), ("39%", "39%", 10, (4, 3)), ("oops", "39%", 10, ValueError),
    ("55%", "urg", 10, ValueError), (None, "39%", 10, (0, 3)), ("39%", None, 10, (4, 0)), (None, None, 10, (0, 1)),
])
def test_resolve_fenceposts(surge, unavailable, desired, want):
    if want is ValueError:
        with pytest.raises(ValueError):
            p.resolve_fenceposts(surge, unavailable, desired)
    else:
        assert p.resolve_fenceposts(surge, unavailable, desired) == want


def _deployment(replicas, surge=1, unavailable=1, strategy="RollingUpdate"):
    d = {"spec": {"replicas": replicas, "strategy": {"type": strategy}}, "metadata": {"generation": 1}}
    if strategy == "RollingUpdate":
        d["spec"]["strategy"]["rollingUpdate"] = {"maxSurge": surge, "maxUnavailable": unavailable}
    return d


@pytest.mark.parametrize("strategy, dep, new, surge, want", [
    ("RollingUpdate", 1, 5, 1, 5),  # can not scale up - to newRSReplicas
    ("RollingUpdate", 6, 2, 10, 6),  # scale up - to depReplicas
    ("Recreate", 3, 1, 1, 3),  # recreate - to depReplicas
])
def test_new_rs_new_replicas(strategy, dep, new, surge, want):
    d = _deployment(dep, surge=surge, unavailable=1, strategy=strategy)
    new_rs, rs5 = {"spec": {"replicas": new}}, {"spec": {"replicas": 5}}
    assert p.new_rs_new_replicas(d, [rs5], new_rs) == want


@pytest.mark.parametrize("replicas, unavailable, strategy, want", [
    (10, 5, "RollingUpdate", 5), (10, 10, "RollingUpdate", 10), (5, 10, "RollingUpdate", 5), (0, 10, "RollingUpdate", 0),
    (1, 1, "Recreate", 0), (10, "50%", "RollingUpdate", 5), (10, "100%", "RollingUpdate", 10), (5, "100%", "RollingUpdate", 5),
])
def test_max_unavailable(replicas, unavailable, strategy, want):
    assert p.max_unavailable(_deployment(replicas, surge=1, unavailable=unavailable, strategy=strategy)) == want


@pytest.mark.parametrize("desired, current, updated, available, want", [
    (5, 5, 5, 4, False), (5, 5, 5, 3, False), (5, 5, 5, 5, True), (5, 5, 4, 5, False), (1, 2, 1, 1, False), (1, 1, 1, 0, False),
])
def test_deployment_complete(desired, current, updated, available, want):
    status = {"replicas": current, "updatedReplicas": updated, "availableReplicas": available, "observedGeneration": 1}
    assert p.deployment_complete(_deployment(desired), status) is want


def _status(current, updated, ready, available):
    return {"replicas": current, "updatedReplicas": updated, "readyReplicas": ready, "availableReplicas": available}


@pytest.mark.parametrize("old, new, want", [
    ((10, 4, 4, 4), (10, 6, 4, 4), True), ((10, 4, 4, 4), (10, 4, 4, 4), False), ((10, 4, 6, 6), (8, 4, 6, 6), True),
    ((10, 7, 3, 3), (10, 6, 3, 3), False), ((10, 4, 7, 7), (8, 8, 5, 5), True), ((10, 10, 9, 8), (10, 10, 10, 8), True),
    ((10, 10, 10, 9), (10, 10, 10, 10), True),
])
def test_deployment_progressing(old, new, want):
    assert p.deployment_progressing({"status": _status(*old)}, _status(*new)) is want


def _template(name, annotations, labels):
    return {"metadata": {"name": name, "annotations": annotations, "labels": labels}, "spec": {"nodeName": "foo-node"}}


H = p.HASH_LABEL


@pytest.mark.parametrize("a, b, want", [
    (_template("foo", {}, {H: "value-1", "something": "else"}), _template("foo", {}, {H: "value-1", "something": "else"}), True),
    (_template("foo", {}, {H: "value-1", "something": "else"}), _template("foo", {}, {H: "value-2", "something": "else"}), True),
    (_template("foo", {}, {"something": "else"}), _template("foo", {}, {H: "value-2", "something": "else"}), True),
    (_template("foo", {}, {"something": "else"}), _template("foo", {}, {H: "value-2"}), False),
    (_template("foo", {}, {H: "value-1"}), _template("foo", {}, {H: "value-1", "something": "else"}), False),
    (_template("foo", {"former": "value"}, {H: "v"}), _template("foo", {"latter": "value"}, {H: "v"}), False),
    (_template("foo-1", {}, {H: "value-1"}), _template("foo-2", {}, {H: "value-2"}), False),
])
def test_equal_ignore_hash(a, b, want):
    assert p.equal_ignore_hash(a, b) is want and p.equal_ignore_hash(b, a) is want


def test_hash_has_upstreams_form_and_changes_with_the_collision_count():
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    first = p.template_hash(template)
    assert first == p.template_hash(template) and set(first) <= set("bcdfghjklmnpqrstvwxz2456789") and len(first) <= 10
    assert p.template_hash(template, 1) != first
    assert p.safe_encode("0123456789") == "456789bcdf"  # digit d -> alphanums[(48 + d) % 27]


def _valid():
    return {"spec": {"replicas": 1, "selector": {"matchLabels": {"app": "a"}},
                     "template": {"metadata": {"labels": {"app": "a"}}, "spec": {"restartPolicy": "Always"}},
                     "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}}}


def test_defaults():
    d = {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}
    p.default_deployment(d)
    assert d["spec"]["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    assert (d["spec"]["replicas"], d["spec"]["revisionHistoryLimit"], d["spec"]["progressDeadlineSeconds"]) == (1, 10, 600)
    assert d["spec"]["template"]["spec"]["restartPolicy"] == "Always"


@pytest.mark.parametrize("change, path", [
    (lambda s: s.pop("selector"), "spec.selector"),
    (lambda s: s["template"]["metadata"].update(labels={"app": "b"}), "spec.template.metadata.labels"),
    (lambda s: s["template"]["spec"].update(restartPolicy="Never"), "spec.template.spec.restartPolicy"),
    (lambda s: s["strategy"]["rollingUpdate"].update(maxSurge=0, maxUnavailable=0), "spec.strategy.rollingUpdate.maxUnavailable"),
    (lambda s: s["strategy"]["rollingUpdate"].update(maxSurge="101%"), "spec.strategy.rollingUpdate.maxSurge"),
    (lambda s: s.update(replicas=-1), "spec.replicas"),
])
def test_deployment_validation(change, path):
    d = _valid()
    assert p.deployment_problems(d) == []
    change(d["spec"])
    assert [e.path for e in p.deployment_problems(d)] == [path]


def test_selector_is_immutable():
    old, new = _valid(), _valid()
    new["spec"]["selector"] = {"matchLabels": {"app": "b"}}
    assert [e.path for e in p.selector_update_problems(new, old)] == ["spec.selector"]
