"""VectorIndex objects deleted the moment they are made, or while their create is in doubt.

Kopf starts an object's daemon in the same cycle in which it asks for its finalizer, so the
daemon's first pass can read the object before the finalizer is on it. An object deleted in
that gap vanishes at once, without the finalizer ever looking at Pinecone: had the pass created
an index, nothing would delete it. Passes therefore touch Pinecone only once the finalizer is
on the object.

A create whose answer never came may still be carried out after the object is deleted; the
pass marks it in status.createSentAt first, and the finalizer waits for such an index.
"""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from pinery.api.base import FINALIZER
from pinery.handlers.vectorindex import Memory, reconcile
from tests.support.vectorindex import (
    FAST,
    NS,
    SDK_TIMEOUT,
    World,
    operator_services,
    running_operator,
    settle,
    world,
)
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

PINECONE_CALLS = ("describe_index", "list_indexes", "create_index", "configure_index")


def test_a_pass_touches_pinecone_only_once_the_finalizer_is_on_the_object(tmp_path):
    with world(tmp_path, with_operator=False) as w:
        w.create("early")
        count = w.counting(*PINECONE_CALLS)
        services = operator_services(w.plane, w.emulator.url)
        try:  # the daemon's first pass, as Kopf may start it: before its finalizer is on the object
            memory = Memory()
            upcoming = asyncio.run(reconcile(NS, "early", services, memory))
        finally:
            services.kube.api_client.close()
        assert upcoming is not None and upcoming.delay > 0 and memory.unguarded
        assert set(count().values()) == {0}, count()
        assert w.status("early") == {}

        # the running operator puts its finalizer on the object, and then makes the index
        with running_operator(w.plane, w.emulator.url):
            obj = w.wait_ready("early")
        assert FINALIZER in obj["metadata"]["finalizers"]
        assert count()["create_index"] == 1 and obj["status"]["indexName"] == "early"


def test_objects_deleted_as_soon_as_they_are_made_leave_no_index_behind(vi_world: World):
    w = vi_world
    names = [f"blink-{i}" for i in range(24)]
    for i, name in enumerate(names):
        w.create(name)
        settle(0.004 * (i % 8))  # from before the daemon's first pass to after the finalizer
        w.delete(name)
    for name in names:
        w.wait_gone(name)
    settle(3)  # a pass that slipped through would have created its index by now
    pc = w.pinecone()
    try:
        left = [i.name for i in pc.list_indexes() if i.name.startswith("blink-")]
    finally:
        pc.close()
    assert left == [], f"indexes left behind by deleted objects: {left}"


def test_an_index_whose_create_got_no_answer_is_deleted_when_it_lands(tmp_path):
    """Both attempts of a create (the SDK retries once) time out while Pinecone is slow; the
    object is deleted before the index appears. The finalizer waits for it and deletes it."""
    landing = dataclasses.replace(FAST, retry_first=30.0, retry_max=30.0, create_landing=8.0)  # no second pass
    delay = 4 * SDK_TIMEOUT
    with world(tmp_path, with_operator=False) as w:
        w.admin.add_fault("create_index", kind="delay", seconds=delay, times=2)
        with running_operator(w.plane, w.emulator.url, timing=landing):
            w.create("doubtful")
            w.wait_condition("doubtful", "Synced", "False", "PineconeUnavailable", timeout=15)
            assert w.status("doubtful")["createSentAt"]
            assert w.index("doubtful") is None  # not there yet: the first request still waits
            w.delete("doubtful")
            w.wait_event("doubtful", "AwaitingCreate", timeout=5)
            w.wait_gone("doubtful", timeout=20)
            assert ("Normal", "Deleting") in [(t, r) for t, r, _ in w.events("doubtful")]
        # Both delayed requests have been carried out by now; neither left an index behind.
        wait_for(lambda: w.requests("create_index") == 2, timeout=10, what="both create requests")
        settle(delay + 1)
        assert w.index("doubtful") is None
