"""Dedicated read capacity through the emulator as Pinecone reports it: asynchronously, with the
Disabled state; driven by the real `pinecone` 10.x SDK (API 2026-07) in-process, and by plain
HTTP for API 2025-10's `spec.serverless|byoc.read_capacity`.

Sources: the 2025-10 spec (/work/shared/pinecone-api/2025-10/db_control_2025-10.oas.yaml):
`ReadCapacityStatus` (`Scaling` after replicas/shards changed through configure, `Migrating` to a
new `node_type`, `current_replicas`/`current_shards`), `ScalingConfigManual` ("Setting replicas
to 0 disables the index"), `IndexModel.status.state` (`Disabled`); the 10.x SDK's
pinecone/models/indexes/read_capacity.py (`current_*` always present, null for on-demand).

No test waits on the wall clock: a change is seen in between right after the call under a delay
of an hour, and finished by moving the emulator's clock on its own loop
(`emulator.call(emulator.store.refresh, later)`), or made under a zero delay.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import pytest
from pinecone import Pinecone
from pinecone.errors import PineconeError

from pinery.local.pinecone import EmulatorAdmin
from tests.support.emulator import TEST_API_KEY

HOUR = 3600.0
SCHEMA = {"fields": {"_values": {"type": "dense_vector", "dimension": 8, "metric": "cosine"}}}
MANAGED = {"deployment_type": "managed", "cloud": "aws", "region": "us-east-1"}


def dedicated(replicas: int = 1, shards: int = 1, node_type: str = "b1") -> dict:
    return {"mode": "Dedicated", "dedicated": {"node_type": node_type, "scaling": "Manual",
                                               "manual": {"replicas": replicas, "shards": shards}}}


def status(model) -> tuple[str, int | None, int | None]:
    rc = model.read_capacity.status
    return rc.state, rc.current_replicas, rc.current_shards


def finish(emulator) -> None:
    """Every timed change done, as if an hour and more had passed (on the emulator's loop)."""
    emulator.call(emulator.store.refresh, time.time() + 2 * HOUR)


def http(emulator, method: str, path: str, body=None, version: str = "2025-10"):
    req = urllib.request.Request(emulator.url + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Api-Key": TEST_API_KEY, "Content-Type": "application/json",
                                          "X-Pinecone-Api-Version": version})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


@pytest.fixture
def slow(make_pinecone_emulator):
    """An emulator whose read-capacity changes take an hour (indexes are ready at once)."""
    return make_pinecone_emulator(read_capacity_delay=HOUR)


@pytest.fixture
def pc(slow):
    client = Pinecone(api_key=TEST_API_KEY, host=slow.url)
    yield client
    client.close()


def create(pc: Pinecone, name: str, read_capacity: dict):
    return pc.indexes.create(name=name, schema=SCHEMA, deployment=MANAGED, read_capacity=read_capacity, timeout=-1)


def test_replicas_and_shards_scale_then_ready(pc, slow):
    create(pc, "rc", dedicated(1, 1))
    assert pc.indexes.describe("rc").status.ready
    answered = pc.indexes.configure("rc", read_capacity=dedicated(2, 3))
    for model in (answered, pc.indexes.describe("rc")):
        assert status(model) == ("Scaling", 1, 1)  # the old counts until the change is in effect
        assert (model.read_capacity.dedicated.manual.replicas, model.read_capacity.dedicated.manual.shards) == (2, 3)
        assert model.status.ready and model.status.state == "Ready"  # the index keeps serving meanwhile
    pc.index("rc").upsert(vectors=[("a", [0.1] * 8)])
    _, legacy = http(slow, "GET", "/indexes/rc")
    assert legacy["spec"]["serverless"]["read_capacity"]["status"] == {
        "state": "Scaling", "current_replicas": 1, "current_shards": 1}
    finish(slow)
    assert status(pc.indexes.describe("rc")) == ("Ready", 2, 3)
    _, listed = http(slow, "GET", "/indexes")
    assert listed["indexes"][0]["spec"]["serverless"]["read_capacity"]["status"] == {
        "state": "Ready", "current_replicas": 2, "current_shards": 3}


