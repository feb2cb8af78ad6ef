"""The real `pinecone` SDK (9.1) against the emulator's integrated inference: pc.inference
(embed, rerank, list_models, get_model), create_index_for_model, upsert_records and search.

Vectors come from whichever embedder the process selected (embedder.py): the real local model
when the `embed` extra is installed, else the hashing fallback; every test here but the semantic
one holds for both (texts that share words score higher under either). The model is loaded once
per process, on the first embedding.
"""

from __future__ import annotations

import threading
import time

import httpx
import numpy as np
import pytest
from pinecone import ServerlessSpec
from pinecone.errors.exceptions import ApiError, NotFoundError

from pinery.local.pinecone import embedder as embedding
from tests.conftest import IN_CI
from tests.support.emulator import TEST_API_KEY

# The 9.x SDK against API 2025-10: `make test` runs this with the 9.1.0 overlay (compat/overlay.py).
pytestmark = pytest.mark.sdk9

DOCS = [
    {"_id": "cat", "chunk_text": "the cat sat on the mat", "kind": "pets", "year": 2020},
    {"_id": "dog", "chunk_text": "my dog chased the cat around the garden", "kind": "pets", "year": 2021},
    {"_id": "stocks", "chunk_text": "stock markets fell sharply today", "kind": "finance", "year": 2022},
    {"id": "bread", "chunk_text": "how to bake sourdough bread at home", "kind": "food", "year": 2023},
]


def integrated(pc, name="records", model="llama-text-embed-v2", **embed):
    description = pc.create_index_for_model(name=name, cloud="aws", region="us-east-1", timeout=5,
                                            embed={"model": model, "field_map": {"text": "chunk_text"}, **embed})
    return description, pc.Index(host=description.host)


def raises(status, call, *args, **kwargs) -> ApiError:
    with pytest.raises(ApiError) as caught:
        call(*args, **kwargs)
    assert caught.value.status_code == status, caught.value
    return caught.value


# -- models ------------------------------------------------------------------------------------
def test_list_and_get_models(pinecone_client):
    pc = pinecone_client
    models = pc.inference.list_models()
    assert set(models.names()) >= {"llama-text-embed-v2", "multilingual-e5-large", "pinecone-sparse-english-v0",
                                   "bge-reranker-v2-m3", "cohere-rerank-3.5", "pinecone-rerank-v0"}
    assert set(pc.inference.list_models(type="rerank").names()) == {
        "bge-reranker-v2-m3", "cohere-rerank-3.5", "pinecone-rerank-v0"}
    assert pc.inference.list_models(type="embed", vector_type="sparse").names() == ["pinecone-sparse-english-v0"]

    llama = pc.inference.get_model(model="llama-text-embed-v2")
    assert (llama.type, llama.vector_type, llama.default_dimension) == ("embed", "dense", 1024)
    assert llama.supported_dimensions == [384, 512, 768, 1024, 2048]
    assert llama.supported_metrics == ["cosine", "dotproduct"]
    assert (llama.max_batch_size, llama.max_sequence_length, llama.provider_name) == (96, 2048, "NVIDIA")
    params = {p.parameter: p for p in llama.supported_parameters}
    assert params["input_type"].required and params["input_type"].allowed_values == ["query", "passage"]
    assert params["dimension"].default == 1024 and not params["truncate"].required
    e5 = pc.inference.get_model(model="multilingual-e5-large")
    assert (e5.default_dimension, e5.max_sequence_length, e5.supported_metrics) == (1024, 507, ["cosine", "euclidean"])
    sparse = pc.inference.get_model(model="pinecone-sparse-english-v0")
    assert sparse.vector_type == "sparse" and sparse.default_dimension is None
    cohere = pc.inference.get_model(model="cohere-rerank-3.5")
    assert cohere.type == "rerank" and cohere.max_batch_size == 200
    assert cohere.supported_parameters[0].parameter == "max_chunks_per_doc"
    with pytest.raises(NotFoundError):
        pc.inference.get_model(model="no-such-model")


