"""The progress watchdog in the lifecycle, pass by pass: a gang whose step stops advancing is
restarted as Stalled (spending maxRestarts), with the clock restarted by every new gang."""

from __future__ import annotations

import pytest

from pinery.api.conditions import now_rfc3339
from pinery.fsdpjob import progress_from_logs
from tests.unit.fsdpjob.cluster import Cluster, Crash, job_object

SPEC = {"numNodes": 2, "command": ["torchrun", "train.py"], "maxRestarts": 2, "progressDeadlineSeconds": 60}


def started(spec: dict) -> Cluster:
    c = Cluster(job_object(spec))
    c.reconcile()
    c.run()
    c.reconcile()
    assert c.status["phase"] == "Running", c.status
    return c


def report(c: Cluster, step: int) -> None:
    """Rank 0 prints a progress line now, and the operator reads it as update_progress does."""
    line = f'{now_rfc3339(c.now)} {{"event": "progress", "step": {step}, "totalSteps": 100}}'
    progress = progress_from_logs(line, c.now, previous=c.status.get("progress"))
    if progress is not None:
        c.job["status"]["progress"] = progress


def new_gang_runs(c: Cluster) -> None:
    c.finish_deletions()
    c.reconcile()
    c.run()
    c.reconcile()
    assert c.status["phase"] == "Running", c.status


def reasons(c: Cluster) -> list[str]:
    return [e.reason for e in c.events]


def test_a_step_that_stops_advancing_restarts_the_gang_as_stalled_at_the_deadline():
    c = started(SPEC)
    for step in (1, 2, 3):
        c.tick(10)
        report(c, step)
        p = c.reconcile()
        assert c.status["restarts"] == 0
        assert p.requeue_after == 30  # the progress poll comes before the deadline (60 s after the step)
    stepped = c.now
    c.tick(45)
    p = c.reconcile()
    assert c.status["phase"] == "Running" and p.requeue_after == 15  # woken at the deadline: no pod event comes
    c.tick(15)
    p = c.reconcile()
    assert c.status["restarts"] == 1 and c.status["phase"] == "Restarting"
    restarting = c.condition("Restarting")
    assert restarting["reason"] == "Stalled"
    assert restarting["message"] == (
        f"stalled: step 3 has not advanced for 60s (progressDeadlineSeconds): unchanged since {now_rfc3339(stepped)}, "
        f"last reported at {now_rfc3339(stepped)}; restarting all 2 nodes (restart 1 of 2)"
    )
    assert [e.reason for e in p.events] == ["Stalled"] and p.events[0].type == "Warning"
    assert len(p.delete_pods) == 2 and [n["attempt"] for n in c.status["nodes"]] == [1, 1]
    assert c.status["progress"]["step"] == 3  # what was last seen, kept
    new_gang_runs(c)
    assert c.condition("Restarting")["reason"] == "Restarted" and c.attempts() == {0: 1, 1: 1}


def test_the_new_gang_has_its_own_clock_and_a_lower_step_is_an_advance():
    c = started({**SPEC, "firstProgressDeadlineSeconds": 120})
    c.tick(5)
    report(c, 40)
    c.tick(60)
    c.reconcile()
    assert c.condition("Restarting")["reason"] == "Stalled"
    c.tick(30)  # the restart takes a while: no clock meanwhile
    new_gang_runs(c)
    # Step 40 was the old gang's: the new one has firstProgressDeadlineSeconds from its start.
    c.tick(100)
    p = c.reconcile()
    assert c.status["restarts"] == 1 and p.requeue_after == 20
    report(c, 31)  # resumed from the checkpoint of step 30
    assert c.status["progress"]["stepTime"] == now_rfc3339(c.now)
    c.tick(59)
    c.reconcile()
    assert c.status["phase"] == "Running" and c.status["restarts"] == 1
    report(c, 32)
    c.tick(59)
    c.reconcile()
    assert c.status["phase"] == "Running" and reasons(c).count("Stalled") == 1