@pytest.mark.parametrize("before, after, in_between", [
    (dedicated(1, 1, "b1"), dedicated(1, 1, "t1"), ("Migrating", 1, 1)),   # a new node_type
    ({"mode": "OnDemand"}, dedicated(2, 1), ("Migrating", None, None)),     # mode changes: the emulator's choice
    (dedicated(2, 1), {"mode": "OnDemand"}, ("Migrating", 2, 1)),
])
def test_node_type_and_mode_changes_migrate(pc, slow, before, after, in_between):
    create(pc, "rc", before)
    assert status(pc.indexes.configure("rc", read_capacity=after)) == in_between
    assert status(pc.indexes.describe("rc")) == in_between
    # the mode asked for, at once (the SDK tells the modes apart by their model: a tagged union)
    assert type(pc.indexes.describe("rc").read_capacity).__name__ == f"ReadCapacity{after['mode']}Response"
    finish(slow)
    counts = after.get("dedicated", {}).get("manual", {})
    assert status(pc.indexes.describe("rc")) == ("Ready", counts.get("replicas"), counts.get("shards"))


def test_zero_replicas_disable_the_index_and_replicas_bring_it_back(pc, slow):
    create(pc, "rc", dedicated(1, 1))
    index = pc.index("rc")
    index.upsert(vectors=[("a", [0.1] * 8)])
    assert status(pc.indexes.configure("rc", read_capacity=dedicated(0, 1))) == ("Scaling", 1, 1)
    assert pc.indexes.describe("rc").status.state == "Ready"  # one replica still in effect
    assert index.query(vector=[0.1] * 8, top_k=1).matches[0].id == "a"
    finish(slow)
    model = pc.indexes.describe("rc")
    assert (model.status.state, model.status.ready, status(model)) == ("Disabled", False, ("Ready", 0, 1))
    with pytest.raises(PineconeError) as err:  # as for any index that is not ready: 503 UNAVAILABLE
        index.query(vector=[0.1] * 8, top_k=1)
    assert "not ready (state Disabled)" in str(err.value)
    code, _ = http(slow, "POST", "/index/default/rc/vectors/upsert", {"vectors": [{"id": "b", "values": [0.2] * 8}]})
    assert code == 503

    assert status(pc.indexes.configure("rc", read_capacity=dedicated(1, 1))) == ("Scaling", 0, 1)
    model = pc.indexes.describe("rc")
    assert (model.status.state, model.status.ready) == ("Disabled", False)  # still 0 replicas in effect
    finish(slow)
    model = pc.indexes.describe("rc")
    assert (model.status.state, model.status.ready, status(model)) == ("Ready", True, ("Ready", 1, 1))
    assert index.query(vector=[0.1] * 8, top_k=1).matches[0].id == "a"


def test_a_create_with_zero_replicas_is_disabled_after_initialization(make_pinecone_emulator):
    emulator = make_pinecone_emulator(ready_delay=HOUR)
    with Pinecone(api_key=TEST_API_KEY, host=emulator.url) as pc:
        created = create(pc, "rc", dedicated(0, 2))
        assert (created.status.state, created.status.ready, status(created)) == ("Initializing", False, ("Ready", 0, 2))
        finish(emulator)
        model = pc.indexes.describe("rc")
        assert (model.status.state, model.status.ready) == ("Disabled", False)
        assert [(m.name, m.status.state) for m in pc.indexes.list()] == [("rc", "Disabled")]
        _, legacy = http(emulator, "GET", "/indexes/rc")
        assert legacy["status"] == {"ready": False, "state": "Disabled"}


