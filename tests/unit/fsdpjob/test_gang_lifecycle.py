"""The FSDPJob lifecycle with spec.gang: the PodGroup of each attempt before its pods, a fresh group
per gang restart, the old ones deleted once their pods are gone, what status says of the group,
and the cluster without the PodGroup API. Pass by pass, the test playing kubelet and scheduler."""

from __future__ import annotations

import pytest

from tests.unit.fsdpjob.cluster import Cluster, Crash, job_object

COSCHED = {"scheduler": "coscheduling", "scheduleTimeoutSeconds": 120}
VOLCANO = {"scheduler": "volcano", "queue": "research"}
LABEL = "scheduling.x-k8s.io/pod-group"
ANNOTATION = "scheduling.k8s.io/group-name"


def gang_job(gang=None, **spec) -> Cluster:
    spec.setdefault("numNodes", 2)
    spec.setdefault("command", ["python", "train.py"])
    return Cluster(job_object({**spec, "gang": gang or COSCHED}))


def kinds(plan) -> list[tuple[str, str]]:
    return [(o["kind"], o["metadata"]["name"]) for o in plan.create]


def groups(c: Cluster) -> list[str]:
    return [g["metadata"]["name"] for g in c.pod_groups()]


def set_phase(c: Cluster, name: str, phase: str, **status) -> None:
    c.objects[("PodGroup", name)]["status"] = {"phase": phase, **status}


def started(gang=None, **spec) -> Cluster:
    c = gang_job(gang, **spec)
    c.reconcile()
    c.reconcile()
    c.run()
    c.reconcile()
    assert c.status["phase"] == "Running", c.status
    return c


def test_the_group_is_created_before_any_pod_and_the_pods_once_it_is_read_back():
    c = gang_job()
    first = c.reconcile()
    assert kinds(first) == [("Service", "train"), ("PodGroup", "train-0")]
    assert c.pods() == [] and c.status["phase"] == "Pending"
    assert [n["reason"] for n in c.status["nodes"]] == ["WaitingForPodGroup", "WaitingForPodGroup"]
    assert c.status["podGroup"] == {"name": "train-0", "scheduler": "coscheduling"}
    assert first.requeue_after == 5
    group = c.pod_groups()[0]
    assert group["spec"] == {"minMember": 2, "minResources": {"cpu": "10m", "memory": "32Mi"}, "scheduleTimeoutSeconds": 120}
    second = c.reconcile()
    assert kinds(second) == [("Pod", "train-node-0"), ("Pod", "train-node-1")]
    for pod in second.create:
        assert pod["metadata"]["labels"][LABEL] == "train-0"
        assert pod["spec"]["schedulerName"] == "scheduler-plugins-scheduler"
    assert c.status["startTime"]
    assert c.plan().create == ()


def test_a_pending_group_is_in_the_running_condition_and_in_status():
    c = gang_job()
    c.reconcile()
    c.reconcile()
    c.reconcile()
    set_phase(c, "train-0", "Pending")
    p = c.reconcile()
    running = c.condition("Running")
    assert running["reason"] == "PodsPending"
    assert running["message"] == "gang of 2 waits for the scheduler (PodGroup Pending); nodes 0-1: Pending"
    assert c.status["podGroup"] == {"name": "train-0", "scheduler": "coscheduling", "phase": "Pending"}
    assert p.requeue_after == 15  # the group is read again now and then: it is not watched
    set_phase(c, "train-0", "Scheduling", running=1)
    c.run(0)
    c.reconcile()
    assert c.condition("Running")["message"].startswith("1 of 2 nodes running, the rest being scheduled (PodGroup Scheduling); node 1:")
    c.run(1)
    set_phase(c, "train-0", "Running", running=2)
    c.reconcile()
    assert c.status["phase"] == "Running" and c.status["podGroup"]["phase"] == "Running"


def test_volcano_pods_carry_the_annotation_and_the_unschedulable_message_shows():
    c = gang_job(VOLCANO, podTemplate={"priorityClassName": "high"})
    c.reconcile()
    assert c.pod_groups()[0]["spec"] == {"minMember": 2, "minResources": {"cpu": "10m", "memory": "32Mi"}, "queue": "research",
                                         "priorityClassName": "high"}
    pods = c.reconcile().create
    assert [p["metadata"]["annotations"][ANNOTATION] for p in pods] == ["train-0", "train-0"]
    assert {p["spec"]["schedulerName"] for p in pods} == {"volcano"}
    message = "2/2 tasks in gang unschedulable: pod group is not ready, 2 Pending, 2 minAvailable; Pending: 2 Unschedulable"
    set_phase(c, "train-0", "Pending", conditions=[{"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources",
                                                     "message": message}])
    c.reconcile()
    assert c.condition("Running")["message"] == f"waiting in queue research (PodGroup Pending): {message}; nodes 0-1: Pending"
    assert c.status["podGroup"] == {"name": "train-0", "scheduler": "volcano", "phase": "Pending", "message": message}
    set_phase(c, "train-0", "Inqueue")
    c.reconcile()
    assert c.condition("Running")["message"].startswith("admitted by queue research, pods being scheduled (PodGroup Inqueue)")
    assert "message" not in c.status["podGroup"]


