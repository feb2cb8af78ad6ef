"""The real `pinecone` SDK (9.x, API 2025-10) against the emulator's data plane, through the host the control plane reports."""

from __future__ import annotations

import numpy as np
import pytest
from pinecone import PodSpec, ServerlessSpec
from pinecone.errors.exceptions import ApiError, NotFoundError

# The 9.x SDK against API 2025-10: `make test` runs this with the 9.1.0 overlay (compat/overlay.py).
pytestmark = pytest.mark.sdk9

SERVERLESS = ServerlessSpec(cloud="aws", region="us-east-1")


def make_index(pc, name, **kwargs):
    kwargs.setdefault("dimension", 4)
    model = pc.create_index(name=name, spec=SERVERLESS, timeout=5, **kwargs)
    return pc.Index(host=model.host)


@pytest.mark.parametrize("metric", ["cosine", "euclidean", "dotproduct"])
def test_scores_match_numpy_for_each_metric(pinecone_client, metric):
    idx = make_index(pinecone_client, f"m-{metric}", dimension=16, metric=metric)
    rng = np.random.default_rng(7)
    data = rng.normal(size=(200, 16)).astype(np.float32)
    idx.upsert(vectors=[(f"v{i}", row.tolist()) for i, row in enumerate(data)], batch_size=64)
    query = rng.normal(size=16).astype(np.float32)
    result = idx.query(vector=query.tolist(), top_k=5)
    if metric == "cosine":
        expected = data @ query / (np.linalg.norm(data, axis=1) * np.linalg.norm(query))
        order = np.argsort(-expected)
    elif metric == "euclidean":  # Pinecone reports the squared distance; smallest first
        expected = ((data - query) ** 2).sum(axis=1)
        order = np.argsort(expected)
    else:
        expected = data @ query
        order = np.argsort(-expected)
    assert [m.id for m in result.matches] == [f"v{i}" for i in order[:5]]
    assert [m.score for m in result.matches] == pytest.approx([float(expected[i]) for i in order[:5]], rel=1e-4)


def test_upsert_query_fetch_update_delete_list_stats(pinecone_client):
    idx = make_index(pinecone_client, "crud")
    docs = [
        {"id": "doc-1", "values": [1, 0, 0, 0], "metadata": {"genre": "drama", "year": 2001, "tags": ["a", "b"]}},
        {"id": "doc-2", "values": [0, 1, 0, 0], "metadata": {"genre": "comedy", "year": 2010, "live": True}},
        {"id": "doc-3", "values": [0, 0, 1, 0], "metadata": {"genre": "drama", "year": 2020}},
        {"id": "other", "values": [0, 0, 0, 1]},
    ]
    assert idx.upsert(vectors=docs, namespace="films").upserted_count == 4
    idx.upsert(vectors=[("x", [1, 1, 1, 1])])  # the default namespace

    by_vector = idx.query(vector=[1, 0.1, 0, 0], top_k=2, namespace="films", include_metadata=True)
    assert [m.id for m in by_vector.matches] == ["doc-1", "doc-2"]
    assert by_vector.matches[0].metadata["genre"] == "drama" and by_vector.namespace == "films"
    by_id = idx.query(id="doc-3", top_k=1, namespace="films", include_values=True)
    assert by_id.matches[0].id == "doc-3" and by_id.matches[0].values == [0, 0, 1, 0]

    fetched = idx.fetch(ids=["doc-1", "missing"], namespace="films")
    assert list(fetched.vectors) == ["doc-1"] and fetched.vectors["doc-1"].metadata["tags"] == ["a", "b"]

    idx.update(id="doc-1", values=[0, 0, 0, 2], set_metadata={"year": 1999}, namespace="films")
    doc1 = idx.fetch(ids=["doc-1"], namespace="films").vectors["doc-1"]
    assert doc1.values == [0, 0, 0, 2] and doc1.metadata == {"genre": "drama", "year": 1999, "tags": ["a", "b"]}
    matched = idx.update(filter={"genre": "drama"}, set_metadata={"rated": "R"}, namespace="films")
    assert matched.matched_records == 2

    pages = list(idx.list(prefix="doc-", limit=2, namespace="films"))
    assert [[v.id for v in page.vectors] for page in pages] == [["doc-1", "doc-2"], ["doc-3"]]

    stats = idx.describe_index_stats()
    assert stats.total_vector_count == 5 and stats.dimension == 4
    assert stats.namespaces["films"].vector_count == 4

    idx.delete(ids=["other"], namespace="films")
    idx.delete(filter={"year": {"$gte": 2010}}, namespace="films")
    assert sorted(idx.fetch(ids=["doc-1", "doc-2", "doc-3"], namespace="films").vectors) == ["doc-1"]
    idx.delete(delete_all=True, namespace="films")
    assert "films" not in idx.describe_index_stats().namespaces