def test_zero_delay_is_immediate_and_the_delay_is_a_setting(make_pinecone_emulator):
    emulator = make_pinecone_emulator()  # every delay zero
    assert EmulatorAdmin(emulator.url).settings()["read_capacity_delay"] == 0.0
    with Pinecone(api_key=TEST_API_KEY, host=emulator.url) as pc:
        create(pc, "rc", dedicated(1, 1))
        assert status(pc.indexes.configure("rc", read_capacity=dedicated(2, 1, "t1"))) == ("Ready", 2, 1)
        assert status(pc.indexes.configure("rc", read_capacity=dedicated(0, 1, "t1"))) == ("Ready", 0, 1)
        assert pc.indexes.describe("rc").status.state == "Disabled"
        EmulatorAdmin(emulator.url).configure(read_capacity_delay=HOUR)
        assert status(pc.indexes.configure("rc", read_capacity=dedicated(3, 1, "t1"))) == ("Scaling", 0, 1)


def test_2025_10_configure_of_serverless_and_byoc_read_capacity(slow):
    code, _ = http(slow, "POST", "/indexes", {"name": "sls", "dimension": 8, "spec": {"serverless": {
        "cloud": "aws", "region": "us-east-1", "read_capacity": dedicated(1, 1)}}})
    assert code == 201
    code, _ = http(slow, "POST", "/indexes", {"name": "byoc", "dimension": 8, "spec": {"byoc": {
        "environment": "aws-us-east-1-b921", "read_capacity": dedicated(2, 1)}}})
    assert code == 201
    code, sls = http(slow, "PATCH", "/indexes/sls", {"spec": {"serverless": {"read_capacity": dedicated(1, 2)}}})
    assert code == 202 and sls["spec"]["serverless"]["read_capacity"] == {
        **dedicated(1, 2), "status": {"state": "Scaling", "current_replicas": 1, "current_shards": 1}}
    code, byoc = http(slow, "PATCH", "/indexes/byoc", {"spec": {"byoc": {"read_capacity": {"mode": "OnDemand"}}}})
    assert code == 202 and byoc["spec"]["byoc"]["read_capacity"] == {
        "mode": "OnDemand", "status": {"state": "Migrating", "current_replicas": 2, "current_shards": 1}}
    _, new = http(slow, "GET", "/indexes/byoc", version="2026-07")
    assert new["read_capacity"] == {"mode": "OnDemand", "status": {
        "state": "Migrating", "current_replicas": 2, "current_shards": 1}}
    finish(slow)
    _, new = http(slow, "GET", "/indexes/byoc", version="2026-07")
    assert new["read_capacity"] == {"mode": "OnDemand", "status": {
        "state": "Ready", "current_replicas": None, "current_shards": None}}
    _, sls = http(slow, "GET", "/indexes/sls")
    assert sls["spec"]["serverless"]["read_capacity"]["status"] == {
        "state": "Ready", "current_replicas": 1, "current_shards": 2}


def test_a_restart_mid_change_keeps_the_change_going(make_pinecone_emulator, tmp_path):
    state_dir = tmp_path / "rc-state"
    first = make_pinecone_emulator(state_dir=state_dir, read_capacity_delay=HOUR)
    with Pinecone(api_key=TEST_API_KEY, host=first.url) as pc:
        create(pc, "rc", dedicated(1, 1))
        assert status(pc.indexes.configure("rc", read_capacity=dedicated(0, 1))) == ("Scaling", 1, 1)
    first.stop_thread()

    second = make_pinecone_emulator(state_dir=state_dir, read_capacity_delay=HOUR)
    with Pinecone(api_key=TEST_API_KEY, host=second.url) as pc:
        model = pc.indexes.describe("rc")
        assert (model.status.state, status(model)) == ("Ready", ("Scaling", 1, 1))  # the deadline is still ahead
        finish(second)  # as if the emulator had been down past the deadline
        model = pc.indexes.describe("rc")
        assert (model.status.state, status(model)) == ("Disabled", ("Ready", 0, 1))
