"""Declared full-text fields through the operator (KopfRunner) and the emulator: a VectorIndex
with `textFields` is created with a document schema, its connection ConfigMap says what an
application addresses, an application on the 10.x SDK writes documents and finds them by text and
by vector, the vectors API refuses writes to it, and adopting a document index compares its fields."""

from __future__ import annotations

import pytest

from tests.support.vectorindex import API_KEY, World

pytestmark = pytest.mark.slow

TEXT_FIELDS = [{"name": "title", "language": "en"}, {"name": "body", "stemming": True, "stopWords": True}]


def test_text_fields_make_a_document_index_that_applications_search_by_text(vi_world: World):
    w = vi_world
    w.create("articles", vectorType="hybrid", dimension=3, textFields=TEXT_FIELDS,
             fieldNames={"sparse": "keywords"}, connectionConfigMap="articles-conn")
    obj = w.wait_ready("articles")
    fields = w.index("articles")["schema"]["fields"]
    assert fields["values"]["type"] == "dense_vector" and fields["values"]["dimension"] == 3
    assert fields["values"]["metric"] == "dotproduct" and fields["keywords"]["type"] == "sparse_vector"
    body = fields["body"]["full_text_search"]
    assert (body["language"], body["stemming"], body["stop_words"]) == ("en", True, True)
    assert fields["title"]["full_text_search"]["stemming"] is False
    conn = w.config_map("articles-conn").data
    assert conn["PINECONE_WRITE_API"] == "documents" and conn["PINECONE_FULL_TEXT_FIELDS"] == "title,body"
    assert (conn["PINECONE_DENSE_FIELD"], conn["PINECONE_SPARSE_FIELD"]) == ("values", "keywords")

    pc = w.pinecone()
    try:
        index = pc.index(host=obj["status"]["host"])
        dense, sparse = conn["PINECONE_DENSE_FIELD"], conn["PINECONE_SPARSE_FIELD"]
        index.documents.upsert(namespace="ns", documents=[
            {"_id": "cats", "title": "Cats at home", "body": "the cat sat on the mat", dense: [1.0, 0.0, 0.0],
             sparse: {"indices": [1], "values": [1.0]}},
            {"_id": "bread", "title": "Baking bread", "body": "sourdough bread in a home oven", dense: [0.0, 1.0, 0.0],
             sparse: {"indices": [2], "values": [1.0]}}])
        by_text = index.documents.search(namespace="ns", top_k=2, score_by=[{"type": "text", "query": "sourdough", "fields": ["body"]}])
        assert [d.id for d in by_text.matches] == ["bread"]
        by_vector = index.documents.search(namespace="ns", top_k=1, score_by=[{"type": "dense_vector", "field": dense, "values": [1.0, 0.1, 0.0]}])
        assert [d.id for d in by_vector.matches] == ["cats"]
        # the vectors API refuses writes to a document schema (v10-2026-07-vector-models.md)
        with pytest.raises(Exception, match="documents API"):
            index.upsert(vectors=[("x", [1.0, 0.0, 0.0])], namespace="ns")
    finally:
        pc.close()


def test_adopting_a_document_index_compares_its_declared_fields(vi_world: World):
    w = vi_world
    pc = w.pinecone(API_KEY)
    try:
        pc.indexes.create(name="made-by-hand", timeout=10, schema={"fields": {
            "embedding": {"type": "dense_vector", "dimension": 8, "metric": "cosine"},
            "body": {"type": "string", "full_text_search": {"language": "english", "stemming": True}}}})
    finally:
        pc.close()
    count = w.counting("create_index", "configure_index")
    w.create("made-by-hand", adoptExisting=True, textFields=[{"name": "body"}], fieldNames={"dense": "embedding"})
    cond = w.wait_condition("made-by-hand", "Ready", "False", "SpecMismatch")
    assert "textFields: spec wants {'body': 'en'}, index has {'body': 'en stemming'}" in cond["message"], cond
    assert count() == {"create_index": 0, "configure_index": 0}

    # the spec's text fields are immutable: the object is recreated with the index's fields
    w.delete("made-by-hand")
    w.wait_gone("made-by-hand")
    w.create("made-by-hand", adoptExisting=True, textFields=[{"name": "body", "stemming": True}], fieldNames={"dense": "embedding"})
    w.wait_ready("made-by-hand")
    assert count()["create_index"] == 0
