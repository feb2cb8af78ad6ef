"""FSDPJob under Kueue: the real operator (Kopf, the handlers) against the local control plane
with Kueue's upstream CRDs; the test plays the kubelet (tests/support/fsdpjob.py) and Kueue
(tests/support/kueue.py, which says what of Kueue it emulates). Real Kueue is not run."""

from __future__ import annotations

from typing import Iterator

import pytest

from pinery.fsdpjob import kueue as kq
from pinery.fsdpjob.naming import LABEL_ATTEMPT
from tests.support import fsdpjob as h
from tests.support.kueue import Kueue, QuotaScheduler, condition, install_kueue_crds
from tests.support.waiting import wait_for

GPU_TAINT = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


@pytest.fixture(scope="module")
def kplane(plane):
    install_kueue_crds(plane)
    return plane


@pytest.fixture
def kueue(kplane, ns) -> Kueue:
    k = Kueue(kplane, ns)
    k.flavor("default")
    k.flavor("a100", node_labels={"gpu.example.com/model": "a100"}, tolerations=[GPU_TAINT])
    return k


@pytest.fixture
def op(kplane, ns, kubelet, kueue) -> Iterator[h.Operator]:
    with h.job_operator(kplane, ns) as operator:
        yield operator


def create_queued(plane, ns: str, name: str, queue: str = "team-a", labels: dict | None = None, **spec) -> dict:
    spec.setdefault("resources", {"requests": {"cpu": "1"}})
    body = h.job_body(name, **spec)
    body["metadata"]["labels"] = {kq.QUEUE_LABEL: queue, **(labels or {})}
    response = plane.http("POST", h.jobs_path(ns), json=body)
    assert response.status_code == 201, response.text
    return response.json()


def attempts(pods: list[dict]) -> list[int]:
    return [int(p["metadata"]["labels"][LABEL_ATTEMPT]) for p in pods]


