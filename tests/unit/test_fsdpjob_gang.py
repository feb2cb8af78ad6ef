"""gang.py: the PodGroup of an attempt, what its pods carry, what its phase means.

Cases from upstream's own tests (commits in docs/scheduling-design.md): scheduler-plugins
pkg/coscheduling/core/core_test.go `TestPreFilter` and `TestPermit`, played against a small
model of `PodGroupManager.PreFilter` / `Permit` (quorum by the pod-group label, no scheduling
gates, `minResources` plus `pods: minMember` from the members' own requests); Volcano
pkg/controllers/podgroup/pg_controller_test.go `TestAddPodGroup` (ownerReferences and
priorityClassName). Ours: a group per attempt, elastic minMember, the minResources arithmetic, the
CEL rules of spec.gang, each phase's message, and every group valid under the upstream CRDs.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
import yaml

from pinery.api.fsdpjob import FSDPJobSpec
from pinery.fsdpjob import JobRef, build_children, gang
from pinery.fsdpjob.gang import (
    COSCHEDULING_LABEL,
    VOLCANO_ANNOTATION,
    explain,
    format_quantity,
    group_attempt,
    group_status,
    min_resources,
    placement,
    pod_group,
    waits_in_queue,
)
from pinery.fsdpjob.nproc import quantity_value
from pinery.schema.prune import prune
from pinery.schema.value_validation import validate
from pinery.settings import OperatorSettings
from tests.conftest import shared_path

JOB = JobRef("train", "ml", "uid-1")
SETTINGS = OperatorSettings(operator_image="op:test", trainer_image="trainer:test")


def spec(**fields) -> FSDPJobSpec:
    fields.setdefault("numNodes", 2)
    fields.setdefault("command", ["python", "train.py"])
    return FSDPJobSpec.model_validate(fields)


COSCHED = {"scheduler": "coscheduling"}
VOLCANO = {"scheduler": "volcano"}
GPU8 = {"requests": {"cpu": "16", "memory": "64Gi", "nvidia.com/gpu": 8}, "limits": {"nvidia.com/gpu": 8}}


# --- the group -------------------------------------------------------------------------------


def test_no_gang_no_group_and_no_placement():
    s = spec()
    assert pod_group(JOB, s, 0) is None
    assert placement(JOB, s, 0) == placement(JOB, s, 3)
    assert placement(JOB, s, 0).labels == {} and placement(JOB, s, 0).scheduler_name is None


def test_coscheduling_group_of_an_attempt():
    group = pod_group(JOB, spec(numNodes=4, resources=GPU8, gang={**COSCHED, "scheduleTimeoutSeconds": 300}), 2)
    assert group == {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {
            "name": "train-2",
            "namespace": "ml",
            "labels": {"app.kubernetes.io/managed-by": "pinery", "pinery.dev/job-name": "train"},
            "ownerReferences": [{"apiVersion": "pinery.dev/v1alpha1", "kind": "FSDPJob", "name": "train", "uid": "uid-1",
                                 "controller": True, "blockOwnerDeletion": True}],
        },
        # The init container's 10m/32Mi is below the trainer's: the trainer's requests count.
        "spec": {"minMember": 4, "minResources": {"cpu": "64", "memory": "256Gi", "nvidia.com/gpu": "32"},
                 "scheduleTimeoutSeconds": 300},
    }


# Volcano TestAddPodGroup "pod has ownerReferences and priorityClassName" / "pod has no
# ownerReferences or priorityClassName": the group carries the pods' priorityClassName when they
# have one, and its owner is what owns the pods (here the job).
@pytest.mark.parametrize("template, priority", [
    pytest.param({"priorityClassName": "training-high"}, "training-high", id="pods with a priorityClassName"),
    pytest.param(None, None, id="pods without a priorityClassName"),
])
def test_volcano_group_has_queue_and_the_pods_priority_class(template, priority):
    s = spec(numNodes=3, resources=GPU8, gang={**VOLCANO, "queue": "research"}, podTemplate=template)
    group = pod_group(JOB, s, 0)
    assert group["apiVersion"] == "scheduling.volcano.sh/v1beta1" and group["metadata"]["name"] == "train-0"
    assert group["spec"].get("priorityClassName") == priority
    assert group["spec"]["queue"] == "research" and group["spec"]["minMember"] == 3
    assert "scheduleTimeoutSeconds" not in group["spec"]
    (owner,) = group["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["uid"], owner["controller"]) == ("FSDPJob", "uid-1", True)
    pods = [p for p in build_children(JOB, s, SETTINGS) if p["kind"] == "Pod"]
    assert {p["spec"].get("priorityClassName") for p in pods} == {priority}


def test_volcano_without_queue_leaves_it_to_volcanos_default():
    assert "queue" not in pod_group(JOB, spec(gang=VOLCANO), 0)["spec"]


def test_a_group_per_attempt():
    s = spec(gang=COSCHED)
    assert [pod_group(JOB, s, a)["metadata"]["name"] for a in (0, 1, 7)] == ["train-0", "train-1", "train-7"]
    assert [group_attempt("train", pod_group(JOB, s, a)) for a in (0, 1, 7)] == [0, 1, 7]
    assert group_attempt("train", {"metadata": {"name": "train-x"}}) is None
    assert group_attempt("train", {"metadata": {"name": "train-01"}}) is None
    assert group_attempt("train", {"metadata": {"name": "other-1"}}) is None


@pytest.mark.parametrize("gang_spec", [COSCHED, VOLCANO], ids=["coscheduling", "volcano"])
def test_elastic_min_member_is_min_nodes(gang_spec):
    s = spec(numNodes=4, elastic={"minNodes": 2, "maxNodes": 4}, resources={"requests": {"cpu": "1"}}, gang=gang_spec)
    group = pod_group(JOB, s, 0)
    assert group["spec"]["minMember"] == 2
    # Every elastic node, rank 0 included, waits for the rendezvous store: 32Mi each.
    assert group["spec"]["minResources"] == {"cpu": "2", "memory": "64Mi"}


# --- minResources arithmetic -----------------------------------------------------------------


@pytest.mark.parametrize("nodes, resources, expected", [
    pytest.param(1, None, {}, id="one node without requests: nothing"),
    pytest.param(3, None, {"cpu": "20m", "memory": "64Mi"}, id="no requests: the wait containers of ranks 1-2"),
    pytest.param(2, {"requests": {"cpu": "500m", "memory": "1.5Gi"}}, {"cpu": "1", "memory": "3Gi"}, id="fractions add up"),
    pytest.param(2, {"requests": {"cpu": "5m", "memory": "16Mi"}}, {"cpu": "15m", "memory": "48Mi"},
                 id="init maxima: rank 1 counts its wait container's larger request"),
    pytest.param(2, {"limits": {"nvidia.com/gpu": 4, "memory": "8Gi"}}, {"cpu": "10m", "memory": "16Gi", "nvidia.com/gpu": "8"},
                 id="limits without requests are the requests"),
    pytest.param(3, {"requests": {"cpu": "0.1", "memory": "1e9"}}, {"cpu": "300m", "memory": "3G"}, id="decimal and exponent"),
    pytest.param(2, {"requests": {"cpu": "1", "ephemeral-storage": "1G", "example.com/fpga": "1"}},
                 {"cpu": "2", "ephemeral-storage": "2G", "example.com/fpga": "2", "memory": "32Mi"},
                 id="every requested resource, extended ones too"),
])
def test_min_resources_are_what_the_first_min_member_pods_request(nodes, resources, expected):
    assert min_resources(spec(numNodes=nodes, resources=resources)) == expected


@pytest.mark.parametrize("value, text", [
    ("0.5", "500m"), ("2", "2"), ("1024", "1Ki"), ("1536", "1536"), ("3221225472", "3Gi"), ("0.0000015", "1500n"),
    ("0.000001", "1u"), ("1e-10", "1n"), ("1000", "1k"), ("2000000000", "2G"), ("16", "16"), ("1048576000", "1000Mi"),
    ("1E5000", "1e5000"), ("2.5e40", "25e39"),  # a valid quantity (an int32 exponent) too long to write out
])
def test_format_quantity_is_exact_and_valid(value, text):
    assert format_quantity(Decimal(value)) == text
    assert quantity_value(text) >= Decimal(value)


# --- what the pods carry ---------------------------------------------------------------------


@pytest.mark.parametrize("gang_spec, template, where, scheduler", [
    pytest.param(COSCHED, None, "labels", "scheduler-plugins-scheduler", id="coscheduling: label, its chart's scheduler"),
    pytest.param(COSCHED, {"schedulerName": "default-scheduler"}, "labels", "default-scheduler",
                 id="coscheduling as a profile of the default scheduler"),
    pytest.param(VOLCANO, None, "annotations", "volcano", id="volcano: annotation, scheduler volcano"),
    pytest.param(VOLCANO, {"schedulerName": "volcano-gpu"}, "annotations", "volcano-gpu", id="volcano under another name"),
])
def test_pods_carry_their_group_and_scheduler(gang_spec, template, where, scheduler):
    s = spec(numNodes=2, gang=gang_spec, podTemplate=template)
    pods = [p for p in build_children(JOB, s, SETTINGS, attempt=1) if p["kind"] == "Pod"]
    key = COSCHEDULING_LABEL if where == "labels" else VOLCANO_ANNOTATION
    other = VOLCANO_ANNOTATION if where == "labels" else COSCHEDULING_LABEL
    for pod in pods:
        assert pod["metadata"][where][key] == "train-1"
        assert other not in (pod["metadata"].get("labels") or {}) | (pod["metadata"].get("annotations") or {})
        assert pod["spec"]["schedulerName"] == scheduler
        assert pod["metadata"]["labels"]["pinery.dev/attempt"] == "1"


def test_render_order_puts_the_group_before_the_pods():
    kinds = [o["kind"] for o in build_children(JOB, spec(gang=COSCHED), SETTINGS)]
    assert kinds == ["Service", "PodGroup", "Pod", "Pod"]


# --- scheduler-plugins' PreFilter and Permit, on our objects ---------------------------------


def effective_request(pod: dict) -> dict[str, Decimal]:
    """kubernetes component-helpers/resource PodRequests, on the pod as built: per resource, the
    larger of the containers' sum and the largest init container (requests, else limits)."""
    def requests(container):
        res = container.get("resources") or {}
        return {k: quantity_value(v) for k, v in {**(res.get("limits") or {}), **(res.get("requests") or {})}.items()}
    total: dict[str, Decimal] = {}
    for c in pod["spec"]["containers"]:
        for k, v in requests(c).items():
            total[k] = total.get(k, Decimal(0)) + v
    for c in pod["spec"].get("initContainers") or []:
        for k, v in requests(c).items():
            total[k] = max(total.get(k, Decimal(0)), v)
    return total


