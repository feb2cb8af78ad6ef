"""With peering, the pass queues (pinery.handlers.pass_queue) run only while Kopf keeps this
replica active: a peer of higher priority in the peering object pauses it (Kopf's own
`process_peering_event`), which stops every pass, and its going resumes it, which brings the
jobs created meanwhile their children. Real Kopf peering against the local control plane; the
other replica is its entry in the KopfPeering's status, as Kopf's keep-alive writes it."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import datetime, timezone

from pinery.fsdpjob.naming import service_name
from tests.support import fsdpjob as h
from tests.support.waiting import wait_for

PEERING = "pinery"


def service_exists(plane, ns: str, job: str) -> bool:
    return plane.http("GET", f"/api/v1/namespaces/{ns}/services/{service_name(job)}").status_code == 200


def passes_stopped(op) -> bool:
    """No pass for 1.5 s, where a live job passes every 0.3 s."""
    before = op.passes()
    time.sleep(1.5)
    return op.passes() == before


def peer(plane, ns: str, priority: int | None) -> None:
    """Another replica in the peering object (None: gone), as Kopf's keep-alive records one."""
    entry = None if priority is None else {
        "priority": priority, "lifetime": 60, "lastseen": datetime.now(timezone.utc).isoformat()}
    response = plane.http("PATCH", f"/apis/kopf.dev/v1/namespaces/{ns}/kopfpeerings/{PEERING}",
                          json={"status": {"other-replica": entry}},
                          headers={"Content-Type": "application/merge-patch+json"})
    assert response.status_code == 200, response.text


def test_passes_run_only_while_kopf_keeps_this_replica_active(plane, ns, kubelet):
    response = plane.http("POST", f"/apis/kopf.dev/v1/namespaces/{ns}/kopfpeerings",
                          json={"apiVersion": "kopf.dev/v1", "kind": "KopfPeering", "metadata": {"name": PEERING}})
    assert response.status_code == 201, response.text
    op = h.new_operator(plane, ns, replace(h.SETTINGS, peering=PEERING, namespaces=(ns,)))
    op.services.fsdpjob_timing = replace(op.services.fsdpjob_timing, progress=0.3, idle=0.3)
    op.start()
    try:
        h.create_job(plane, ns, "first", numNodes=1)
        kubelet.wait_pods("first", 1)
        kubelet.run_all("first", 1)
        op.wait_phase("first", "Running")  # a running job's passes read its progress every 0.3 s
        assert not passes_stopped(op)

        peer(plane, ns, 200)  # a replica of higher priority: Kopf pauses this one
        wait_for(lambda: passes_stopped(op), timeout=60, what="passes stopped by the pause")
        h.create_job(plane, ns, "second", numNodes=1)
        assert passes_stopped(op) and not service_exists(plane, ns, "second")
        # the sentinel keeps no finalizer on the peering object
        found = plane.http("GET", f"/apis/kopf.dev/v1/namespaces/{ns}/kopfpeerings/{PEERING}").json()
        assert not found["metadata"].get("finalizers")

        peer(plane, ns, None)  # it went: Kopf resumes this replica and lists everything again
        wait_for(lambda: service_exists(plane, ns, "second"), timeout=60, what="the second job's Service after the resume")
        assert not passes_stopped(op)  # the first job's passes run again too
    finally:
        op.stop()
