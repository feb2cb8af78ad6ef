"""pinery.fsdpjob.kueue, case by case. The cases are Kueue's own (kubernetes-sigs/kueue
ff69552e79), named as upstream names them: `jobframework/workload_names_test.go`
TestGenerateWorkloadNameWithExtra; `jobs/job/job_controller_test.go` TestReconciler;
`jobframework/reconciler_test.go` TestReconcileGenericJob_EvictionClearsQuotaReservation;
`jobs/jobset/jobset_controller_test.go` TestPodSets, TestPodsReady."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from pinery.api.fsdpjob import FSDPJobSpec
from pinery.fsdpjob import kueue as kq
from pinery.fsdpjob.children import build_pod
from pinery.fsdpjob.naming import JobRef
from pinery.settings import OperatorSettings

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
SETTINGS = OperatorSettings(operator_image="op:test", trainer_image="trainer:test")
UID = "0b0f6e26-2b4f-4f1e-8d1e-5b7c2f9a1c3d"


def job(labels: dict | None = None, **spec) -> dict:
    spec.setdefault("numNodes", 2)
    spec.setdefault("nprocPerNode", 1)
    spec.setdefault("command", ["python", "train.py"])
    return {"apiVersion": "pinery.dev/v1alpha1", "kind": "FSDPJob",
            "metadata": {"name": "train", "namespace": "ml", "uid": UID, "labels": {kq.QUEUE_LABEL: "team-a", **(labels or {})}},
            "spec": spec}


def spec_of(j: dict) -> FSDPJobSpec:
    return FSDPJobSpec.model_validate(j["spec"])


def pod0(j: dict) -> dict:
    return build_pod(JobRef.of(j), spec_of(j), 0, 0, SETTINGS)


def wl_of(j: dict, **kw) -> dict:
    wl = kq.workload(j, spec_of(j), pod0(j), **kw)
    wl["metadata"].update(resourceVersion="7", generation=1)
    return wl


def cond(type_: str, status: str, reason: str, message: str = "") -> dict:
    return {"type": type_, "status": status, "reason": reason, "message": message, "lastTransitionTime": "2026-01-01T11:00:00Z"}


def admitted(wl: dict, *, flavors: dict | None = None, count: int | None = None, checks: list | None = None,
             cq: str = "cluster-queue") -> dict:
    """ReserveQuotaAt + AdmittedAt, as Kueue's test wrappers build them."""
    assignment: dict = {"name": "node", "flavors": flavors or {"cpu": "default"}, "count": count or wl["spec"]["podSets"][0]["count"],
                        "resourceUsage": {"cpu": "2"}}
    status = {"admission": {"clusterQueue": cq, "podSetAssignments": [assignment]},
              "conditions": [cond("QuotaReserved", "True", "QuotaReserved", f"Quota reserved in ClusterQueue {cq}"),
                             cond("Admitted", "True", "Admitted", "The workload is admitted")]}
    if checks is not None:
        status["admissionChecks"] = checks
    return {**wl, "status": status}


FLAVORS = {
    "default": {"metadata": {"name": "default"}, "spec": {}},
    "on-demand": {"metadata": {"name": "on-demand"}, "spec": {"nodeLabels": {"provisioning": "on-demand"}}},
    "spot": {"metadata": {"name": "spot"}, "spec": {"nodeLabels": {"provisioning": "spot"},
                                                     "tolerations": [{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}]}},
}


# --- names ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind,group,name,uid,extra,want", [
    # TestGenerateWorkloadNameWithExtra "short name, no extra (ShortWorkloadNames=false)"
    ("Job", "batch", "name", "uid", "", "job-name-ef3a1"),
])
def test_workload_names_are_kueues(kind, group, name, uid, extra, want):
    assert kq.generated_name(kind, group, name, uid, extra) == want


