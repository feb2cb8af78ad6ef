"""A small application that uses a Pinecone index through the `pinecone` SDK (9.x or 10.x, the
newest), unchanged between local mode and real Pinecone.

It reads its settings from the environment, as a pod gets them from a VectorIndex's
connection ConfigMap (`envFrom`) and a Secret:

    PINECONE_API_KEY      the API key (from a Secret)
    PINECONE_INDEX_HOST   the index host the operator publishes in status.host / the ConfigMap
    PINECONE_INDEX_NAME   the index name (used to look the host up when PINECONE_INDEX_HOST is unset)
    PINECONE_CONTROLLER_HOST  the control-plane URL (local mode: the emulator; unset for Pinecone)
    APP_NAMESPACE         the namespace to write and search (default "articles")

Usage: python app.py load            upsert the sample documents
       python app.py search TEXT [--category C] [--since YEAR]
Output is JSON on stdout.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import sys

from pinecone import Pinecone

DOCUMENTS = [
    {"id": "doc-1", "text": "Scaling vector search with serverless indexes", "category": "search", "year": 2024},
    {"id": "doc-2", "text": "Fine-tuning language models with FSDP on many nodes", "category": "training", "year": 2023},
    {"id": "doc-3", "text": "Hybrid search combines dense vectors and sparse keywords", "category": "search", "year": 2022},
    {"id": "doc-4", "text": "Checkpointing sharded training state safely", "category": "training", "year": 2024},
    {"id": "doc-5", "text": "Metadata filters narrow vector search results", "category": "search", "year": 2025},
]


def embed(text: str, dimension: int) -> list[float]:
    """A deterministic bag-of-words embedding (hashing trick); a real app calls an embedding model."""
    vector = [0.0] * dimension
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        vector[int.from_bytes(digest[:4], "big") % dimension] += 1.0 if digest[4] % 2 else -1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


def connect():
    api_key = os.environ.get("PINECONE_API_KEY")
    if not api_key:
        sys.exit("app: PINECONE_API_KEY is not set")
    pc = Pinecone(api_key=api_key, host=os.environ.get("PINECONE_CONTROLLER_HOST") or None)
    host = os.environ.get("PINECONE_INDEX_HOST")
    if not host:
        name = os.environ.get("PINECONE_INDEX_NAME")
        if not name:
            sys.exit("app: set PINECONE_INDEX_HOST or PINECONE_INDEX_NAME")
        host = pc.indexes.describe(name).host
    index = pc.index(host=host)  # the SDK 9.x and 10.x spelling (10.x keeps pc.Index as a shim)
    dimension = index.describe_index_stats().dimension
    return index, dimension


def load(index, dimension: int, namespace: str) -> dict:
    vectors = [{"id": d["id"], "values": embed(d["text"], dimension),
                "metadata": {"text": d["text"], "category": d["category"], "year": d["year"]}} for d in DOCUMENTS]
    return {"upserted": index.upsert(vectors=vectors, namespace=namespace).upserted_count, "namespace": namespace}


def search(index, dimension: int, namespace: str, text: str, category: str | None, since: int | None) -> dict:
    clauses = []
    if category:
        clauses.append({"category": {"$eq": category}})
    if since is not None:
        clauses.append({"year": {"$gte": since}})
    flt = {"$and": clauses} if len(clauses) > 1 else (clauses[0] if clauses else None)
    result = index.query(vector=embed(text, dimension), top_k=3, namespace=namespace, filter=flt,
                         include_metadata=True)
    return {"namespace": namespace, "filter": flt,
            "matches": [{"id": m.id, "score": round(m.score, 4), **m.metadata} for m in result.matches]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("load")
    find = sub.add_parser("search")
    find.add_argument("text")
    find.add_argument("--category")
    find.add_argument("--since", type=int)
    args = parser.parse_args(argv)
    namespace = os.environ.get("APP_NAMESPACE", "articles")
    index, dimension = connect()
    if args.command == "load":
        out = load(index, dimension, namespace)
    else:
        out = search(index, dimension, namespace, args.text, args.category, args.since)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
