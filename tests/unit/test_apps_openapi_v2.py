"""`/openapi/v2` negotiation and encoding (operator/pinery/local/apiserver/openapi_v2.py).

Cases follow kube-openapi `pkg/handler/handler.go` (`RegisterOpenAPIVersionedService`).
"""

import json

import pytest

from pinery.local.apiserver import openapi_v2

PB = openapi_v2.PROTOBUF


@pytest.mark.parametrize(
    "accept, answer",
    [
        ("application/com.github.proto-openapi.spec.v2@v1.0+protobuf", PB),  # client-go's request
        ("application/com.github.proto-openapi.spec.v2.v1.0+protobuf", PB),
        ("application/json", "application/json"),
        ("", "application/json"),  # none means */*; JSON is the first accepted type
        ("*/*", "application/json"),
        ("application/*", "application/json"),
        ("application/json;q=0.5, application/com.github.proto-openapi.spec.v2@v1.0+protobuf", PB),
        ("text/html", None),  # 406
        ("application/yaml", None),
    ],
)
def test_negotiation(accept, answer):
    assert openapi_v2.negotiate(accept) == answer


def test_protobuf_document_is_a_swagger_2_document_with_info():
    data = openapi_v2.document_protobuf("v1.32.0")
    # field 1 (swagger) = "2.0"; field 2 (info) = {1: "Kubernetes", 2: "v1.32.0"}
    info = b"\x0a\x0aKubernetes\x12\x07v1.32.0"
    assert data == b"\x0a\x032.0\x12" + bytes([len(info)]) + info


def test_json_document():
    doc = json.loads(openapi_v2.document_json("v1.32.0"))
    assert doc == {"swagger": "2.0", "info": {"title": "Kubernetes", "version": "v1.32.0"}, "paths": {}, "definitions": {}}
