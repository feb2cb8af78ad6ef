"""ClusterRole aggregation (pinery.local.apiserver.rbac_aggregation), from upstream's own test:
kubernetes/kubernetes pkg/controller/clusterroleaggregation/clusterroleaggregation_controller_test.go
`TestSyncClusterRole` (the role synced is "combined"; the expected value is the apply
configuration the controller sends, or none), then cases of our own for what that test leaves out."""

from __future__ import annotations

import pytest

from pinery.local.apiserver import rbac_aggregation as agg


def hammer_rules():
    return [{"verbs": ["hammer"], "resources": ["nails"]}, {"verbs": ["hammer"], "resources": ["wedges"]}]


def chisel_rules():
    return [{"verbs": ["chisel"], "resources": ["mortises"]}]


def saw_rules():
    return [{"verbs": ["saw"], "resources": ["boards"]}]


def role(name, labels, rules):
    return {"metadata": {"name": name, "labels": labels}, "rules": rules}


def combined_role(selectors, *rules):
    return {
        "metadata": {"name": "combined"},
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": s} for s in selectors]},
        "rules": [r for group in rules for r in group],
    }


def combined_apply(*rules):
    return agg.apply_config("combined", [r for group in rules for r in group])


BAR, NOT_BAR = {"foo": "bar"}, {"foo": "not-bar"}

# TestSyncClusterRole: (name, starting cluster roles, expected apply configuration or None).
SYNC_CLUSTER_ROLE = [
    ("remove dead rules",
     [role("hammer", BAR, hammer_rules()), combined_role([BAR], saw_rules())],
     combined_apply(hammer_rules())),
    ("strip rules",
     [role("hammer", NOT_BAR, hammer_rules()), combined_role([BAR], hammer_rules())],
     combined_apply()),
    ("select properly and put in order",
     [role("hammer", BAR, hammer_rules()), role("chisel", BAR, chisel_rules()), role("saw", NOT_BAR, saw_rules()),
      combined_role([BAR])],
     combined_apply(chisel_rules(), hammer_rules())),
    ("select properly with multiple selectors",
     [role("hammer", BAR, hammer_rules()), role("chisel", BAR, chisel_rules()), role("saw", NOT_BAR, saw_rules()),
      combined_role([BAR, NOT_BAR])],
     combined_apply(chisel_rules(), hammer_rules(), saw_rules())),
    ("select properly remove duplicates",
     [role("hammer", BAR, hammer_rules()), role("chisel", BAR, chisel_rules()), role("saw", BAR, saw_rules()),
      role("other-saw", NOT_BAR, saw_rules()), combined_role([BAR, NOT_BAR])],
     combined_apply(chisel_rules(), hammer_rules(), saw_rules())),
    ("no diff skip",
     [role("hammer", BAR, hammer_rules()), combined_role([BAR], hammer_rules())],
     None),
]


@pytest.mark.parametrize("starting, expected", [c[1:] for c in SYNC_CLUSTER_ROLE], ids=[c[0] for c in SYNC_CLUSTER_ROLE])
def test_sync_cluster_role(starting, expected):
    combined = next(r for r in starting if r["metadata"]["name"] == "combined")
    rules = agg.sync(combined, starting)
    if expected is None:
        assert rules is None
    else:
        assert rules is not None
        assert agg.apply_config("combined", rules) == expected


def selector_role(*selectors):
    return {"metadata": {"name": "combined"}, "aggregationRule": {"clusterRoleSelectors": list(selectors)}}


# Cases of our own: (name, selectors, roles present, the names of the roles aggregated, in order).
MATCHING = [
    ("matchExpressions In", [{"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar", "baz"]}]}],
     [role("a", {"foo": "baz"}, saw_rules()), role("b", {"foo": "qux"}, saw_rules()), role("c", BAR, saw_rules())], ["a", "c"]),
    ("matchExpressions NotIn also matches a role without the label",
     [{"matchExpressions": [{"key": "foo", "operator": "NotIn", "values": ["bar"]}]}],
     [role("a", BAR, []), role("b", {}, []), role("c", NOT_BAR, [])], ["b", "c"]),
    ("Exists and DoesNotExist", [{"matchExpressions": [{"key": "foo", "operator": "Exists"}, {"key": "x", "operator": "DoesNotExist"}]}],
     [role("a", {"foo": "1", "x": "1"}, []), role("b", {"foo": "2"}, []), role("c", {}, [])], ["b"]),
    ("matchLabels and matchExpressions are ANDed",
     [{"matchLabels": BAR, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["gold"]}]}],
     [role("a", {"foo": "bar", "tier": "gold"}, []), role("b", BAR, [])], ["a"]),
    ("an empty selector matches every other role", [{}], [role("b", {}, []), role("a", BAR, [])], ["a", "b"]),
    ("no selectors match nothing", [], [role("a", BAR, [])], []),
    ("a role that two selectors match comes once per selector", [{"matchLabels": BAR}, {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}],
     [role("b", BAR, []), role("a", NOT_BAR, [])], ["b", "a", "b"]),
]


