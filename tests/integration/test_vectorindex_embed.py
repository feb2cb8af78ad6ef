"""Integrated inference through the operator (KopfRunner) and the emulator: an index created for
a model, its read/write parameters changed in place with one configure call, the connection
ConfigMap naming the text field, and an application on the 10.x SDK upserting and searching text."""

from __future__ import annotations

import pytest
from kubernetes.client.exceptions import ApiException

from tests.support.vectorindex import World

pytestmark = pytest.mark.slow

EMBED = {"model": "llama-text-embed-v2", "fieldMap": {"text": "chunk"}, "writeParameters": {"input_type": "passage"}}


def test_embed_index_is_created_for_its_model_and_configured_in_place(vi_world: World):
    w = vi_world
    w.create("semantic", embed=EMBED, connectionConfigMap="semantic-conn")
    obj = w.wait_ready("semantic")
    field = w.index("semantic")["schema"]["fields"]["chunk"]
    assert (field["type"], field["model"], field["write_parameters"]) == ("semantic_text", "llama-text-embed-v2", {"input_type": "passage"})
    assert w.config_map("semantic-conn").data["PINECONE_TEXT_FIELD"] == "chunk"

    count = w.counting("configure_index")
    w.update("semantic", {"embed": {"readParameters": {"input_type": "query", "truncate": "END"}}})
    assert count()["configure_index"] == 1
    assert w.index("semantic")["schema"]["fields"]["chunk"]["read_parameters"] == {"input_type": "query", "truncate": "END"}
    configuring = [m for _, r, m in w.events("semantic") if r == "Configuring"]
    assert any("embed readParameters of field chunk" in m for m in configuring), configuring

    # the model cannot change in place: the API server refuses it
    with pytest.raises(ApiException) as refused:
        w.patch_spec("semantic", {"embed": {"model": "multilingual-e5-large"}})
    assert refused.value.status == 422 and "immutable" in refused.value.body

    pc = w.pinecone()
    try:
        index = pc.index(host=obj["status"]["host"])
        index.upsert_records(namespace="ns", records=[{"_id": "1", "chunk": "apples are red fruit"}, {"_id": "2", "chunk": "the sky is blue"}])
        found = index.search(namespace="ns", top_k=1, inputs={"text": "red fruit"})
        assert [hit.id_ for hit in found.result.hits] == ["1"]
    finally:
        pc.close()
