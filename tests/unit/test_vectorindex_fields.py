"""Declared fields of a VectorIndex (full-text `textFields`, named vector `fieldNames`): the rules,
the 2026-07 create request, adoption and the connection ConfigMap, table-driven.

The request shapes are the 10.x SDK's (pinecone/models/indexes/schema.py StringField,
FullTextSearchConfig; pinecone/client/indexes.py Indexes.create, whose docstring's hybrid example
declares `your_vector`, `keywords` and a full-text `body` field)."""

import pytest

from pinery.api.vectorindex import VectorIndexSpec
from pinery.vectorindex import accepted
from pinery.vectorindex.adoption import immutable_differences
from pinery.vectorindex.desired import connection_fields, create_request, vector_field_names, write_api
from pinery.vectorindex.ownership import ownership_tags

OWNED = ownership_tags("prod", "search", "docs")
SERVERLESS = {"serverless": {"cloud": "aws", "region": "us-east-1"}}
BODY = {"name": "body", "language": "en", "stemming": True, "stopWords": True}


def spec(**kw):
    return VectorIndexSpec.model_validate({"dimension": 8, **SERVERLESS, **kw})


def problems(**kw) -> list[str]:
    raw = {"dimension": 8, **SERVERLESS, **kw}
    found: list = []
    VectorIndexSpec.model_validate({k: v for k, v in raw.items() if v is not None}, context={"problems": found})
    return [p.path for p in found]


@pytest.mark.parametrize(
    "extra, paths",
    [
        ({"textFields": [BODY]}, []),
        ({"textFields": [{"name": "title"}], "vectorType": "hybrid", "fieldNames": {"dense": "embedding", "sparse": "keywords"}}, []),
        ({"fieldNames": {"dense": "embedding"}}, []),  # a document schema without text fields
        ({"vectorType": "sparse", "dimension": None, "textFields": [{"name": "t"}]}, []),
        ({"textFields": [{"name": "t", "stopWords": True}]}, ["spec.textFields[0].stopWords"]),
        ({"textFields": [{"name": "values"}]}, ["spec.textFields[0].name"]),  # the default dense field's name
        ({"textFields": [{"name": "v"}], "fieldNames": {"dense": "v"}}, ["spec.textFields[0].name"]),
        ({"textFields": [{"name": "sparse_values"}], "vectorType": "hybrid"}, ["spec.textFields[0].name"]),
        ({"textFields": [{"name": "sparse_values"}]}, []),  # a dense index has no sparse field to collide with
        ({"fieldNames": {"sparse": "s"}}, ["spec.fieldNames.sparse"]),
        ({"vectorType": "sparse", "dimension": None, "fieldNames": {"dense": "d"}}, ["spec.fieldNames.dense"]),
        ({"textFields": [BODY], "serverless": None, "pod": {"environment": "us-east1-gcp"}}, ["spec.textFields"]),
        ({"fieldNames": {"dense": "d"}, "serverless": {"cloud": "aws", "region": "x", "sourceCollection": "c"}}, ["spec.fieldNames"]),
        ({"textFields": [BODY], "dimension": None, "embed": {"model": "llama-text-embed-v2", "fieldMap": {"text": "chunk"}}},
         ["spec.textFields"]),
        ({"textFields": [BODY], "serverless": None, "byoc": {"environment": "aws-us-east-1-b921"}}, []),
    ],
)
def test_rules(extra, paths):
    assert problems(**extra) == paths


@pytest.mark.parametrize(
    "bad",
    [
        {"name": "_id"},  # Pinecone reserves `_`-names (validate_schema_field_name's docstring)
        {"name": "$text"},
        {"name": "x" * 65},
        {"name": "body", "language": "EN"},
    ],
)
def test_field_names_and_languages_are_checked_by_the_schema(bad):
    with pytest.raises(ValueError):
        spec(textFields=[bad])


def test_text_fields_are_unique_by_name_and_fixed_once_accepted():
    schema = VectorIndexSpec.model_json_schema(by_alias=True)
    text_fields = schema["properties"]["textFields"]
    assert text_fields["x-kubernetes-list-type"] == "map" and text_fields["x-kubernetes-list-map-keys"] == ["name"]
    record = accepted.record(spec(textFields=[BODY]), "docs")
    changed = spec(textFields=[{**BODY, "stopWords": False}])
    assert accepted.changed_fields({accepted.ANNOTATION: record}, changed, "docs") == ["textFields"]