@pytest.mark.parametrize("selectors, roles, names", [c[1:] for c in MATCHING], ids=[c[0] for c in MATCHING])
def test_matching_roles(selectors, roles, names):
    combined = selector_role(*selectors)
    combined["metadata"]["labels"] = {"foo": "bar"}  # the aggregated role itself is never taken
    assert [r["metadata"]["name"] for r in agg.matching_roles(combined, roles + [combined])] == names


@pytest.mark.parametrize("selector, message", [
    ({"matchExpressions": [{"key": "foo", "operator": "Equals", "values": ["bar"]}]}, '"Equals" is not a valid label selector operator'),
    ({"matchExpressions": [{"key": "foo", "operator": "In", "values": []}]}, "values set can't be empty"),
    ({"matchExpressions": [{"key": "foo", "operator": "Exists", "values": ["bar"]}]}, "values set must be empty"),
])
def test_an_invalid_selector_stops_the_sync(selector, message):
    combined = selector_role(selector)
    with pytest.raises(agg.SelectorError, match=message):
        agg.aggregated_rules(combined, [role("a", BAR, saw_rules())])
    assert agg.sync(combined, [role("a", BAR, saw_rules())]) is None


def test_a_role_without_an_aggregation_rule_is_left_alone():
    plain = role("plain", {}, saw_rules())
    assert not agg.is_aggregated(plain)
    assert agg.sync(plain, [role("a", {}, hammer_rules())]) is None
    # An aggregationRule with no selectors still aggregates: to no rules.
    assert agg.sync({**selector_role(), "rules": saw_rules()}, []) == []


def test_rules_compare_as_semantic_equality_does():
    # Empty and missing lists are the same rule; the fields' order is not part of a rule.
    a = role("a", BAR, [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": []}])
    b = role("b", BAR, [{"resources": ["pods"], "apiGroups": [""], "verbs": ["get"], "nonResourceURLs": None}])
    combined = selector_role({"matchLabels": BAR})
    assert agg.aggregated_rules(combined, [a, b]) == [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]
    combined["rules"] = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"], "resourceNames": []}]
    assert agg.sync(combined, [a, b]) is None
    # Order of the values within a rule matters, as it does to DeepEqual.
    c = role("c", BAR, [{"verbs": ["list", "get"], "apiGroups": [""], "resources": ["pods"]}])
    assert len(agg.aggregated_rules(combined, [a, c])) == 2


def test_an_aggregation_rule_needs_a_selector():
    from pinery.local.apiserver.rbac_validation import validate

    problems = validate("ClusterRole", {"metadata": {"name": "x"}, "aggregationRule": {}})
    assert [(p.path, p.message) for p in problems] == [
        ("aggregationRule.clusterRoleSelectors", "Required value: at least one clusterRoleSelector required if aggregationRule is non-nil")]
    assert validate("ClusterRole", selector_role({"matchLabels": BAR})) == []


def test_the_default_roles_aggregate_admin_over_edit_over_view():
    from pinery.local.apiserver import rbac_defaults

    roles = {r["metadata"]["name"]: r for r in rbac_defaults.cluster_roles()}
    # The bootstrap order, as the controller converges: view, then edit (view's rules and
    # system:aggregate-to-edit's), then admin (edit's and system:aggregate-to-admin's).
    for name in ("view", "edit", "admin"):
        roles[name] = {**roles[name], "rules": agg.aggregated_rules(roles[name], roles.values())}
    view, edit, admin = (roles[n]["rules"] for n in ("view", "edit", "admin"))
    assert view == roles["system:aggregate-to-view"]["rules"]
    assert edit == roles["system:aggregate-to-edit"]["rules"] + view  # by name: "system:..." before "view"
    assert all(r in admin for r in edit) and all(r in admin for r in roles["system:aggregate-to-admin"]["rules"])
    assert {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["rolebindings", "roles"],
            "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]} in admin
    assert not any("rbac.authorization.k8s.io" in r.get("apiGroups", []) for r in edit)
    assert all(set(r["verbs"]) <= {"get", "list", "watch"} for r in view)