def test_a_queued_job_gets_a_workload_and_no_pods_until_admitted_then_runs_with_the_flavor_and_finishes(kplane, ns, kubelet, kueue, op):
    job = create_queued(kplane, ns, "train", numNodes=2)
    uid = job["metadata"]["uid"]
    wl = kueue.wait("train", lambda w: True)
    # the shape ConstructWorkload gives, accepted by the upstream CRD's schema and rules
    assert wl["metadata"]["name"] == kq.workload_name("train", uid) and wl["metadata"]["name"].startswith("fsdpjob-train-")
    assert wl["metadata"]["labels"] == {kq.JOB_UID_LABEL: uid}
    assert wl["metadata"]["finalizers"] == [kq.FINALIZER]
    (owner,) = wl["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == ("FSDPJob", "train", uid, True)
    assert wl["spec"]["queueName"] == "team-a" and wl["spec"]["active"] is True
    (pod_set,) = wl["spec"]["podSets"]
    assert (pod_set["name"], pod_set["count"]) == ("node", 2) and "minCount" not in pod_set
    (container,) = pod_set["template"]["spec"]["containers"]
    assert container["resources"]["requests"] == {"cpu": "1"} and "env" not in container
    assert "hostname" not in pod_set["template"]["spec"]
    assert kq.LABEL_RANK not in pod_set["template"]["metadata"]["labels"]

    queued = op.wait_phase("train", "Queued")
    assert h.condition(queued, "Queued")["reason"] == "Pending"
    # Kueue says why it waits: the job shows it
    kueue._retrying("train", lambda w: {"conditions": [{"type": "QuotaReserved", "status": "False", "reason": "WaitingForQuota",
                                                         "message": "couldn't assign flavors to pod set node: insufficient quota for cpu",
                                                         "lastTransitionTime": h.now()}]})
    queued = op.wait_condition("train", "Queued", "True", "WaitingForQuota")
    assert "insufficient quota for cpu" in h.condition(queued, "Queued")["message"]
    assert h.status(queued)["phase"] == "Queued"
    assert kubelet.pods("train") == []
    assert kplane.http("GET", f"/api/v1/namespaces/{ns}/services/train").status_code == 200  # costs no quota
    assert kplane.http("GET", f"/api/v1/namespaces/{ns}/configmaps/train-trainer").status_code == 404

    kueue.admit("train", "cq", flavors={"cpu": "a100"})
    pods = kubelet.wait_pods("train", 2)
    for pod in pods:
        assert pod["spec"]["nodeSelector"]["gpu.example.com/model"] == "a100"
        assert GPU_TAINT in pod["spec"]["tolerations"]
        assert pod["metadata"]["labels"][kq.POD_SET_LABEL] == "node"
        assert pod["metadata"]["labels"][kq.LOCAL_QUEUE_LABEL] == "team-a"
        assert pod["metadata"]["labels"][kq.CLUSTER_QUEUE_LABEL] == "cq"
    job = h.get_job(kplane, ns, "train")
    admission = h.status(job)["admission"]
    assert admission["workload"] == wl["metadata"]["name"] and admission["clusterQueue"] == "cq"
    assert admission["flavors"] == {"cpu": "a100"} and admission["nodeSelector"] == {"gpu.example.com/model": "a100"}
    assert h.condition(job, "Queued")["status"] == "False" and h.condition(job, "Queued")["reason"] == "Admitted"
    assert ("Normal", "Started", "Admitted by clusterQueue cq") in h.events(kplane, ns, "train")

    kubelet.run_all("train", 2)
    op.wait_phase("train", "Running")
    ready = kueue.wait("train", lambda w: condition(w, "PodsReady").get("status") == "True")
    assert condition(ready, "PodsReady")["reason"] == "Started"

    kubelet.exit("train", 0, 0)
    kubelet.exit("train", 1, 0)
    op.wait_phase("train", "Succeeded")
    done = kueue.wait("train", lambda w: condition(w, "Finished").get("status") == "True")
    assert condition(done, "Finished")["reason"] == "Succeeded"
    kueue.wait("train", lambda w: kq.FINALIZER not in (w["metadata"].get("finalizers") or []), what="the finalizer removed")


def test_preemption_stops_the_pods_requeues_and_the_next_admission_runs_a_new_attempt_without_spending_restarts(kplane, ns, kubelet, kueue, op):
    create_queued(kplane, ns, "pre", numNodes=2, maxRestarts=0)
    kueue.wait("pre", lambda w: True)
    kueue.admit("pre")
    kubelet.wait_pods("pre", 2, attempt=0)
    kubelet.run_all("pre", 2)
    op.wait_phase("pre", "Running")
    kueue.wait("pre", lambda w: condition(w, "PodsReady").get("status") == "True")

    kueue.evict("pre", "Preempted", "Preempted to accommodate a workload (UID: x) due to prioritization in the ClusterQueue")
    kubelet.wait_no_pods("pre")
    requeued = kueue.wait("pre", lambda w: condition(w, "QuotaReserved").get("status") == "False")
    assert condition(requeued, "QuotaReserved")["reason"] == "PendingEvaluation"
    assert (condition(requeued, "Requeued")["status"], condition(requeued, "Requeued")["reason"]) == ("True", "Preempted")
    assert (condition(requeued, "Admitted")["status"], condition(requeued, "Admitted")["reason"]) == ("False", "NoReservation")
    assert "admission" not in requeued["status"]
    job = op.wait_phase("pre", "Queued")
    assert h.status(job)["restarts"] == 0 and h.status(job)["requeues"] == 1
    assert "admission" not in h.status(job)
    assert "Stopped" in h.reasons(kplane, ns, "pre")

    kueue.admit("pre")
    pods = kubelet.wait_pods("pre", 2, attempt=1)
    assert attempts(pods) == [1, 1]
    kubelet.run_all("pre", 2)
    job = op.wait_phase("pre", "Running")
    assert h.status(job)["restarts"] == 0  # maxRestarts 0: an eviction is not a failure
    ready = kueue.wait("pre", lambda w: condition(w, "PodsReady").get("status") == "True")
    assert condition(ready, "PodsReady")["reason"] in ("Started", "Recovered")


def test_suspend_deactivates_the_workload_and_resume_reactivates_it(kplane, ns, kubelet, kueue, op):
    create_queued(kplane, ns, "sus", numNodes=1)
    kueue.wait("sus", lambda w: True)
    kueue.admit("sus")
    kubelet.wait_pods("sus", 1)
    h.patch_job(kplane, ns, "sus", {"suspend": True})
    kueue.wait("sus", lambda w: w["spec"].get("active") is False, what="spec.active false")
    kueue.deactivated("sus")
    kubelet.wait_no_pods("sus")
    kueue.wait("sus", lambda w: condition(w, "QuotaReserved").get("status") == "False", what="the quota released")
    op.wait_phase("sus", "Suspended")

    h.patch_job(kplane, ns, "sus", {"suspend": False})
    kueue.wait("sus", lambda w: w["spec"].get("active") is True, what="spec.active true")
    op.wait_phase("sus", "Queued")
    kueue.admit("sus")
    kubelet.wait_pods("sus", 1)


def test_admission_check_pod_set_updates_reach_the_pods_and_a_conflict_fails_the_job(kplane, ns, kubelet, kueue, op):
    create_queued(kplane, ns, "chk", numNodes=1)
    kueue.wait("chk", lambda w: True)
    kueue.admit("chk", checks=[{"name": "prov", "state": "Pending"}])
    job = op.wait_condition("chk", "Queued", "True", "WaitingForAdmissionChecks")
    assert "prov (Pending)" in h.condition(job, "Queued")["message"]
    assert kubelet.pods("chk") == []
    kueue.check("chk", "prov", "Ready", [{"name": "node", "labels": {"prov": "yes"}, "annotations": {"note": "from-check"},
                                          "nodeSelector": {"zone": "z1"}, "tolerations": [{"key": "spot", "operator": "Exists"}]}])
    (pod,) = kubelet.wait_pods("chk", 1)
    assert pod["metadata"]["labels"]["prov"] == "yes" and pod["metadata"]["annotations"]["note"] == "from-check"
    assert pod["spec"]["nodeSelector"]["zone"] == "z1" and {"key": "spot", "operator": "Exists"} in pod["spec"]["tolerations"]

    create_queued(kplane, ns, "clash", numNodes=1, podTemplate={"nodeSelector": {"provisioning": "spot"}})
    kueue.wait("clash", lambda w: True)
    kueue.admit("clash", checks=[{"name": "check", "state": "Ready", "podSetUpdates": [{"name": "node", "nodeSelector": {"provisioning": "on-demand"}}]}])
    job = op.wait_condition("clash", "Failed", "True", "AdmissionConflict")
    assert h.condition(job, "Failed")["message"] == (
        "invalid admission check PodSetUpdate: conflict for nodeSelector: conflict for key=provisioning, value1=spot, value2=on-demand")
    done = kueue.wait("clash", lambda w: condition(w, "Finished").get("status") == "True")
    assert condition(done, "Finished")["reason"] == "FailedToStart"
    assert kubelet.pods("clash") == []


def test_a_deleted_workload_stops_the_pods_and_is_created_anew(kplane, ns, kubelet, kueue, op):
    create_queued(kplane, ns, "gone", numNodes=1)
    wl = kueue.wait("gone", lambda w: True)
    kueue.admit("gone")
    kubelet.wait_pods("gone", 1, attempt=0)
    name = wl["metadata"]["name"]
    kplane.http("PATCH", f"/apis/kueue.x-k8s.io/v1beta2/namespaces/{ns}/workloads/{name}", json={"metadata": {"finalizers": None}},
                headers={"Content-Type": "application/merge-patch+json"})
    assert kplane.http("DELETE", f"/apis/kueue.x-k8s.io/v1beta2/namespaces/{ns}/workloads/{name}").status_code == 200
    kubelet.wait_no_pods("gone")
    fresh = kueue.wait("gone", lambda w: w["metadata"]["uid"] != wl["metadata"]["uid"], what="a new Workload")
    assert fresh["metadata"]["name"] == name
    op.wait_phase("gone", "Queued")
    kueue.admit("gone")
    assert attempts(kubelet.wait_pods("gone", 1, attempt=1)) == [1]


def test_two_jobs_in_a_cluster_queue_with_room_for_one_run_one_after_the_other(kplane, ns, kubelet, kueue, op):
    kueue.cluster_queue("cq-one", "default", {"cpu": "2"})
    kueue.local_queue("small", "cq-one")
    with QuotaScheduler(kueue, "cq-one") as scheduler:
        create_queued(kplane, ns, "first", queue="small", numNodes=2)
        wait_for(lambda: kueue.workload("first"), what="the first Workload")
        create_queued(kplane, ns, "second", queue="small", numNodes=2)
        kubelet.wait_pods("first", 2)
        kubelet.run_all("first", 2)
        op.wait_phase("first", "Running")
        second = op.wait_phase("second", "Queued")
        assert kubelet.pods("second") == []
        assert h.condition(second, "Queued")["reason"] in ("Pending", "WaitingForQuota")

        kubelet.exit("first", 0, 0)
        kubelet.exit("first", 1, 0)
        op.wait_phase("first", "Succeeded")
        kubelet.wait_pods("second", 2)  # only once the first released its quota
        kubelet.run_all("second", 2)
        op.wait_phase("second", "Running")
        assert scheduler.admitted == ["first", "second"]
    first_done = condition(kueue.workload("first"), "Finished")["lastTransitionTime"]
    second_admitted = condition(kueue.workload("second"), "QuotaReserved")["lastTransitionTime"]
    assert second_admitted >= first_done


def test_the_upstream_crd_refuses_what_pinery_must_never_write_and_honours_resource_version_preconditions(kplane, ns, kueue):
    wl = kq.workload({"metadata": {"name": "v", "namespace": ns, "uid": "u-1", "labels": {kq.QUEUE_LABEL: "q"}}},
                     h_spec(numNodes=2), {"metadata": {"labels": {}}, "spec": {"containers": [{"name": "trainer", "image": "i"}]}})
    wl["spec"]["priorityClassRef"] = {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "high"}
    refused = kplane.http("POST", f"/apis/kueue.x-k8s.io/v1beta2/namespaces/{ns}/workloads", json=wl)
    assert refused.status_code == 422 and "priority should not be nil when priorityClassRef is set" in refused.json()["message"]
    wl["spec"]["priority"] = 100  # kueue.workload always writes both
    created = kplane.http("POST", f"/apis/kueue.x-k8s.io/v1beta2/namespaces/{ns}/workloads", json=wl)
    assert created.status_code == 201, created.text
    stale = {"metadata": {"resourceVersion": "1"}, "status": {"conditions": []}}
    answer = kplane.http("PATCH", f"/apis/kueue.x-k8s.io/v1beta2/namespaces/{ns}/workloads/{wl['metadata']['name']}/status",
                         json=stale, headers={"Content-Type": "application/merge-patch+json"})
    assert answer.status_code == 409


def h_spec(**spec):
    from pinery.api.fsdpjob import FSDPJobSpec

    return FSDPJobSpec.model_validate({"nprocPerNode": 1, "command": ["python", "train.py"], **spec})


def test_without_kueue_installed_a_labelled_job_says_so_and_creates_nothing(control_plane):
    plane = control_plane
    plane.install_crds()
    ns = "no-kueue"
    assert plane.http("POST", "/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}).status_code == 201
    with h.job_operator(plane, ns) as op:
        create_queued(plane, ns, "lost", numNodes=1)
        job = op.wait_condition("lost", "Queued", "True", "KueueNotInstalled")
        assert "serves no kueue.x-k8s.io/v1beta2 Workloads" in h.condition(job, "Queued")["message"]
        assert h.status(job)["phase"] == "Queued"
        wait_for(lambda: "KueueNotInstalled" in h.reasons(plane, ns, "lost"), what="the Warning Event")
        assert ("Warning", "KueueNotInstalled") in [(t, r) for t, r, _ in h.events(plane, ns, "lost")]
        pods = plane.http("GET", f"/api/v1/namespaces/{ns}/pods").json()["items"]
        assert pods == []


def test_a_deleted_job_does_not_leave_its_workload_hanging_on_kueues_finalizer(kplane, ns, kubelet, kueue, op):
    create_queued(kplane, ns, "bye", numNodes=1)
    wl = kueue.wait("bye", lambda w: True)
    kueue.admit("bye")
    kubelet.wait_pods("bye", 1)
    assert kplane.http("DELETE", h.jobs_path(ns, "bye")).status_code == 200
    gone = f"/apis/kueue.x-k8s.io/v1beta2/namespaces/{ns}/workloads/{wl['metadata']['name']}"
    wait_for(lambda: kplane.http("GET", gone).status_code == 404, timeout=30, what="the Workload collected")


def test_the_workload_priority_class_label_gives_the_workload_its_priority_and_a_missing_class_holds_the_job(kplane, ns, kubelet, kueue, op):
    kueue.create("workloadpriorityclasses", {"kind": "WorkloadPriorityClass", "metadata": {"name": f"high-{ns}"}, "value": 1000})
    create_queued(kplane, ns, "vip", numNodes=1, labels={kq.PRIORITY_CLASS_LABEL: f"high-{ns}"})
    wl = kueue.wait("vip", lambda w: True)
    assert wl["spec"]["priorityClassRef"] == {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": f"high-{ns}"}
    assert wl["spec"]["priority"] == 1000

    create_queued(kplane, ns, "nobody", numNodes=1, labels={kq.PRIORITY_CLASS_LABEL: "no-such-class"})
    job = op.wait_condition("nobody", "Queued", "True", "WorkloadPriorityClassNotFound")
    assert h.condition(job, "Queued")["message"] == 'WorkloadPriorityClass "no-such-class" not found'  # Kueue's words
    assert kueue.workload("nobody") is None
    wait_for(lambda: "WorkloadPriorityClassNotFound" in h.reasons(kplane, ns, "nobody"), what="the Warning Event")


def test_an_elastic_job_partially_admitted_runs_the_admitted_nodes(kplane, ns, kubelet, kueue, op):
    create_queued(kplane, ns, "stretch", numNodes=3, elastic={"minNodes": 2})
    wl = kueue.wait("stretch", lambda w: True)
    assert (wl["spec"]["podSets"][0]["count"], wl["spec"]["podSets"][0]["minCount"]) == (3, 2)
    kueue.admit("stretch", count=2)
    pods = kubelet.wait_pods("stretch", 2)
    assert [p["metadata"]["name"] for p in pods] == ["stretch-node-0", "stretch-node-1"]
    kubelet.run_all("stretch", 2)
    job = op.wait_phase("stretch", "Running")
    assert h.status(job)["admission"]["count"] == 2 and len(h.status(job)["nodes"]) == 2


def relabel(plane, ns: str, name: str, queue: str | None) -> None:
    response = plane.http("PATCH", h.jobs_path(ns, name), json={"metadata": {"labels": {kq.QUEUE_LABEL: queue}}},
                          headers={"Content-Type": "application/merge-patch+json"})
    assert response.status_code == 200, response.text


def test_relabelling_a_queued_job_moves_its_workload_and_an_admitted_one_stays_and_says_so(kplane, ns, kubelet, kueue, op):
    create_queued(kplane, ns, "mv", numNodes=1)
    kueue.wait("mv", lambda w: True)
    op.wait_phase("mv", "Queued")
    relabel(kplane, ns, "mv", "team-b")
    # the upstream CRD accepts the write: no quota reserved
    kueue.wait("mv", lambda w: w["spec"]["queueName"] == "team-b", what="queueName team-b")
    assert any(r == "UpdatedWorkload" and "from LocalQueue team-a to team-b" in m for _, r, m in h.events(kplane, ns, "mv"))

    kueue.admit("mv")
    (pod,) = kubelet.wait_pods("mv", 1)
    assert pod["metadata"]["labels"][kq.LOCAL_QUEUE_LABEL] == "team-b"
    relabel(kplane, ns, "mv", "team-c")
    job = op.wait("mv", lambda j: "Kueue does not move" in h.condition(j, "Queued").get("message", ""), 30, "the refusal told")
    assert h.condition(job, "Queued")["reason"] == "Admitted"
    assert [r for _, r, _ in h.events(kplane, ns, "mv")].count("QueueNameNotApplied") == 1
    assert kueue.workload("mv")["spec"]["queueName"] == "team-b" and kubelet.pods("mv")

    # Requeued after a preemption, the quota released: the label takes effect.
    kueue.evict("mv", "Preempted", "Preempted to accommodate a workload")
    kubelet.wait_no_pods("mv")
    kueue.wait("mv", lambda w: w["spec"]["queueName"] == "team-c", what="queueName team-c after the requeue")


def test_removing_the_label_keeps_a_queued_job_under_its_workload(kplane, ns, kubelet, kueue, op):
    create_queued(kplane, ns, "rm", numNodes=1)
    kueue.wait("rm", lambda w: True)
    op.wait_phase("rm", "Queued")
    relabel(kplane, ns, "rm", None)
    job = op.wait("rm", lambda j: "label was removed" in h.condition(j, "Queued").get("message", ""), 30, "the removal told")
    assert h.status(job)["phase"] == "Queued" and kubelet.pods("rm") == []
    assert "QueueNameNotApplied" in h.reasons(kplane, ns, "rm")
    kueue.admit("rm")
    kubelet.wait_pods("rm", 1)
