"""The FSDPJob lifecycle under Kueue, pass by pass: the test plays kubelet and Kueue on an
in-memory namespace, and cuts plans short after every step as the operator dying would."""

from __future__ import annotations

import copy
import itertools

import pytest

from pinery.fsdpjob import kueue as kq
from pinery.fsdpjob import plan as make_plan
from pinery.fsdpjob.naming import config_map_name
from tests.unit.fsdpjob.cluster import SETTINGS, Cluster, Crash, exited, job_object

FLAVORS = {"a100": {"metadata": {"name": "a100"}, "spec": {"nodeLabels": {"gpu": "a100"},
                                                           "tolerations": [{"key": "gpu", "operator": "Exists"}]}}}


def queued_job(spec: dict, queue: str = "team-a") -> dict:
    job = job_object({"nprocPerNode": 1, "command": ["python", "train.py"], **spec})
    job["metadata"]["labels"] = {kq.QUEUE_LABEL: queue}
    return job


def merge(target: dict, patch: dict) -> dict:
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)
    return target


class KueueCluster(Cluster):
    """Cluster with the job's Workload, patched as the API server would (resourceVersion
    preconditions included), and Kueue's writes to it."""

    def __init__(self, job: dict):
        super().__init__(job)
        self._rv = itertools.count(100)
        self.flavors = FLAVORS

    @property
    def wl(self) -> dict | None:
        return next((o for (k, _), o in self.objects.items() if k == "Workload"), None)

    def plan(self):
        return make_plan(
            copy.deepcopy(self.job), self.pods(), self.now,
            service=copy.deepcopy(self.objects.get(("Service", self.name))),
            config_map=copy.deepcopy(self.objects.get(("ConfigMap", config_map_name(self.name)))),
            settings=SETTINGS, workload=copy.deepcopy(self.wl), flavors=self.flavors,
        )

    def _create(self, obj: dict) -> None:
        super()._create(obj)
        if obj["kind"] == "Workload":
            self.objects[("Workload", obj["metadata"]["name"])]["metadata"].update(resourceVersion=str(next(self._rv)), generation=1)

    def _patch(self, patch) -> None:
        obj = self.objects[(patch.kind, patch.name)]
        body = copy.deepcopy(patch.patch)
        rv = (body.get("metadata") or {}).pop("resourceVersion", None)
        assert rv is None or rv == obj["metadata"]["resourceVersion"], "stale resourceVersion (409)"
        if patch.subresource == "status":
            obj["status"] = merge(obj.get("status") or {}, body.get("status") or {})
        else:
            body.pop("status", None)
            merge(obj, body)
        obj["metadata"]["resourceVersion"] = str(next(self._rv))

    # Kueue

    def kueue_status(self, status: dict) -> None:
        wl = self.wl
        assert wl is not None
        wl["status"] = merge(wl.get("status") or {}, status)
        wl["metadata"]["resourceVersion"] = str(next(self._rv))

    def admit(self, flavors: dict | None = None, count: int | None = None) -> None:
        wl = self.wl
        conds = [c for c in (wl.get("status") or {}).get("conditions") or [] if c["type"] not in ("QuotaReserved", "Admitted", "Evicted")]
        conds += [{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": "Quota reserved in ClusterQueue cq"},
                  {"type": "Admitted", "status": "True", "reason": "Admitted", "message": "The workload is admitted"}]
        assignment = {"name": "node", "flavors": flavors or {"cpu": "a100"}, "count": count or wl["spec"]["podSets"][0]["count"]}
        self.kueue_status({"conditions": conds, "admission": {"clusterQueue": "cq", "podSetAssignments": [assignment]}})

    def evict(self, reason: str = "Preempted", message: str = "Preempted to accommodate a higher priority workload") -> None:
        conds = [c for c in self.wl["status"]["conditions"] if c["type"] != "Evicted"]
        conds.append({"type": "Evicted", "status": "True", "reason": reason, "message": message})
        self.kueue_status({"conditions": conds})

    def wl_condition(self, type_: str) -> dict:
        return next((c for c in (self.wl.get("status") or {}).get("conditions") or [] if c["type"] == type_), {})

    def settle(self, passes: int = 4) -> None:
        for _ in range(passes):
            if self.reconcile().idle:
                return


def kinds(p) -> list[str]:
    return [o["kind"] for o in p.create]


def test_a_queued_job_creates_its_workload_and_the_service_and_no_pod_nor_config_map():
    c = KueueCluster(queued_job({"numNodes": 2}))
    p = c.reconcile()
    assert kinds(p) == ["Service", "Workload"]
    assert c.status["phase"] == "Queued" and c.condition("Queued")["reason"] == "Pending"
    assert [(e.type, e.reason) for e in p.events] == [("Normal", "CreatedWorkload")]
    assert c.condition("Running") == {} and all(n["reason"] == "Queued" for n in c.status["nodes"])
    c.settle()
    assert c.pods() == [] and ("ConfigMap", "train-trainer") not in c.objects
    assert c.wl_condition("PodsReady")["reason"] == "WaitForStart"  # "PodsReady is set to False before Workload is Admitted"
    assert c.reconcile().idle


@pytest.mark.parametrize("cut", [1, 2])
def test_the_admission_is_recorded_before_any_pod_and_pods_are_built_from_it_after_a_crash(cut):
    c = KueueCluster(queued_job({"numNodes": 2}))
    c.settle()
    c.admit()
    p = c.plan()
    assert kinds(p) == []  # this pass only records
    assert next(p.steps())[0] == "patch_status"
    try:
        c.apply(p, crash_after=cut)
    except Crash:
        pass  # the operator died after `cut` steps
    assert c.status["admission"]["flavors"] == {"cpu": "a100"}
    c.flavors = {}  # the flavor went away meanwhile: the recorded admission is what counts
    c.settle()
    pods = c.pods()
    assert len(pods) == 2 and c.created_pods == 2
    assert all(p_["spec"]["nodeSelector"] == {"gpu": "a100"} for p_ in pods)
    assert all({"key": "gpu", "operator": "Exists"} in p_["spec"]["tolerations"] for p_ in pods)
    assert c.condition("Queued")["status"] == "False" and c.status["phase"] == "Pending"


def test_time_in_the_queue_is_no_startup_failure():
    c = KueueCluster(queued_job({"numNodes": 1, "startupTimeoutSeconds": 60}))
    c.settle()
    c.tick(3600)
    c.admit()
    c.settle()
    c.tick(30)
    c.settle()
    assert not c.condition("Failed") and len(c.pods()) == 1
    c.tick(31)
    c.settle()
    assert c.condition("Failed")["reason"] == "StartupTimeout"


def running(c: KueueCluster) -> None:
    c.settle()
    c.admit()
    c.settle()
    c.run()
    c.settle()
    assert c.status["phase"] == "Running"
    assert c.wl_condition("PodsReady")["status"] == "True" and c.wl_condition("PodsReady")["reason"] == "Started"


@pytest.mark.parametrize("cut", [None, 1, 2])
def test_an_eviction_stops_the_gang_requeues_once_no_pod_is_left_and_costs_no_restart(cut):
    c = KueueCluster(queued_job({"numNodes": 2, "maxRestarts": 0}))
    running(c)
    c.evict()
    p = c.plan()
    steps = [a for a, _ in p.steps()]
    assert steps[0] == "patch_status" and "delete_pod" in steps  # the new attempt is written first
    assert p.status["requeues"] == 1 and p.status["restarts"] == 0 and "admission" not in p.status
    assert not [x for x in p.patches if x.subresource == "status" and "admission" in x.patch["status"]]  # pods still run: no requeue
    if cut is not None:
        with pytest.raises(Crash):
            c.apply(p, crash_after=cut)
    else:
        c.apply(p)
    c.settle()
    assert c.status["requeues"] == 1 and c.status["restarts"] == 0  # replanning counts nothing twice
    assert c.wl_condition("QuotaReserved")["status"] == "True"  # pods terminating: the quota stays
    assert c.status["phase"] == "Queued" and c.condition("Queued")["reason"] == "Preempted"
    c.finish_deletions()
    c.settle()
    assert c.wl_condition("QuotaReserved")["reason"] == "PendingEvaluation" and "admission" not in c.wl["status"]
    assert c.wl_condition("Requeued")["status"] == "True"
    # waiting again, in Kueue's words (QuotaReserved False PendingEvaluation, the eviction's message)
    assert c.status["phase"] == "Queued" and c.condition("Queued")["reason"] == "PendingEvaluation"
    assert c.condition("Queued")["message"] == "Preempted to accommodate a higher priority workload"
    assert c.condition("Running")["status"] == "False"
    c.admit()
    c.settle()
    assert c.attempts() == {0: 1, 1: 1}
    c.run()
    c.settle()
    assert c.status["phase"] == "Running" and c.status["restarts"] == 0
    # a real failure now spends the budget (maxRestarts 0): fail, not restart
    c.fail(1, 1)
    c.settle()
    assert c.condition("Failed")["reason"] == "RestartLimitExceeded"


def test_a_real_failure_after_a_requeue_restarts_in_a_fresh_attempt():
    c = KueueCluster(queued_job({"numNodes": 2, "maxRestarts": 1}))
    running(c)
    c.evict()
    c.settle()
    c.finish_deletions()
    c.settle()
    c.admit()
    c.settle()
    c.run()
    c.settle()
    c.fail(0, 1)
    c.settle()
    assert c.status["restarts"] == 1 and c.status["requeues"] == 1
    c.finish_deletions()
    c.settle()
    assert c.attempts() == {0: 2, 1: 2}


def test_suspend_deactivates_the_workload_and_releases_the_quota_after_kueue_evicts_it():
    c = KueueCluster(queued_job({"numNodes": 1}))
    running(c)
    c.job["spec"]["suspend"] = True
    c.settle()
    assert c.wl["spec"]["active"] is False
    c.evict("Deactivated", "The workload is deactivated")
    c.finish_deletions()
    c.settle()
    assert c.wl_condition("QuotaReserved")["status"] == "False" and c.wl_condition("Requeued")["status"] == "False"
    assert c.status["phase"] == "Suspended" and "admission" not in c.status
    c.job["spec"]["suspend"] = False
    c.settle()
    assert c.wl["spec"]["active"] is True and c.status["phase"] == "Queued" and c.pods() == []


def test_when_the_job_completes_the_workload_is_finished_then_its_finalizer_goes_and_only_then_the_ttl_deletes_the_job():
    c = KueueCluster(queued_job({"numNodes": 1, "ttlSecondsAfterFinished": 0}))
    running(c)
    c.set_pod_status(0, exited(0, c.now))
    c.reconcile()
    assert c.condition("Succeeded")["status"] == "True"
    c.reconcile()
    assert c.wl_condition("Finished")["reason"] == "Succeeded" and not c.job_deleted
    c.reconcile()
    assert kq.FINALIZER not in (c.wl["metadata"].get("finalizers") or []) and not c.job_deleted
    c.reconcile()
    assert c.job_deleted


def test_an_admission_conflict_fails_the_job_and_finishes_the_workload_failed_to_start():
    c = KueueCluster(queued_job({"numNodes": 1, "podTemplate": {"nodeSelector": {"gpu": "h100"}}}))
    c.settle()
    c.admit()
    c.settle()
    assert c.condition("Failed")["reason"] == "AdmissionConflict" and c.pods() == []
    assert c.condition("Failed")["message"] == (
        "invalid admission check PodSetUpdate: conflict for nodeSelector: conflict for key=gpu, value1=h100, value2=a100")
    assert c.wl_condition("Finished")["reason"] == "FailedToStart"


def test_an_elastic_job_partially_admitted_runs_the_admitted_nodes():
    c = KueueCluster(queued_job({"numNodes": 4, "elastic": {"minNodes": 2}}))
    c.settle()
    assert c.wl["spec"]["podSets"][0]["minCount"] == 2
    c.admit(count=3)
    c.settle()
    assert sorted(c.attempts()) == [0, 1, 2] and c.status["admission"]["count"] == 3
    assert len(c.status["nodes"]) == 3


def test_a_deleted_workload_stops_the_pods_and_is_created_anew_once_none_is_left():
    c = KueueCluster(queued_job({"numNodes": 1}))
    running(c)
    del c.objects[("Workload", c.wl["metadata"]["name"])]
    c.settle()
    assert c.wl is None and c.condition("Queued")["reason"] == "WorkloadDeleted"
    c.finish_deletions()
    c.settle()
    assert c.wl is not None and c.status["phase"] == "Queued" and c.status["requeues"] == 1


def test_when_job_is_initially_suspended_the_workload_has_active_false_and_it_is_not_admitted():
    c = KueueCluster(queued_job({"numNodes": 1, "suspend": True}))
    p = c.reconcile()
    assert "Workload" in kinds(p) and c.wl["spec"]["active"] is False
    c.settle()
    assert c.status["phase"] == "Suspended" and c.pods() == []
    c.job["spec"]["suspend"] = False
    c.settle()
    assert c.wl["spec"]["active"] is True and c.status["phase"] == "Queued"


def test_active_deadline_counts_from_the_last_admission():
    """Kueue resets a Job's startTime when an eviction stops it ("when workload is evicted,
    suspend, reset startTime and restore node affinity")."""
    c = KueueCluster(queued_job({"numNodes": 1, "activeDeadlineSeconds": 100}))
    running(c)
    c.tick(90)
    c.evict()
    c.settle()
    c.finish_deletions()
    c.settle()
    c.tick(600)
    c.admit()
    c.settle()
    c.run()
    c.settle()
    assert not c.condition("Failed") and c.status["phase"] == "Running"
    c.tick(101)
    c.settle()
    assert c.condition("Failed")["reason"] == "DeadlineExceeded"


def test_when_workload_is_evicted_the_next_attempt_carries_only_the_new_admissions_flavor():
    """'when workload is evicted, suspend, reset startTime and restore node affinity' and
    jobset's TestRestorePodSetsInfo: nothing of the old admission stays on the new pods."""
    c = KueueCluster(queued_job({"numNodes": 1, "podTemplate": {"nodeSelector": {"team": "a"}}}))
    c.flavors = {**FLAVORS, "v100": {"metadata": {"name": "v100"}, "spec": {"nodeLabels": {"gpu": "v100"}}}}
    running(c)
    assert c.pods()[0]["spec"]["nodeSelector"] == {"team": "a", "gpu": "a100"}
    c.evict()
    c.settle()
    c.finish_deletions()
    c.settle()
    c.admit(flavors={"cpu": "v100"})
    c.settle()
    (pod,) = c.pods()
    assert pod["spec"]["nodeSelector"] == {"team": "a", "gpu": "v100"}
    assert {"key": "gpu", "operator": "Exists"} not in (pod["spec"].get("tolerations") or [])
    assert c.status["admission"]["flavors"] == {"cpu": "v100"}


def test_a_queued_job_relabelled_moves_its_workload_and_says_so():
    c = KueueCluster(queued_job({"numNodes": 1}))
    c.settle()
    c.job["metadata"]["labels"][kq.QUEUE_LABEL] = "team-b"
    p = c.plan()
    (patch,) = p.patches
    assert (patch.kind, patch.subresource, patch.patch["spec"]) == ("Workload", None, {"queueName": "team-b"})
    assert [(e.type, e.reason) for e in p.events] == [("Normal", "UpdatedWorkload")]
    assert "from LocalQueue team-a to team-b" in p.events[0].message
    c.apply(p)
    assert c.wl["spec"]["queueName"] == "team-b"
    c.settle()
    assert c.reconcile().idle and c.pods() == []
    c.admit()
    c.settle()
    assert c.pods()[0]["metadata"]["labels"][kq.LOCAL_QUEUE_LABEL] == "team-b"


def test_an_admitted_job_relabelled_keeps_its_workload_and_warns_once():
    c = KueueCluster(queued_job({"numNodes": 1}))
    running(c)
    c.job["metadata"]["labels"][kq.QUEUE_LABEL] = "team-b"
    p = c.reconcile()
    assert not [x for x in p.patches if "spec" in x.patch and "queueName" in x.patch["spec"]]
    assert [(e.type, e.reason) for e in p.events] == [("Warning", "QueueNameNotApplied")]
    assert c.wl["spec"]["queueName"] == "team-a" and c.status["phase"] == "Running"
    assert "Kueue does not move a Workload with a quota reservation" in c.condition("Queued")["message"]
    assert c.condition("Queued")["reason"] == "Admitted"
    assert not [e for e in c.reconcile().events if e.reason == "QueueNameNotApplied"]  # once
    # Requeued: the quota is released, and the label takes effect.
    c.evict()
    c.settle()
    c.finish_deletions()
    c.settle()
    assert c.wl["spec"]["queueName"] == "team-b" and c.status["phase"] == "Queued"
    assert "team-b" not in c.condition("Queued")["message"]


def test_removing_the_label_keeps_the_job_under_its_workload():
    c = KueueCluster(queued_job({"numNodes": 1}))
    c.settle()
    del c.job["metadata"]["labels"][kq.QUEUE_LABEL]
    p = c.reconcile()
    assert [(e.type, e.reason) for e in p.events] == [("Warning", "QueueNameNotApplied")]
    c.settle()
    assert c.pods() == [] and c.status["phase"] == "Queued" and "label was removed" in c.condition("Queued")["message"]
    c.admit()
    c.settle()
    assert len(c.pods()) == 1  # its Workload's admission still starts it
    # The Workload gone, the job leaves Kueue and runs without it.
    c2 = KueueCluster(queued_job({"numNodes": 1}))
    c2.settle()
    del c2.job["metadata"]["labels"][kq.QUEUE_LABEL]
    del c2.objects[("Workload", c2.wl["metadata"]["name"])]
    c2.settle()
    assert c2.wl is None and len(c2.pods()) == 1 and c2.condition("Queued")["reason"] == "NotQueued"
