"""The emulator's pure parts: filters, exact search, timed transitions, faults and request validation."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pinery.local.pinecone import request_validation as validation
from pinery.local.pinecone import transitions, vectors
from pinery.local.pinecone.errors import ApiError
from pinery.local.pinecone.faults import FaultRule, Faults
from pinery.local.pinecone.filters import FilterError, compile_filter, validate_metadata
from pinery.local.pinecone.persist import read_index_data, write_index_data
from pinery.local.pinecone.vectors import IndexData, Namespace, Record

META = {"genre": "drama", "year": 2001, "tags": ["a", "b"], "live": True, "score": 1.5}


@pytest.mark.parametrize("flt, expected", [
    ({}, True),
    ({"genre": "drama"}, True),
    ({"genre": "comedy"}, False),
    ({"genre": {"$ne": "comedy"}}, True),
    ({"missing": {"$ne": "x"}}, True),
    ({"missing": {"$nin": ["x"]}}, True),
    ({"missing": {"$eq": "x"}}, False),
    ({"tags": "a"}, True),
    ({"tags": {"$ne": "a"}}, False),
    ({"tags": {"$in": ["z", "b"]}}, True),
    ({"tags": {"$nin": ["b"]}}, False),
    ({"year": {"$gt": 2000, "$lt": 2002}}, True),
    ({"year": {"$gte": 2002}}, False),
    ({"year": {"$lte": 2001}}, True),
    ({"genre": {"$gt": 1}}, False),  # strings never compare with numbers
    ({"live": True}, True),
    ({"live": 1}, False),  # booleans are not numbers
    ({"live": {"$in": [1, "True"]}}, False),
    ({"live": {"$in": [True]}}, True),
    ({"year": {"$in": [2001.0]}}, True),
    ({"year": {"$nin": [True, "2001"]}}, True),
    ({"year": 2001.0}, True),
    ({"score": {"$exists": True}}, True),
    ({"nothing": {"$exists": False}}, True),
    ({"$and": [{"genre": "drama"}, {"year": 2001}]}, True),
    ({"$and": [{"genre": "drama"}, {"year": 1999}]}, False),
    ({"$or": [{"genre": "x"}, {"$and": [{"year": 2001}, {"live": True}]}]}, True),
])
def test_filter_semantics(flt, expected):
    assert compile_filter(flt)(META) is expected


@pytest.mark.parametrize("flt, fragment", [
    ({"genre": {"$regex": "d"}}, "unknown operator '$regex'"),
    ({"$nor": []}, "unknown top-level operator '$nor'"),
    ({"$and": {}}, "$and expects a non-empty array"),
    ({"year": {"$gt": "1"}}, "$gt expects a number"),
    ({"year": {"$in": [[1]]}}, "$in expects an array"),
    ({"genre": {"$eq": None}}, "$eq expects a string"),
    ({"genre": None}, "$eq expects a string"),
    ({"genre": {}}, "empty condition"),
    ({"genre": {"$exists": 1}}, "$exists expects a boolean"),
    ([1], "filter must be an object"),
    ({"n": {"$nin": list(range(10_001))}}, "$nin accepts at most 10000 values, got 10001"),
])
def test_invalid_filters_name_the_problem(flt, fragment):
    with pytest.raises(FilterError) as err:
        compile_filter(flt)
    assert fragment in str(err.value)


@pytest.mark.parametrize("meta, ok", [
    ({"a": "x", "b": 1, "c": 1.5, "d": False, "e": ["x", "y"]}, True),
    ({"a": {"nested": 1}}, False),
    ({"a": [1, 2]}, False),
    ({"a": None}, False),
])
def test_metadata_values(meta, ok):
    if ok:
        assert validate_metadata(meta, "v") == meta
    else:
        with pytest.raises(FilterError):
            validate_metadata(meta, "v")


def _namespace(rows: np.ndarray) -> Namespace:
    ns = Namespace(rows.shape[1])
    ns.upsert(Record(f"v{i}", row.tolist(), None, {"i": i}) for i, row in enumerate(rows))
    return ns


@pytest.mark.parametrize("metric", ["cosine", "euclidean", "dotproduct"])
def test_exact_search_matches_numpy(metric, monkeypatch):
    monkeypatch.setattr(vectors, "EUCLIDEAN_CHUNK", 7)  # rows scored over several chunks
    rng = np.random.default_rng(1)
    rows = rng.normal(size=(50, 6)).astype(np.float32)
    q = rng.normal(size=6).astype(np.float32)
    ns = _namespace(rows)
    if metric == "cosine":
        expected = rows @ q / (np.linalg.norm(rows, axis=1) * np.linalg.norm(q))
        order = np.argsort(-expected)
    elif metric == "euclidean":
        expected = ((rows - q) ** 2).sum(axis=1)
        order = np.argsort(expected)
    else:
        expected = rows @ q
        order = np.argsort(-expected)
    got = ns.top(metric, q, None, 7)
    assert [row for row, _ in got] == order[:7].tolist()
    assert [s for _, s in got] == pytest.approx(expected[order[:7]].tolist(), rel=1e-5)
    if metric == "euclidean":  # a stored vector is at distance exactly 0 from itself
        assert ns.top(metric, rows[33], None, 1) == [(33, 0.0)]


@pytest.mark.parametrize("metric", ["cosine", "euclidean", "dotproduct"])
@pytest.mark.parametrize("flt", [{"i": {"$gte": 190}}, {"i": {"$in": [3, 77, 150]}}, {"odd": True}, {"i": -1}])
def test_a_filtered_search_is_the_exact_search_of_the_matching_rows(metric, flt):
    rng = np.random.default_rng(2)
    rows = rng.normal(size=(200, 5)).astype(np.float32)
    q = rng.normal(size=5).astype(np.float32)
    ns = Namespace(5)
    ns.upsert(Record(f"v{i}", row.tolist(), None, {"i": i, "odd": i % 2 == 1}) for i, row in enumerate(rows))
    predicate = compile_filter(flt)
    matching = [i for i in range(200) if predicate({"i": i, "odd": i % 2 == 1})]
    if metric == "cosine":
        expected = rows @ q / (np.linalg.norm(rows, axis=1) * np.linalg.norm(q))
    elif metric == "euclidean":
        expected = ((rows - q) ** 2).sum(axis=1)
    else:
        expected = rows @ q
    ranked = sorted(matching, key=lambda i: expected[i] if metric == "euclidean" else -expected[i])[:8]
    got = ns.top(metric, q, None, 8, predicate)
    assert [row for row, _ in got] == ranked
    assert [s for _, s in got] == pytest.approx([float(expected[i]) for i in ranked], rel=1e-5)


def test_delete_keeps_rows_contiguous_and_update_merges_metadata():
    ns = _namespace(np.eye(4, dtype=np.float32))
    assert ns.delete(["v0", "missing"]) == 1
    assert sorted(ns.ids) == ["v1", "v2", "v3"] and ns.rows == {rid: i for i, rid in enumerate(ns.ids)}
    assert ns.get("v3").values == [0, 0, 0, 1]
    assert ns.update("v3", None, None, {"extra": "x"})
    assert ns.get("v3").metadata == {"i": 3, "extra": "x"} and ns.get("v3").values == [0, 0, 0, 1]
    assert not ns.update("v0", [1, 1, 1, 1], None, None)
    assert ns.top("cosine", np.array([1, 0, 0, 0], np.float32), None, 2, compile_filter({"i": {"$gte": 2}}))[0][1] == 0


def test_a_clone_keeps_its_contents_while_the_original_changes():
    ns = _namespace(np.eye(3, dtype=np.float32))
    ns.update("v0", None, None, {"tag": "old"})
    snapshot = ns.clone()
    ns.update("v0", [0, 1, 0], None, {"tag": "new"})
    ns.update_metadata_where(compile_filter({}), {"all": True}, dry_run=False)
    ns.upsert([Record("v1", [1, 1, 1], None, {"replaced": 1})])
    ns.delete(["v2"])
    assert [snapshot.get(f"v{i}").metadata for i in range(3)] == [{"i": 0, "tag": "old"}, {"i": 1}, {"i": 2}]
    assert snapshot.get("v0").values == [1, 0, 0] and len(snapshot) == 3


def test_sparse_and_hybrid_scores():
    ns = Namespace(2)
    ns.upsert([Record("a", [1.0, 0.0], (np.array([1, 5]), np.array([0.5, 2.0], np.float32)), None),
               Record("b", [0.0, 1.0], None, None)])
    got = ns.top("dotproduct", np.array([1.0, 1.0], np.float32), (np.array([5]), np.array([1.0], np.float32)), 2)
    assert [(ns.ids[r], s) for r, s in got] == [("a", 3.0), ("b", 1.0)]


def test_sparse_scores_follow_every_write():
    rng = np.random.default_rng(4)

    def sparse():
        idx = np.unique(rng.integers(0, 50, 6)).astype(np.int64)
        return idx, rng.random(len(idx)).astype(np.float32)

    def reference(ns, query):
        weights = dict(zip(query[0].tolist(), query[1].tolist(), strict=True))
        return {ns.ids[row]: sum(weights.get(k, 0.0) * v for k, v in zip(s[0].tolist(), s[1].tolist(), strict=True))
                for row, s in enumerate(ns.sparse) if s is not None}

    def ranked(ns, query, predicate=None):
        return {ns.ids[row]: score for row, score in ns.top("dotproduct", None, query, len(ns), predicate)}

    ns = Namespace(None)
    ns.upsert(Record(f"v{i}", None, sparse(), None) for i in range(40))
    query = sparse()
    writes = [lambda: ns.update("v3", None, sparse(), None), lambda: ns.delete(["v0", "v7"]),
              lambda: ns.upsert([Record("v1", None, sparse(), None), Record("new", None, sparse(), None)])]
    for write in [lambda: None, *writes]:
        write()
        assert ranked(ns, query) == pytest.approx(reference(ns, query))
    assert len(ranked(ns, query)) == 39
    best_first = sorted(reference(ns, query).items(), key=lambda item: -item[1])
    assert list(ranked(ns, query, compile_filter({}))) == [rid for rid, _ in best_first]


def test_index_data_round_trips_through_npz(tmp_path):
    data = IndexData(3)
    data.namespace("", create=True).upsert([Record("a", [1, 2, 3], None, {"k": ["x"]})])
    data.namespace("ns", create=True).upsert([Record("b", [4, 5, 6], (np.array([7]), np.array([0.5], np.float32)), None)])
    data.namespace("empty", create=True)
    write_index_data(tmp_path / "d.npz", data)
    back = read_index_data(tmp_path / "d.npz")
    assert set(back.namespaces) == {"", "ns", "empty"}
    assert back.namespace("").get("a").metadata == {"k": ["x"]}
    b = back.namespace("ns").get("b")
    assert b.values == [4, 5, 6] and b.sparse[0].tolist() == [7] and b.sparse[1].tolist() == [0.5]
    assert back.namespace("").get("a").sparse is None


def test_sparse_only_data_round_trips_and_old_files_still_read(tmp_path):
    data = IndexData(None)
    rows = [Record("s0", None, (np.array([3, 9]), np.array([0.25, 1.5], np.float32)), None),
            Record("s1", None, (np.array([], dtype=np.int64), np.array([], np.float32)), {"m": 1}),
            Record("s2", None, (np.array([2**32 - 1]), np.array([-2.0], np.float32)), None)]
    data.namespace("", create=True).upsert(rows)
    write_index_data(tmp_path / "d.npz", data)
    back = read_index_data(tmp_path / "d.npz").namespace("")
    for rec in rows:
        got = back.get(rec.id)
        assert got.sparse[0].tolist() == rec.sparse[0].tolist() and got.sparse[1].tolist() == rec.sparse[1].tolist()
        assert got.sparse[0].dtype == np.int64 and got.metadata == rec.metadata
    # The format before sparse values moved out of the JSON header.
    header = {"dimension": None, "namespaces": [{"name": "", "ids": ["old"], "has_dense": [False],
                                                 "metadata": [None], "sparse": [[[5], [0.5]]]}]}
    np.savez(tmp_path / "old.npz", header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8),
             dense_0=np.zeros((1, 0), dtype=np.float32))
    old = read_index_data(tmp_path / "old.npz").namespace("").get("old")
    assert old.sparse[0].tolist() == [5] and old.sparse[1].tolist() == [0.5]


def test_transitions_settle_by_wall_clock():
    state, schedule = transitions.creation(100.0, 5.0, fail=False)
    assert transitions.settle(state, schedule, 104.9) == ("Initializing", [["Ready", 105.0]])
    assert transitions.settle(state, schedule, 105.0) == ("Ready", [])
    assert transitions.settle(*transitions.creation(0, 0, fail=True), 0)[0] == "InitializationFailed"
    assert transitions.settle(*transitions.termination(0, 1), 2) == (None, [])
    steps = transitions.after(10, ("InProgress", 1), ("Completed", 1))
    assert [transitions.settle("Pending", steps, t)[0] for t in (10.5, 11.5, 12)] == ["Pending", "InProgress", "Completed"]


@pytest.mark.parametrize("old_r, new_r, old_t, new_t, state", [
    (1, 2, "p1.x1", "p1.x1", "ScalingUp"),
    (2, 1, "p1.x1", "p1.x1", "ScalingDown"),
    (1, 1, "p1.x1", "p1.x2", "ScalingUpPodSize"),
    (1, 3, "s1.x2", "s1.x4", "ScalingUpPodSize"),
    (1, 1, "p1.x1", "p1.x1", None),
])
def test_scaling_states(old_r, new_r, old_t, new_t, state):
    assert transitions.scaling_state(old_r, new_r, old_t, new_t) == state
    assert transitions.ready(state or "Ready")


def test_faults_are_seeded_limited_and_per_operation():
    def draws(seed):
        faults = Faults(seed, [FaultRule(operation="query", status=503, rate=0.3)])
        return [faults.decide("query").status for _ in range(40)]

    assert draws(5) == draws(5) and draws(5) != draws(6)
    assert 0 < draws(5).count(503) < 40
    faults = Faults(0, [FaultRule(kind="delay", seconds=0.2), FaultRule(operation="a", status=429, times=1)])
    first = faults.decide("a")
    assert (first.delay, first.status, first.retry_after) == (0.2, 429, 1.0)
    assert faults.decide("a").status is None and faults.decide("b").delay == 0.2
    with pytest.raises(ValueError, match="unknown fault rule field"):
        FaultRule.parse({"kind": "status", "statuss": 500})


def test_the_request_log_is_bounded_and_read_from_a_sequence_number(monkeypatch):
    monkeypatch.setattr("pinery.local.pinecone.faults.LOG_SIZE", 3)
    faults = Faults(0)
    for i in range(5):
        faults.record("describe_index", f"i{i}", 10.0 + i, 10.5 + i, 429 if i == 4 else 200, "2" if i == 4 else None,
                      api_version="2026-07" if i == 4 else None)
    page = faults.requests_since(0)
    assert [e["seq"] for e in page["requests"]] == [3, 4, 5] and page["logged"] == 5 and page["lost"] == 2
    assert page["requests"][-1] == {"seq": 5, "operation": "describe_index", "index": "i4", "arrived": 14.0,
                                    "answered": 14.5, "status": 429, "retryAfter": 2.0,
                                    "apiVersion": "2026-07"}
    assert faults.requests_since(4)["requests"][0]["index"] == "i4" and faults.requests_since(4)["lost"] == 0
    faults.reset_stats()
    assert faults.requests_since(0) == {"requests": [], "logged": 0, "lost": 0}


def _status(call, *args):
    with pytest.raises(ApiError) as err:
        call(*args)
    return err.value.status, err.value.code


SLS = {"serverless": {"cloud": "aws", "region": "us-east-1"}}


@pytest.mark.parametrize("body, status", [
    ({"name": "ok", "dimension": 3, "spec": SLS}, None),
    ({"dimension": 3, "spec": SLS}, 422),
    ({"name": "ok", "dimension": 3}, 422),
    ({"name": "ok", "dimension": "3", "spec": SLS}, 422),
    ({"name": "ok", "dimension": 3, "spec": {"serverless": {"cloud": "aws"}}}, 422),
    ({"name": "ok", "dimension": 3, "spec": {"cloud": SLS}}, 422),
    ({"name": "Not_OK", "dimension": 3, "spec": SLS}, 400),
    ({"name": "-x", "dimension": 3, "spec": SLS}, 400),
    ({"name": "x" * 46, "dimension": 3, "spec": SLS}, 400),
    ({"name": "ok", "dimension": 0, "spec": SLS}, 400),
    ({"name": "ok", "spec": SLS}, 400),
    ({"name": "ok", "dimension": 3, "metric": "hamming", "spec": SLS}, 400),
    ({"name": "ok", "vector_type": "sparse", "metric": "cosine", "spec": SLS}, 400),
    ({"name": "ok", "vector_type": "sparse", "dimension": 3, "spec": SLS}, 400),
    ({"name": "ok", "dimension": 3, "spec": SLS, "deletion_protection": "on"}, 400),
    ({"name": "ok", "dimension": 3, "spec": SLS, "tags": {"bad key": "v"}}, 400),
    ({"name": "ok", "dimension": 3, "spec": {"serverless": {"cloud": "aws", "region": "mars"}}}, 404),
    ({"name": "ok", "dimension": 3, "spec": {"pod": {"environment": "us-east-1-aws", "pod_type": "p9.x1"}}}, 400),
    ({"name": "ok", "dimension": 3, "spec": {"pod": {"environment": "moon-1"}}}, 404),
    ({"name": "ok", "dimension": 3, "spec": {"pod": {"environment": "us-east-1-aws", "replicas": 0}}}, 400),
    ({"name": "ok", "dimension": 3, "spec": {"byoc": {"environment": "aws-x"}}}, None),
])
def test_create_index_validation(body, status):
    if status is None:
        assert validation.check_create_index(body)["name"] == "ok"
    else:
        assert _status(validation.check_create_index, body)[0] == status


def test_create_index_defaults():
    pod = validation.check_create_index({"name": "p", "dimension": 3, "spec": {"pod": {
        "environment": "us-east-1-aws", "replicas": 2, "shards": 3, "pods": 1}}})
    assert pod["metric"] == "cosine" and pod["spec"]["pod"] == {
        "environment": "us-east-1-aws", "replicas": 2, "shards": 3, "pod_type": "p1.x1", "pods": 6}
    sparse = validation.check_create_index({"name": "s", "vector_type": "sparse", "spec": SLS})
    assert sparse["metric"] == "dotproduct" and sparse["dimension"] is None
    assert validation.check_create_index({"name": "d", "dimension": 2, "spec": SLS})["spec"]["serverless"][
        "read_capacity"] == {"mode": "OnDemand"}
