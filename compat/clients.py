"""The clients `make compat` drives against local mode's Pinecone emulator, in one place.

Each client gets its own virtual environment, `.compat-venvs/<name>/`, with the packages below
at exact versions. `compat/locks/<name>.txt` pins everything else those packages pulled in
when the lock was last written (`python compat/run.py --lock`), so reinstalling gives the
same set; it is passed to pip as a constraints file. No client may pull torch: the shared
constraints forbid it (`compat/locks/common.txt`), so a release that starts requiring it fails
to install instead of downloading it.

`api_version` is the `X-Pinecone-Api-Version` the client's SDK sends by its own source
(docs/pinecone-api-versions.md); the driver also records what it actually sent.
`flow` is the script under compat/flows/ that runs the application flow with that client.
`kind` says what a passing flow shows: "flow" (the application flow works) or "grpc-refusal"
(the SDK's gRPC index client is refused with the advice local mode documents, and REST works
beside it; compat/flows/pinecone_grpc.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Client:
    name: str                      # the venv's folder and the result's file name
    requirements: tuple[str, ...]  # exact pins: what the flow imports
    flow: str                      # compat/flows/<flow>
    sdk: str                       # the pinecone SDK release it uses, for the table
    api_version: str               # the API version that SDK sends
    hybrid: bool = True            # whether the flow runs a sparse+dense query
    kind: str = "flow"             # "flow" or "grpc-refusal": how the table words a pass


CLIENTS: tuple[Client, ...] = (
    Client("pinecone-5", ("pinecone==5.4.2",), "pinecone_sdk.py", "5.4.2", "2024-07"),
    Client("pinecone-7", ("pinecone==7.3.0",), "pinecone_sdk.py", "7.3.0", "2025-04"),
    Client("pinecone-8", ("pinecone==8.1.2",), "pinecone_sdk.py", "8.1.2", "2025-10"),
    Client("pinecone-9", ("pinecone==9.1.0",), "pinecone_sdk.py", "9.1.0", "2025-10"),
    Client("pinecone-10", ("pinecone==10.2.0",), "pinecone_sdk10.py", "10.2.0", "2026-07"),
    # langchain-pinecone 0.2.x requires pinecone>=6,<8 (so 7.x); DeterministicFakeEmbedding
    # comes with langchain-core, one of its default dependencies.
    Client("langchain-pinecone", ("langchain-pinecone==0.2.13", "pinecone==7.3.0"),
           "langchain_pinecone_flow.py", "7.3.0", "2025-04", hybrid=False),
    # llama-index-vector-stores-pinecone 0.9.x requires pinecone 9.x; MockEmbedding comes with
    # llama-index-core.
    Client("llama-index-pinecone", ("llama-index-vector-stores-pinecone==0.9.0", "llama-index-core==0.14.25",
                                    "pinecone==9.1.0"),
           "llama_index_pinecone_flow.py", "9.1.0", "2025-10", hybrid=False),
    # The gRPC index clients, which local mode refuses (docs/local-mode.md, "gRPC"): 7.x's is
    # grpcio-based and comes with the `grpc` extra; 9.x and 10.x build theirs in (a compiled
    # extension in the wheel), so their venvs hold the same packages as pinecone-9/pinecone-10.
    Client("pinecone-7-grpc", ("pinecone[grpc]==7.3.0",), "pinecone_grpc.py", "7.3.0", "2025-04",
           hybrid=False, kind="grpc-refusal"),
    Client("pinecone-9-grpc", ("pinecone==9.1.0",), "pinecone_grpc.py", "9.1.0", "2025-10",
           hybrid=False, kind="grpc-refusal"),
    Client("pinecone-10-grpc", ("pinecone==10.2.0",), "pinecone_grpc.py", "10.2.0", "2026-07",
           hybrid=False, kind="grpc-refusal"),
)

BY_NAME = {client.name: client for client in CLIENTS}
