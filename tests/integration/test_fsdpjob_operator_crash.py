"""The FSDPJob operator killed in the middle of creating a job and of a gang restart.

The first operator stops dead before a chosen request (it is never sent: see
`tests.support.fsdpjob.GatedKube`) and is then shut down; a second operator, with nothing but what
is in the API, finishes the work. Whatever the point, there is exactly one set of pods per
attempt, never a pod of the new attempt before the old ones are gone, and one restart counted.
"""

from __future__ import annotations

from typing import Iterator

import pytest

from tests.support import fsdpjob as h
from tests.support.waiting import wait_for


@pytest.fixture
def operators(plane, ns) -> Iterator[list[h.Operator]]:
    """Operators started by the test, stopped at the end whatever happened."""
    started: list[h.Operator] = []
    yield started
    for op in started:
        op.stop()


def start(plane, ns, operators: list[h.Operator]) -> h.Operator:
    op = h.new_operator(plane, ns).start()
    operators.append(op)
    return op


def kill_at(op: h.Operator, verb: str, fragment: str, nth: int, trigger=None) -> None:
    """Let `op` run until it is about to send that request, then stop it there."""
    op.kube.cut(verb, fragment, nth)
    if trigger is not None:
        trigger()
    assert op.kube.reached.wait(10), f"the operator never got to {verb} {fragment} #{nth}"
    op.stop()


def one_set_per_attempt(kubelet: h.TestKubelet, job: str, nodes: int, attempts: int) -> None:
    added = [(r.name, r.attempt) for r in kubelet.created(job)]
    expected = [(f"{job}-node-{rank}", attempt) for attempt in range(attempts) for rank in range(nodes)]
    assert sorted(added) == sorted(expected), added
    # no pod of a new attempt was created before every pod of the older one was gone
    history = [r for r in kubelet.history if r.name.startswith(f"{job}-node-")]
    for attempt in range(1, attempts):
        first_new = next(i for i, r in enumerate(history) if r.type == "ADDED" and r.attempt == attempt)
        gone = {r.uid for r in history[:first_new] if r.type == "DELETED"}
        old = {r.uid for r in history if r.type == "ADDED" and r.attempt == attempt - 1}
        assert old <= gone, f"attempt {attempt} started before the pods of attempt {attempt - 1} were gone"


CREATION_CUTS = [
    pytest.param("PATCH", "/fsdpjobs/born/status", 1, id="before the first status write"),
    pytest.param("POST", "/services", 1, id="before the Service"),
    pytest.param("POST", "/pods", 1, id="after the Service, before any pod"),
    pytest.param("POST", "/pods", 2, id="after the first pod"),
]


@pytest.mark.parametrize("verb, fragment, nth", CREATION_CUTS)
def test_killed_while_creating_a_job(plane, ns, kubelet, operators, verb, fragment, nth):
    first = start(plane, ns, operators)
    kill_at(first, verb, fragment, nth, trigger=lambda: h.create_job(plane, ns, "born", numNodes=2))
    second = start(plane, ns, operators)
    kubelet.wait_pods("born", 2)
    kubelet.run_all("born", 2)
    job = second.wait_phase("born", "Running")
    assert h.status(job)["restarts"] == 0 and h.condition(job, "Created")["status"] == "True"
    services = plane.http("GET", f"/api/v1/namespaces/{ns}/services").json()["items"]
    assert [s["metadata"]["name"] for s in services] == ["born"]
    one_set_per_attempt(kubelet, "born", 2, 1)
    wait_for(lambda: "NodesRunning" in h.reasons(plane, ns, "born"), what="the NodesRunning event")
    assert h.reasons(plane, ns, "born").count("Created") == 1


RESTART_CUTS = [
    pytest.param("PATCH", "/fsdpjobs/gang/status", 1, id="before the restart is written"),
    pytest.param("DELETE", "/pods/", 1, id="after the restart is written, before any deletion"),
    pytest.param("DELETE", "/pods/", 2, id="after the first deletion"),
    pytest.param("POST", "/pods", 1, id="after the old pods are gone, before any new one"),
    pytest.param("POST", "/pods", 2, id="after the first new pod"),
]


@pytest.mark.parametrize("verb, fragment, nth", RESTART_CUTS)
def test_killed_during_a_gang_restart(plane, ns, kubelet, operators, verb, fragment, nth):
    first = start(plane, ns, operators)
    h.create_job(plane, ns, "gang", numNodes=2, maxRestarts=3)
    kubelet.wait_pods("gang", 2)
    kubelet.run_all("gang", 2)
    first.wait_phase("gang", "Running")
    kill_at(first, verb, fragment, nth, trigger=lambda: kubelet.exit("gang", 1, 1))

    second = start(plane, ns, operators)
    pods = kubelet.wait_pods("gang", 2, attempt=1)
    kubelet.run_all("gang", 2)
    job = second.wait_phase("gang", "Running")
    assert h.status(job)["restarts"] == 1
    assert [(n["attempt"], n["restarts"]) for n in h.status(job)["nodes"]] == [(1, 1), (1, 1)]
    assert [p["metadata"]["labels"]["pinery.dev/attempt"] for p in pods] == ["1", "1"]
    one_set_per_attempt(kubelet, "gang", 2, 2)
    assert first.restarts_counter() + second.restarts_counter() == 1
    # the second operator keeps going: a later failure is restart 2, not a recount
    kubelet.exit("gang", 0, 1)
    kubelet.wait_pods("gang", 2, attempt=2)
    second.wait("gang", lambda j: h.status(j)["restarts"] == 2)
    one_set_per_attempt(kubelet, "gang", 2, 3)
    assert h.reasons(plane, ns, "gang").count("GangRestart") <= 2


def test_restarted_again_and_again_while_old_pods_linger(plane, ns, kubelet, operators):
    """Operators come and go while a node of the failed gang takes its time to stop."""
    op = start(plane, ns, operators)
    h.create_job(plane, ns, "slow", numNodes=3, maxRestarts=3)
    kubelet.wait_pods("slow", 3)
    kubelet.run_all("slow", 3)
    op.wait_phase("slow", "Running")
    kubelet.held.add("slow-node-0")
    kubelet.exit("slow", 2, 1)
    op.wait_phase("slow", "Restarting")
    for _ in range(3):
        op.stop()
        op = start(plane, ns, operators)
        wait_for(lambda op=op: op.passes() >= 1, what="a pass of the new operator")
        assert {r.attempt for r in kubelet.created("slow")} == {0}
        assert h.status(h.get_job(plane, ns, "slow"))["nodes"][2]["reason"] == "WaitingForOldPods"
    kubelet.release("slow-node-0")
    kubelet.wait_pods("slow", 3, attempt=1)
    kubelet.run_all("slow", 3)
    job = op.wait_phase("slow", "Running")
    assert h.status(job)["restarts"] == 1
    one_set_per_attempt(kubelet, "slow", 3, 2)
