"""Dedicated read capacity in the emulator, no server: the pure transition logic (transitions.py),
how a record is rendered in 2025-10 and 2026-07 (render.py, v2026_07.py), configure's step
(control._configure_read_capacity) and persistence mid-change (state.Store).

Sources: the 2025-10 spec, /work/shared/pinecone-api/2025-10/db_control_2025-10.oas.yaml,
`ReadCapacityStatus` (state Ready / Scaling after a replicas or shards change through configure /
Migrating to a new `node_type` / Error; `current_replicas`, `current_shards`),
`ScalingConfigManual` (replicas minimum 0, "Setting replicas to 0 disables the index"; shards
minimum 1), `IndexModel.status.state` (includes `Disabled`), `ReadCapacityDedicatedConfig`
(node_type b1/t1); for 2026-07 the 10.x SDK's pinecone/models/indexes/read_capacity.py
(`current_*` always present, null for on-demand). A change of mode going through `Migrating` is
the emulator's choice: the spec does not say.
"""

from __future__ import annotations

import json

import pytest

from pinery.local.pinecone import render, transitions, v2026_07
from pinery.local.pinecone.control import _configure_read_capacity
from pinery.local.pinecone.state import IndexRecord, Store


def dedicated(replicas: int = 1, shards: int = 1, node_type: str = "b1") -> dict:
    return {"mode": "Dedicated", "dedicated": {"node_type": node_type, "scaling": "Manual",
                                               "manual": {"replicas": replicas, "shards": shards}}}


ON_DEMAND = {"mode": "OnDemand"}


def record(read_capacity: dict | None = None, state: str = "Ready", kind: str = "serverless") -> IndexRecord:
    inner = {"cloud": "aws", "region": "us-east-1"} if kind == "serverless" else {"environment": "aws-us-east-1-b921"}
    inner["read_capacity"] = read_capacity or ON_DEMAND
    return IndexRecord(id="i1", project="p", name="ix", metric="cosine", vector_type="dense", dimension=4,
                       state=state, spec={kind: inner})


# -- pure transition logic ---------------------------------------------------------------------
@pytest.mark.parametrize("current, desired, state", [
    (dedicated(1, 1), dedicated(2, 1), "Scaling"),         # replicas changed through configure
    (dedicated(2, 1), dedicated(1, 1), "Scaling"),
    (dedicated(1, 1), dedicated(1, 2), "Scaling"),         # shards
    (dedicated(1, 1), dedicated(0, 1), "Scaling"),         # to 0 replicas: the index is disabled once in effect
    (dedicated(0, 1), dedicated(1, 1), "Scaling"),
    (dedicated(1, 1, "b1"), dedicated(1, 1, "t1"), "Migrating"),  # a new node_type
    (dedicated(1, 1, "b1"), dedicated(3, 2, "t1"), "Migrating"),  # node_type wins over counts
    (ON_DEMAND, dedicated(1, 1), "Migrating"),             # mode changes: the emulator's choice
    (dedicated(1, 1), ON_DEMAND, "Migrating"),
    (dedicated(2, 3, "t1"), dedicated(2, 3, "t1"), None),
    (ON_DEMAND, ON_DEMAND, None),
    (None, dedicated(), None),                             # pod indexes have no read capacity
])
def test_read_capacity_change(current, desired, state):
    assert transitions.read_capacity_change(current, desired) == state


@pytest.mark.parametrize("delay, just_before", [
    (5.0, ("Scaling", [["Ready", 105.0]])),
    (0.0, ("Ready", [])),  # zero delay: Ready as soon as anything looks
])
def test_a_read_capacity_change_settles_after_the_delay(delay, just_before):
    state, schedule = transitions.read_capacity_configure(dedicated(1), dedicated(2), 100.0, delay)
    assert (state, schedule) == ("Scaling", [["Ready", 100.0 + delay]])
    assert transitions.settle(state, schedule, max(100.0, 100.0 + delay - 0.1)) == just_before
    assert transitions.settle(state, schedule, 100.0 + delay) == ("Ready", [])
    assert transitions.read_capacity_configure(dedicated(1), dedicated(1), 100.0, delay) == ("Ready", [])


@pytest.mark.parametrize("read_capacity, counts, disabled", [
    (ON_DEMAND, None, False),
    (None, None, False),
    (dedicated(1, 2), (1, 2), False),
    (dedicated(0, 1), (0, 1), True),
    ({"mode": "Dedicated", "dedicated": {"node_type": "b1", "scaling": "Manual"}}, (1, 1), False),
])
def test_counts_and_disabled(read_capacity, counts, disabled):
    assert transitions.manual_counts(read_capacity) == counts
    assert transitions.disabled(read_capacity) is disabled


@pytest.mark.parametrize("state, in_effect, shown, ready", [
    ("Ready", dedicated(0), "Disabled", False),   # "Setting replicas to 0 disables the index"
    ("Ready", dedicated(1), "Ready", True),
    ("Ready", ON_DEMAND, "Ready", True),
    ("Initializing", dedicated(0), "Initializing", False),  # a create with 0 replicas: Disabled after initialization
    ("InitializationFailed", dedicated(0), "InitializationFailed", False),
    ("Terminating", dedicated(0), "Terminating", False),
    (None, dedicated(0), None, False),
])
def test_index_state(state, in_effect, shown, ready):
    assert transitions.index_state(state, in_effect) == shown
    assert transitions.ready(shown) is ready


