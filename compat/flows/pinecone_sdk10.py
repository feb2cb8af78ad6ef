"""The application flow with the `pinecone` SDK 10.x, which speaks API 2026-07.

10.x replaced the control plane's names: `pc.indexes.create(schema=..., deployment=...)`
instead of `create_index(dimension=..., metric=..., spec=ServerlessSpec(...))`, an index model
whose vector layout is in `schema.fields`, and `pc.index(name)` as the bridge to the data
plane. A schema whose fields are exactly the reserved `_values` (dense) and `_sparse_values`
(sparse) is a plain vector index, served by the vectors API (`upsert`, `query`, ...), so the
data-plane steps are the 5.x-9.x flow's (pinecone_sdk.data_steps).
"""

from __future__ import annotations

from _flow import API_KEY, DIMENSION, HOST, HYBRID, INDEX, Flow, check, main, wait_for
from pinecone_sdk import data_steps

METRIC = "dotproduct" if HYBRID else "cosine"


def names(pc) -> list[str]:
    return [model.name for model in pc.indexes.list()]


def body(flow: Flow) -> None:
    from pinecone import Pinecone

    pc = Pinecone(api_key=API_KEY, host=HOST)
    state = {}

    @flow.step("create_index", critical=True)
    def _():
        fields = {"_values": {"type": "dense_vector", "dimension": DIMENSION, "metric": METRIC}}
        if HYBRID:
            fields["_sparse_values"] = {"type": "sparse_vector"}
        pc.indexes.create(name=INDEX, schema={"fields": fields}, timeout=-1,
                          deployment={"deployment_type": "managed", "cloud": "aws", "region": "us-east-1"})
        check(pc.indexes.exists(INDEX), f"indexes.exists({INDEX!r}) is false")
        check(INDEX in names(pc), f"{INDEX} is not in indexes.list() {names(pc)}")

    @flow.step("wait_ready", critical=True)
    def _():
        described = wait_for("the index to be ready",
                             lambda: (d := pc.indexes.describe(INDEX)) and d.status.ready and d)
        dense = described.schema.fields["_values"]
        check(dense.dimension == DIMENSION and dense.metric == METRIC, f"schema {described.schema}")
        if HYBRID:
            check("_sparse_values" in described.schema.fields, f"schema {described.schema}")
        deployment = described.deployment
        check(type(deployment).__name__ == "ManagedDeployment" and deployment.cloud == "aws"
              and deployment.region == "us-east-1", f"deployment {deployment}")
        check(bool(described.host), "no host")
        state["index"] = pc.index(INDEX)

    data_steps(flow, state)

    @flow.step("delete_index", cleanup=True)
    def _():
        pc.indexes.delete(INDEX, timeout=-1)
        wait_for("the index to go", lambda: not pc.indexes.exists(INDEX))


if __name__ == "__main__":
    main(Flow("pinecone"), body)