@pytest.mark.parametrize("crash_after", range(0, 6))
def test_a_crash_during_creation_never_makes_a_second_group_or_set_of_pods(crash_after):
    c = gang_job()
    for _ in range(3):
        try:
            c.apply(c.plan(), crash_after=crash_after)
        except Crash:
            pass
    for _ in range(3):
        c.reconcile()
    assert groups(c) == ["train-0"] and c.created_pods == 2
    assert all(p["metadata"]["labels"][LABEL] == "train-0" for p in c.pods())


def test_a_gang_restart_makes_the_next_group_after_the_old_pods_are_gone_and_deletes_the_old_one():
    c = started(maxRestarts=2)
    set_phase(c, "train-0", "Running", running=2)
    old_uid = c.objects[("PodGroup", "train-0")]["metadata"]["uid"]
    c.fail(1, 3)
    restart = c.reconcile()
    assert c.status["restarts"] == 1 and restart.create == () and restart.delete_objects == ()
    # status still names the group of the attempt being started
    assert c.status["podGroup"] == {"name": "train-1", "scheduler": "coscheduling"}
    waiting = c.reconcile()  # the old pods still terminate: no group, no deletion yet
    assert waiting.create == () and waiting.delete_objects == () and groups(c) == ["train-0"]
    c.finish_deletions()
    c.objects.pop(("Pod", "train-node-1"), None)
    gone = c.reconcile()
    assert kinds(gone) == [("PodGroup", "train-1")]
    assert [(d.kind, d.name, d.uid) for d in gone.delete_objects] == [("PodGroup.scheduling.x-k8s.io", "train-0", old_uid)]
    steps = [a for a, _ in gone.steps()]
    assert steps.index("delete_object") < steps.index("create")
    assert groups(c) == ["train-1"]
    pods = c.reconcile().create
    assert [p["metadata"]["labels"][LABEL] for p in pods] == ["train-1", "train-1"]
    assert [p["metadata"]["labels"]["pinery.dev/attempt"] for p in pods] == ["1", "1"]


@pytest.mark.parametrize("crash_after", range(0, 8))
def test_a_crash_at_any_step_of_a_gang_restart_makes_one_group_per_attempt(crash_after):
    c = started(maxRestarts=2)
    c.fail(0, 1)
    try:
        c.apply(c.plan(), crash_after=crash_after)
    except Crash:
        pass
    for _ in range(3):
        c.reconcile()
        c.finish_deletions()
    for _ in range(3):
        c.reconcile()
    assert c.status["restarts"] == 1 and groups(c) == ["train-1"] and c.created_pods == 4
    assert set(c.attempts().values()) == {1}


def test_suspend_deletes_the_group_with_the_pods_and_resume_makes_the_next_attempts():
    c = started()
    p = c.reconcile()
    c.job["spec"]["suspend"] = True
    p = c.reconcile()
    assert len(p.delete_pods) == 2 and [d.name for d in p.delete_objects] == ["train-0"]
    assert "podGroup" not in c.status and groups(c) == []
    c.finish_deletions()
    c.reconcile()
    c.job["spec"]["suspend"] = False
    resume = c.reconcile()
    assert kinds(resume) == [("PodGroup", "train-1")]  # a resumed job is a new attempt
    pods = c.reconcile().create
    assert [(o["kind"], o["metadata"]["labels"][LABEL]) for o in pods] == [("Pod", "train-1"), ("Pod", "train-1")]


def test_a_finished_job_keeps_its_last_group():
    c = started()
    set_phase(c, "train-0", "Finished", succeeded=2)
    c.succeed()
    c.reconcile()
    assert c.status["phase"] == "Succeeded"
    p = c.reconcile()
    assert p.delete_objects == () and groups(c) == ["train-0"]
    assert c.status["podGroup"]["phase"] == "Finished"


