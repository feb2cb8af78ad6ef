"""The application flow with the `pinecone` SDK 5.x to 9.x (their API surface is the same here).

`Pinecone(api_key=..., host=<emulator>)` for the control plane, `pc.Index(host=...)` with the
host the control plane reports for the data plane. Where the releases differ (what `list`
yields, how a status reads) the flow accepts either form. `data_steps` is shared with the 10.x
flow (pinecone_sdk10.py), whose data plane kept these methods.
"""

from __future__ import annotations

import math

from _flow import API_KEY, DIMENSION, HOST, HYBRID, INDEX, NAMESPACE, Flow, FlowFailed, NotApplicable, check, main, near, one_hot, wait_for

# Six records in the namespace, one in the default namespace. In a hybrid (dotproduct) index
# doc-1 and doc-2 also carry sparse values, so a sparse query can break a dense tie.
DOCS = [
    ("doc-1", 0, {"genre": "drama", "year": 2001, "rating": 7.5, "tags": ["a", "b"]}, {"indices": [10], "values": [1.0]}),
    ("doc-2", 1, {"genre": "comedy", "year": 2010, "live": True}, {"indices": [20], "values": [1.0]}),
    ("doc-3", 2, {"genre": "drama", "year": 2020}, None),
    ("doc-4", 3, {"genre": "drama", "year": 2024}, None),
    ("doc-5", 4, {"genre": "comedy", "year": 2024}, None),
    ("other-1", 5, {"genre": "documentary", "year": 2018}, None),
]


def ready(described) -> bool:
    status = described.status
    value = getattr(status, "ready", None)
    if value is None and hasattr(status, "__getitem__"):
        value = status["ready"]
    return bool(value)


def names(pc) -> list[str]:
    listed = pc.list_indexes()
    return list(listed.names()) if hasattr(listed, "names") else [i.name for i in listed]


def ids_of(matches) -> list[str]:
    return [m.id for m in matches]


def listed_ids(index, **kwargs) -> list[str]:
    out = []
    for page in index.list(**kwargs):
        items = page if isinstance(page, list) else page.vectors
        out.extend(item if isinstance(item, str) else item.id for item in items)
    return out


def assert_float(value, expected: float, what: str) -> None:
    check(isinstance(value, float), f"{what} came back as {type(value).__name__} {value!r}, not a float")
    check(value == expected, f"{what} is {value!r}, expected {expected!r}")


def body(flow: Flow) -> None:
    from pinecone import Pinecone, ServerlessSpec

    pc = Pinecone(api_key=API_KEY, host=HOST)
    state = {}

    @flow.step("create_index", critical=True)
    def _():
        pc.create_index(name=INDEX, dimension=DIMENSION, metric="dotproduct" if HYBRID else "cosine",
                        spec=ServerlessSpec(cloud="aws", region="us-east-1"), timeout=-1)
        check(INDEX in names(pc), f"{INDEX} is not in list_indexes() {names(pc)}")

    @flow.step("wait_ready", critical=True)
    def _():
        described = wait_for("the index to be ready", lambda: (d := pc.describe_index(INDEX)) and ready(d) and d)
        check(described.dimension == DIMENSION, f"dimension {described.dimension}")
        check(described.metric == ("dotproduct" if HYBRID else "cosine"), f"metric {described.metric}")
        check(bool(described.host), "no host")
        state["index"] = pc.Index(host=described.host)

    data_steps(flow, state)

    @flow.step("integrated_inference")
    def _():
        if not hasattr(pc, "create_index_for_model"):
            # create_index_for_model, upsert_records and search came with 6.0 (API 2025-01).
            raise NotApplicable("this SDK has no create_index_for_model, upsert_records or search (from 6.x)")
        records_flow(create=pc.create_index_for_model, describe=pc.describe_index,
                     open_index=lambda d: pc.Index(host=d.host), delete=lambda n: pc.delete_index(n, timeout=-1),
                     exists=lambda n: n in names(pc))

    @flow.step("delete_index", cleanup=True)
    def _():
        pc.delete_index(INDEX, timeout=-1)
        wait_for("the index to go", lambda: INDEX not in names(pc))


