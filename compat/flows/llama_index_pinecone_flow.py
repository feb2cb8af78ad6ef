"""The application flow with LlamaIndex's `llama-index-vector-stores-pinecone` (0.9.x, on the
pinecone SDK 9.x).

The index is made with the pinecone SDK, as the integration's own example does. Documents go
in through `VectorStoreIndex.from_documents` with llama-index-core's `MockEmbedding` (every
text embeds to the same vector, so which nodes come back is decided by the metadata filters
alone) and come out through a retriever and a query engine (`MockLLM`, no model), filtered
with `MetadataFilters`; they are removed with `delete_ref_doc`, `delete_nodes` and `clear`.
"""

from __future__ import annotations

from _flow import API_KEY, DIMENSION, HOST, INDEX, NAMESPACE, Flow, check, main, wait_for

FILMS = {
    "film-1": ("A slow drama about a lighthouse keeper.", {"genre": "drama", "year": 2001}),
    "film-2": ("A comedy of errors at a wedding.", {"genre": "comedy", "year": 2010}),
    "film-3": ("A drama set in a hospital at night.", {"genre": "drama", "year": 2020}),
    "film-4": ("A family drama over three summers.", {"genre": "drama", "year": 2024}),
    "film-5": ("A comedy about a lost dog.", {"genre": "comedy", "year": 2024}),
    "other-1": ("A documentary about bees.", {"genre": "documentary", "year": 2018}),
}


def body(flow: Flow) -> None:
    from llama_index.core import Document, Settings, StorageContext, VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.llms import MockLLM
    from llama_index.core.vector_stores import ExactMatchFilter, FilterCondition, FilterOperator, MetadataFilter, MetadataFilters
    from llama_index.vector_stores.pinecone import PineconeVectorStore
    from pinecone import Pinecone, ServerlessSpec

    Settings.embed_model = MockEmbedding(embed_dim=DIMENSION)
    Settings.llm = MockLLM(max_tokens=8)
    pc = Pinecone(api_key=API_KEY, host=HOST)
    state = {}

    def count() -> int:
        stats = state["raw"].describe_index_stats()
        return stats.namespaces[NAMESPACE].vector_count if NAMESPACE in stats.namespaces else 0

    def retrieved(filters) -> list[str]:
        nodes = state["index"].as_retriever(similarity_top_k=10, filters=filters).retrieve("films")
        return sorted(n.node.ref_doc_id for n in nodes)

    @flow.step("create_index", critical=True)
    def _():
        pc.create_index(name=INDEX, dimension=DIMENSION, metric="cosine",
                        spec=ServerlessSpec(cloud="aws", region="us-east-1"), timeout=-1)

    @flow.step("wait_ready", critical=True)
    def _():
        described = wait_for("the index to be ready", lambda: (d := pc.describe_index(INDEX)) and d.status.ready and d)
        state["raw"] = pc.Index(host=described.host)
        state["store"] = PineconeVectorStore(pinecone_index=state["raw"], namespace=NAMESPACE)

    @flow.step("from_documents", critical=True)
    def _():
        documents = [Document(text=text, metadata=metadata, id_=doc_id) for doc_id, (text, metadata) in FILMS.items()]
        state["index"] = VectorStoreIndex.from_documents(
            documents, storage_context=StorageContext.from_defaults(vector_store=state["store"]))
        wait_for("the vectors to count", lambda: count() == len(FILMS), timeout=10)
        ids = [i for page in state["raw"].list(prefix="film-1#", namespace=NAMESPACE) for i in page.vectors]
        check(len(ids) == 1, f"node ids under film-1# {ids}")
        raw = state["raw"].fetch(ids=[ids[0].id], namespace=NAMESPACE).vectors[ids[0].id].metadata
        check(raw["doc_id"] == "film-1" and raw["genre"] == "drama", f"stored metadata {raw}")
        check(isinstance(raw["year"], float) and raw["year"] == 2001.0,
              f"stored year {raw['year']!r} (Pinecone answers numbers as floats)")

    @flow.step("retrieve_exact_match_filter")
    def _():
        drama = MetadataFilters(filters=[ExactMatchFilter(key="genre", value="drama")])
        check(retrieved(drama) == ["film-1", "film-3", "film-4"], f"drama {retrieved(drama)}")

    @flow.step("retrieve_operator_filters")
    def _():
        recent = MetadataFilters(filters=[MetadataFilter(key="genre", value="drama", operator=FilterOperator.EQ),
                                          MetadataFilter(key="year", value=2020, operator=FilterOperator.GTE)],
                                 condition=FilterCondition.AND)
        check(retrieved(recent) == ["film-3", "film-4"], f"drama from 2020 {retrieved(recent)}")
        either = MetadataFilters(filters=[MetadataFilter(key="genre", value=["comedy", "documentary"],
                                                         operator=FilterOperator.IN)])
        check(retrieved(either) == ["film-2", "film-5", "other-1"], f"$in {retrieved(either)}")
        old_or_doc = MetadataFilters(filters=[MetadataFilter(key="year", value=2010, operator=FilterOperator.LT),
                                              MetadataFilter(key="genre", value="documentary")],
                                     condition=FilterCondition.OR)
        check(retrieved(old_or_doc) == ["film-1", "other-1"], f"$or {retrieved(old_or_doc)}")
        not_drama = MetadataFilters(filters=[MetadataFilter(key="genre", value="drama", operator=FilterOperator.NE)])
        check(retrieved(not_drama) == ["film-2", "film-5", "other-1"], f"$ne {retrieved(not_drama)}")

    @flow.step("query_engine_with_filter")
    def _():
        engine = state["index"].as_query_engine(
            similarity_top_k=10, filters=MetadataFilters(filters=[ExactMatchFilter(key="genre", value="comedy")]))
        response = engine.query("Which films are comedies?")
        sources = sorted(n.node.ref_doc_id for n in response.source_nodes)
        check(sources == ["film-2", "film-5"], f"source nodes {sources}")
        check(all(n.node.metadata["genre"] == "comedy" for n in response.source_nodes), "a source is not a comedy")
        check(response.source_nodes[0].node.get_content() in {FILMS["film-2"][0], FILMS["film-5"][0]},
              f"text {response.source_nodes[0].node.get_content()!r}")

    @flow.step("delete_ref_doc")
    def _():
        state["index"].delete_ref_doc("other-1")
        wait_for("the count to drop", lambda: count() == len(FILMS) - 1, timeout=10)
        check("other-1" not in retrieved(None), f"after delete_ref_doc {retrieved(None)}")

    @flow.step("delete_nodes_by_filter")
    def _():
        state["store"].delete_nodes(filters=MetadataFilters(
            filters=[MetadataFilter(key="year", value=2020, operator=FilterOperator.GTE)]))
        check(retrieved(None) == ["film-1", "film-2"], f"after delete_nodes {retrieved(None)}")

    @flow.step("clear")
    def _():
        state["store"].clear()
        wait_for("the namespace to empty", lambda: count() == 0, timeout=10)
        check(retrieved(None) == [], "nodes left after clear")

    @flow.step("delete_index", cleanup=True)
    def _():
        pc.delete_index(INDEX, timeout=-1)
        wait_for("the index to go", lambda: not pc.has_index(INDEX))


if __name__ == "__main__":
    main(Flow("llama-index-vector-stores-pinecone", "llama-index-core", "pinecone"), body)
