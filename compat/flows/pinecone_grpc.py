"""The `pinecone` SDK's gRPC index client against local mode, which serves REST only.

Local mode answers gRPC as docs/local-mode.md ("gRPC") says: a plaintext HTTP/2 call gets gRPC
status UNIMPLEMENTED with advice to use the REST client, a TLS handshake is closed unanswered.
This flow checks what the application sees, with the client each release offers:

- 7.x (`pinecone[grpc]`, grpcio): `PineconeGRPC(...).Index(host="127.0.0.1:<port>",
  grpc_config=GRPCClientConfig(secure=...))`; grpcio needs a bare host:port, not the URL the
  control plane reports, and 7.x puts the status name before the message ("UNIMPLEMENTED:...").
- 9.x (built in): `GrpcIndex(host=..., secure=False)` in plaintext, `pc.index(host=..., grpc=True)`
  with TLS.
- 10.x (built in): `Pinecone(..., grpc_scheme="http").index(host=..., grpc=True)` and
  `GrpcIndex(host=..., secure=False)` in plaintext, `pc.index(host=..., grpc=True)` with TLS.

The index is made and used over REST. The advice text comes from the driver
(PINERY_COMPAT_GRPC_ADVICE, which compat/run.py sets from the emulator's own constant), so the
two cannot drift apart.
"""

from __future__ import annotations

import os
from importlib import metadata
from urllib.parse import urlparse

from _flow import API_KEY, DIMENSION, HOST, INDEX, Flow, FlowFailed, check, main, near, one_hot, wait_for
from pinecone_sdk import names, ready

ADVICE = os.environ.get("PINERY_COMPAT_GRPC_ADVICE", "")
MAJOR = int(metadata.version("pinecone").split(".")[0])
# Ids the gRPC calls try to write; none may arrive.
GRPC_IDS = ["grpc-plaintext", "grpc-tls"]


def failure(call) -> Exception:
    """The exception `call()` raises; a FlowFailed when it returns."""
    try:
        returned = call()
    except Exception as exc:  # whatever the SDK raises is what the application sees
        return exc
    raise FlowFailed(f"the call succeeded ({returned!r}); local mode serves no gRPC")


def body(flow: Flow) -> None:
    from pinecone import Pinecone

    check(bool(ADVICE), "PINERY_COMPAT_GRPC_ADVICE is not set (compat/run.py sets it)")
    pc = Pinecone(api_key=API_KEY, host=HOST)
    state = {}

    @flow.step("create_index over REST", critical=True)
    def _():
        if MAJOR >= 10:
            pc.indexes.create(name=INDEX, timeout=-1,
                              schema={"fields": {"_values": {"type": "dense_vector", "dimension": DIMENSION,
                                                             "metric": "cosine"}}},
                              deployment={"deployment_type": "managed", "cloud": "aws", "region": "us-east-1"})
            described = wait_for("the index to be ready",
                                 lambda: (d := pc.indexes.describe(INDEX)) and ready(d) and d)
        else:
            from pinecone import ServerlessSpec
            pc.create_index(name=INDEX, dimension=DIMENSION, metric="cosine", timeout=-1,
                            spec=ServerlessSpec(cloud="aws", region="us-east-1"))
            described = wait_for("the index to be ready",
                                 lambda: (d := pc.describe_index(INDEX)) and ready(d) and d)
        check(bool(described.host), "no host")
        state["host"] = described.host

    @flow.step("plaintext gRPC refused with the documented message")
    def _():
        host = state["host"]
        if MAJOR < 8:
            from pinecone.grpc import GRPCClientConfig, PineconeGRPC
            config = GRPCClientConfig(secure=False, timeout=5, conn_timeout=1)
            clients = [("PineconeGRPC(...).Index(secure=False)",
                        PineconeGRPC(api_key=API_KEY, host=HOST).Index(host=urlparse(HOST).netloc,
                                                                       grpc_config=config))]
            expected = f"UNIMPLEMENTED:{ADVICE}"
        else:
            from pinecone.grpc import GrpcIndex
            clients = [("GrpcIndex(secure=False)", GrpcIndex(host=host, api_key=API_KEY, secure=False))]
            if MAJOR >= 10:
                plain = Pinecone(api_key=API_KEY, host=HOST, grpc_scheme="http")
                clients.append(('Pinecone(grpc_scheme="http").index(grpc=True)', plain.index(host=host, grpc=True)))
            expected = ADVICE
        for name, index in clients:
            for what, call in (("upsert", lambda index=index: index.upsert(vectors=[(GRPC_IDS[0], one_hot(0))])),
                               ("query", lambda index=index: index.query(vector=near(0), top_k=1))):
                text = str(failure(call))
                check(text == expected, f"{name} {what}: the error reads {text!r}, expected {expected!r}")

    @flow.step("TLS gRPC fails at the handshake")
    def _():
        host = state["host"]
        if MAJOR < 8:
            from pinecone.grpc import GRPCClientConfig, PineconeGRPC
            config = GRPCClientConfig(timeout=5, conn_timeout=1)  # secure (TLS) is the default
            index = PineconeGRPC(api_key=API_KEY, host=HOST).Index(host=urlparse(HOST).netloc, grpc_config=config)
        elif MAJOR >= 10:
            from pinecone import RetryConfig
            # Fewer retries than the default's: the outcome is the same, sooner.
            secure = Pinecone(api_key=API_KEY, host=HOST, retry_config=RetryConfig(max_retries=1, max_wait=1.0))
            index = secure.index(host=host, grpc=True)
        else:
            index = pc.index(host=host, grpc=True)
        exc = failure(lambda: index.upsert(vectors=[(GRPC_IDS[1], one_hot(1))]))
        text = str(exc)
        # No gRPC answer got through: the error is the client's own, about the handshake.
        check(ADVICE not in text, f"a gRPC answer came through TLS: {text!r}")
        check("handshake" in text.lower(), f"{type(exc).__name__}: {text!r} does not name the TLS handshake")
        if MAJOR < 8:
            check(text.startswith("UNAVAILABLE:"), f"the status is not UNAVAILABLE: {text!r}")
        else:
            from pinecone.errors.exceptions import PineconeConnectionError
            check(isinstance(exc, PineconeConnectionError), f"{type(exc).__name__}, not PineconeConnectionError")

    @flow.step("REST works beside it")
    def _():
        index = pc.index(host=state["host"]) if MAJOR >= 10 else pc.Index(host=state["host"])
        upserted = index.upsert(vectors=[("rest-1", one_hot(2)), ("rest-2", one_hot(3))])
        check(upserted.upserted_count == 2, f"upserted_count {upserted.upserted_count}")
        found = index.query(vector=near(3), top_k=2)
        check([m.id for m in found.matches] == ["rest-2", "rest-1"], f"matches {[m.id for m in found.matches]}")
        fetched = index.fetch(ids=["rest-1", *GRPC_IDS])
        check(sorted(fetched.vectors) == ["rest-1"], f"fetched {sorted(fetched.vectors)}: a gRPC write arrived")

    @flow.step("delete_index", cleanup=True)
    def _():
        if MAJOR >= 10:
            pc.indexes.delete(INDEX, timeout=-1)
            wait_for("the index to go", lambda: not pc.indexes.exists(INDEX))
        else:
            pc.delete_index(INDEX, timeout=-1)
            wait_for("the index to go", lambda: INDEX not in names(pc))


if __name__ == "__main__":
    main(Flow("pinecone", "grpcio"), body)
