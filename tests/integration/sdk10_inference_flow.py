"""Integrated inference through the `pinecone` 10.x SDK (API 2026-07) against a running emulator.

Run with the 10.x venv's python: `sdk10_inference_flow.py <emulator url> <api key>`. Each step
prints `ok <step>`; the first failure raises (non-zero exit). test_pinecone_sdk10.py runs it.

Covered: pc.inference (embed, rerank, list_models, get_model, with their errors), a legacy
integrated index (create_for_model, upsert_records, search by text with rerank), and a document
index whose `string` fields carry `embed`, `sparse_embed` and `full_text_search` (documents
upsert, search by embed / sparse_embed / text, `$match_*` filters, include_fields, update, fetch,
stats). The texts that belong together share words, so the related one ranks first under either
of the emulator's embedders (the local model or the hashing fallback).
"""

from __future__ import annotations

import json
import sys
import urllib.request

import pinecone
from pinecone import EmbedModel, Pinecone, RerankModel
from pinecone.errors.exceptions import ApiError, NotFoundError, PineconeError

URL, KEY = sys.argv[1], sys.argv[2]


def ok(step: str) -> None:
    print("ok", step, flush=True)


def expect_error(fn, status: int, text: str, kind: type = ApiError) -> None:
    try:
        fn()
    except kind as exc:
        assert exc.status_code == status, (exc.status_code, str(exc))
        assert text in str(exc), str(exc)
        return
    raise AssertionError(f"expected a {status} containing {text!r}")