def test_without_the_podgroup_api_the_job_says_so_and_creates_no_pod():
    c = gang_job(VOLCANO)
    c.pod_group_api = False
    p = c.reconcile()
    assert kinds(p) == [("Service", "train")]
    created, running = c.condition("Created"), c.condition("Running")
    assert created["status"] == running["status"] == "False"
    assert created["reason"] == running["reason"] == "GangSchedulerMissing"
    assert "CustomResourceDefinition podgroups.scheduling.volcano.sh" in running["message"]
    assert [(e.type, e.reason) for e in p.events] == [("Warning", "GangSchedulerMissing")]
    assert [n["reason"] for n in c.status["nodes"]] == ["GangSchedulerMissing", "GangSchedulerMissing"]
    assert p.requeue_after == 5
    again = c.reconcile()
    assert again.events == () and again.create == () and c.pods() == []
    c.pod_group_api = True  # Volcano was installed
    assert kinds(c.reconcile()) == [("PodGroup", "train-0")]
    assert [o["kind"] for o in c.reconcile().create] == ["Pod", "Pod"]


def test_a_refused_group_is_a_created_condition_and_no_pod_is_made():
    c = gang_job()
    c.objects[("Service", "train")] = {"metadata": {"name": "train", "uid": "s"}}
    from pinery.fsdpjob import plan as make_plan

    p = make_plan(c.job, [], c.now, service=c.objects[("Service", "train")], settings=None, pod_groups=[],
                  refused={"PodGroup/train-0": "admission webhook denied the request"})
    assert kinds(p) == [("PodGroup", "train-0")]
    created = next(x for x in p.status["conditions"] if x["type"] == "Created")
    assert created["reason"] == "FailedCreate" and "PodGroup train-0: admission webhook denied the request" in created["message"]
    assert [e.reason for e in p.events] == ["FailedCreate"]


def test_a_group_of_that_name_owned_by_another_object_is_not_used():
    c = gang_job()
    c.reconcile()
    c.objects[("PodGroup", "train-0")]["metadata"]["ownerReferences"][0]["uid"] = "someone-else"
    p = c.reconcile()
    assert p.create == () and c.pods() == [] and p.requeue_after == 5  # it waits, without creating in vain
    assert c.status["nodes"][0]["reason"] == "WaitingForPodGroup"


def test_elastic_minmember_and_a_replaced_node_joins_the_running_group():
    c = started(numNodes=3, elastic={"minNodes": 2}, maxRestarts=3)
    assert c.pod_groups()[0]["spec"]["minMember"] == 2
    c.fail(2, 1)
    c.reconcile()
    c.finish_deletions()
    c.objects.pop(("Pod", "train-node-2"), None)
    p = c.reconcile()
    assert kinds(p) == [("Pod", "train-node-2")] and p.delete_objects == ()
    assert p.create[0]["metadata"]["labels"][LABEL] == "train-0"
    assert p.create[0]["metadata"]["labels"]["pinery.dev/attempt"] == "1"
    assert groups(c) == ["train-0"] and c.status["podGroup"]["name"] == "train-0"


def test_the_startup_timeout_fails_without_making_a_group():
    c = gang_job(startupTimeoutSeconds=60)
    c.reconcile()
    c.reconcile()
    c.objects.pop(("PodGroup", "train-0"))  # someone deleted it while the pods wait
    c.tick(61)
    p = c.reconcile()
    assert c.status["phase"] == "Failed" and p.create == ()


def test_a_gang_waiting_in_its_volcano_queue_is_not_failed_and_the_startup_clock_starts_when_let_in():
    c = gang_job(VOLCANO, startupTimeoutSeconds=60)
    c.reconcile()
    c.reconcile()
    set_phase(c, "train-0", "Pending")
    c.reconcile()
    c.tick(3600)  # an hour in a full queue
    c.reconcile()
    assert c.status["phase"] == "Pending" and "enqueuedTime" not in c.status["podGroup"]
    set_phase(c, "train-0", "Inqueue")
    c.reconcile()
    enqueued = c.status["podGroup"]["enqueuedTime"]
    assert enqueued == c.now.strftime("%Y-%m-%dT%H:%M:%SZ") and c.status["phase"] == "Pending"
    c.tick(59)
    c.reconcile()
    assert c.status["phase"] == "Pending" and c.status["podGroup"]["enqueuedTime"] == enqueued
    c.tick(2)
    c.reconcile()
    assert c.status["phase"] == "Failed" and c.condition("Failed")["reason"] == "StartupTimeout"


def test_a_volcano_group_no_scheduler_ever_saw_still_times_out():
    c = gang_job(VOLCANO, startupTimeoutSeconds=60)
    c.reconcile()
    c.reconcile()
    c.tick(61)
    c.reconcile()
    assert c.condition("Failed")["reason"] == "StartupTimeout"