def test_a_gang_that_never_reports_a_step_is_stalled_at_the_first_step_deadline():
    c = started({**SPEC, "firstProgressDeadlineSeconds": 300})
    run_start = c.condition("Running")["lastTransitionTime"]
    c.tick(299)
    assert c.reconcile().requeue_after == 1 and c.status["restarts"] == 0
    c.tick(1)
    c.reconcile()
    assert c.condition("Restarting")["message"] == (
        f"stalled: no step reported within 300s (firstProgressDeadlineSeconds) since the gang started running at {run_start}; "
        "no step was ever reported; restarting all 2 nodes (restart 1 of 2)"
    )


def test_without_restarts_left_a_stall_fails_the_job():
    c = started({**SPEC, "maxRestarts": 0})
    c.tick(1)
    report(c, 7)
    c.tick(60)
    p = c.reconcile()
    failed = c.condition("Failed")
    assert c.status["phase"] == "Failed" and failed["reason"] == "RestartLimitExceeded"
    assert failed["message"].startswith("stalled: step 7 has not advanced for 60s") and failed["message"].endswith("no restarts left (0 of 0 used)")
    assert [e.reason for e in p.events] == ["Stalled", "RestartLimitExceeded"]
    assert len(p.delete_pods) == 2  # the hung pods are stopped


def test_without_a_deadline_a_silent_job_runs_on():
    c = started({k: v for k, v in SPEC.items() if k != "progressDeadlineSeconds"})
    c.tick(100_000)
    p = c.reconcile()
    assert c.status["phase"] == "Running" and p.requeue_after == 30


def test_pods_waiting_to_start_are_not_stalled():
    c = Cluster(job_object({**SPEC, "startupTimeoutSeconds": 600}))
    c.reconcile()
    c.reconcile()
    c.tick(500)  # Pending far past the deadline: that is the startup timeout's business
    c.reconcile()
    assert c.status["phase"] == "Pending" and c.status["restarts"] == 0 and "Stalled" not in reasons(c)


def test_a_suspension_stops_the_clock_and_the_resumed_gang_starts_a_new_one():
    c = started(SPEC)
    c.tick(5)
    report(c, 3)
    c.job["spec"]["suspend"] = True
    c.reconcile()
    c.finish_deletions()
    c.reconcile()
    assert c.status["phase"] == "Suspended"
    c.tick(3600)
    c.job["spec"]["suspend"] = False
    c.reconcile()
    c.run()
    c.reconcile()
    assert c.status["phase"] == "Running"
    c.tick(59)
    c.reconcile()
    assert c.status["phase"] == "Running" and c.status["restarts"] == 0
    c.tick(1)
    c.reconcile()
    assert c.condition("Restarting")["reason"] == "Stalled"
    assert "before this gang started" in c.condition("Restarting")["message"]


def test_raising_the_deadline_while_the_job_runs_takes_effect_at_once():
    c = started(SPEC)
    c.tick(5)
    report(c, 3)
    c.tick(55)
    c.job["spec"]["progressDeadlineSeconds"] = 600
    c.job["metadata"]["generation"] = 2
    p = c.reconcile()
    assert c.status["phase"] == "Running" and p.requeue_after == 30


def test_an_elastic_job_that_stalls_restarts_its_whole_gang():
    c = started({**SPEC, "numNodes": 3, "elastic": {"minNodes": 2}})
    c.tick(5)
    report(c, 3)
    c.tick(60)
    c.reconcile()
    assert c.condition("Restarting")["reason"] == "Stalled" and "restarting all 3 nodes" in c.condition("Restarting")["message"]
    assert [n["attempt"] for n in c.status["nodes"]] == [1, 1, 1]


@pytest.mark.parametrize("crash_after", range(0, 4))
def test_a_crash_at_any_step_of_a_stall_restart_counts_it_once(crash_after):
    c = started(SPEC)
    c.tick(5)
    report(c, 3)
    c.tick(60)
    try:
        c.apply(c.plan(), crash_after=crash_after)
    except Crash:
        pass
    for _ in range(4):  # a new operator, nothing in memory: it plans from the status alone
        c.reconcile()
        c.finish_deletions()
    c.run()
    c.reconcile()
    assert c.status["restarts"] == 1 and c.attempts() == {0: 1, 1: 1} and c.status["phase"] == "Running"
    assert reasons(c).count("Stalled") <= 1