@pytest.mark.parametrize(
    "the_spec, fields",
    [
        (spec(), {"_values": {"type": "dense_vector", "dimension": 8, "metric": "cosine"}}),
        (spec(textFields=[BODY]), {
            "values": {"type": "dense_vector", "dimension": 8, "metric": "cosine"},
            "body": {"type": "string", "full_text_search": {"language": "en", "stemming": True, "stop_words": True}}}),
        (spec(vectorType="hybrid", fieldNames={"dense": "your_vector", "sparse": "keywords"}, textFields=[{"name": "title"}]), {
            "your_vector": {"type": "dense_vector", "dimension": 8, "metric": "dotproduct"},
            "keywords": {"type": "sparse_vector"},
            "title": {"type": "string", "full_text_search": {"stemming": False, "stop_words": False}}}),
        (VectorIndexSpec.model_validate({**SERVERLESS, "vectorType": "sparse", "textFields": [{"name": "t"}]}), {
            "sparse_values": {"type": "sparse_vector"},
            "t": {"type": "string", "full_text_search": {"stemming": False, "stop_words": False}}}),
    ],
)
def test_create_request_declares_the_fields(the_spec, fields):
    request = create_request(the_spec, "docs", OWNED)
    assert request.route == "2026-07" and request.body["schema"] == {"fields": fields}


@pytest.mark.parametrize(
    "the_spec, expected",
    [
        (spec(), {"PINECONE_WRITE_API": "vectors", "PINECONE_DENSE_FIELD": "_values"}),
        (spec(textFields=[BODY, {"name": "title"}]), {"PINECONE_WRITE_API": "documents", "PINECONE_DENSE_FIELD": "values",
                                                       "PINECONE_FULL_TEXT_FIELDS": "body,title"}),
        (spec(vectorType="hybrid", fieldNames={"sparse": "kw"}), {"PINECONE_WRITE_API": "documents", "PINECONE_DENSE_FIELD": "values",
                                                                  "PINECONE_SPARSE_FIELD": "kw"}),
    ],
)
def test_connection_config_map_names_what_applications_address(the_spec, expected):
    assert connection_fields(the_spec) == expected
    assert write_api(the_spec) == expected["PINECONE_WRITE_API"]


def found(fields):
    """A 2026-07 IndexModel with these schema fields, as describe reports them."""
    return {"name": "docs", "status": {"ready": True, "state": "Ready"}, "schema": {"fields": fields},
            "deployment": {"deployment_type": "managed", "cloud": "aws", "region": "us-east-1"},
            "deletion_protection": "disabled", "tags": OWNED, "read_capacity": None}


DENSE = {"type": "dense_vector", "dimension": 8, "metric": "cosine", "description": None}


def text(language="en", stemming=True, stop_words=True, **extra):
    return {"type": "string", "description": None, "full_text_search": {"language": language, "stemming": stemming, "stop_words": stop_words},
            "store_text": True, **extra}


@pytest.mark.parametrize(
    "the_spec, fields, differences",
    [
        (spec(textFields=[BODY]), {"values": DENSE, "body": text()}, []),
        (spec(textFields=[{**BODY, "language": "english"}]), {"values": DENSE, "body": text()}, []),  # one language, two spellings
        (spec(textFields=[{"name": "body"}]), {"values": DENSE, "body": text("english", False, False)}, []),  # Pinecone's default
        (spec(textFields=[BODY]), {"values": DENSE, "body": text(stop_words=False)}, ["textFields"]),
        (spec(textFields=[BODY]), {"values": DENSE, "body": text(), "title": text()}, ["textFields"]),
        (spec(textFields=[BODY]), {"values": DENSE, "body": text(embed={"model": "llama-text-embed-v2"})}, ["textFields"]),
        (spec(textFields=[BODY]), {"_values": DENSE, "body": text()}, ["vector field names"]),
        (spec(), {"your_vector": DENSE}, ["vector field names"]),  # a document index is not a vectors-API index
        (spec(), {"_values": DENSE, "body": text()}, ["textFields"]),
        (spec(fieldNames={"dense": "your_vector"}), {"your_vector": DENSE}, []),
    ],
)
def test_adoption_compares_the_declared_fields(the_spec, fields, differences):
    assert [d.split(":")[0] for d in immutable_differences(the_spec, found(fields))] == differences


def test_an_index_created_for_a_model_has_no_vector_field_names():
    embed = VectorIndexSpec.model_validate({**SERVERLESS, "embed": {"model": "llama-text-embed-v2", "fieldMap": {"text": "chunk"}}})
    assert vector_field_names(embed) == (None, None)
    assert connection_fields(embed) == {"PINECONE_WRITE_API": "records", "PINECONE_TEXT_FIELD": "chunk"}