# -- configure's step on a record, and how both versions render it ------------------------------
@pytest.mark.parametrize("before, after, state, current_2025_10", [
    (dedicated(1, 1), dedicated(2, 3), "Scaling", {"current_replicas": 1, "current_shards": 1}),
    (dedicated(1, 1, "b1"), dedicated(1, 1, "t1"), "Migrating", {"current_replicas": 1, "current_shards": 1}),
    (ON_DEMAND, dedicated(2, 1), "Migrating", {}),  # on-demand has no fixed counts yet
    (dedicated(2, 1), ON_DEMAND, "Migrating", {"current_replicas": 2, "current_shards": 1}),
])
def test_configure_shows_the_request_and_the_capacity_still_in_effect(before, after, state, current_2025_10):
    rec = record(before)
    _configure_read_capacity(rec, after, delay=60.0)
    assert rec.read_capacity == after and rec.read_capacity_applied == before
    legacy = render.index(rec, "http://h")
    shown = legacy["spec"]["serverless"]["read_capacity"]
    assert shown["mode"] == after["mode"] and shown.get("dedicated") == after.get("dedicated")
    assert shown["status"] == {"state": state, **current_2025_10}
    assert legacy["status"] == {"ready": True, "state": "Ready"}  # the index serves while its read tier changes
    new = v2026_07.index(rec, "http://h")["read_capacity"]
    assert new["status"] == {"state": state, "current_replicas": current_2025_10.get("current_replicas"),
                             "current_shards": current_2025_10.get("current_shards")}


def test_configure_again_mid_change():
    rec = record(dedicated(1, 1))
    _configure_read_capacity(rec, dedicated(2, 1), delay=60.0)
    schedule = [list(step) for step in rec.read_capacity_schedule]
    _configure_read_capacity(rec, dedicated(2, 1), delay=60.0)  # the same again: the change goes on as it was
    assert rec.read_capacity_schedule == schedule and rec.read_capacity_applied == dedicated(1, 1)
    _configure_read_capacity(rec, dedicated(2, 1, "t1"), delay=60.0)  # something else: from what is in effect
    assert rec.read_capacity_state == "Migrating" and rec.read_capacity_applied == dedicated(1, 1)
    _configure_read_capacity(rec, dedicated(1, 1), delay=60.0)  # back to what is in effect: nothing to do
    assert (rec.read_capacity_state, rec.read_capacity_schedule, rec.read_capacity_applied) == ("Ready", [], None)


def test_zero_replicas_disable_the_index_once_in_effect_and_more_bring_it_back():
    store = Store(None)
    rec = record(dedicated(1))
    store.indexes[(rec.project, rec.name)] = rec
    _configure_read_capacity(rec, dedicated(0), delay=10.0)
    t0 = rec.read_capacity_schedule[0][1] - 10.0
    assert render.index_status(rec) == {"ready": True, "state": "Ready"}  # Scaling, 1 replica still in effect
    assert store.refresh(t0 + 10.0)
    assert rec.read_capacity_state == "Ready" and rec.read_capacity_applied is None
    assert render.index_status(rec) == {"ready": False, "state": "Disabled"}
    assert render.index(rec, "http://h")["spec"]["serverless"]["read_capacity"]["status"] == {
        "state": "Ready", "current_replicas": 0, "current_shards": 1}
    _configure_read_capacity(rec, dedicated(1), delay=10.0)
    t1 = rec.read_capacity_schedule[0][1] - 10.0
    assert render.index_status(rec) == {"ready": False, "state": "Disabled"}  # Scaling, 0 replicas still in effect
    assert v2026_07.index(rec, "http://h")["read_capacity"]["status"] == {
        "state": "Scaling", "current_replicas": 0, "current_shards": 1}
    assert not store.refresh(t1 + 9.9)
    assert store.refresh(t1 + 10.0)
    assert render.index_status(rec) == {"ready": True, "state": "Ready"}


def test_a_restart_mid_change_goes_on_from_the_deadline(tmp_path):
    store = Store(tmp_path)
    rec = record(dedicated(1, 1, "b1"), kind="byoc")
    store.indexes[(rec.project, rec.name)] = rec
    _configure_read_capacity(rec, dedicated(0, 2, "t1"), delay=30.0)
    deadline = rec.read_capacity_schedule[0][1]
    store.save()

    again = Store(tmp_path).indexes[("p", "ix")]
    assert (again.read_capacity_state, again.read_capacity_applied) == ("Migrating", dedicated(1, 1, "b1"))
    assert render.index(again, "http://h")["spec"]["byoc"]["read_capacity"]["status"] == {
        "state": "Migrating", "current_replicas": 1, "current_shards": 1}

    stopped_past_the_deadline = Store(tmp_path)
    assert stopped_past_the_deadline.refresh(deadline + 1)
    done = stopped_past_the_deadline.indexes[("p", "ix")]
    assert (done.read_capacity_state, done.read_capacity_applied, done.status_state) == ("Ready", None, "Disabled")


def test_state_written_before_read_capacity_transitions_reads_as_settled(tmp_path):
    store = Store(tmp_path)
    rec = record(dedicated(2, 1))
    store.indexes[(rec.project, rec.name)] = rec
    store.save()
    doc = json.loads((tmp_path / "state.json").read_text())
    for key in ("read_capacity_state", "read_capacity_schedule", "read_capacity_applied"):
        del doc["indexes"][0][key]
    (tmp_path / "state.json").write_text(json.dumps(doc))
    old = Store(tmp_path).indexes[("p", "ix")]
    assert render.index_read_capacity(old) == {"mode": "Dedicated", "dedicated": dedicated(2, 1)["dedicated"],
                                               "status": {"state": "Ready", "current_replicas": 2,
                                                          "current_shards": 1}}