def test_emulator_says_which_embedder_runs(pinecone_emulator):
    info = httpx.get(f"{pinecone_emulator.url}/_emulator/inference").json()
    assert info["embedder"] == embedding.select().name
    assert info["real_model"] is isinstance(embedding.select(), embedding.MiniLMEmbedder)
    listed = httpx.get(f"{pinecone_emulator.url}/models", headers={"Api-Key": TEST_API_KEY,
                                                                   "X-Pinecone-Api-Version": "2025-10"})
    assert listed.headers["X-Pinery-Embedder"] == info["embedder"]
    old = httpx.get(f"{pinecone_emulator.url}/models", headers={"Api-Key": TEST_API_KEY,
                                                                "X-Pinecone-Api-Version": "2025-01"})
    assert old.status_code == 404  # GET /models came with 2025-04


# -- embed -------------------------------------------------------------------------------------
def test_embed_dense_and_its_dimensions(pinecone_client):
    pc = pinecone_client
    texts = ["the cat sat on the mat", "a cat on a mat", "stock markets fell sharply"]
    out = pc.inference.embed(model="llama-text-embed-v2", inputs=texts, parameters={"input_type": "passage"})
    assert (out.model, out.vector_type, len(out)) == ("llama-text-embed-v2", "dense", 3)
    vectors = np.array([e.values for e in out.data])
    assert vectors.shape == (3, 1024) and np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-4)
    assert out.usage.total_tokens == 6 + 5 + 4
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    again = pc.inference.embed(model="llama-text-embed-v2", inputs=texts[0], parameters={"input_type": "query"})
    assert np.allclose(again.data[0].values, vectors[0], atol=1e-6)  # deterministic
    for dimension in (384, 2048):
        small = pc.inference.embed(model="llama-text-embed-v2", inputs=texts,
                                   parameters={"input_type": "query", "dimension": dimension})
        assert len(small.data[0].values) == dimension
    e5 = pc.inference.embed(model="multilingual-e5-large", inputs=[{"text": "hello"}],
                            parameters={"input_type": "query", "truncate": "END"})
    assert len(e5.data[0].values) == 1024


def test_embed_sparse(pinecone_client):
    out = pinecone_client.inference.embed(model="pinecone-sparse-english-v0", inputs=["the cat sat on the cat mat"],
                                          parameters={"input_type": "passage", "return_tokens": True})
    item = out.data[0]
    assert out.vector_type == "sparse" and item.vector_type == "sparse"
    assert len(item.sparse_indices) == len(item.sparse_values) == len(item.sparse_tokens) == 3
    assert sorted(item.sparse_tokens) == ["cat", "mat", "sat"]
    assert item.sparse_values[item.sparse_tokens.index("cat")] > item.sparse_values[item.sparse_tokens.index("mat")]
    plain = pinecone_client.inference.embed(model="pinecone-sparse-english-v0", inputs=["cat"],
                                            parameters={"input_type": "query"})
    assert plain.data[0].sparse_tokens is None


@pytest.mark.parametrize("model, inputs, parameters, message", [
    ("no-such-model", ["hi"], {"input_type": "query"}, "not found"),
    ("bge-reranker-v2-m3", ["hi"], None, "not an embed model"),
    ("multilingual-e5-large", ["hi"], None, "input_type"),
    ("multilingual-e5-large", ["hi"], {"input_type": "question"}, "Allowed values: query, passage"),
    ("llama-text-embed-v2", ["hi"], {"input_type": "query", "dimension": 100}, "dimension"),
    ("multilingual-e5-large", ["hi"], {"input_type": "query", "dimension": 512}, "Unsupported parameter"),
    ("multilingual-e5-large", ["hi"] * 97, {"input_type": "query"}, "96"),
    ("multilingual-e5-large", ["word " * 600], {"input_type": "query", "truncate": "NONE"}, "507"),
    ("pinecone-sparse-english-v0", ["hi"], {"input_type": "query", "return_tokens": "yes"}, "boolean"),
])
def test_embed_errors(pinecone_client, model, inputs, parameters, message):
    error = raises(400, pinecone_client.inference.embed, model=model, inputs=inputs, parameters=parameters)
    assert message in error.message and error.error_code == "INVALID_ARGUMENT"


