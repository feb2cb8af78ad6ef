"""FSDPJob gang scheduling (spec.gang): the real operator (Kopf, the handlers) against the local
control plane with the upstream PodGroup CRDs of scheduler-plugins and Volcano; the test plays
the kubelet (tests/support/fsdpjob.py) and the gang scheduler (tests/support/podgroups.py, which
says what of each scheduler it emulates). Neither scheduler is run."""

from __future__ import annotations

from dataclasses import replace
from typing import Iterator

import pytest

from pinery.fsdpjob.naming import LABEL_ATTEMPT
from tests.support import fsdpjob as h
from tests.support.kueue import Kueue, install_kueue_crds
from tests.support.podgroups import COSCHEDULING_LABEL, VOLCANO_ANNOTATION, Coscheduling, Volcano, install_pod_group_crds
from tests.support.waiting import wait_for


@pytest.fixture(scope="module")
def gplane(plane):
    install_pod_group_crds(plane)
    return plane


@pytest.fixture
def kubelet(gplane, ns) -> Iterator[h.TestKubelet]:
    """A kubelet that binds nothing: the gang scheduler does."""
    with h.TestKubelet(gplane, ns, bind=False) as k:
        yield k


@pytest.fixture
def op(gplane, ns, kubelet) -> Iterator[h.Operator]:
    operator = h.new_operator(gplane, ns)
    # PodGroups are read each pass, not watched: look again soon while a scheduler works.
    operator.services.fsdpjob_timing = replace(operator.services.fsdpjob_timing, gang_poll=0.2, wait_poll=0.2)
    operator.start()
    try:
        yield operator
    finally:
        operator.stop()


def gang_job(plane, ns: str, name: str, gang: dict, **spec) -> dict:
    spec.setdefault("resources", {"requests": {"cpu": "1", "memory": "1Gi"}})
    return h.create_job(plane, ns, name, gang=gang, **spec)


def attempt_of(pod: dict) -> int:
    return int(pod["metadata"]["labels"][LABEL_ATTEMPT])