def pre_filter(group: dict, pods: list[dict], free: dict[str, Decimal]) -> str:
    """Our model of `PodGroupManager.PreFilter` for one member: quorum by the label, gated pods
    count against it, then `CheckClusterResource` of minResources plus pods: minMember."""
    name = group["metadata"]["name"]
    members = [p for p in pods if p["metadata"].get("labels", {}).get(COSCHEDULING_LABEL) == name]
    gap = group["spec"]["minMember"] - len(members)
    if gap > 0:
        return "cannot find enough sibling pods"
    for p in members:
        if p["spec"].get("schedulingGates"):
            gap += 1
        if gap > 0:
            return "gated pods"
    need = {k: quantity_value(v) for k, v in (group["spec"].get("minResources") or {}).items()}
    need["pods"] = Decimal(group["spec"]["minMember"])
    gaps = {k: v - free.get(k, Decimal(0)) for k, v in need.items() if v > free.get(k, Decimal(0))}
    return f"resource gap: {gaps}" if gaps else "ok"


def permit(group: dict, assigned: int) -> str:
    return "Success" if assigned >= group["spec"]["minMember"] else "Wait"


def gang_of(s: FSDPJobSpec) -> tuple[dict, list[dict]]:
    """The group and its members; an elastic job's rendezvous store is no member (no group
    label or annotation, the default scheduler)."""
    children = build_children(JOB, s, SETTINGS)
    (group,) = [c for c in children if c["kind"] == "PodGroup"]
    pods = [c for c in children if c["kind"] == "Pod"]
    for store in (p for p in pods if p["metadata"]["name"] == "train-rendezvous"):
        assert gang.COSCHEDULING_LABEL not in store["metadata"]["labels"]
        assert gang.VOLCANO_ANNOTATION not in store["metadata"].get("annotations", {})
        assert "schedulerName" not in store["spec"]
    return group, [p for p in pods if p["metadata"]["name"] != "train-rendezvous"]


