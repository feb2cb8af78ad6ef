"""Kueue in local mode: two FSDPJobs queued into a ClusterQueue with room for one run one after
the other, their pods real torchrun processes. Kueue's CRDs are the upstream ones; its scheduler is
played by tests/support/kueue.py (`QuotaScheduler`, which says what of Kueue it follows). CPU-heavy:
run it alone (`flock /tmp/pinery-heavy.lock`)."""

from __future__ import annotations

import pytest

from tests.e2e.test_fsdpjob_local import script_job
from tests.support.control_plane import ControlPlane
from tests.support.kueue import Kueue, QuotaScheduler, condition, install_kueue_crds
from tests.support.ports import free_port

pytestmark = pytest.mark.e2e


def test_two_queued_jobs_share_a_cluster_queue_with_room_for_one_and_run_one_after_the_other(local_mode):
    cluster = local_mode.cluster
    plane = ControlPlane(server=cluster.apiserver, state_dir=cluster.state_dir, kubeconfig=cluster.kubeconfig, token=cluster.state.token)
    install_kueue_crds(plane)
    kueue = Kueue(plane, "default")
    kueue.flavor("default")
    kueue.cluster_queue("cq-one", "default", {"cpu": "2"})  # one 2-node job of 1 CPU a node
    kueue.local_queue("small", "cq-one")
    kubectl = local_mode.kubectl
    objects = []
    for name in ("first", "second"):
        config_map, job = script_job(name, free_port(), env={}, max_restarts=0)
        job["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "small"}
        job["spec"]["resources"] = {"requests": {"cpu": "1"}}
        objects += [config_map, job]

    with QuotaScheduler(kueue, "cq-one") as scheduler:
        kubectl.apply(*objects[:2])
        kubectl.wait_for("fsdpjob/first", "Running", timeout=90)
        kubectl.apply(*objects[2:])
        kubectl.wait_for("fsdpjob/second", "Queued", timeout=60)
        kubectl.wait_for("fsdpjob/first", "Succeeded", timeout=120)
        kubectl.wait_for("fsdpjob/second", "Succeeded", timeout=180)
        assert scheduler.admitted == ["first", "second"]

    first, second = (kubectl.get(f"fsdpjob/{name}")["status"] for name in ("first", "second"))
    # the second job's pods were made only after the first was over and its quota released
    assert second["startTime"] >= first["completionTime"]
    assert (first["restarts"], second["restarts"]) == (0, 0)
    finished = condition(kueue.workload("first"), "Finished")
    assert finished["status"] == "True" and finished["reason"] == "Succeeded"
    assert condition(kueue.workload("second"), "QuotaReserved")["lastTransitionTime"] >= finished["lastTransitionTime"]