def test_embed_truncates_long_inputs_by_default(pinecone_client):
    out = pinecone_client.inference.embed(model="multilingual-e5-large", inputs=["word " * 600],
                                          parameters={"input_type": "passage"})
    assert out.usage.total_tokens == 507


# -- rerank ------------------------------------------------------------------------------------
def test_rerank(pinecone_client):
    pc = pinecone_client
    docs = ["stock markets fell sharply", "the cat sat on the mat", "my cat sleeps on the mat all day"]
    result = pc.inference.rerank(model="bge-reranker-v2-m3", query="a cat on a mat", documents=docs)
    assert result.model == "bge-reranker-v2-m3" and result.usage.rerank_units == 1
    assert [d.index for d in result.data][-1] == 0  # the unrelated one last
    assert all(0 <= d.score <= 1 for d in result.data)
    assert [d.score for d in result.data] == sorted((d.score for d in result.data), reverse=True)
    assert result.data[0].document["text"] in docs[1:]

    top = pc.inference.rerank(model="pinecone-rerank-v0", query="a cat on a mat", documents=docs, top_n=1,
                              return_documents=False)
    assert len(top.data) == 1 and top.data[0].document is None and top.data[0].index in (1, 2)

    fields = [{"title": "Finance", "body": "stock markets fell"}, {"title": "Pets", "body": "the cat sat on the mat"}]
    multi = pc.inference.rerank(model="cohere-rerank-3.5", query="cat mat", documents=fields,
                                rank_fields=["title", "body"], parameters={"max_chunks_per_doc": 10})
    assert multi.data[0].index == 1 and multi.data[0].document == fields[1]


@pytest.mark.parametrize("kwargs, message", [
    ({"model": "no-such-reranker"}, "not found"),
    ({"model": "llama-text-embed-v2"}, "not a rerank model"),
    ({"rank_fields": ["title", "body"]}, "only 1 rank field"),
    ({"rank_fields": ["missing"]}, "no text field 'missing'"),
    ({"documents": ["x"] * 101}, "100"),
    ({"parameters": {"truncate": "MIDDLE"}}, "Allowed values: END, NONE"),
    ({"model": "cohere-rerank-3.5", "parameters": {"max_chunks_per_doc": 5000}}, "between 1 and 3072"),
])
def test_rerank_errors(pinecone_client, kwargs, message):
    call = {"model": "bge-reranker-v2-m3", "query": "q", "documents": ["a", "b"], **kwargs}
    error = raises(400, pinecone_client.inference.rerank, **call)
    assert message in error.message


# -- records -----------------------------------------------------------------------------------
def test_create_upsert_and_search_records(pinecone_client):
    pc = pinecone_client
    description, idx = integrated(pc, dimension=768, metric="dotproduct")
    assert description.dimension == 768 and description.embed.model == "llama-text-embed-v2"
    idx.upsert_records(namespace="docs", records=DOCS)

    found = idx.search(namespace="docs", top_k=2, inputs={"text": "the cat on the mat"})
    hits = found.result.hits
    assert [h.id for h in hits][0] == "cat" and len(hits) == 2
    assert hits[0].fields == {"chunk_text": "the cat sat on the mat", "kind": "pets", "year": 2020.0}
    assert hits[0].score >= hits[1].score
    assert found.usage.read_units >= 1 and found.usage.embed_total_tokens == 5 and found.usage.rerank_units is None

    chosen = idx.search(namespace="docs", top_k=4, inputs={"text": "cat"}, fields=["kind"],
                        filter={"kind": {"$eq": "pets"}})
    assert {h.id for h in chosen.result.hits} == {"cat", "dog"} and all(h.fields.keys() == {"kind"}
                                                                        for h in chosen.result.hits)

    query_vector = pc.inference.embed(model="llama-text-embed-v2", inputs=["sourdough bread"],
                                      parameters={"input_type": "query", "dimension": 768}).data[0].values
    by_vector = idx.search(namespace="docs", top_k=1, vector=query_vector)
    assert by_vector.result.hits[0].id == "bread" and by_vector.usage.embed_total_tokens is None
    by_id = idx.search(namespace="docs", top_k=1, id="stocks")
    assert by_id.result.hits[0].id == "stocks"
    assert idx.search(namespace="docs", top_k=1, id="missing").result.hits == []
    assert idx.search(namespace="elsewhere", top_k=3, inputs={"text": "cat"}).result.hits == []

    # Records are vectors with metadata to the rest of the data plane.
    fetched = idx.fetch(ids=["bread"], namespace="docs").vectors["bread"]
    assert len(fetched.values) == 768 and fetched.metadata["kind"] == "food"
    assert idx.describe_index_stats().namespaces["docs"].vector_count == 4
    idx.upsert_records(namespace="docs", records=[{"_id": "cat", "chunk_text": "a kitten naps", "kind": "pets"}])
    assert idx.fetch(ids=["cat"], namespace="docs").vectors["cat"].metadata == {"chunk_text": "a kitten naps",
                                                                               "kind": "pets"}