def test_metadata_numbers_come_back_as_floats_as_pinecone_stores_them(pinecone_client):
    idx = make_index(pinecone_client, "floats", dimension=2)
    idx.upsert(vectors=[{"id": "a", "values": [1, 0], "metadata": {"year": 2024, "score": 0.5, "live": True, "n": "7"}}])
    idx.update(id="a", set_metadata={"pages": 12})
    meta = idx.fetch(ids=["a"]).vectors["a"].metadata
    assert meta == {"year": 2024.0, "score": 0.5, "live": True, "n": "7", "pages": 12.0}
    assert [type(meta[k]) for k in ("year", "pages", "live")] == [float, float, bool]
    # and filters on them still match integers as given
    found = idx.query(vector=[1, 0], top_k=1, filter={"year": {"$in": [2024]}, "pages": 12}, include_metadata=True)
    assert [m.id for m in found.matches] == ["a"] and type(found.matches[0].metadata["year"]) is float


FILTERS = [
    ({"genre": "drama"}, {"a", "c"}),
    ({"genre": {"$eq": "drama"}}, {"a", "c"}),
    ({"genre": {"$ne": "drama"}}, {"b", "d"}),
    ({"year": {"$gt": 2005}}, {"b", "c"}),
    ({"year": {"$gte": 2010}}, {"b", "c"}),
    ({"year": {"$lt": 2010}}, {"a"}),
    ({"year": {"$lte": 2010}}, {"a", "b"}),
    ({"genre": {"$in": ["comedy", "horror"]}}, {"b"}),
    ({"genre": {"$nin": ["comedy"]}}, {"a", "c", "d"}),
    ({"year": {"$exists": False}}, {"d"}),
    ({"tags": "new"}, {"a", "b"}),  # a list field matches when any element does
    ({"$and": [{"genre": "drama"}, {"year": {"$gt": 2005}}]}, {"c"}),
    ({"$or": [{"genre": "comedy"}, {"year": {"$lt": 2005}}]}, {"a", "b"}),
    ({"genre": "drama", "year": 2001}, {"a"}),
    ({"live": True}, {"c"}),
]


def test_metadata_filters_through_the_sdk(pinecone_client):
    idx = make_index(pinecone_client, "filters", dimension=2)
    idx.upsert(vectors=[
        {"id": "a", "values": [1, 0], "metadata": {"genre": "drama", "year": 2001, "tags": ["new", "hot"]}},
        {"id": "b", "values": [1, 0], "metadata": {"genre": "comedy", "year": 2010, "tags": ["new"]}},
        {"id": "c", "values": [1, 0], "metadata": {"genre": "drama", "year": 2020, "live": True}},
        {"id": "d", "values": [1, 0], "metadata": {"genre": "horror-free"}},
    ])
    for flt, expected in FILTERS:
        got = {m.id for m in idx.query(vector=[1, 0], top_k=10, filter=flt).matches}
        assert got == expected, flt


@pytest.mark.parametrize("bad", [
    {"genre": {"$regex": "dr.*"}},
    {"year": {"$gt": "2000"}},
    {"genre": {"$in": "drama"}},
    {"$or": []},
    {"$not": {"genre": "x"}},
    {"genre": {"$exists": "yes"}},
])
def test_invalid_filters_are_rejected_with_the_error_shape(pinecone_client, bad):
    idx = make_index(pinecone_client, "badfilter", dimension=2)
    with pytest.raises(ApiError) as err:
        idx.query(vector=[1, 0], top_k=1, filter=bad)
    assert err.value.status_code == 400
    assert err.value.body["code"] == 3 and err.value.body["message"].startswith("Invalid filter")


