"""The operator loads the Pinecone SDK as it starts (PineconeGateway.warm_up), without a
request: a fresh interpreter has the SDK's HTTP stack and client parts loaded after it, and an
unreachable host does not matter."""

import json
import subprocess
import sys

CHECK = """
import json, sys
from pinery.gateways.pinecone import PineconeGateway
before = {m for m in sys.modules if m.split(".")[0] in ("pinecone", "httpx", "msgspec")}
PineconeGateway(host="http://127.0.0.1:9").warm_up()  # nothing listens there
after = {m for m in sys.modules if m.split(".")[0] in ("pinecone", "httpx", "msgspec")}
print(json.dumps({"before": len(before), "after": sorted(after)}))
"""


def test_warm_up_loads_the_sdk_and_sends_nothing():
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=120, check=True)
    result = json.loads(out.stdout)
    assert result["before"] == 0  # the gateway's module itself does not import the SDK
    assert {"pinecone", "httpx", "msgspec", "pinecone.client.indexes"} <= set(result["after"])
    assert len(result["after"]) > 100
    assert "could not be loaded" not in out.stderr