PLENTY = {"cpu": Decimal(1000), "memory": Decimal(2**50), "nvidia.com/gpu": Decimal(64), "pods": Decimal(110)}


@pytest.mark.parametrize("case, nodes, elastic, drop, gate, free, expected", [
    ("pod count less than minMember", 3, None, 1, False, PLENTY, "cannot find enough sibling pods"),
    ("pod count equal minMember", 3, None, 0, False, PLENTY, "ok"),
    ("pod count more than minMember (elastic: minNodes below numNodes)", 4, {"minNodes": 2}, 0, False, PLENTY, "ok"),
    ("gated pods push group below quorum", 3, None, 0, True, PLENTY, "gated pods"),
    ("gated pods but still meeting quorum (minMember < replicas)", 4, {"minNodes": 3}, 0, True, PLENTY, "ok"),
    ("cluster's resource cannot satisfy minResource", 3, None, 0, False, {**PLENTY, "nvidia.com/gpu": Decimal(16)}, "resource gap"),
])
def test_prefilter_on_the_gang_pinery_builds(case, nodes, elastic, drop, gate, free, expected):
    s = spec(numNodes=nodes, resources=GPU8, gang=COSCHED, elastic=elastic)
    group, pods = gang_of(s)
    assert not any(p["spec"].get("schedulingGates") for p in pods)  # pinery never gates its pods
    pods = pods[: len(pods) - drop]
    if gate:
        pods[-1]["spec"]["schedulingGates"] = [{"name": "example.com/gate"}]
    assert pre_filter(group, pods, free).startswith(expected), case