def test_dimension_and_limits_are_checked(pinecone_client):
    idx = make_index(pinecone_client, "dims", dimension=3)
    with pytest.raises(ApiError) as err:
        idx.upsert(vectors=[("a", [1.0, 2.0])])
    assert err.value.status_code == 400 and "dimension 2 does not match" in err.value.message
    with pytest.raises(ApiError):
        idx.query(vector=[1.0], top_k=1)
    with pytest.raises(ApiError) as err:
        idx.upsert(vectors=[{"id": "a", "values": [1, 2, 3], "metadata": {"nested": {"x": 1}}}])
    assert "nested" in err.value.message
    with pytest.raises(ApiError) as err:
        idx.upsert(vectors=[(f"v{i}", [1.0, 0.0, 0.0]) for i in range(1001)])
    assert "At most 1000" in err.value.message


def test_pinecones_hard_limits_are_enforced_so_local_code_fits_them(pinecone_client):
    """Limits that catch applications out in production: 2 MB per upsert request, no all-zero
    dense vectors, 40 KB of metadata per record, 10,000 values per $in."""
    idx = make_index(pinecone_client, "limits", dimension=768)
    rng = np.random.default_rng(3)
    vectors = [(f"v{i}", row.tolist()) for i, row in enumerate(rng.normal(size=(300, 768)))]
    with pytest.raises(ApiError) as err:
        idx.upsert(vectors=vectors)  # about 4.5 MB of JSON in one request
    assert err.value.status_code == 400 and err.value.body["code"] == 3
    assert "exceeds the maximum supported size of 2MB" in err.value.message
    assert idx.describe_index_stats().total_vector_count == 0  # nothing of the refused request was kept
    assert idx.upsert(vectors=vectors, batch_size=100).upserted_count == 300

    with pytest.raises(ApiError) as err:
        idx.upsert(vectors=[("blank", [0.0] * 768)])
    assert err.value.message == ("Dense vectors must contain at least one non-zero value. "
                                 "Vector ID 'blank' contains only zeros")
    with pytest.raises(ApiError) as err:
        idx.update(id="v1", values=[0.0] * 768)
    assert "contains only zeros" in err.value.message
    assert idx.fetch(ids=["v1"]).vectors["v1"].values == pytest.approx(vectors[1][1], rel=1e-6)

    with pytest.raises(ApiError) as err:
        idx.upsert(vectors=[{"id": "big", "values": vectors[0][1], "metadata": {"text": "x" * 41_000}}])
    assert "exceeds the limit of 40960 bytes per vector" in err.value.message
    with pytest.raises(ApiError) as err:
        idx.query(vector=vectors[0][1], top_k=1, filter={"n": {"$in": list(range(10_001))}})
    assert "at most 10000 values" in err.value.message
    assert idx.query(vector=vectors[0][1], top_k=1, filter={"n": {"$nin": list(range(10_000))}}).matches[0].id == "v0"


def test_listing_and_namespace_management_are_serverless_only(pinecone_client):
    pod = pinecone_client.create_index(name="pods", dimension=2, timeout=5,
                                       spec=PodSpec(environment="us-east-1-aws", pod_type="p1.x1"))
    idx = pinecone_client.Index(host=pod.host)
    idx.upsert(vectors=[("a", [1, 0])], namespace="n1")
    refused = [lambda: list(idx.list(namespace="n1")), idx.list_namespaces_paginated,
               lambda: idx.create_namespace(name="n2"), lambda: idx.describe_namespace(namespace="n1"),
               lambda: idx.delete_namespace(namespace="n1")]
    for call in refused:
        with pytest.raises(ApiError) as err:
            call()
        assert err.value.status_code == 400 and "not supported for pod-based indexes" in err.value.message
    # What pod indexes do support still works, and nothing was deleted.
    assert idx.query(vector=[1, 0], top_k=1, namespace="n1").matches[0].id == "a"
    assert idx.describe_index_stats(filter={"x": {"$exists": False}}).namespaces["n1"].vector_count == 1