# Records for the integrated-inference step: the related text shares words with the query, so it
# ranks first under either of the emulator's embedders (a local model or its hashing fallback).
RECORDS = [
    {"_id": "cat", "chunk_text": "the cat sat on the mat", "genre": "pets"},
    {"_id": "stocks", "chunk_text": "stock markets fell sharply today", "genre": "finance"},
    {"_id": "bread", "chunk_text": "how to bake sourdough bread at home", "genre": "food"},
]


def hit_id(hit) -> str:
    """9.x and later name it `id`; the generated models of 6.x-8.x keep `_id`."""
    return getattr(hit, "id", None) or hit._id


def records_flow(create, describe, open_index, delete, exists) -> None:
    """create_index_for_model, upsert_records and a search by text (with a filter, then with
    rerank) on a fresh integrated index, deleted afterwards; the same record calls in 6.x to 10.x
    (10.x passes its own names for the control plane, pinecone_sdk10.py)."""
    name = f"{INDEX}-records"
    create(name=name, cloud="aws", region="us-east-1", timeout=-1,
           embed={"model": "multilingual-e5-large", "field_map": {"text": "chunk_text"}})
    try:
        described = wait_for("the integrated index to be ready", lambda: (d := describe(name)) and ready(d) and d)
        index = open_index(described)
        index.upsert_records(namespace=NAMESPACE, records=RECORDS)
        found = index.search(namespace=NAMESPACE, query={"top_k": 3, "inputs": {"text": "where did the cat sit"}})
        hits = found.result.hits
        check([hit_id(h) for h in hits][:1] == ["cat"], f"text search hits {[hit_id(h) for h in hits]}")
        check(hits[0].fields["chunk_text"] == "the cat sat on the mat", f"fields {hits[0].fields}")
        filtered = index.search(namespace=NAMESPACE, query={"top_k": 3, "inputs": {"text": "the cat"},
                                                            "filter": {"genre": {"$in": ["finance", "food"]}}})
        check(sorted(hit_id(h) for h in filtered.result.hits) == ["bread", "stocks"],
              f"filtered hits {[hit_id(h) for h in filtered.result.hits]}")
        reranked = index.search(namespace=NAMESPACE, query={"top_k": 3, "inputs": {"text": "stock markets today"}},
                                rerank={"model": "bge-reranker-v2-m3", "rank_fields": ["chunk_text"], "top_n": 1})
        check([hit_id(h) for h in reranked.result.hits] == ["stocks"],
              f"reranked hits {[hit_id(h) for h in reranked.result.hits]}")
    finally:
        delete(name)
        wait_for("the integrated index to go", lambda: not exists(name))