def test_min_resources_are_the_members_own_requests_as_the_scheduler_counts_them():
    for s in (spec(numNodes=3, resources=GPU8, gang=COSCHED), spec(numNodes=4, elastic={"minNodes": 3}, gang=VOLCANO),
              spec(numNodes=2, resources={"requests": {"cpu": "2m", "memory": "100Mi"}}, gang=COSCHED)):
        group, pods = gang_of(s)
        total: dict[str, Decimal] = {}
        for pod in pods[: group["spec"]["minMember"]]:
            for k, v in effective_request(pod).items():
                total[k] = total.get(k, Decimal(0)) + v
        assert {k: quantity_value(v) for k, v in group["spec"]["minResources"].items()} == {k: v for k, v in total.items() if v}


@pytest.mark.parametrize("case, nodes, elastic, assigned, expected", [
    ("pod belongs to a pg that doesn't have quorum", 3, None, 2, "Wait"),
    ("pod belongs to a pg that have quorum satisfied", 3, None, 3, "Success"),
    ("elastic: quorum is minNodes", 4, {"minNodes": 2}, 2, "Success"),
])
def test_permit_on_the_gang_pinery_builds(case, nodes, elastic, assigned, expected):
    group, _ = gang_of(spec(numNodes=nodes, gang=COSCHED, elastic=elastic))
    assert permit(group, assigned) == expected, case


# --- the CEL rules of spec.gang ------------------------------------------------------------