def test_search_with_rerank(pinecone_client):
    _, idx = integrated(pinecone_client)
    idx.upsert_records(namespace="docs", records=DOCS)
    reranked = idx.search(namespace="docs", top_k=4, inputs={"text": "cat on the mat"},
                          rerank={"model": "bge-reranker-v2-m3", "rank_fields": ["chunk_text"], "top_n": 2})
    hits = reranked.result.hits
    assert len(hits) == 2 and hits[0].id == "cat" and 0 <= hits[1].score <= hits[0].score <= 1
    assert reranked.usage.rerank_units == 1 and reranked.usage.embed_total_tokens == 4
    own_query = idx.search(namespace="docs", top_k=4, id="stocks",
                           rerank={"model": "cohere-rerank-3.5", "rank_fields": ["chunk_text", "kind"],
                                   "query": "sourdough bread food"})
    assert own_query.result.hits[0].id == "bread"
    error = raises(400, idx.search, namespace="docs", top_k=2, id="stocks",
                   rerank={"model": "bge-reranker-v2-m3", "rank_fields": ["chunk_text"]})
    assert "rerank.query is required" in error.message
    raises(400, idx.search, namespace="docs", top_k=2, inputs={"text": "cat"},
           rerank={"model": "bge-reranker-v2-m3", "rank_fields": ["year"]})  # not a text field


def test_sparse_integrated_index(pinecone_client):
    description, idx = integrated(pinecone_client, name="sparse-records", model="pinecone-sparse-english-v0")
    assert description.vector_type == "sparse" and description.metric == "dotproduct"
    idx.upsert_records(namespace="docs", records=DOCS)
    hits = idx.search(namespace="docs", top_k=4, inputs={"text": "sourdough bread"}).result.hits
    assert hits[0].id == "bread" and hits[0].score > 0.5
    assert {h.id for h in hits[1:]} <= {"cat", "dog", "stocks"}
    fetched = idx.fetch(ids=["cat"], namespace="docs").vectors["cat"]
    assert fetched.sparse_values is not None and len(fetched.sparse_values.indices) == 3
    matched = idx.search(namespace="docs", top_k=4, inputs={"text": "cat"},
                         match_terms={"strategy": "all", "terms": ["cat", "garden"]})
    assert [h.id for h in matched.result.hits] == ["dog"]
    indices, values, _ = embedding.sparse_embed("stock markets")
    by_vector = idx.search(namespace="docs", top_k=1, vector={"sparse_indices": indices, "sparse_values": values})
    assert by_vector.result.hits[0].id == "stocks"