def test_the_fsdpjob_workload_name_is_kueues_rule_for_the_kind_and_a_long_name_is_cut_to_253():
    name = kq.workload_name("train", UID)
    assert name == kq.generated_name("FSDPJob", "pinery.dev", "train", UID)
    assert name.startswith("fsdpjob-train-") and len(name) == len("fsdpjob-train-") + 5
    long = kq.workload_name("x" * 253, UID)
    assert len(long) == 253 and long.startswith("fsdpjob-xxx") and long[-6] == "-"


# --- the Workload (ConstructWorkload) -------------------------------------------------------


def test_the_workload_is_created_when_queue_name_is_set():
    j = job()
    wl = kq.workload(j, spec_of(j), pod0(j))
    assert wl["apiVersion"] == "kueue.x-k8s.io/v1beta2" and wl["kind"] == "Workload"
    meta = wl["metadata"]
    assert meta["namespace"] == "ml" and meta["labels"] == {kq.JOB_UID_LABEL: UID}
    assert meta["finalizers"] == ["kueue.x-k8s.io/resource-in-use"]  # NewWorkload: the job side adds it
    assert meta["ownerReferences"] == [{"apiVersion": "pinery.dev/v1alpha1", "kind": "FSDPJob", "name": "train", "uid": UID,
                                        "controller": True, "blockOwnerDeletion": True}]
    assert wl["spec"]["queueName"] == "team-a" and wl["spec"]["active"] is True
    assert "priorityClassRef" not in wl["spec"] and "priority" not in wl["spec"]


def test_the_workload_is_not_created_when_queue_name_is_not_set():
    j = job()
    j["metadata"]["labels"] = {}
    assert kq.queue_name(j) is None