def data_steps(flow: Flow, state: dict) -> None:
    """The data-plane steps, on `state["index"]`; 10.x's flow runs them too (its data plane kept
    these names)."""

    @flow.step("upsert", critical=True)
    def _():
        vectors = []
        for doc_id, axis, metadata, sparse in DOCS:
            vector = {"id": doc_id, "values": one_hot(axis), "metadata": metadata}
            if HYBRID and sparse:
                vector["sparse_values"] = sparse
            vectors.append(vector)
        upserted = state["index"].upsert(vectors=vectors, namespace=NAMESPACE)
        check(upserted.upserted_count == len(DOCS), f"upserted_count {upserted.upserted_count}")
        upserted = state["index"].upsert(vectors=[("default-1", one_hot(6))])
        check(upserted.upserted_count == 1, f"default namespace upserted_count {upserted.upserted_count}")

    @flow.step("query_with_filter")
    def _():
        index = state["index"]
        found = index.query(vector=near(2), top_k=10, namespace=NAMESPACE, filter={"genre": {"$eq": "drama"}},
                            include_metadata=True)
        check(ids_of(found.matches)[:1] == ["doc-3"], f"first match {ids_of(found.matches)}")
        check(sorted(ids_of(found.matches)) == ["doc-1", "doc-3", "doc-4"], f"drama matches {ids_of(found.matches)}")
        check(found.matches[0].metadata["genre"] == "drama", f"metadata {found.matches[0].metadata}")
        assert_float(found.matches[0].metadata["year"], 2020.0, "query metadata year")
        both = index.query(vector=near(3), top_k=10, namespace=NAMESPACE,
                           filter={"$and": [{"genre": "drama"}, {"year": {"$gte": 2020}}]})
        check(ids_of(both.matches) == ["doc-4", "doc-3"], f"$and/$gte matches {ids_of(both.matches)}")
        some = index.query(vector=near(0), top_k=10, namespace=NAMESPACE,
                           filter={"genre": {"$in": ["comedy", "documentary"]}})
        check(sorted(ids_of(some.matches)) == ["doc-2", "doc-5", "other-1"], f"$in matches {ids_of(some.matches)}")

    @flow.step("hybrid_query")
    def _():
        if not HYBRID:
            raise NotApplicable("the index is cosine")
        dense = [0.5, 0.5] + [0.0] * (DIMENSION - 2)  # doc-1 and doc-2 tie on the dense part
        found = state["index"].query(vector=dense, sparse_vector={"indices": [20], "values": [1.0]}, top_k=2,
                                     namespace=NAMESPACE)
        check(ids_of(found.matches) == ["doc-2", "doc-1"], f"hybrid matches {ids_of(found.matches)}")
        check(math.isclose(found.matches[0].score, 1.5, rel_tol=1e-4), f"hybrid score {found.matches[0].score}")

    @flow.step("fetch")
    def _():
        fetched = state["index"].fetch(ids=["doc-1", "missing"], namespace=NAMESPACE)
        check(list(fetched.vectors) == ["doc-1"], f"fetched {list(fetched.vectors)}")
        doc = fetched.vectors["doc-1"]
        check(list(doc.values) == one_hot(0), f"values {doc.values}")
        check(doc.metadata["tags"] == ["a", "b"] and doc.metadata["genre"] == "drama", f"metadata {doc.metadata}")
        assert_float(doc.metadata["year"], 2001.0, "fetched metadata year")
        assert_float(doc.metadata["rating"], 7.5, "fetched metadata rating")
        if HYBRID:
            sparse = doc.sparse_values
            check(sparse is not None and list(sparse.indices) == [10] and list(sparse.values) == [1.0],
                  f"sparse values {sparse}")

    @flow.step("list_with_prefix")
    def _():
        ids = listed_ids(state["index"], prefix="doc-", namespace=NAMESPACE)
        check(sorted(ids) == ["doc-1", "doc-2", "doc-3", "doc-4", "doc-5"], f"listed {ids}")
        paged = listed_ids(state["index"], prefix="doc-", namespace=NAMESPACE, limit=2)
        check(sorted(paged) == sorted(ids), f"listed two at a time {paged}")

    @flow.step("update")
    def _():
        index = state["index"]
        index.update(id="doc-1", values=one_hot(7), set_metadata={"genre": "comedy", "year": 1999}, namespace=NAMESPACE)
        doc = index.fetch(ids=["doc-1"], namespace=NAMESPACE).vectors["doc-1"]
        check(list(doc.values) == one_hot(7), f"values after update {doc.values}")
        check(doc.metadata["genre"] == "comedy" and doc.metadata["tags"] == ["a", "b"], f"metadata {doc.metadata}")
        assert_float(doc.metadata["year"], 1999.0, "updated metadata year")
        top = index.query(vector=near(7), top_k=1, namespace=NAMESPACE)
        check(ids_of(top.matches) == ["doc-1"], f"query after update {ids_of(top.matches)}")

    @flow.step("delete_by_id")
    def _():
        index = state["index"]
        index.delete(ids=["other-1"], namespace=NAMESPACE)
        check(not index.fetch(ids=["other-1"], namespace=NAMESPACE).vectors, "other-1 still there")

    @flow.step("delete_by_filter")
    def _():
        index = state["index"]
        index.delete(filter={"year": {"$gte": 2020}}, namespace=NAMESPACE)
        left = index.fetch(ids=[d[0] for d in DOCS], namespace=NAMESPACE).vectors
        check(sorted(left) == ["doc-1", "doc-2"], f"left after delete by filter {sorted(left)}")

    @flow.step("describe_index_stats")
    def _():
        index = state["index"]
        try:
            wait_for("the counts", lambda: index.describe_index_stats().total_vector_count == 3, timeout=10)
        except FlowFailed:
            pass
        stats = index.describe_index_stats()
        check(stats.total_vector_count == 3, f"total_vector_count {stats.total_vector_count}, expected 3")
        check(stats.dimension == DIMENSION, f"dimension {stats.dimension}")
        check(stats.namespaces[NAMESPACE].vector_count == 2, f"namespaces {stats.namespaces}")


if __name__ == "__main__":
    main(Flow("pinecone"), body)
