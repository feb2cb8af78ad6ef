"""Requests recorded by the Pinecone emulator (`record_exchanges=True`), checked against the
official 2025-10 OpenAPI spec with openapi-core."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qsl

import yaml

SPECS = {"control": "db_control_2025-10.oas.yaml", "data": "db_data_2025-10.oas.yaml"}
HOSTS = {"control": "https://api.pinecone.io", "data": "https://idx-1234.svc.pinecone.io"}


def load_spec(specs_dir: Path, plane: str) -> dict:
    return yaml.safe_load((specs_dir / SPECS[plane]).read_text())


def _ndjson(raw: bytes | str) -> list:
    """NDJSON (records upsert) as the array of objects the spec's schema describes."""
    text = raw.decode() if isinstance(raw, bytes) else raw
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def openapi(doc: dict):
    from openapi_core import Config, OpenAPI

    # openapi-core has no NDJSON deserializer; the spec gives `application/x-ndjson` an array schema.
    return OpenAPI.from_dict(doc, config=Config(extra_media_type_deserializers={"application/x-ndjson": _ndjson}))


def _drop_nulls(value):
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def request_body(raw: bytes) -> bytes:
    """The SDK serialises unset optional fields of PodSpec as null, which Pinecone reads as absent
    but the spec (no `nullable`) does not allow; compare the body without them."""
    if not raw:
        return raw
    try:
        return json.dumps(_drop_nulls(json.loads(raw))).encode()
    except ValueError:
        return raw


def mock_request(exchange: dict):
    from openapi_core.testing import MockRequest

    return MockRequest(
        HOSTS[exchange["plane"]], exchange["method"], exchange["path"], args=parse_qsl(exchange["query"]),
        headers=exchange["headers"], data=request_body(exchange["body"]),
        content_type=exchange["headers"].get("Content-Type", "application/json"),
    )


def label(exchange: dict) -> str:
    return f"{exchange['method']} {exchange['path']}?{exchange['query']} -> {exchange['status']} ({exchange['operation']})"


def request_problem(api, exchange: dict) -> str | None:
    """Why the recorded request does not conform to the spec, or None."""
    try:
        api.validate_request(mock_request(exchange))
    except Exception as exc:  # noqa: BLE001 - every validation failure is a finding
        return f"request {label(exchange)}: {exc} {getattr(exc, '__cause__', '')} {exchange['body'][:300]!r}"
    return None