@pytest.mark.parametrize("gang_spec, message", [
    ({"scheduler": "volcano", "scheduleTimeoutSeconds": 30}, "scheduleTimeoutSeconds: is a coscheduling setting"),
    ({"scheduler": "coscheduling", "queue": "q"}, "queue: is a volcano setting"),
    ({"scheduler": "kube-batch"}, "Input should be 'coscheduling' or 'volcano'"),
    ({"scheduler": "coscheduling", "scheduleTimeoutSeconds": 0}, "greater than or equal to 1"),
])
def test_gang_settings_of_the_other_scheduler_are_refused(gang_spec, message):
    with pytest.raises(ValueError, match=message):
        spec(gang=gang_spec)


@pytest.mark.parametrize("gang_spec, refused", [
    ({"scheduler": "volcano", "scheduleTimeoutSeconds": 30}, ".gang.scheduleTimeoutSeconds"),
    ({"scheduler": "coscheduling", "queue": "q"}, ".gang.queue"),
    ({"scheduler": "coscheduling", "scheduleTimeoutSeconds": 30}, None),
    ({"scheduler": "volcano", "queue": "q"}, None),
])
def test_the_crds_cel_rules_say_the_same(gang_spec, refused):
    from pinery.api.fsdpjob import SPEC_RULES
    from pinery.schema import cel

    value = {"numNodes": 2, "gang": gang_spec}
    failed = [r.field_path for r in SPEC_RULES if r.field_path.startswith(".gang") and not cel.evaluate(r.rule, value)]
    assert failed == ([refused] if refused else [])


# --- every group is valid under the upstream CRD -------------------------------------------


def upstream_schema(scheduler: str) -> dict:
    name = {"coscheduling": ("scheduler-plugins", "scheduling.x-k8s.io_podgroups.yaml"),
            "volcano": ("volcano", "scheduling.volcano.sh_podgroups.yaml")}[scheduler]
    (crd,) = [d for d in yaml.safe_load_all(shared_path("kube-crds", *name).read_text()) if d]
    (version,) = [v for v in crd["spec"]["versions"] if v["served"]]
    return version["schema"]["openAPIV3Schema"]


@pytest.mark.parametrize("s", [
    spec(numNodes=4, resources=GPU8, gang={**COSCHED, "scheduleTimeoutSeconds": 600}),
    spec(numNodes=1, gang=COSCHED),
    spec(numNodes=8, elastic={"minNodes": 2}, resources={"requests": {"cpu": "250m", "memory": "1.5Gi"}}, gang=COSCHED),
    spec(numNodes=4, resources=GPU8, gang={**VOLCANO, "queue": "research"}, podTemplate={"priorityClassName": "high"}),
    spec(numNodes=2, gang=VOLCANO),
], ids=["coscheduling", "coscheduling-one-node", "coscheduling-elastic", "volcano", "volcano-plain"])
def test_groups_validate_against_the_upstream_crd_and_lose_nothing_to_pruning(s):
    group = pod_group(JOB, s, 3)
    schema = upstream_schema(s.gang.scheduler)
    assert validate(schema, group) == []
    pruned, unknown = prune(schema, group, root=True)
    assert unknown == [] and pruned["spec"] == group["spec"]


# --- explain and status.podGroup ---------------------------------------------------------


def group(scheduler: str, phase: str | None, min_member: int = 4, **status) -> dict:
    g = pod_group(JOB, spec(numNodes=min_member, gang=COSCHED if scheduler == "coscheduling" else {**VOLCANO, "queue": "research"}), 0)
    if phase is not None:
        g["status"] = {"phase": phase, **status}
    return g


UNSCHEDULABLE = [{"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources", "transitionID": "x",
                  "message": "4/4 tasks in gang unschedulable: pod group is not ready, 4 Pending, 4 minAvailable; Pending: 4 Unschedulable"}]


