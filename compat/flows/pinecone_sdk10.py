"""The application flow with the `pinecone` SDK 10.x, which speaks API 2026-07.

10.x replaced the control plane's names: `pc.indexes.create(schema=..., deployment=...)`
instead of `create_index(dimension=..., metric=..., spec=ServerlessSpec(...))`, an index model
whose vector layout is in `schema.fields`, and `pc.index(name)` as the bridge to the data
plane. A schema whose fields are exactly the reserved `_values` (dense) and `_sparse_values`
(sparse) is a plain vector index, served by the vectors API (`upsert`, `query`, ...), so the
data-plane steps are the 5.x-9.x flow's (pinecone_sdk.data_steps).
"""

from __future__ import annotations

from _flow import API_KEY, DIMENSION, HOST, HYBRID, INDEX, NAMESPACE, Flow, check, main, wait_for
from pinecone_sdk import data_steps, records_flow

METRIC = "dotproduct" if HYBRID else "cosine"


def names(pc) -> list[str]:
    return [model.name for model in pc.indexes.list()]


def body(flow: Flow) -> None:
    from pinecone import Pinecone

    pc = Pinecone(api_key=API_KEY, host=HOST)
    state = {}

    @flow.step("create_index", critical=True)
    def _():
        fields = {"_values": {"type": "dense_vector", "dimension": DIMENSION, "metric": METRIC}}
        if HYBRID:
            fields["_sparse_values"] = {"type": "sparse_vector"}
        pc.indexes.create(name=INDEX, schema={"fields": fields}, timeout=-1,
                          deployment={"deployment_type": "managed", "cloud": "aws", "region": "us-east-1"})
        check(pc.indexes.exists(INDEX), f"indexes.exists({INDEX!r}) is false")
        check(INDEX in names(pc), f"{INDEX} is not in indexes.list() {names(pc)}")

    @flow.step("wait_ready", critical=True)
    def _():
        described = wait_for("the index to be ready",
                             lambda: (d := pc.indexes.describe(INDEX)) and d.status.ready and d)
        dense = described.schema.fields["_values"]
        check(dense.dimension == DIMENSION and dense.metric == METRIC, f"schema {described.schema}")
        if HYBRID:
            check("_sparse_values" in described.schema.fields, f"schema {described.schema}")
        deployment = described.deployment
        check(type(deployment).__name__ == "ManagedDeployment" and deployment.cloud == "aws"
              and deployment.region == "us-east-1", f"deployment {deployment}")
        check(bool(described.host), "no host")
        state["index"] = pc.index(INDEX)

    data_steps(flow, state)

    @flow.step("integrated_inference")
    def _():
        # A legacy integrated index (pc.indexes.create_for_model; its embedding is a semantic_text
        # schema field) with the records API, as 6.x-9.x use it.
        records_flow(create=pc.indexes.create_for_model, describe=pc.indexes.describe,
                     open_index=lambda d: pc.index(d.name), delete=lambda n: pc.indexes.delete(n, timeout=-1),
                     exists=pc.indexes.exists)

    @flow.step("documents_integrated_embedding")
    def _():
        # 10.x's own way: a document index whose string field embeds its text (embed) and is
        # full-text searchable, searched by text through index.documents.
        name = f"{INDEX}-documents"
        pc.indexes.create(name=name, timeout=-1, schema={"fields": {
            "body": {"type": "string", "embed": {"model": "llama-text-embed-v2", "dimension": 384}}}})
        try:
            described = wait_for("the document index to be ready",
                                 lambda: (d := pc.indexes.describe(name)) and d.status.ready and d)
            body = described.schema.fields["body"]
            check(body.embed.dimension == 384 and body.store_text is True, f"schema {described.schema}")
            docs = pc.index(name).documents
            written = docs.upsert(namespace=NAMESPACE, documents=[
                {"_id": "cat", "body": "the cat sat on the mat", "genre": "pets"},
                {"_id": "stocks", "body": "stock markets fell sharply today", "genre": "finance"}])
            check(written.upserted_count == 2 and written.usage.embed_total_tokens > 0, f"upsert {written}")
            found = docs.search(namespace=NAMESPACE, top_k=2, include_fields=["genre"],
                                score_by=[{"type": "embed", "field": "body", "query": "where did the cat sit"}])
            check([d.id for d in found.matches] == ["cat", "stocks"] and found.matches[0].genre == "pets",
                  f"embed search {found.matches}")
            words = docs.search(namespace=NAMESPACE, top_k=2,
                                score_by=[{"type": "text", "query": "stock markets", "fields": ["body"]}])
            check([d.id for d in words.matches] == ["stocks"], f"text search {words.matches}")
        finally:
            pc.indexes.delete(name, timeout=-1)
            wait_for("the document index to go", lambda: not pc.indexes.exists(name))

    @flow.step("delete_index", cleanup=True)
    def _():
        pc.indexes.delete(INDEX, timeout=-1)
        wait_for("the index to go", lambda: not pc.indexes.exists(INDEX))


if __name__ == "__main__":
    main(Flow("pinecone"), body)
