"""The local control plane's snapshot and change log."""

import asyncio
import json

from pinery.local.apiserver.persistence import Persistence, load, snapshot_path
from pinery.local.apiserver.store import Store

CMS = ("", "configmaps")


def cm(store, name, value):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default", "uid": name, "resourceVersion": str(store.next_rv())},
            "data": {"v": value}}


def test_changes_are_logged_then_compacted_and_replayed(tmp_path):
    path = snapshot_path(tmp_path)

    async def run():
        store = Store()
        persistence = Persistence(path, store, delay=0.001, min_log_bytes=2000)
        first = cm(store, "a", "1")
        store.commit("ADDED", CMS, first)
        for i in range(40):
            store.commit("MODIFIED", CMS, cm(store, "b", str(i)))
            await asyncio.sleep(0.002)
        store.commit("DELETED", CMS, cm(store, "a", "1"))
        await asyncio.sleep(0.05)
        assert path.exists(), "the log outgrew min_log_bytes, so a snapshot was taken"
        assert persistence.log.exists()
        return store.rv

    rv = asyncio.run(run())
    loaded_rv, objects = load(path)
    assert loaded_rv == rv
    assert [(o["metadata"]["name"], o["data"]["v"]) for _, o in objects] == [("b", "39")]


def test_a_torn_last_line_is_ignored_and_old_entries_skipped(tmp_path):
    path = snapshot_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"format": 1, "resourceVersion": "5", "resources": [
        {"group": "", "resource": "configmaps", "items": [{"metadata": {"name": "a", "namespace": "default"}, "data": {"v": "snap"}}]}]}))
    log = path.with_name("changes.jsonl")
    entries = [
        {"rv": 4, "key": ["", "configmaps"], "deleted": ["default", "a"]},  # older than the snapshot
        {"rv": 6, "key": ["", "configmaps"], "object": {"metadata": {"name": "b", "namespace": "default"}}},
    ]
    log.write_text("".join(json.dumps(e) + "\n" for e in entries) + '{"rv": 7, "key": ["", "confi')
    rv, objects = load(path)
    assert rv == 6
    assert sorted(o["metadata"]["name"] for _, o in objects) == ["a", "b"]


def test_flush_leaves_only_the_snapshot(tmp_path):
    path = snapshot_path(tmp_path)

    async def run():
        store = Store()
        persistence = Persistence(path, store)
        store.commit("ADDED", CMS, cm(store, "a", "1"))
        await persistence.flush()
        return persistence

    persistence = asyncio.run(run())
    assert path.exists() and not persistence.log.exists() and not persistence.next_log.exists()
    assert load(path)[0] == 1