def test_hybrid_and_sparse_only_indexes(pinecone_client):
    hybrid = make_index(pinecone_client, "hybrid", dimension=2, metric="dotproduct")
    hybrid.upsert(vectors=[
        {"id": "h1", "values": [1, 0], "sparse_values": {"indices": [1, 5], "values": [0.5, 2.0]}},
        {"id": "h2", "values": [0, 1], "sparse_values": {"indices": [5], "values": [0.1]}},
    ])
    result = hybrid.query(vector=[0.5, 0.5], sparse_vector={"indices": [5], "values": [1.0]}, top_k=2)
    assert [(m.id, round(m.score, 4)) for m in result.matches] == [("h1", 2.5), ("h2", 0.6)]

    sparse = pinecone_client.create_index(name="sparse", vector_type="sparse", metric="dotproduct",
                                          spec=SERVERLESS, timeout=5)
    assert sparse.dimension is None
    sidx = pinecone_client.Index(host=sparse.host)
    sidx.upsert(vectors=[{"id": "s1", "sparse_values": {"indices": [3, 7], "values": [1.0, 1.0]}},
                         {"id": "s2", "sparse_values": {"indices": [7], "values": [3.0]}}])
    result = sidx.query(sparse_vector={"indices": [3, 7], "values": [2.0, 1.0]}, top_k=2, include_values=True)
    assert [(m.id, m.score) for m in result.matches] == [("s1", 3.0), ("s2", 3.0)] or \
        [(m.id, m.score) for m in result.matches] == [("s2", 3.0), ("s1", 3.0)]
    assert sidx.describe_index_stats().total_vector_count == 2

    cosine = make_index(pinecone_client, "cos", dimension=2)
    with pytest.raises(ApiError) as err:
        cosine.upsert(vectors=[{"id": "x", "values": [1, 0], "sparse_values": {"indices": [1], "values": [1.0]}}])
    assert "dotproduct" in err.value.message


def test_namespaces(pinecone_client):
    idx = make_index(pinecone_client, "spaces", dimension=2)
    idx.upsert(vectors=[("a", [1, 0])], namespace="tenant-a")
    idx.upsert(vectors=[("b", [1, 0]), ("c", [0, 1])], namespace="tenant-b")
    idx.create_namespace(name="tenant-c")
    listed = {ns.name: ns.record_count for page in idx.list_namespaces() for ns in page.namespaces}
    assert listed == {"tenant-a": 1, "tenant-b": 2, "tenant-c": 0}
    assert idx.describe_namespace(namespace="tenant-b").record_count == 2
    assert idx.query(vector=[1, 0], top_k=5, namespace="tenant-a").matches[0].id == "a"
    idx.delete_namespace(namespace="tenant-a")
    with pytest.raises(NotFoundError):
        idx.describe_namespace(namespace="tenant-a")
    assert idx.query(vector=[1, 0], top_k=5, namespace="tenant-a").matches == []


def test_data_plane_of_a_missing_index_is_404(pinecone_client, pinecone_emulator):
    idx = pinecone_client.Index(host=pinecone_emulator.index_host("ghost"))
    with pytest.raises(NotFoundError):
        idx.describe_index_stats()


def test_the_asyncio_client_works_against_the_same_host(pinecone_client):
    """Async applications (FastAPI and the like) use `IndexAsyncio` with the same host."""
    import asyncio

    host = pinecone_client.create_index(name="async", dimension=2, spec=SERVERLESS, timeout=5).host

    async def work():
        async with pinecone_client.IndexAsyncio(host=host) as idx:
            await idx.upsert(vectors=[{"id": "x", "values": [1, 0], "metadata": {"kind": "a"}},
                                      {"id": "y", "values": [0.9, 0.1], "metadata": {"kind": "b"}}], namespace="n")
            found = await idx.query(vector=[1, 0], top_k=2, namespace="n", filter={"kind": "b"}, include_metadata=True)
            stats = await idx.describe_index_stats()
            return [(m.id, m.metadata["kind"]) for m in found.matches], stats.namespaces["n"].vector_count

    assert asyncio.run(work()) == ([("y", "b")], 2)