@pytest.mark.parametrize("scheduler, g, expected", [
    ("coscheduling", None, None),
    ("coscheduling", group("coscheduling", None), "gang of 4 waits for the scheduler (PodGroup Pending)"),
    ("coscheduling", group("coscheduling", "Pending"), "gang of 4 waits for the scheduler (PodGroup Pending)"),
    ("coscheduling", group("coscheduling", "Scheduling", running=1), "1 of 4 nodes running, the rest being scheduled (PodGroup Scheduling)"),
    ("coscheduling", group("coscheduling", "Unknown"), "part of the gang is scheduled, the rest cannot be (PodGroup Unknown)"),
    ("coscheduling", group("coscheduling", "Running", running=4), None),
    ("coscheduling", group("coscheduling", "Finished", succeeded=4), None),
    ("coscheduling", group("coscheduling", "Failed", failed=1, running=3), None),
    ("volcano", group("volcano", "Pending"), "waiting in queue research (PodGroup Pending)"),
    ("volcano", group("volcano", "Pending", conditions=UNSCHEDULABLE),
     "waiting in queue research (PodGroup Pending): 4/4 tasks in gang unschedulable: pod group is not ready, 4 Pending, "
     "4 minAvailable; Pending: 4 Unschedulable"),
    ("volcano", group("volcano", "Pending", conditions=[{**UNSCHEDULABLE[0], "status": "False"}]), "waiting in queue research (PodGroup Pending)"),
    ("volcano", group("volcano", "Inqueue"), "admitted by queue research, pods being scheduled (PodGroup Inqueue)"),
    ("volcano", group("volcano", "Unknown"), "part of the gang is scheduled, the rest cannot be (PodGroup Unknown)"),
    ("volcano", group("volcano", "Running"), None),
    ("volcano", group("volcano", "Completed"), None),
], ids=lambda v: v if isinstance(v, str) and len(v) < 20 else None)
def test_explain_each_phase(scheduler, g, expected):
    assert explain(g, scheduler) == expected


def test_volcano_default_queue_is_named_when_none_is_set():
    g = pod_group(JOB, spec(gang=VOLCANO), 0)
    g["status"] = {"phase": "Pending"}
    assert explain(g, "volcano") == "waiting in queue default (PodGroup Pending)"


def test_group_status_reads_phase_and_the_schedulers_message():
    assert group_status("train-0", "coscheduling", None) == {"name": "train-0", "scheduler": "coscheduling"}
    assert group_status("train-0", "coscheduling", group("coscheduling", "Scheduling")) == {
        "name": "train-0", "scheduler": "coscheduling", "phase": "Scheduling"}
    assert group_status("train-0", "volcano", group("volcano", "Pending", conditions=UNSCHEDULABLE)) == {
        "name": "train-0", "scheduler": "volcano", "phase": "Pending", "message": UNSCHEDULABLE[0]["message"]}


@pytest.mark.parametrize("scheduler, phase, queued", [
    ("volcano", "Pending", True),  # the queue has not let the gang in (enqueue action)
    ("volcano", None, False),  # no scheduler has seen it: startup, so a missing scheduler times out
    ("volcano", "Inqueue", False),
    ("volcano", "Running", False),
    ("coscheduling", "Pending", False),  # fewer members than minMember: no queue
    ("coscheduling", "Scheduling", False),
])
def test_only_volcanos_pending_is_waiting_in_a_queue(scheduler, phase, queued):
    g = group(scheduler, phase) if phase else {"spec": {"minMember": 4}}
    assert waits_in_queue(g, scheduler) is queued
    assert waits_in_queue(None, scheduler) is False


@pytest.mark.parametrize("previous, phase, expected", [
    (None, "Inqueue", None),  # never seen queued: no time
    ({"name": "train-0", "phase": "Pending"}, "Pending", None),
    ({"name": "train-0", "phase": "Pending"}, "Inqueue", "NOW"),
    ({"name": "train-0", "phase": "Pending"}, "Running", "NOW"),
    ({"name": "train-0", "phase": "Inqueue", "enqueuedTime": "THEN"}, "Running", "THEN"),  # kept
    ({"name": "train-1", "phase": "Pending", "enqueuedTime": "THEN"}, "Inqueue", None),  # another attempt's group
])
def test_enqueued_time_is_when_the_group_is_first_seen_out_of_its_queue(previous, phase, expected):
    out = group_status("train-0", "volcano", group("volcano", phase), previous, "NOW")
    assert out.get("enqueuedTime") == expected