def test_coscheduling_group_comes_first_gates_the_pods_explains_the_wait_and_follows_the_job_to_success(gplane, ns, kubelet, op):
    job = gang_job(gplane, ns, "train", {"scheduler": "coscheduling", "scheduleTimeoutSeconds": 120}, numNodes=2)
    sched = Coscheduling(gplane, ns, free={"cpu": "1", "memory": "64Gi", "pods": "110"})
    group = sched.wait_group("train-0")
    # the group the CRD accepted, owned by the job
    assert group["spec"] == {"minMember": 2, "scheduleTimeoutSeconds": 120,
                             "minResources": {"cpu": "2", "memory": "2Gi"}}
    (owner,) = group["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == ("FSDPJob", "train", job["metadata"]["uid"], True)
    pods = kubelet.wait_pods("train", 2)
    for pod in pods:
        assert pod["metadata"]["labels"][COSCHEDULING_LABEL] == "train-0"
        assert pod["spec"]["schedulerName"] == "scheduler-plugins-scheduler"
    # every pod was created after its group (the server's resourceVersions are ordered)
    # (the kubelet's history follows its watch, which may not have shown the second ADDED yet)
    wait_for(lambda: len(kubelet.created("train")) == 2, what="both ADDED events")
    created = kubelet.created("train")
    assert min(r.resource_version for r in created) > int(group["metadata"]["resourceVersion"])

    sched.reconcile("train-0")  # "" -> Pending
    waiting = op.wait("train", lambda j: h.status(j).get("podGroup", {}).get("phase") == "Pending", what="the Pending group observed")
    assert h.status(waiting)["podGroup"] == {"name": "train-0", "scheduler": "coscheduling", "phase": "Pending"}
    assert "gang of 2 waits for the scheduler (PodGroup Pending)" in h.condition(waiting, "Running")["message"]
    sched.reconcile("train-0")  # two members: Scheduling
    # the cluster has room for one: PreFilter refuses both (resource gap), nothing is bound
    assert sched.schedule("train-0") is False
    assert [p["spec"].get("nodeName") for p in kubelet.pods("train")] == [None, None]
    # one pass may see the group Scheduling before the pods' PodScheduled message: wait for both
    waiting = op.wait("train", lambda j: "PodGroup Scheduling" in (m := h.condition(j, "Running").get("message", "")) and "resource gap" in m,
                      what="Scheduling, and the pods' reason")
    assert "0 of 2 nodes running" in h.condition(waiting, "Running")["message"]
    assert "resource gap" in h.condition(waiting, "Running")["message"]  # the pods' own PodScheduled message

    sched.free["cpu"] = sched.free["cpu"] + 8
    assert sched.schedule("train-0") is True
    kubelet.run_all("train", 2)
    sched.reconcile("train-0")
    running = op.wait_condition("train", "Running", "True")
    assert h.status(running)["podGroup"]["name"] == "train-0"
    kubelet.exit("train", 0, 0)
    kubelet.exit("train", 1, 0)
    op.wait_phase("train", "Succeeded")
    assert sched.reconcile("train-0")["phase"] == "Finished"


def test_a_gang_restart_makes_the_next_attempts_group_after_the_old_pods_are_gone_and_removes_the_old_one(gplane, ns, kubelet, op):
    gang_job(gplane, ns, "again", {"scheduler": "coscheduling"}, numNodes=2, maxRestarts=1)
    sched = Coscheduling(gplane, ns)
    sched.wait_group("again-0")
    wait_for(lambda: len(sched.members("again-0")) == 2, what="2 members")
    sched.reconcile("again-0")
    sched.reconcile("again-0")
    assert sched.schedule("again-0")
    kubelet.run_all("again", 2)
    op.wait_condition("again", "Running", "True")

    for pod in kubelet.pods("again"):
        kubelet.held.add(pod["metadata"]["name"])  # the old pods take their time to stop
    kubelet.exit("again", 1, 1)
    op.wait_condition("again", "Restarting", "True")
    wait_for(lambda: all(p["metadata"].get("deletionTimestamp") for p in kubelet.pods("again")), what="the old pods stopping")
    # while the old pods are there, neither a new group nor a new pod
    assert [g["metadata"]["name"] for g in sched.groups()] == ["again-0"]
    for pod in kubelet.pods("again"):
        kubelet.release(pod["metadata"]["name"])

    new = sched.wait_group("again-1")
    assert new["spec"]["minMember"] == 2
    pods = wait_for(lambda: len(sched.members("again-1")) == 2 and sched.members("again-1"), what="the new attempt's pods")
    assert {attempt_of(p) for p in pods} == {1}
    wait_for(lambda: [g["metadata"]["name"] for g in sched.groups()] == ["again-1"], what="the old group deleted")
    assert h.status(h.get_job(gplane, ns, "again"))["restarts"] == 1


def test_volcano_group_waits_in_its_queue_with_the_schedulers_message_then_runs(gplane, ns, kubelet, op):
    gang_job(gplane, ns, "vol", {"scheduler": "volcano", "queue": "research"}, numNodes=2)
    sched = Volcano(gplane, ns, free={"cpu": "1", "memory": "64Gi", "pods": "110"})
    group = sched.wait_group("vol-0")
    assert group["apiVersion"] == "scheduling.volcano.sh/v1beta1"
    assert group["spec"] == {"minMember": 2, "queue": "research", "minResources": {"cpu": "2", "memory": "2Gi"}}
    pods = wait_for(lambda: len(sched.members("vol-0")) == 2 and sched.members("vol-0"), what="2 members")
    for pod in pods:
        assert pod["metadata"]["annotations"][VOLCANO_ANNOTATION] == "vol-0"
        assert pod["spec"]["schedulerName"] == "volcano"
        assert COSCHEDULING_LABEL not in pod["metadata"]["labels"]

    assert sched.session("vol-0")["phase"] == "Pending"  # no room: not enqueued
    waiting = op.wait("vol", lambda j: h.status(j).get("podGroup", {}).get("message"), what="the scheduler's message observed")
    message = h.condition(waiting, "Running")["message"]
    assert message.startswith("waiting in queue research (PodGroup Pending): 2/2 tasks in gang unschedulable: pod group is not ready")
    pod_group = h.status(waiting)["podGroup"]
    assert pod_group["phase"] == "Pending" and pod_group["message"].startswith("2/2 tasks in gang unschedulable")
    assert h.condition(waiting, "Running")["status"] == "False"

    sched.free["cpu"] += 8
    assert sched.session("vol-0")["phase"] == "Running"  # enqueued, allocated: both bound
    kubelet.run_all("vol", 2)
    running = op.wait_condition("vol", "Running", "True")
    assert h.status(running)["podGroup"]["scheduler"] == "volcano"


def test_suspend_deletes_the_group_with_the_pods_and_resume_makes_the_next_attempts(gplane, ns, kubelet, op):
    gang_job(gplane, ns, "nap", {"scheduler": "volcano"}, numNodes=1)
    sched = Volcano(gplane, ns)
    first = sched.wait_group("nap-0")
    wait_for(lambda: sched.members("nap-0"), what="the member")
    h.patch_job(gplane, ns, "nap", {"suspend": True})
    op.wait_phase("nap", "Suspended")
    wait_for(lambda: sched.groups() == [], what="the group deleted")
    assert "podGroup" not in h.status(h.get_job(gplane, ns, "nap"))

    h.patch_job(gplane, ns, "nap", {"suspend": False})
    sched.wait_group("nap-1")  # a resumed job is a new attempt
    (pod,) = wait_for(lambda: sched.members("nap-1"), what="the member again")
    assert attempt_of(pod) == 1 and first["metadata"]["name"] == "nap-0"


def test_a_queued_gang_job_makes_its_group_only_once_kueue_admits_it(gplane, ns, kubelet, op):
    install_kueue_crds(gplane)
    kueue = Kueue(gplane, ns)
    kueue.flavor("default")
    body = h.job_body("kq", numNodes=2, gang={"scheduler": "coscheduling"}, resources={"requests": {"cpu": "1"}})
    body["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "team-a"}
    assert gplane.http("POST", h.jobs_path(ns), json=body).status_code == 201
    sched = Coscheduling(gplane, ns)
    kueue.wait("kq", lambda w: True)
    op.wait_phase("kq", "Queued")
    assert sched.groups() == [] and kubelet.pods("kq") == []

    kueue.admit("kq")
    sched.wait_group("kq-0")
    pods = wait_for(lambda: len(sched.members("kq-0")) == 2 and sched.members("kq-0"), what="the admitted gang's pods")
    assert {p["metadata"]["labels"][COSCHEDULING_LABEL] for p in pods} == {"kq-0"}


def test_without_the_podgroup_api_a_gang_job_says_so_and_starts_once_it_is_installed(control_plane):
    plane = control_plane
    plane.install_crds()
    ns = "no-gang"
    assert plane.http("POST", "/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}).status_code == 201
    with h.TestKubelet(plane, ns, bind=False) as kubelet:
        operator = h.new_operator(plane, ns)
        operator.services.fsdpjob_timing = replace(operator.services.fsdpjob_timing, wait_poll=0.2, gang_poll=0.2)
        operator.start()
        try:
            gang_job(plane, ns, "early", {"scheduler": "volcano"}, numNodes=2)
            job = operator.wait_condition("early", "Created", "False", "GangSchedulerMissing")
            message = h.condition(job, "Created")["message"]
            assert "podgroups.scheduling.volcano.sh" in message and "install Volcano or remove spec.gang" in message
            assert h.condition(job, "Running")["reason"] == "GangSchedulerMissing"
            assert kubelet.pods("early") == []

            install_pod_group_crds(plane)
            Volcano(plane, ns).wait_group("early-0")
            wait_for(lambda: len(kubelet.pods("early")) == 2, what="the pods, once the API is there")
            operator.wait_condition("early", "Created", "True")
        finally:
            operator.stop()
