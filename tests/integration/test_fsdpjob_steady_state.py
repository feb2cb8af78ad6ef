"""What an FSDPJob costs the API server between changes: a running job's pass reads only rank
0's new log lines (`sinceTime`) and writes progress when it moved; a finished job settles and
has no passes (pinery.fsdpjob.settling). Any change the passes did not make (a pod, the spec)
still brings a full read.

Requests are counted by the control plane itself, by verb and resource; watches (the test
kubelet re-watches every second, Kopf's streams) are left out."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Iterator

import pytest

from pinery.local.podrunner import crilog
from tests.support import fsdpjob as h
from tests.support.waiting import wait_for


@pytest.fixture
def op(plane, ns, kubelet) -> Iterator[h.Operator]:
    operator = h.new_operator(plane, ns)
    # passes every 0.3 s while running and when settled, to see many in a short test
    operator.services.fsdpjob_timing = replace(operator.services.fsdpjob_timing, progress=0.3, idle=0.3)
    operator.start()
    try:
        yield operator
    finally:
        operator.stop()


def counts(plane) -> dict[str, int]:
    return {k: n for k, n in plane.server.request_counts().items() if not k.startswith("watch ")}


def requests_over(plane, op, passes: int) -> dict[str, int]:
    """The requests sent while the operator makes `passes` more passes."""
    before, start = counts(plane), op.passes()
    wait_for(lambda: op.passes() >= start + passes, timeout=30, interval=0.05, what=f"{passes} passes")
    after = counts(plane)
    return {k: n - before.get(k, 0) for k, n in after.items() if n != before.get(k, 0)}


def settle(plane, op) -> None:
    """Wait until two passes in a row read only the log. The pods' last events can reach Kopf's
    watch after the job shows Running (more so on a loaded machine); each wakes the job for a
    full read, which must not straddle a counting window."""
    wait_for(lambda: set(requests_over(plane, op, 2)) <= {"get pods/log"}, timeout=60, interval=0, what="a quiet pass")


def passes_stopped(op) -> bool:
    """No pass for 1 s, where a job with passes has one every 0.3 s (op's idle)."""
    before = op.passes()
    time.sleep(1.0)
    return op.passes() == before


def say(plane, ns: str, job: str, line: str) -> None:
    log = plane.server.logs_dir / ns / f"{job}-node-0" / "trainer.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as fh:
        fh.write(crilog.record("stdout", line + "\n", time.time_ns()))


def test_a_running_job_reads_only_new_log_lines_and_writes_only_progress(plane, ns, kubelet, op):
    h.create_job(plane, ns, "steady", numNodes=2)
    kubelet.wait_pods("steady", 2)
    kubelet.run_all("steady", 2)
    op.wait_phase("steady", "Running")
    say(plane, ns, "steady", '{"event": "progress", "step": 10, "totalSteps": 100}')
    op.wait("steady", lambda j: (h.status(j).get("progress") or {}).get("step") == 10, what="step 10")

    settle(plane, op)
    quiet = requests_over(plane, op, 6)
    assert set(quiet) == {"get pods/log"}, quiet  # nothing new in the log: nothing written
    assert quiet["get pods/log"] <= 7

    say(plane, ns, "steady", '{"event": "progress", "step": 20, "totalSteps": 100}')
    job = op.wait("steady", lambda j: h.status(j)["progress"]["step"] == 20, what="step 20")
    assert job["status"]["progress"]["totalSteps"] == 100
    assert set(requests_over(plane, op, 4)) == {"get pods/log"}

    # A change the passes did not make wakes the job for a full read: rank 1 fails, the gang restarts.
    kubelet.exit("steady", 1, 3)
    op.wait("steady", lambda j: h.status(j).get("restarts") == 1, what="the gang restart")


def test_a_new_job_plans_its_first_pass_on_the_watched_body(plane, ns, kubelet, op):
    """A new job is neither read nor are its pods listed: the first pass plans on Kopf's body,
    and its first status write is conditional on that body's resourceVersion. Nothing else
    writes the job first: it gets no finalizer (no handler of FSDPJobs requires one)."""
    start = len(op.kube.sent)
    h.create_job(plane, ns, "fresh", numNodes=2)
    kubelet.wait_pods("fresh", 2)
    op.wait("fresh", lambda j: h.condition(j, "Created").get("status") == "True", what="Created")
    sent = [f"{method} {path}" for method, path in op.kube.sent[start:]]  # pinery's own client; Kopf's are apart
    # The first pass, up to its last creation: a status write first, then the children, no read.
    # (The test kubelet binding the pods wakes later passes, which read as usual.)
    first = sent[:max(i for i, m in enumerate(sent) if m.startswith("POST")) + 1]
    assert first[0] == f"PATCH {h.jobs_path(ns, 'fresh', 'status')}", sent
    assert not [m for m in first if m.startswith("GET")], sent
    assert sorted(m for m in first if m.startswith("POST")) == [  # a command of its own: no trainer ConfigMap
        f"POST /api/v1/namespaces/{ns}/pods", f"POST /api/v1/namespaces/{ns}/pods", f"POST /api/v1/namespaces/{ns}/services"], sent
    assert not h.get_job(plane, ns, "fresh")["metadata"].get("finalizers")


def test_a_new_job_whose_body_is_stale_is_read_and_nothing_is_written_over(plane, ns, kubelet, op):
    """The conditional first write: the job's status changes after the watch showed it (another
    writer, here the test, just before the operator's first status write) and the write is
    refused (409); the next pass reads the job and plans on what it shows."""

    def another_writer() -> None:  # a status the body the first pass planned on does not show
        response = plane.http("PATCH", h.jobs_path(ns, "racy", "status"), json={"status": {"restarts": 2}},
                              headers={"Content-Type": "application/merge-patch+json"})
        assert response.status_code == 200, response.text

    op.kube.before("PATCH", "/fsdpjobs/racy/status", another_writer)
    start = len(op.kube.sent)
    h.create_job(plane, ns, "racy", numNodes=2)
    kubelet.wait_pods("racy", 2)
    job = op.wait("racy", lambda j: h.condition(j, "Created").get("status") == "True", what="Created")
    assert h.status(job)["restarts"] == 2  # kept, not written over with the 0 of the stale plan
    sent = [f"{method} {path}" for method, path in op.kube.sent[start:]]
    assert f"GET {h.jobs_path(ns, 'racy')}" in sent, sent  # read after the 409
    assert len(kubelet.created("racy")) == 2


def test_a_finished_job_settles_has_no_passes_and_wakes_on_a_spec_change(plane, ns, kubelet, op):
    h.create_job(plane, ns, "done", numNodes=2)
    kubelet.wait_pods("done", 2)
    kubelet.run_all("done", 2)
    op.wait_phase("done", "Running")
    kubelet.exit("done", 0, 0)
    kubelet.exit("done", 1, 0)
    op.wait_phase("done", "Succeeded")
    job = op.wait("done", lambda j: h.status(j).get("settledGeneration") == j["metadata"]["generation"], what="settled")
    assert h.status(job)["phase"] == "Succeeded" and len(kubelet.pods("done")) == 2  # finished pods stay for their logs
    # The event of that write ends the job's passes: no pass at all, where a job with passes has
    # one every 0.3 s (op's idle), and no request.
    wait_for(lambda: passes_stopped(op), timeout=30, what="the passes ended")
    passes, before = op.passes(), counts(plane)
    time.sleep(3.0)
    assert op.passes() == passes and counts(plane) == before
    # A new generation brings the passes back: a ttlSecondsAfterFinished set after the end applies.
    h.patch_job(plane, ns, "done", {"ttlSecondsAfterFinished": 1})
    wait_for(lambda: h.get_job(plane, ns, "done") is None, timeout=30, what="the job deleted by its new ttl")


def test_a_deleted_job_goes_at_once_and_its_passes_end(plane, ns, kubelet, op):
    """No finalizer holds a job: its deletion completes without the operator, and the DELETED
    event ends the job's passes."""
    h.create_job(plane, ns, "brief", numNodes=2)
    kubelet.wait_pods("brief", 2)
    kubelet.run_all("brief", 2)
    op.wait_phase("brief", "Running")
    answer = plane.http("DELETE", h.jobs_path(ns, "brief"))
    assert answer.status_code == 200 and not answer.json()["metadata"].get("finalizers"), answer.text
    assert h.get_job(plane, ns, "brief") is None  # gone at once, held by nothing
    wait_for(lambda: passes_stopped(op), timeout=30, what="the passes ended")
    kubelet.wait_no_pods("brief")  # the garbage collector, by the pods' ownerReferences


def test_a_job_created_again_under_its_name_is_not_touched_by_the_old_ones_passes(plane, ns, kubelet, op):
    old = h.create_job(plane, ns, "again", numNodes=2)
    kubelet.wait_pods("again", 2)
    kubelet.run_all("again", 2)
    op.wait_phase("again", "Running")
    assert plane.http("DELETE", h.jobs_path(ns, "again")).status_code == 200
    new = h.create_job(plane, ns, "again", numNodes=2)
    uid = new["metadata"]["uid"]
    assert uid != old["metadata"]["uid"]
    job = op.wait("again", lambda j: h.condition(j, "Created").get("status") == "True"
                  and {o["uid"] for p in kubelet.pods("again") for o in p["metadata"]["ownerReferences"]} == {uid},
                  what="the new job's own pods")
    assert job["metadata"]["uid"] == uid and h.status(job).get("restarts", 0) == 0
    kubelet.run_all("again", 2)
    op.wait_phase("again", "Running")


def test_a_job_that_carries_the_finalizer_of_an_earlier_version_loses_it(plane, ns, kubelet, op):
    body = h.job_body("older", numNodes=2)
    body["metadata"]["finalizers"] = ["pinery.dev/finalizer"]
    assert plane.http("POST", h.jobs_path(ns), json=body).status_code == 201
    kubelet.wait_pods("older", 2)
    wait_for(lambda: not (h.get_job(plane, ns, "older") or {"metadata": {}})["metadata"].get("finalizers"),
             timeout=30, what="the finalizer dropped by Kopf")
    assert plane.http("DELETE", h.jobs_path(ns, "older")).status_code == 200
    assert h.get_job(plane, ns, "older") is None


def test_a_running_job_reads_everything_again_once_its_snapshot_is_older_than_resync(plane, ns, kubelet, op):
    h.create_job(plane, ns, "resync", numNodes=2)
    kubelet.wait_pods("resync", 2)
    kubelet.run_all("resync", 2)
    op.wait_phase("resync", "Running")
    op.services.fsdpjob_timing = replace(op.services.fsdpjob_timing, resync=0.5)
    seen = requests_over(plane, op, 8)
    assert {"get fsdpjobs", "list pods", "get services", "get configmaps"} <= set(seen), seen