def test_records_errors(pinecone_client):
    pc = pinecone_client
    plain = pc.Index(host=pc.create_index(name="plain", dimension=4, timeout=5,
                                          spec=ServerlessSpec(cloud="aws", region="us-east-1")).host)
    error = raises(400, plain.upsert_records, namespace="ns", records=[{"_id": "a", "chunk_text": "hi"}])
    assert "not configured for integrated inference" in error.message
    raises(400, plain.search, namespace="ns", top_k=1, inputs={"text": "hi"})
    plain.upsert(vectors=[("v", [1, 0, 0, 0], {"text": "hello"})], namespace="ns")
    assert plain.search(namespace="ns", top_k=1, vector=[1, 0, 0, 0]).result.hits[0].fields == {"text": "hello"}
    raises(400, plain.search, namespace="ns", top_k=1, vector=[1, 0])  # wrong dimension
    raises(400, plain.search, namespace="ns", top_k=1, vector=[1, 0, 0, 0], match_terms={"terms": ["x"]})

    _, idx = integrated(pc)
    error = raises(400, idx.upsert_records, namespace="ns", records=[{"_id": "a", "text": "wrong field"}])
    assert "'chunk_text'" in error.message
    raises(400, idx.upsert_records, namespace="ns", records=[{"_id": "a", "chunk_text": 42}])
    raises(400, idx.upsert_records, namespace="ns", records=[{"_id": "a", "chunk_text": "x", "meta": {"nested": 1}}])
    error = raises(400, idx.upsert_records, namespace="ns",
                   records=[{"_id": f"r{i}", "chunk_text": "x"} for i in range(97)])
    assert "96" in error.message
    raises(400, idx.search, namespace="ns", top_k=1, inputs={"text": "x"}, id="a")
    raises(400, idx.search, namespace="ns", top_k=20000, inputs={"text": "x"})
    raises(400, idx.search, namespace="ns", top_k=1, inputs={"text": "x"},
           rerank={"model": "llama-text-embed-v2", "rank_fields": ["chunk_text"]})
    ghost = pc.Index(host=pc.describe_index("records").host.replace("/records", "/ghost"))
    raises(404, ghost.upsert_records, namespace="ns", records=[{"_id": "a", "chunk_text": "x"}])


def test_embedding_runs_off_the_event_loop(pinecone_client, monkeypatch):
    """A slow embedding (a big batch on a real model) leaves the emulator answering other calls."""

    class Slow(embedding.HashingEmbedder):
        name = "slow"

        def embed(self, texts, dimension, input_type="passage"):
            time.sleep(1.5)
            return super().embed(texts, dimension, input_type)

    _, idx = integrated(pinecone_client)
    monkeypatch.setattr(embedding, "_selected", Slow())
    worker = threading.Thread(target=idx.upsert_records, kwargs={
        "namespace": "ns", "records": [{"_id": f"r{i}", "chunk_text": f"text {i}"} for i in range(96)]})
    worker.start()
    time.sleep(0.3)
    started = time.monotonic()
    pinecone_client.list_indexes()
    assert time.monotonic() - started < 1.0
    worker.join(10)
    assert idx.describe_index_stats().namespaces["ns"].vector_count == 96


# -- the real model ----------------------------------------------------------------------------
def test_real_model_ranks_by_meaning(pinecone_client):
    """With the `embed` extra, a paraphrase sharing no word with its match still finds it."""
    if not embedding.MiniLMEmbedder.available():
        if IN_CI:  # `make install` installs the extra
            pytest.fail("the embed extra is not installed, and CI must not skip this test")
        pytest.skip("the embed extra (a real local embedding model) is not installed")
    if not isinstance(embedding.select(), embedding.MiniLMEmbedder):
        pytest.skip(f"{embedding.ENV} chose {embedding.select().name}")
    _, idx = integrated(pinecone_client)
    texts = ["the cat sat on the mat", "stock markets fell sharply today", "quantum chromodynamics lecture notes",
             "how to bake sourdough bread", "the train to Paris leaves at noon"]
    idx.upsert_records(namespace="ns", records=[{"_id": f"t{i}", "chunk_text": t} for i, t in enumerate(texts)])
    hits = idx.search(namespace="ns", top_k=5, inputs={"text": "a feline resting on a rug"}).result.hits
    assert hits[0].fields["chunk_text"] == "the cat sat on the mat"
    assert hits[0].score > hits[1].score + 0.2
