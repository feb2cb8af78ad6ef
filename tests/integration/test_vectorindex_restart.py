"""The VectorIndex operator across restarts, and when the CRD's immutability rules are missing."""

from __future__ import annotations

import pytest

from tests.support.control_plane import ControlPlane
from tests.support.vectorindex import running_operator, sweep_gap, world
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

VI_CRD = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/vectorindexes.pinery.dev"


def test_restart_mid_create_makes_no_second_index(tmp_path):
    with world(tmp_path, with_operator=False, ready_delay=2.0) as w:
        with running_operator(w.plane, w.emulator.url):
            w.create("restarted", tags={"team": "a"})
            wait_for(lambda: w.status("restarted").get("state") == "Initializing", timeout=10, what="the index initializing")
        assert w.requests("create_index") == 1 and w.status("restarted")["phase"] == "Creating"
        with running_operator(w.plane, w.emulator.url) as second:
            obj = w.wait_ready("restarted", timeout=15)
        assert w.requests("create_index") == 1
        pc = w.pinecone()
        try:
            assert [i.name for i in pc.list_indexes()] == ["restarted"]
        finally:
            pc.close()
        assert obj["status"]["host"] == w.index("restarted")["host"]
        reasons = {r for _, r, _ in w.events("restarted")}
        assert not reasons & {"NotOwned", "SpecMismatch", "Recreating"}, reasons
        assert 'pinery_reconciles_total{outcome="create",resource="VectorIndex"}' not in second.metrics()


def test_after_a_restart_settled_objects_share_one_listing(tmp_path):
    with world(tmp_path, with_operator=False) as w:
        names = [f"settled-{i}" for i in range(4)]
        with running_operator(w.plane, w.emulator.url):
            for name in names:
                w.create(name)
            for name in names:
                w.wait_ready(name)
        sweep_gap()  # no regular sweep while the new operator takes its first look
        count = w.counting("describe_index", "list_indexes")
        with running_operator(w.plane, w.emulator.url) as second:
            wait_for(lambda: 'pinery_reconciles_total{outcome="none",resource="VectorIndex"} 4.0' in second.metrics(),
                     timeout=10, what="every object looked at")
            assert count() == {"describe_index": 0, "list_indexes": 1}


def install_without_transition_rules(plane: ControlPlane) -> None:
    """pinery's CRDs, but the VectorIndex one without its `self == oldSelf` rules (as on an API
    server too old for CEL, or a CRD edited by hand)."""
    plane.install_crds()
    crd = plane.http("GET", VI_CRD).json()

    def strip(node):
        if isinstance(node, dict):
            rules = node.get("x-kubernetes-validations")
            if rules is not None:
                kept = [r for r in rules if "oldSelf" not in r["rule"]]
                if kept:
                    node["x-kubernetes-validations"] = kept
                else:
                    del node["x-kubernetes-validations"]
            for value in node.values():
                strip(value)
        elif isinstance(node, list):
            for value in node:
                strip(value)

    strip(crd["spec"])
    assert "oldSelf" not in str(crd["spec"])
    plane.http("PUT", VI_CRD, json=crd).raise_for_status()


def test_an_immutable_change_that_reaches_the_operator_is_refused_without_a_pinecone_call(tmp_path):
    with world(tmp_path, install_crds=install_without_transition_rules) as w:
        w.create("frozen", dimension=8)
        w.wait_ready("frozen")
        total = w.admin.stats()["total"]
        # the API server lets these through: the operator is the last line
        generation = w.patch_spec("frozen", {"dimension": 16, "serverless": {"region": "eu-west-1"}})["metadata"]["generation"]
        cond = w.wait_condition("frozen", "Ready", "False", "ImmutableFieldChanged")
        assert cond["observedGeneration"] == generation
        assert "spec.dimension, spec.serverless cannot change" in cond["message"]
        assert w.condition("frozen", "Synced")["reason"] == "ImmutableFieldChanged" and w.status("frozen")["phase"] == "Failed"
        w.wait_event("frozen", "ImmutableFieldChanged", "Warning")
        index = w.index("frozen")
        assert index["schema"]["fields"]["_values"]["dimension"] == 8 and index["deployment"]["region"] == "us-east-1"
        assert w.admin.stats()["total"] - total == 2  # the two requests of w.index() above, nothing else

        w.update("frozen", {"dimension": 8, "serverless": {"region": "us-east-1"}})  # reverted: in sync again

        # a new indexName would orphan the index: refused too, and deletion still finds the old one
        w.patch_spec("frozen", {"indexName": "frozen-renamed"})
        cond = w.wait_condition("frozen", "Ready", "False", "ImmutableFieldChanged")
        assert "spec.indexName" in cond["message"]
        w.delete("frozen")
        w.wait_gone("frozen")
        assert w.index("frozen") is None
        assert w.requests("create_index") == 1


def test_protection_turned_on_while_the_operator_was_down_keeps_the_index(tmp_path):
    """Found by the chaos suite: protection set in the spec, then the object deleted, both while
    the operator was away. The finalizer must keep the index the spec protects, though the
    configure call that would have protected it in Pinecone was never made."""
    with world(tmp_path, with_operator=False) as w:
        with running_operator(w.plane, w.emulator.url):
            w.create("guarded")
            w.wait_ready("guarded")
        w.patch_spec("guarded", {"deletionProtection": True})
        w.delete("guarded")
        assert w.index("guarded")["deletion_protection"] == "disabled"
        count = w.counting("delete_index", "configure_index")
        with running_operator(w.plane, w.emulator.url):
            w.wait_gone("guarded")
            w.wait_event("guarded", "DeletionProtected", "Warning")
        assert count() == {"delete_index": 0, "configure_index": 0}
        assert w.index("guarded") is not None
