"""The store's indexes and the watch history window of the local control plane."""

import asyncio

from pinery.local.apiserver.discovery import sorted_versions
from pinery.local.apiserver.selectors import parse_field_selector, parse_label_selector
from pinery.local.apiserver.store import Store
from pinery.local.apiserver.watch_cache import Watcher

PODS = ("", "pods")


def pod(store, ns, name, labels=None, rv=None, owner=None, phase="Pending"):
    meta = {"name": name, "namespace": ns, "uid": f"uid-{ns}-{name}", "labels": labels or {}}
    if owner:
        meta["ownerReferences"] = [{"uid": owner, "kind": "X", "name": "o", "apiVersion": "v1"}]
    meta["resourceVersion"] = str(rv or store.next_rv())
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "status": {"phase": phase}}


def names(objs):
    return [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in objs]


def test_iterate_orders_filters_and_resumes():
    store = Store()
    for ns, name, labels in [("b", "z", {"app": "x"}), ("a", "y", {"app": "x"}), ("a", "b", {"app": "y"}), ("b", "a", {})]:
        store.commit("ADDED", PODS, pod(store, ns, name, labels))
    assert names(store.iterate(PODS)) == [("a", "b"), ("a", "y"), ("b", "a"), ("b", "z")]
    assert names(store.iterate(PODS, "b")) == [("b", "a"), ("b", "z")]
    assert names(store.iterate(PODS, labels=parse_label_selector("app=x"))) == [("a", "y"), ("b", "z")]
    assert names(store.iterate(PODS, labels=parse_label_selector("app in (x,y),app!=y"))) == [("a", "y"), ("b", "z")]
    assert names(store.iterate(PODS, fields=parse_field_selector("metadata.name=a"))) == [("b", "a")]
    assert names(store.iterate(PODS, after=("a", "y"))) == [("b", "a"), ("b", "z")]


def test_label_index_follows_changes_and_deletes():
    store = Store()
    first = pod(store, "a", "p", {"app": "x"})
    store.commit("ADDED", PODS, first)
    relabelled = pod(store, "a", "p", {"app": "y"})
    store.commit("MODIFIED", PODS, relabelled, first)
    assert names(store.iterate(PODS, labels=parse_label_selector("app=x"))) == []
    assert names(store.iterate(PODS, labels=parse_label_selector("app=y"))) == [("a", "p")]
    store.commit("DELETED", PODS, pod(store, "a", "p", {"app": "y"}))
    assert names(store.iterate(PODS, labels=parse_label_selector("app=y"))) == []
    assert store.by_uid("uid-a-p") is None


def test_dependents_index():
    store = Store()
    store.commit("ADDED", PODS, pod(store, "a", "p1", owner="owner-1"))
    store.commit("ADDED", PODS, pod(store, "a", "p2", owner="owner-1"))
    store.commit("ADDED", PODS, pod(store, "a", "p3", owner="owner-2"))
    assert [w[2] for w, _ in store.dependents("owner-1")] == ["p1", "p2"]
    store.commit("DELETED", PODS, pod(store, "a", "p1", owner="owner-1"))
    assert [w[2] for w, _ in store.dependents("owner-1")] == ["p2"]


def test_history_window_expires_old_versions():
    store = Store(resource_version=100, history=3)
    for i in range(5):
        store.commit("ADDED", PODS, pod(store, "a", f"p{i}"))
    # versions 101..105 were written; the window holds 103..105
    assert store.hub.since(PODS, 99) is None
    assert store.hub.since(PODS, 101) is None
    assert [e.rv for e in store.hub.since(PODS, 102)] == [103, 104, 105]
    assert store.hub.since(PODS, 105) == []
    # another resource still resumes from anything since the start
    assert store.hub.since(("", "configmaps"), 100) == []
    assert store.hub.since(("", "configmaps"), 99) is None


def test_watcher_sees_selector_transitions_as_added_and_deleted():
    async def run():
        store = Store()
        watcher = Watcher(PODS, "a", parse_label_selector("app=x"), parse_field_selector("status.phase!=Failed"), "Pod")
        store.hub.add(watcher)
        v1 = pod(store, "a", "p", {"app": "y"})
        store.commit("ADDED", PODS, v1)
        v2 = pod(store, "a", "p", {"app": "x"})
        store.commit("MODIFIED", PODS, v2, v1)
        v3 = pod(store, "a", "p", {"app": "x"}, phase="Running")
        store.commit("MODIFIED", PODS, v3, v2)
        v4 = pod(store, "a", "p", {"app": "x"}, phase="Failed")
        store.commit("MODIFIED", PODS, v4, v3)
        store.commit("ADDED", PODS, pod(store, "b", "q", {"app": "x"}))
        seen = []
        while not watcher.queue.empty():
            kind, event = watcher.queue.get_nowait()
            seen.append((kind, event.obj["status"]["phase"]))
        return seen

    assert asyncio.run(run()) == [("ADDED", "Pending"), ("MODIFIED", "Running"), ("DELETED", "Failed")]


def test_version_priority():
    assert sorted_versions(["v1alpha1", "v2", "v1beta2", "v1", "v1beta1", "foo"]) == ["v2", "v1", "v1beta2", "v1beta1", "v1alpha1", "foo"]
