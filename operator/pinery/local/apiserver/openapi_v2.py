"""`GET /openapi/v2`: a Swagger 2.0 document with no definitions, in the form kubectl asks for.

Why it is served (kubectl `pkg/cmd/util/factory_client_access.go`, `Validator`; cli-runtime
`pkg/resource/query_param_verifier_v3.go` and `fallback_query_param_verifier.go`): for each
object of `apply -f`, kubectl asks the v3 document of its group-version whether the PATCH
operation takes `fieldValidation`. For a group-version the server does not serve, and that is
no CRD, the answer is "unsupported", so under `--validate=strict` (the default) kubectl
validates client-side from `/openapi/v2` (kubectl `pkg/validation/validation.go`,
`validateResource`). A 404 there fails the whole apply ("error validating data: the server
could not find the requested resource"); a document without the kind makes kubectl skip
validation ("resource is not present, let's just skip validation"), and the object then fails
as against a real server without that kind: "no matches for kind".

client-go `discovery/discovery_client.go` (`OpenAPISchemaWithContext`) sends
`Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf` and decodes the body as
a gnostic `openapi_v2.Document`. Content negotiation follows kube-openapi
`pkg/handler/handler.go` (`RegisterOpenAPIVersionedService`): the first Accept clause that
matches JSON, the deprecated `...spec.v2@v1.0+protobuf` or `...spec.v2.v1.0+protobuf` wins,
the protobuf answer is labelled with the second name (Go cannot parse the `@`), and no match
is 406.
Served kinds are validated by the server (`fieldValidation=Strict`), so no schema is listed.
"""

from __future__ import annotations

import json

PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
_ACCEPTED = (
    ("application", "json", "application/json"),
    ("application", "com.github.proto-openapi.spec.v2@v1.0+protobuf", PROTOBUF),
    ("application", "com.github.proto-openapi.spec.v2.v1.0+protobuf", PROTOBUF),
)
TITLE = "Kubernetes"


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field (wire type 2)."""
    out = bytearray([number << 3 | 2])
    n = len(payload)
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out) + payload


def document_protobuf(version: str) -> bytes:
    # gnostic openapiv2.proto: Document.swagger = 1, Document.info = 2; Info.title = 1, Info.version = 2.
    info = _field(1, TITLE.encode()) + _field(2, version.encode())
    return _field(1, b"2.0") + _field(2, info)


def document_json(version: str) -> bytes:
    return json.dumps({"swagger": "2.0", "info": {"title": TITLE, "version": version}, "paths": {}, "definitions": {}}).encode()


def _clauses(accept: str) -> list[tuple[str, str]]:
    """Accept clauses as (type, subtype), highest q first, as goautoneg.ParseAccept sorts them."""
    out = []
    for index, part in enumerate(accept.split(",")):
        media, *params = [p.strip() for p in part.split(";")]
        q = 1.0
        for param in params:
            if param.startswith("q="):
                try:
                    q = float(param[2:])
                except ValueError:
                    q = 0.0
        kind, _, sub = media.partition("/")
        if kind:
            out.append((-q, index, kind, sub or "*"))
    return [(kind, sub) for _, _, kind, sub in sorted(out)]


def negotiate(accept: str) -> str | None:
    """The content type answered for an Accept header, or None (406)."""
    for kind, sub in _clauses(accept or "*/*"):
        for want_kind, want_sub, answer in _ACCEPTED:
            if kind in (want_kind, "*") and sub in (want_sub, "*"):
                return answer
    return None


def body(content_type: str, version: str) -> bytes:
    return document_protobuf(version) if content_type == PROTOBUF else document_json(version)