def raw(method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(URL + path, data=data, method=method, headers={
        "Api-Key": KEY, "X-Pinecone-Api-Version": "2025-10", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req) as resp:
            return resp.status, json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


assert pinecone.__version__.startswith("10."), pinecone.__version__
pc = Pinecone(api_key=KEY, host=URL)

# -- pc.inference: embed -----------------------------------------------------------------------
dense = pc.inference.embed(model="llama-text-embed-v2", inputs=["the cat sat on the mat", "stock markets fell"],
                           parameters={"input_type": "passage", "dimension": 512})
assert dense.model == "llama-text-embed-v2" and dense.vector_type == "dense" and len(dense) == 2
assert all(len(e.values) == 512 for e in dense) and dense.usage.total_tokens > 0
default = pc.inference.embed(model=EmbedModel.Multilingual_E5_Large, inputs="a single text",
                             parameters={"input_type": "query"})
assert default.model == "multilingual-e5-large" and len(default.data) == 1 and len(default.data[0].values) == 1024
sparse = pc.inference.embed(model="pinecone-sparse-english-v0", inputs=["sparse retrieval of keywords"],
                            parameters={"input_type": "passage", "return_tokens": True})
assert sparse.vector_type == "sparse" and len(sparse.data[0].sparse_indices) == len(sparse.data[0].sparse_values)
assert "keywords" in sparse.data[0].sparse_tokens, sparse.data[0].sparse_tokens
expect_error(lambda: pc.inference.embed(model="no-such-model", inputs=["x"], parameters={"input_type": "query"}),
             404, "Model 'no-such-model' not found", NotFoundError)
expect_error(lambda: pc.inference.embed(model="llama-text-embed-v2", inputs=["x"]), 400,
             "Missing required parameter 'input_type'")
expect_error(lambda: pc.inference.embed(model="llama-text-embed-v2", inputs=["x"],
                                        parameters={"input_type": "query", "dimension": 100}), 400,
             "Invalid value 100 for parameter 'dimension'")
expect_error(lambda: pc.inference.embed(model="bge-reranker-v2-m3", inputs=["x"]), 400, "is a rerank model")
ok("inference.embed (dense, enum member, sparse with tokens, errors)")

# -- pc.inference: rerank ----------------------------------------------------------------------
docs = ["Stock markets fell sharply today.", "The cat sat on the mat.", "How to bake sourdough bread."]
ranked = pc.inference.rerank(model=RerankModel.Bge_Reranker_V2_M3, query="where did the cat sit", documents=docs)
assert ranked.model == "bge-reranker-v2-m3" and ranked.data[0].index == 1, ranked.data
assert ranked.data[0].document["text"] == docs[1] and ranked.usage.rerank_units == 1
assert ranked.data[0].score >= ranked.data[1].score >= ranked.data[2].score
top = pc.inference.rerank(model="cohere-rerank-3.5", query="bread baking", top_n=1, return_documents=False,
                          documents=[{"id": "a", "title": "markets", "body": "stocks fell"},
                                     {"id": "b", "title": "baking", "body": "bake sourdough bread"}],
                          rank_fields=["title", "body"])
assert len(top.data) == 1 and top.data[0].index == 1 and top.data[0].document is None, top.data
expect_error(lambda: pc.inference.rerank(model="bge-reranker-v2-m3-typo", query="q", documents=["d"]), 404,
             "Model 'bge-reranker-v2-m3-typo' not found", NotFoundError)
expect_error(lambda: pc.inference.rerank(model="bge-reranker-v2-m3", query="q", documents=[{"a": "x", "b": "y"}],
                                         rank_fields=["a", "b"]), 400, "supports only 1 rank field")
ok("inference.rerank (order, top_n, rank_fields, errors)")

# -- pc.inference: models ----------------------------------------------------------------------
assert set(pc.inference.list_models().names()) >= {"llama-text-embed-v2", "multilingual-e5-large",
                                                   "pinecone-sparse-english-v0", "bge-reranker-v2-m3"}
assert pc.inference.list_models(type="embed", vector_type="sparse").names() == ["pinecone-sparse-english-v0"]
assert set(pc.inference.list_models(type="rerank").names()) == {"bge-reranker-v2-m3", "cohere-rerank-3.5",
                                                                "pinecone-rerank-v0"}
llama = pc.inference.get_model(model="llama-text-embed-v2")
assert (llama.type, llama.vector_type, llama.default_dimension) == ("embed", "dense", 1024)
assert llama.supported_dimensions == [384, 512, 768, 1024, 2048] and llama.supported_metrics == ["cosine", "dotproduct"]
assert {p.parameter for p in llama.supported_parameters} == {"input_type", "truncate", "dimension"}
assert pc.inference.model.get("bge-reranker-v2-m3").type == "rerank"
expect_error(lambda: pc.inference.get_model(model="nope"), 404, "nope", NotFoundError)
ok("inference.list_models, get_model")

# -- a legacy integrated index: create_for_model, upsert_records, search ----------------------
made = pc.indexes.create_for_model(name="records", cloud="aws", region="us-east-1", timeout=10,
                                   embed={"model": "multilingual-e5-large", "field_map": {"text": "chunk_text"}},
                                   schema={"fields": {"kind": {"filterable": True}}})
field = made.schema.fields["chunk_text"]
assert type(field).__name__ == "SemanticTextField" and field.model == "multilingual-e5-large", made.schema
assert field.metric == "cosine" and made.embed.model == "multilingual-e5-large"
assert made.embed.field_map == {"text": "chunk_text"} and made.status.ready
assert type(made.deployment).__name__ == "ManagedDeployment" and made.deployment.region == "us-east-1"
assert pc.indexes.describe("records").schema.fields["kind"].filterable is True
status, old = raw("GET", "/indexes/records")  # the same index under 2025-10
assert status == 200 and old["embed"]["model"] == "multilingual-e5-large" and old["dimension"] == 1024, old
shim = pc.create_index_for_model(name="records-llama", cloud="aws", region="us-east-1", timeout=10,
                                 embed={"model": "llama-text-embed-v2", "field_map": {"text": "body"}, "dimension": 384})
assert shim.schema.fields["body"].model == "llama-text-embed-v2"
records = pc.index(name="records")
records.upsert_records(namespace="pets", records=[
    {"_id": "cat", "chunk_text": "the cat sat on the mat", "kind": "pets"},
    {"_id": "dog", "chunk_text": "my dog chased a ball in the garden", "kind": "pets"},
    {"id": "stocks", "chunk_text": "stock markets fell sharply today", "kind": "finance"}])
hits = records.search(namespace="pets", top_k=3, inputs={"text": "where did the cat sit on the mat"},
                      fields=["chunk_text", "kind"])
assert hits.result.hits[0].id == "cat" and hits.result.hits[0].fields["kind"] == "pets", hits.result.hits
assert hits.usage.embed_total_tokens > 0 and hits.usage.read_units > 0
reranked = records.search(namespace="pets", top_k=3, inputs={"text": "stock markets today"},
                          rerank={"model": "bge-reranker-v2-m3", "rank_fields": ["chunk_text"], "top_n": 1})
assert [h.id for h in reranked.result.hits] == ["stocks"] and reranked.usage.rerank_units == 1, reranked
only_pets = records.search(namespace="pets", top_k=3, inputs={"text": "stock markets"}, filter={"kind": "pets"})
assert {h.id for h in only_pets.result.hits} == {"cat", "dog"}
assert records.describe_index_stats().namespaces["pets"].vector_count == 3
expect_error(lambda: records.upsert_records(namespace="pets", records=[{"_id": "x", "other": "no text"}]), 400,
             "has no 'chunk_text' field")
expect_error(lambda: pc.indexes.create_for_model(name="bad-model", cloud="aws", region="us-east-1", timeout=-1,
                                                 embed={"model": "nope", "field_map": {"text": "t"}}), 400, "nope")
ok("create_for_model (semantic_text), upsert_records, search with text, rerank and filter")

# -- a document index with integrated embedding and full-text search ---------------------------
articles = pc.indexes.create(name="articles", timeout=10, schema={"fields": {
    "body": {"type": "string", "embed": {"model": "llama-text-embed-v2", "dimension": 512}},
    "keywords": {"type": "string", "sparse_embed": {}},
    "title": {"type": "string", "full_text_search": {"language": "en"}}}})
body = articles.schema.fields["body"]
assert type(body).__name__ == "StringField" and body.embed.model == "llama-text-embed-v2"
assert (body.embed.dimension, body.embed.metric) == (512, "cosine"), body.embed
assert body.embed.write_parameters["input_type"] == "passage" and body.embed.read_parameters["input_type"] == "query"
assert body.store_text is True and body.full_text_search.language == "en", body  # stored text is searchable
keywords = articles.schema.fields["keywords"]
assert keywords.sparse_embed.model == "pinecone-sparse-english-v0" and keywords.embed is None
assert articles.schema.fields["title"].full_text_search.stemming is False
assert articles.dimension == 512 and articles.metric == "cosine"
status, old = raw("GET", "/indexes/articles")
assert status == 200 and old["dimension"] == 512 and old["metric"] == "cosine", old
ok("create a document index with embed, sparse_embed and full_text_search")

docs = pc.index(name="articles")
written = docs.documents.upsert(namespace="en", documents=[
    {"_id": "cats", "title": "Cats at home", "body": "the cat sat on the mat and purred",
     "keywords": "cat mat purr", "year": 2020},
    {"_id": "stocks", "title": "Markets today", "body": "stock markets fell sharply on interest rates",
     "keywords": "stocks markets rates", "year": 2021},
    {"_id": "bread", "title": "Baking bread at home", "body": "how to bake sourdough bread in a home oven",
     "keywords": "bread sourdough oven", "year": 2022}])
assert written.upserted_count == 3 and written.usage.embed_total_tokens > 0, written
found = docs.documents.search(namespace="en", top_k=3, include_fields=["title", "year"],
                              score_by=[{"type": "embed", "field": "body", "query": "a cat on a mat"}])
assert found.matches[0].id == "cats" and found.matches[0].title == "Cats at home", found.matches
assert found.matches[0].score > found.matches[-1].score and found.usage.embed_total_tokens > 0
sparse_found = docs.documents.search(namespace="en", top_k=3,
                                     score_by=[{"type": "sparse_embed", "field": "keywords", "query": "sourdough oven"}])
assert sparse_found.matches[0].id == "bread" and sparse_found.matches[0].score > 0, sparse_found.matches
text_found = docs.documents.search(namespace="en", top_k=3, include_fields=["*"],
                                   score_by=[{"type": "text", "query": "home", "fields": ["title"]}])
# Only the documents with the word; BM25 ranks the shorter title first (length normalisation).
assert [d.id for d in text_found.matches] == ["cats", "bread"], text_found.matches
assert text_found.matches[0].body == "the cat sat on the mat and purred" and text_found.matches[0].year == 2020.0
both = docs.documents.search(namespace="en", top_k=3, score_by=[
    {"type": "text", "query": "bread", "fields": ["title", "body"]}, {"type": "text", "query": "markets", "fields": ["title"]}])
assert {d.id for d in both.matches} == {"bread", "stocks"} and both.matches[0].id == "bread", both.matches
ok("documents upsert embeds; search by embed, sparse_embed and text (BM25)")

phrase = docs.documents.search(namespace="en", top_k=3, filter={"body": {"$match_phrase": "sourdough bread"}},
                               score_by=[{"type": "embed", "field": "body", "query": "a cat on a mat"}])
assert [d.id for d in phrase.matches] == ["bread"], phrase.matches
all_words = docs.documents.fetch(namespace="en", filter={"title": {"$match_all": "home cats"}})
assert list(all_words.documents) == ["cats"], all_words.documents
mixed = docs.documents.search(namespace="en", top_k=3, score_by=[{"type": "text", "query": "home", "fields": ["title"]}],
                              filter={"$and": [{"title": {"$match_any": "home markets"}}, {"year": {"$gte": 2021}}]})
assert [d.id for d in mixed.matches] == ["bread"], mixed.matches
expect_error(lambda: docs.documents.search(namespace="en", top_k=1, filter={"body": {"$eq": "x"}},
                                           score_by=[{"type": "text", "query": "x", "fields": ["title"]}]),
             400, "takes only the text-match operators")
expect_error(lambda: docs.documents.search(namespace="en", top_k=1, filter={"year": {"$match_any": "x"}},
                                           score_by=[{"type": "text", "query": "x", "fields": ["title"]}]),
             400, "'year' is metadata")
expect_error(lambda: docs.documents.delete(namespace="en", filter={"title": {"$match_any": "home"}}), 400,
             "not accepted in a delete filter")
expect_error(lambda: docs.documents.search(namespace="en", top_k=1, score_by=[{"type": "query_string", "query": "a"}]),
             501, "query_string")
expect_error(lambda: docs.documents.search(namespace="en", top_k=1,
                                           score_by=[{"type": "embed", "field": "title", "query": "x"}]),
             400, "cannot be scored by 'embed'")
ok("$match_phrase/$match_all/$match_any filters; refusals")

docs.documents.update(namespace="en", documents=[{"_id": "stocks", "body": "a cat on a mat, watching stock prices"}])
moved = docs.documents.search(namespace="en", top_k=3, score_by=[{"type": "embed", "field": "body", "query": "stock prices"}])
assert moved.matches[0].id == "stocks", moved.matches
kept = docs.documents.fetch(namespace="en", ids=["stocks"])
assert kept.documents["stocks"].title == "Markets today" and kept.documents["stocks"].body.startswith("a cat")
upd = docs.documents.update(namespace="en", filter={"year": {"$gte": 2022}}, set_fields={"reviewed": True})
assert upd.matched_records == 1
again = docs.documents.search(namespace="en", top_k=1, score_by=[{"type": "embed", "field": "body", "query": "sourdough"}])
assert again.matches[0].id == "bread"  # a metadata patch keeps the embedding
expect_error(lambda: docs.documents.upsert(namespace="en", documents=[{"_id": "x", "title": "no body"}]), 400,
             "the string field 'body' is required")
stats = docs.describe_index_stats()
assert stats.namespaces["en"].vector_count == 3 and stats.dimension == 512, stats
ok("documents update re-embeds changed text; fetch; stats")

hidden = pc.indexes.create(name="hidden", timeout=10, schema={"fields": {
    "note": {"type": "string", "store_text": False, "embed": {"model": "multilingual-e5-large"}}}})
assert hidden.schema.fields["note"].store_text is False and hidden.schema.fields["note"].full_text_search is None
assert hidden.schema.fields["note"].embed.dimension == 1024
hd = pc.index(name="hidden")
hd.documents.upsert(namespace="n", documents=[{"_id": "a", "note": "private cat notes", "tag": "x"},
                                              {"_id": "b", "note": "private stock notes", "tag": "y"}])
got = hd.documents.search(namespace="n", top_k=1, include_fields=["*"],
                          score_by=[{"type": "embed", "field": "note", "query": "cat"}])
assert got.matches[0].id == "a" and got.matches[0].tag == "x" and "note" not in got.matches[0].to_dict(), got.matches
expect_error(lambda: hd.documents.fetch(namespace="n", ids=["a"], include_fields=["note"]), 400, "store_text false")
ok("store_text false: embedded, never returned")

expect_error(lambda: pc.indexes.create(name="bad", schema={"fields": {"t": {"type": "string", "embed": {
    "model": "pinecone-sparse-english-v0"}}}}), 400, "is not a dense embedding model")
expect_error(lambda: pc.indexes.create(name="bad", schema={"fields": {"t": {"type": "string", "embed": {
    "model": "llama-text-embed-v2", "dimension": 100}}}}), 400, "dimension 100 is not supported")
expect_error(lambda: pc.indexes.create(name="bad", schema={"fields": {"t": {"type": "string", "embed": {
    "model": "multilingual-e5-large", "metric": "dotproduct"}}}}), 400, "metric 'dotproduct' is not supported")
expect_error(lambda: pc.indexes.create(name="bad", schema={"fields": {
    "t": {"type": "string", "embed": {}}, "v": {"type": "dense_vector", "dimension": 2, "metric": "cosine"}}}),
    400, "one dense vector slot")
ok("create refusals (model kind, dimension, metric, slot)")

for name in ("records", "records-llama", "articles", "hidden"):
    pc.indexes.delete(name, timeout=10)
assert [i.name for i in pc.indexes.list()] == []
ok("delete indexes")
try:
    pc.close()
except PineconeError:
    pass
print("done", flush=True)
