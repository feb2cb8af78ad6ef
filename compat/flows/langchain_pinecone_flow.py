"""The application flow with LangChain's `langchain-pinecone` (0.2.x, on the pinecone SDK 7.x).

The index is made with the pinecone SDK, as LangChain's own guide does; everything after that
goes through `PineconeVectorStore` with langchain-core's `DeterministicFakeEmbedding` (the
same text always embeds to the same vector, so a query by a stored text finds it first with a
cosine score of 1). Its vectors hold numpy float64s, which the pinecone 7.x SDK refuses before
sending anything ("Required value type is float and passed type was float64"): a client-side
mismatch, nothing the server sees, so the flow's embedding hands over plain floats.
"""

from __future__ import annotations

import math

from _flow import API_KEY, DIMENSION, HOST, INDEX, NAMESPACE, Flow, check, main, wait_for

TEXTS = {
    "doc-1": ("A slow drama about a lighthouse keeper.", {"genre": "drama", "year": 2001, "rating": 7.5}),
    "doc-2": ("A comedy of errors at a wedding.", {"genre": "comedy", "year": 2010}),
    "doc-3": ("A drama set in a hospital at night.", {"genre": "drama", "year": 2020}),
    "doc-4": ("A family drama over three summers.", {"genre": "drama", "year": 2024}),
    "doc-5": ("A comedy about a lost dog.", {"genre": "comedy", "year": 2024}),
    "other-1": ("A documentary about bees.", {"genre": "documentary", "year": 2018}),
}


def ids_of(documents) -> list[str]:
    return [d.id for d in documents]


def plain_float_embedding(size: int):
    from langchain_core.embeddings import DeterministicFakeEmbedding

    class PlainFloats(DeterministicFakeEmbedding):
        def _get_embedding(self, seed: int) -> list[float]:
            return [float(x) for x in super()._get_embedding(seed)]

    return PlainFloats(size=size)


def body(flow: Flow) -> None:
    from langchain_pinecone import PineconeVectorStore
    from pinecone import Pinecone, ServerlessSpec

    pc = Pinecone(api_key=API_KEY, host=HOST)
    state = {}

    @flow.step("create_index", critical=True)
    def _():
        pc.create_index(name=INDEX, dimension=DIMENSION, metric="cosine",
                        spec=ServerlessSpec(cloud="aws", region="us-east-1"), timeout=-1)

    @flow.step("wait_ready", critical=True)
    def _():
        described = wait_for("the index to be ready", lambda: (d := pc.describe_index(INDEX)) and d.status["ready"] and d)
        state["store"] = PineconeVectorStore(index=pc.Index(host=described.host),
                                             embedding=plain_float_embedding(DIMENSION), namespace=NAMESPACE)

    @flow.step("add_texts", critical=True)
    def _():
        ids = list(TEXTS)
        added = state["store"].add_texts([t for t, _ in TEXTS.values()], metadatas=[m for _, m in TEXTS.values()],
                                         ids=ids)
        check(added == ids, f"add_texts returned {added}")
        stats = wait_for("the vectors to count", lambda: (s := state["store"].index.describe_index_stats())
                         and NAMESPACE in s.namespaces and s.namespaces[NAMESPACE].vector_count == len(ids) and s,
                         timeout=10)
        check(stats.namespaces[NAMESPACE].vector_count == len(ids), f"stats {stats}")

    @flow.step("similarity_search_with_filter")
    def _():
        store = state["store"]
        found = store.similarity_search(TEXTS["doc-3"][0], k=10, filter={"genre": {"$eq": "drama"}})
        check(ids_of(found)[:1] == ["doc-3"], f"first hit {ids_of(found)}")
        check(sorted(ids_of(found)) == ["doc-1", "doc-3", "doc-4"], f"drama hits {ids_of(found)}")
        check(found[0].page_content == TEXTS["doc-3"][0], f"page_content {found[0].page_content!r}")
        year = found[0].metadata["year"]
        check(isinstance(year, float) and year == 2020.0, f"metadata year {year!r} (Pinecone answers numbers as floats)")
        check("text" not in found[0].metadata, f"the text key left in metadata {found[0].metadata}")
        recent = store.similarity_search(TEXTS["doc-4"][0], k=10,
                                         filter={"$and": [{"genre": "drama"}, {"year": {"$gte": 2020}}]})
        check(sorted(ids_of(recent)) == ["doc-3", "doc-4"], f"$and/$gte hits {ids_of(recent)}")
        other = store.similarity_search("anything", k=10, filter={"genre": {"$in": ["comedy", "documentary"]}})
        check(sorted(ids_of(other)) == ["doc-2", "doc-5", "other-1"], f"$in hits {ids_of(other)}")

    @flow.step("similarity_search_with_score")
    def _():
        scored = state["store"].similarity_search_with_score(TEXTS["doc-2"][0], k=3)
        check(len(scored) == 3, f"{len(scored)} hits")
        document, score = scored[0]
        check(document.id == "doc-2", f"first hit {document.id}")
        check(math.isclose(score, 1.0, rel_tol=1e-4), f"score {score} for the same text")
        check(all(s <= score for _, s in scored), f"scores not descending {[s for _, s in scored]}")

    @flow.step("async_add_search_delete")
    def _():
        # The async methods go through the SDK's IndexAsyncio (aiohttp) on the same host.
        import asyncio

        async def run():
            store = state["store"]
            added = await store.aadd_texts(["An async drama.", "An async comedy."],
                                           metadatas=[{"genre": "drama", "year": 2025}, {"genre": "comedy", "year": 2025}],
                                           ids=["async-1", "async-2"])
            check(added == ["async-1", "async-2"], f"aadd_texts returned {added}")
            scored = await store.asimilarity_search_with_score("An async drama.", k=10, filter={"year": {"$eq": 2025}})
            check([d.id for d, _ in scored] == ["async-1", "async-2"], f"async hits {[d.id for d, _ in scored]}")
            check(math.isclose(scored[0][1], 1.0, rel_tol=1e-4), f"async score {scored[0][1]}")
            await store.adelete(ids=["async-1", "async-2"])
            left = await store.asimilarity_search("anything", k=10, filter={"year": {"$eq": 2025}})
            check(left == [], f"left after adelete {ids_of(left)}")
            index = await store.async_index
            await index.close()

        asyncio.run(run())

    @flow.step("delete_by_id")
    def _():
        store = state["store"]
        store.delete(ids=["other-1"])
        left = ids_of(store.similarity_search("anything", k=10))
        check("other-1" not in left and len(left) == 5, f"after delete by id {left}")

    @flow.step("delete_by_filter")
    def _():
        store = state["store"]
        store.delete(filter={"year": {"$gte": 2020}})
        left = ids_of(store.similarity_search("anything", k=10))
        check(sorted(left) == ["doc-1", "doc-2"], f"after delete by filter {left}")

    @flow.step("delete_all")
    def _():
        store = state["store"]
        store.delete(delete_all=True)
        check(store.similarity_search("anything", k=10) == [], "vectors left after delete_all")

    @flow.step("delete_index", cleanup=True)
    def _():
        pc.delete_index(INDEX, timeout=-1)
        wait_for("the index to go", lambda: INDEX not in pc.list_indexes().names())


if __name__ == "__main__":
    main(Flow("langchain-pinecone", "langchain-core", "pinecone"), body)