def test_pod_sets_one_node_pod_set_with_rank0s_template_and_no_per_rank_fields():
    """TestPodSets: one pod set per replicated job; ours is one, "node", of numNodes."""
    j = job(numNodes=4, resources={"requests": {"cpu": "2", "nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}},
            podTemplate={"nodeSelector": {"pool": "gpu"}, "labels": {"team": "a"}})
    (ps,) = kq.workload(j, spec_of(j), pod0(j))["spec"]["podSets"]
    assert (ps["name"], ps["count"]) == ("node", 4) and "minCount" not in ps
    t = ps["template"]
    assert t["metadata"]["labels"]["team"] == "a" and "pinery.dev/node-rank" not in t["metadata"]["labels"]
    assert "pinery.dev/attempt" not in t["metadata"]["labels"]
    assert "hostname" not in t["spec"] and t["spec"]["nodeSelector"] == {"pool": "gpu"}
    (c,) = t["spec"]["containers"]
    assert c["resources"]["requests"] == {"cpu": "2", "nvidia.com/gpu": "1"} and "env" not in c


def test_an_elastic_job_has_min_count_for_partial_admission():
    j = job(numNodes=4, elastic={"minNodes": 2})
    (ps,) = kq.workload(j, spec_of(j), pod0(j))["spec"]["podSets"]
    assert (ps["count"], ps["minCount"]) == (4, 2)


@pytest.mark.parametrize("labels,template,want", [
    # "the workload is created when queue name is set, with workloadPriorityClass"
    ({kq.PRIORITY_CLASS_LABEL: "high"}, None, ("WorkloadPriorityClass", "high", "kueue.x-k8s.io")),
    # "... with PriorityClass"
    ({}, {"priorityClassName": "pods-high"}, ("PriorityClass", "pods-high", "scheduling.k8s.io")),
    # "... with workloadPriorityClass and PriorityClass": the label wins
    ({kq.PRIORITY_CLASS_LABEL: "high"}, {"priorityClassName": "pods-high"}, ("WorkloadPriorityClass", "high", "kueue.x-k8s.io")),
    ({}, None, None),
])
def test_priority_as_prepare_workload_priority(labels, template, want):
    j = job(labels, **({"podTemplate": template} if template else {}))
    ref = kq.priority_ref(j)
    assert (ref and (ref.kind, ref.name, ref.group)) == want
    if ref is not None:
        wl = kq.workload(j, spec_of(j), pod0(j), priority=(ref, 1000))
        assert wl["spec"]["priorityClassRef"] == {"group": want[2], "kind": want[0], "name": want[1]}
        assert wl["spec"]["priority"] == 1000  # the CRD requires it with the ref


def test_a_suspended_job_has_an_inactive_workload():
    """'when job is initially suspended, the Workload has active=false and it's not admitted'"""
    j = job(suspend=True)
    assert kq.workload(j, spec_of(j), pod0(j))["spec"]["active"] is False
    wl = wl_of(job())
    assert kq.active_patch(wl, False) == {"metadata": {"resourceVersion": "7"}, "spec": {"active": False}}
    assert kq.active_patch(wl, True) is None


# --- admission (getPodSetsInfoFromStatus, podset.FromAssignment, Merge) ---------------------


def test_not_admitted_means_no_admission():
    wl = wl_of(job())
    assert kq.admission(wl, FLAVORS, pod0(job())) is None
    reserved = admitted(wl)
    reserved["status"]["conditions"] = [c for c in reserved["status"]["conditions"] if c["type"] != "Admitted"]
    assert kq.admission(reserved, FLAVORS, pod0(job())) is None


def test_suspended_job_with_matching_admitted_workload_is_unsuspended():
    j = job()
    result = kq.admission(admitted(wl_of(j), flavors={"cpu": "spot", "memory": "spot"}), FLAVORS, pod0(j))
    a = result.admission
    assert result.conflict is None and a.cluster_queue == "cluster-queue" and a.count == 2
    assert a.flavors == {"cpu": "spot", "memory": "spot"}
    assert a.placement.node_selector == {"provisioning": "spot"}
    assert a.placement.tolerations == ({"key": "spot", "operator": "Exists", "effect": "NoSchedule"},)  # once per flavor
    assert a.placement.labels == {kq.POD_SET_LABEL: "node", kq.LOCAL_QUEUE_LABEL: "team-a", kq.CLUSTER_QUEUE_LABEL: "cluster-queue"}
    assert kq.recorded(a.to_status()) == a


def test_pod_cluster_queue_label_is_not_set_when_cluster_queue_name_is_too_long():
    j = job()
    a = kq.admission(admitted(wl_of(j), cq="c" * 64), FLAVORS, pod0(j)).admission
    assert kq.CLUSTER_QUEUE_LABEL not in a.placement.labels


def test_an_assigned_flavor_not_read_yet_is_waited_for():
    j = job()
    result = kq.admission(admitted(wl_of(j), flavors={"cpu": "gone"}), FLAVORS, pod0(j))
    assert result.missing_flavors == ("gone",) and result.admission is None


def test_when_workload_is_admitted_the_pod_set_updates_are_propagated_to_job():
    j = job()
    checks = [{"name": "check", "state": "Ready", "podSetUpdates": [
        {"name": "node", "labels": {"ac-key": "ac-value"}, "annotations": {"ac-key": "ac-value"},
         "nodeSelector": {"ac-key": "ac-value"}, "tolerations": [{"key": "ac", "operator": "Exists"}]}]}]
    a = kq.admission(admitted(wl_of(j), checks=checks), FLAVORS, pod0(j)).admission
    assert a.placement.labels["ac-key"] == "ac-value" and a.placement.annotations == {"ac-key": "ac-value"}
    assert a.placement.node_selector == {"ac-key": "ac-value"}
    assert a.placement.tolerations == ({"key": "ac", "operator": "Exists"},)


def _update(**fields) -> dict:
    return {"name": "node", **fields}


@pytest.mark.parametrize("what,first,second", [
    # "... PodSetUpdates conflict between admission checks on labels, the workload is finished with failure"
    ("labels", {"labels": {"ac-key": "ac-value1"}}, {"labels": {"ac-key": "ac-value2"}}),
    # "... on annotations ..."
    ("annotations", {"annotations": {"ac-key": "ac-value1"}}, {"annotations": {"ac-key": "ac-value2"}}),
    # "... on nodeSelector ..."
    ("nodeSelector", {"nodeSelector": {"ac-key": "ac-value1"}}, {"nodeSelector": {"ac-key": "ac-value2"}}),
])
def test_pod_set_updates_conflict_between_admission_checks(what, first, second):
    j = job()
    checks = [{"name": "check1", "state": "Ready", "podSetUpdates": [_update(**first)]},
              {"name": "check2", "state": "Ready", "podSetUpdates": [_update(**second)]}]
    result = kq.admission(admitted(wl_of(j), checks=checks), FLAVORS, pod0(j))
    assert result.admission is None
    assert result.conflict == (f'in admission check "check2": invalid admission check PodSetUpdate: conflict for {what}: '
                               "conflict for key=ac-key, value1=ac-value1, value2=ac-value2")


def test_pod_set_updates_conflict_between_admission_check_node_selector_and_current_node_selector():
    """The message is Kueue's Finished message in that case, word for word."""
    j = job(podTemplate={"nodeSelector": {"provisioning": "spot"}})
    checks = [{"name": "check", "state": "Ready", "podSetUpdates": [_update(nodeSelector={"provisioning": "on-demand"})]}]
    result = kq.admission(admitted(wl_of(j), checks=checks), FLAVORS, pod0(j))
    assert result.conflict == ("invalid admission check PodSetUpdate: conflict for nodeSelector: "
                               "conflict for key=provisioning, value1=spot, value2=on-demand")


def test_a_flavor_node_label_against_the_jobs_node_selector_is_a_conflict_too():
    j = job(podTemplate={"nodeSelector": {"provisioning": "spot"}})
    result = kq.admission(admitted(wl_of(j), flavors={"cpu": "on-demand"}), FLAVORS, pod0(j))
    assert result.conflict is not None and "key=provisioning, value1=spot, value2=on-demand" in result.conflict


def test_an_update_may_not_relabel_pinerys_own_labels():
    j = job()
    checks = [{"name": "check", "state": "Ready", "podSetUpdates": [_update(labels={"pinery.dev/job-name": "other"})]}]
    assert "conflict for labels" in kq.admission(admitted(wl_of(j), checks=checks), FLAVORS, pod0(j)).conflict


def test_when_workload_is_admitted_the_pod_set_updates_values_matching_for_key():
    j = job(podTemplate={"nodeSelector": {"provisioning": "spot"}})
    checks = [{"name": "check1", "state": "Ready", "podSetUpdates": [_update(nodeSelector={"provisioning": "spot"})]},
              {"name": "check2", "state": "Ready", "podSetUpdates": [_update(nodeSelector={"provisioning": "spot"})]}]
    result = kq.admission(admitted(wl_of(j), flavors={"cpu": "spot"}, checks=checks), FLAVORS, pod0(j))
    assert result.conflict is None and result.admission.placement.node_selector == {"provisioning": "spot"}


def test_suspended_job_with_partial_admission_and_admitted_workload_is_unsuspended():
    """Kueue runs the Job with the 8 of 10 it admitted; an elastic FSDPJob runs the nodes admitted."""
    elastic = job(numNodes=10, elastic={"minNodes": 5})
    a = kq.admission(admitted(wl_of(elastic), count=8), FLAVORS, pod0(elastic)).admission
    assert a.count == 8 and kq.admitted_nodes(spec_of(elastic), a) == 8
    gang = job(numNodes=10)
    assert kq.admitted_nodes(spec_of(gang), kq.admission(admitted(wl_of(gang), count=8), FLAVORS, pod0(gang)).admission) == 10
    assert kq.admitted_nodes(spec_of(gang), None) == 10


# --- eviction and requeue (ReconcileGenericJob step 6) --------------------------------------


@pytest.mark.parametrize("reason,requeued", [
    ("Preempted", "True"),  # "when workload is evicted due to preemption, job gets suspended"
    ("PodsReadyTimeout", "False"),  # "... due to pods ready timeout ..."
    ("ClusterQueueStopped", "False"),  # "... due to cluster queue stopped ..."
    ("LocalQueueStopped", "False"),  # "... due to local queue stopped ..."
    ("Deactivated", "False"),  # "... due to spec.active field being false, ... quota is unset"
    ("AdmissionCheck", "False"),  # "... due to admission check ..."
    ("NodeFailures", "True"),
])
def test_eviction_clears_quota_reservation(reason, requeued):
    """TestReconcileGenericJob_EvictionClearsQuotaReservation and the job_controller_test cases:
    the requeue patch the job side writes once no pod is active."""
    wl = admitted(wl_of(job()))
    wl["status"]["conditions"].append(cond("Evicted", "True", reason, "Preempted"))
    ev = kq.eviction(wl)
    assert ev == kq.Eviction(reason, "Preempted")
    patch = kq.requeue_patch(wl, ev, NOW)
    assert patch["metadata"] == {"resourceVersion": "7"} and patch["status"]["admission"] is None
    conds = {c["type"]: c for c in patch["status"]["conditions"]}
    assert (conds["Requeued"]["status"], conds["Requeued"]["reason"], conds["Requeued"]["message"]) == (requeued, reason, "Preempted")
    assert (conds["QuotaReserved"]["status"], conds["QuotaReserved"]["reason"], conds["QuotaReserved"]["message"]) == (
        "False", "PendingEvaluation", "Preempted")
    assert (conds["Admitted"]["status"], conds["Admitted"]["reason"], conds["Admitted"]["message"]) == (
        "False", "NoReservation", "The workload has no reservation")
    assert conds["Evicted"]["status"] == "True"  # Kueue resets it at the next SetQuotaReservation
    released = {**wl, "status": {"conditions": patch["status"]["conditions"]}}
    assert kq.requeue_patch(released, ev, NOW) is None  # done once


def test_no_eviction_without_evicted_true():
    wl = admitted(wl_of(job()))
    assert kq.eviction(wl) is None
    wl["status"]["conditions"].append(cond("Evicted", "False", "QuotaReserved", "Previously: Preempted"))
    assert kq.eviction(wl) is None


# --- finished and the finalizer -------------------------------------------------------------


def test_when_job_completes_workload_is_marked_as_finished():
    wl = admitted(wl_of(job()))
    patch = kq.finished_patch(wl, "Succeeded", "all 2 nodes exited 0", NOW)
    (finished,) = [c for c in patch["status"]["conditions"] if c["type"] == "Finished"]
    assert (finished["status"], finished["reason"], finished["message"], finished["observedGeneration"]) == (
        "True", "Succeeded", "all 2 nodes exited 0", 1)
    wl["status"]["conditions"] = patch["status"]["conditions"]
    assert kq.finished_patch(wl, "Succeeded", "again", NOW) is None


def test_when_the_workload_is_finished_its_finalizer_is_removed():
    wl = wl_of(job())
    wl["metadata"]["finalizers"] = ["other", kq.FINALIZER]
    assert kq.finalizer_patch(wl) == {"metadata": {"resourceVersion": "7", "finalizers": ["other"]}}
    wl["metadata"]["finalizers"] = [kq.FINALIZER]
    assert kq.finalizer_patch(wl) == {"metadata": {"resourceVersion": "7", "finalizers": None}}
    wl["metadata"]["finalizers"] = []
    assert kq.finalizer_patch(wl) is None


# --- PodsReady (generatePodsReadyCondition) --------------------------------------------------


NOT_READY = "Not all pods are ready or succeeded"
RECOVERING = "At least one pod has failed, waiting for recovery"
READY = "All pods reached readiness and the workload is running"


@pytest.mark.parametrize("name,is_admitted,current,ready,want", [
    ("PodsReady is set to False before Workload is Admitted", False, None, False, ("False", "WaitForStart", NOT_READY)),
    ("PodsReady is set to False after Workload is Admitted but not all Pods reached readiness", True, None, False,
     ("False", "WaitForStart", NOT_READY)),
    ("PodsReady is set to False after Workload is Admitted, some Pods became ready but not all Pods reached readiness", True,
     ("False", "WaitForStart"), False, ("False", "WaitForStart", NOT_READY)),
    ("PodsReady is set to True after Workload is Admitted and all Pods reached readiness", True, ("False", "WaitForStart"), True,
     ("True", "Started", READY)),
    ("PodsReady is set to True after Workload is Admitted and all Pods reached readiness without previous PodsReady condition",
     True, None, True, ("True", "Started", READY)),
    ("PodsReady is set to False after Workload is running and one pod failed", True, ("True", "Started"), False,
     ("False", "WaitForRecovery", RECOVERING)),
    ("PodsReady continues to be False after a pod failed and workload is still recovering", True, ("False", "WaitForRecovery"), False,
     ("False", "WaitForRecovery", RECOVERING)),
    ("PodsReady is set to True after failing pod recovered", True, ("False", "WaitForRecovery"), True, ("True", "Recovered", READY)),
    ("PodsReady=False has the new Reason if there was the old one before (pre v0.11.0)", True, ("False", "PodsReady"), False,
     ("False", "WaitForStart", NOT_READY)),
    ("PodsReady=True has the new Reason if there was the old one before (pre v0.11.0)", True, ("True", "PodsReady"), True,
     ("True", "Started", READY)),
])
def test_pods_ready(name, is_admitted, current, ready, want):
    wl = admitted(wl_of(job())) if is_admitted else wl_of(job())
    if current is not None:
        wl.setdefault("status", {}).setdefault("conditions", []).append(cond("PodsReady", *current))
    assert kq.pods_ready(wl, ready) == want, name
    patch = kq.pods_ready_patch(wl, ready, NOW)
    if current is not None and (current[0], current[1]) == want[:2]:
        assert patch is None  # HasConditionWithTypeAndReason: no write
    else:
        (written,) = [c for c in patch["status"]["conditions"] if c["type"] == "PodsReady"]
        assert (written["status"], written["reason"], written["message"]) == want


# --- what the job's Queued condition says --------------------------------------------------


@pytest.mark.parametrize("conditions,checks,active,want", [
    ([], None, True, ("True", "Pending", "waiting for Kueue to evaluate the Workload in LocalQueue team-a")),
    ([cond("QuotaReserved", "False", "WaitingForQuota", "couldn't assign flavors to pod set node: insufficient quota for cpu")],
     None, True, ("True", "WaitingForQuota", "couldn't assign flavors to pod set node: insufficient quota for cpu")),
    ([cond("QuotaReserved", "False", "NoMatchingFlavor", "no flavor")], None, True, ("True", "NoMatchingFlavor", "no flavor")),
    ([cond("QuotaReserved", "False", "Inadmissible", "LocalQueue team-a doesn't exist")], None, True,
     ("True", "Inadmissible", "LocalQueue team-a doesn't exist")),
    ([cond("QuotaReserved", "True", "QuotaReserved", "")], [{"name": "prov", "state": "Pending", "message": "provisioning"}], True,
     ("True", "WaitingForAdmissionChecks", "quota reserved; waiting for admission checks: prov (Pending: provisioning)")),
    ([cond("QuotaReserved", "True", "QuotaReserved", ""), cond("Admitted", "True", "Admitted", "")], None, True,
     ("False", "Admitted", "Admitted by clusterQueue cq")),
    ([cond("QuotaReserved", "True", "QuotaReserved", ""), cond("Admitted", "True", "Admitted", ""),
      cond("Evicted", "True", "Preempted", "Preempted to accommodate a workload")], None, True,
     ("True", "Preempted", "evicted by Kueue: Preempted to accommodate a workload")),
    ([], None, False, ("True", "Inactive", "the Workload is not active (spec.active is false)")),
])
def test_queued_condition(conditions, checks, active, want):
    wl = wl_of(job())
    wl["spec"]["active"] = active
    wl["status"] = {"conditions": conditions, "admission": {"clusterQueue": "cq", "podSetAssignments": []}}
    if checks is not None:
        wl["status"]["admissionChecks"] = checks
    assert kq.queued_condition(wl) == want


def test_one_write_a_pass_in_the_designs_precedence():
    w = kq.Writes()
    w.want("finalizer", {"f": 1})
    w.want("requeue", {"r": 1}, "status")
    w.want("pods_ready", None, "status")
    w.want("active", {"a": 1})
    assert w.first() == ("active", {"a": 1}, None)
    assert kq.Writes().first() is None


# --- the queue name after the Workload exists (ReconcileGenericJob step 7) -----------------


def _reserved(wl: dict) -> dict:
    return {**wl, "status": {"admission": {"clusterQueue": "cq", "podSetAssignments": []},
                             "conditions": [cond("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue cq")]}}


def _evicted_and_requeued(wl: dict) -> dict:
    return {**wl, "status": {"conditions": [cond("Evicted", "True", "Preempted", "preempted"),
                                            cond("QuotaReserved", "False", "Pending", "preempted")]}}


def _finished(wl: dict) -> dict:
    return {**wl, "status": {"conditions": [cond("Finished", "True", "Succeeded", "")]}}


@pytest.mark.parametrize("name,state,label,moved,held", [
    # Kueue test/integration/.../jobs/job/job_controller_test.go: "checking the workload is
    # updated with queue name when the job does" (a suspended job, its Workload not admitted).
    ("the workload is updated with queue name when the job does", lambda wl: wl, "team-b", True, None),
    ("an unchanged label writes nothing", lambda wl: wl, "team-a", False, None),
    # The Workload CRD: "queueName is immutable while workload quota reserved".
    ("quota reserved, admission checks pending: not moved", _reserved, "team-b", False, "holds quota of LocalQueue team-a (ClusterQueue cq)"),
    ("admitted: not moved", admitted, "team-b", False, "Kueue does not move a Workload with a quota reservation"),
    # Deviation (see queue_change): upstream's step 6 returns while Evicted is True.
    ("evicted and requeued, quota released: moved", _evicted_and_requeued, "team-b", True, None),
    ("finished: nothing to move", _finished, "team-b", False, None),
    # ReconcileGenericJob: "queue-name label is not set, ignoring the job".
    ("label removed: the job stays under its Workload", lambda wl: wl, None, False, "label was removed"),
    ("label removed from an admitted job: the same", admitted, None, False, "label was removed"),
])
def test_queue_change(name, state, label, moved, held):
    wl = state(wl_of(job()))
    change = kq.queue_change(wl, label)
    if moved:
        assert change.patch == {"metadata": {"resourceVersion": "7"}, "spec": {"queueName": label}}, name
    else:
        assert change.patch is None, name
    if held is None:
        assert change.held is None, name
    else:
        assert held in change.held, name


def test_a_workload_being_deleted_is_not_moved():
    wl = wl_of(job())
    wl["metadata"]["deletionTimestamp"] = "2026-01-01T12:00:00Z"
    assert kq.queue_change(wl, "team-b") == kq.QueueChange()


def test_a_job_stays_under_kueue_once_queued_even_without_its_label():
    j = job()
    assert kq.under_kueue(j)
    j["metadata"]["labels"] = {}
    assert not kq.under_kueue(j)
    j["status"] = {"conditions": [cond("Queued", "True", "Pending")]}
    assert kq.under_kueue(j)
