"""The FSDPJob operator under KopfRunner, and a kubelet the test drives by hand.

    with TestKubelet(plane, ns) as kubelet, job_operator(plane, ns) as op:
        create_job(plane, ns, "train", numNodes=2)
        kubelet.wait_pods("train", 2)
        kubelet.run_all("train", 2)
        op.wait_phase("train", "Running")

`TestKubelet` watches the namespace's pods from before the operator creates any: it binds
new pods to a node (so that deleting them is graceful, as on a cluster), removes pods marked
for deletion (delete with grace 0, as a kubelet does once the containers stopped) unless told
to hold them, and records every ADDED and DELETED in the server's order, so a test can check
that no second set of pods was ever created. Pod statuses are written by the test, through the
status subresource, in the shapes a kubelet writes.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Iterator

import kopf.testing
import pytest

from pinery.api.base import GROUP, VERSION
from pinery.fsdpjob.naming import LABEL_ATTEMPT, LABEL_JOB, LABEL_RANK, TRAINER_CONTAINER, pod_name
from pinery.gateways.kube import Kube
from pinery.services import Services
from pinery.settings import OperatorSettings
from tests.support.operator_harness import OperatorRun
from tests.support.waiting import wait_for

PLURAL = "fsdpjobs"
NODE = "test-node"
SETTINGS = OperatorSettings(metrics_port=0, health_port=0, operator_image="pinery:test", trainer_image="trainer:test")
# A command for jobs whose pods never run anything (the test is their kubelet).
COMMAND = ["python", "train.py"]


def now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- fixtures (imported by the test modules) ----------------------------------------------

_namespaces = itertools.count()


@pytest.fixture(scope="module")
def plane(control_plane_module):
    """One control plane per module, with pinery's CRDs; each test has its own namespace."""
    control_plane_module.install_crds()
    return control_plane_module


@pytest.fixture
def ns(plane) -> str:
    name = f"fj-{next(_namespaces)}"
    response = plane.http("POST", "/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    assert response.status_code == 201, response.text
    return name


@pytest.fixture
def kubelet(plane, ns) -> Iterator["TestKubelet"]:
    with TestKubelet(plane, ns) as k:
        yield k


# --- the job ------------------------------------------------------------------------------


def job_body(name: str, **spec: Any) -> dict:
    spec.setdefault("nprocPerNode", 1)
    if "trainer" not in spec:
        spec.setdefault("command", COMMAND)
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "FSDPJob", "metadata": {"name": name}, "spec": spec}


def jobs_path(ns: str, name: str = "", sub: str = "") -> str:
    path = f"/apis/{GROUP}/{VERSION}/namespaces/{ns}/{PLURAL}"
    return path + (f"/{name}" if name else "") + (f"/{sub}" if sub else "")


def create_job(plane, ns: str, name: str, **spec: Any) -> dict:
    response = plane.http("POST", jobs_path(ns), json=job_body(name, **spec))
    assert response.status_code == 201, response.text
    return response.json()


def get_job(plane, ns: str, name: str) -> dict | None:
    response = plane.http("GET", jobs_path(ns, name))
    if response.status_code == 404:
        return None
    response.raise_for_status()
    return response.json()


def patch_job(plane, ns: str, name: str, spec: dict) -> dict:
    response = plane.http(
        "PATCH", jobs_path(ns, name), json={"spec": spec}, headers={"Content-Type": "application/merge-patch+json"}
    )
    assert response.status_code == 200, response.text
    return response.json()


def status(job: dict | None) -> dict:
    return (job or {}).get("status") or {}


def condition(job: dict | None, type_: str) -> dict:
    return next((c for c in status(job).get("conditions") or [] if c["type"] == type_), {})


def events(plane, ns: str, name: str) -> list[tuple[str, str, str]]:
    """(type, reason, message) of the Events about job `name`, oldest first."""
    items = plane.http("GET", f"/api/v1/namespaces/{ns}/events").json()["items"]
    items = [e for e in items if e["involvedObject"].get("name") == name and e["involvedObject"].get("kind") == "FSDPJob"]
    items.sort(key=lambda e: int(e["metadata"]["resourceVersion"]))
    return [(e["type"], e["reason"], e["message"]) for e in items]


def reasons(plane, ns: str, name: str) -> list[str]:
    return [reason for _, reason, _ in events(plane, ns, name)]


# --- the operator -------------------------------------------------------------------------


class GatedKube(Kube):
    """The operator's real Kubernetes gateway, able to stop dead before a chosen request.

    `cut(verb, fragment, nth)` makes the nth request whose method is `verb` and whose path
    contains `fragment` never be sent: the caller waits forever, as if the operator had died
    right there, and `reached` is set so that the test can stop the operator at that point.
    """

    def __init__(self, api_client: Any):
        super().__init__(api_client)
        self.reached = threading.Event()
        self._cut: tuple[str, str, int] | None = None
        self._seen = 0
        self._before: tuple[str, str, Callable[[], Any]] | None = None
        self.sent: list[tuple[str, str]] = []  # (method, path) of every request the operator's client sent

    def cut(self, verb: str, fragment: str, nth: int = 1) -> None:
        self._cut, self._seen = (verb, fragment, nth), 0
        self.reached.clear()

    def before(self, verb: str, fragment: str, action: Callable[[], Any]) -> None:
        """Run `action` (in a thread) just before the next such request is sent, once: another
        writer getting there first."""
        self._before = (verb, fragment, action)

    async def _run(self, method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        self.sent.append((method, path))
        if self._before is not None and method == self._before[0] and self._before[1] in path:
            action, self._before = self._before[2], None
            await asyncio.to_thread(action)
        if self._cut is not None:
            verb, fragment, nth = self._cut
            if method == verb and fragment in path:
                self._seen += 1
                if self._seen >= nth:
                    self.reached.set()
                    await asyncio.Event().wait()  # never returns: the operator "dies" here
        return await super()._run(method, path, *args, **kwargs)


class Operator(OperatorRun):
    """The FSDPJob tests' operator: on one namespace, with a GatedKube, and waiters on its jobs."""

    def __init__(self, plane: Any, namespace: str, services: Services) -> None:
        # The registry's login handler uses the operator's own client: no kubeconfig patching.
        super().__init__(plane, services, namespace=namespace, timeout=30, login=False, close_client=False)

    @property
    def kube(self) -> GatedKube:
        return self.services.kube  # type: ignore[return-value]

    @property
    def metrics(self):
        return self.services.metrics

    def start(self) -> "Operator":
        super().start()
        return self

    def stop(self, *exc_info: Any) -> kopf.testing.KopfRunner | None:
        runner = super().stop(*exc_info)
        self.runner = None
        if runner is not None:
            assert runner.exception is None, runner.output[-5000:]
        return runner

    def sample(self, name: str, labels: dict[str, str]) -> float:
        return self.metrics.registry.get_sample_value(name, labels) or 0.0

    def passes(self) -> float:
        """Reconcile passes this operator made."""
        return sum(self.sample("pinery_reconciles_total", {"resource": "FSDPJob", "outcome": o}) for o in ("idle", "changed", "error"))

    def phase_gauge(self, phase: str) -> float:
        return self.sample("pinery_fsdpjobs", {"phase": phase})

    def restarts_counter(self) -> float:
        return self.sample("pinery_fsdpjob_restarts_total", {"namespace": self.namespace})

    def wait(self, name: str, check: Callable[[dict], Any], timeout: float = 60.0, what: str = "") -> dict:
        def current():
            job = get_job(self.plane, self.namespace, name)
            return job if job is not None and check(job) else None

        return wait_for(current, timeout=timeout, interval=0.05, what=what or f"{name}: {check}")

    def wait_phase(self, name: str, phase: str, timeout: float = 60.0) -> dict:
        return self.wait(name, lambda j: status(j).get("phase") == phase, timeout, f"{name} in phase {phase}")

    def wait_condition(self, name: str, type_: str, state: str = "True", reason: str | None = None, timeout: float = 60.0) -> dict:
        def check(job: dict) -> bool:
            c = condition(job, type_)
            return c.get("status") == state and (reason is None or c.get("reason") == reason)

        return self.wait(name, check, timeout, f"{name}: {type_}={state} {reason or ''}")


def new_operator(plane, namespace: str, settings: OperatorSettings = SETTINGS) -> Operator:
    services = Services.create(settings, kubeconfig=str(plane.kubeconfig))
    services.kube = GatedKube(services.kube.api_client)
    return Operator(plane, namespace, services)


@contextlib.contextmanager
def job_operator(plane, namespace: str, settings: OperatorSettings = SETTINGS) -> Iterator[Operator]:
    op = new_operator(plane, namespace, settings).start()
    try:
        yield op
    finally:
        op.stop()


# --- the kubelet --------------------------------------------------------------------------


@dataclass
class PodRecord:
    """One ADDED or DELETED pod, in the order the server sent them."""

    type: str
    name: str
    uid: str
    attempt: int
    rank: int
    resource_version: int = 0  # the object's at that event: orders it against other objects


@dataclass
class TestKubelet:
    plane: Any
    namespace: str
    bind: bool = True
    history: list[PodRecord] = field(default_factory=list)
    held: set[str] = field(default_factory=set)

    __test__ = False  # not a test class

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._started = threading.Event()

    def __enter__(self) -> "TestKubelet":
        self._thread.start()
        assert self._started.wait(10), "the kubelet's watch did not start"
        return self

    def __exit__(self, *exc: Any) -> None:
        # The thread ends at its watch's next timeout (within a second); waiting for that would
        # only slow every test down, and it touches nothing outside its own namespace.
        self._stop.set()

    # The watch loop

    def _loop(self) -> None:
        path = f"/api/v1/namespaces/{self.namespace}/pods"
        rv = self.plane.http("GET", path).json()["metadata"]["resourceVersion"]
        self._started.set()
        while not self._stop.is_set():
            try:
                with self.plane.http("GET", path, params={"watch": "true", "resourceVersion": rv, "timeoutSeconds": "1",
                                                         "allowWatchBookmarks": "true"}, stream=True, timeout=5) as response:
                    for line in response.iter_lines():
                        if not line:
                            continue
                        event = json.loads(line)
                        obj = event["object"]
                        if event["type"] in ("ADDED", "MODIFIED", "DELETED"):
                            self._on_pod(event["type"], obj)
                        # after handling: an event whose handling failed comes again
                        rv = obj["metadata"].get("resourceVersion", rv)
                        if self._stop.is_set():
                            return
            except Exception:  # the server stopping at the end of a module
                if self._stop.is_set():
                    return
                time.sleep(0.05)

    def _on_pod(self, kind: str, pod: dict) -> None:
        meta = pod["metadata"]
        labels = meta.get("labels") or {}
        if kind in ("ADDED", "DELETED"):
            with self._lock:
                self.history.append(PodRecord(kind, meta["name"], meta["uid"], int(labels.get(LABEL_ATTEMPT, -1)), int(labels.get(LABEL_RANK, -1)),
                                             int(meta.get("resourceVersion") or 0)))
        if kind == "DELETED":
            return
        if meta.get("deletionTimestamp"):
            if meta["name"] not in self.held:
                self.remove(meta["name"], meta["uid"])
            return
        if self.bind and not (pod.get("spec") or {}).get("nodeName"):
            binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": meta["name"]}, "target": {"kind": "Node", "name": NODE}}
            self.plane.http("POST", f"/api/v1/namespaces/{self.namespace}/pods/{meta['name']}/binding", json=binding)

    def remove(self, name: str, uid: str | None = None) -> None:
        """What a kubelet does once a deleted pod's containers stopped."""
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}
        if uid:
            body["preconditions"] = {"uid": uid}
        self.plane.http("DELETE", f"/api/v1/namespaces/{self.namespace}/pods/{name}", json=body)

    def release(self, name: str) -> None:
        """Stop holding a pod marked for deletion, and remove it."""
        self.held.discard(name)
        pod = self.pod(name)
        if pod is not None and pod["metadata"].get("deletionTimestamp"):
            self.remove(name, pod["metadata"]["uid"])

    # Reading pods

    def all_pods(self, job: str) -> list[dict]:
        """Every pod of the job: its nodes' and, for an elastic job, its rendezvous store."""
        items = self.plane.http("GET", f"/api/v1/namespaces/{self.namespace}/pods", params={"labelSelector": f"{LABEL_JOB}={job}"}).json()["items"]
        return sorted(items, key=lambda p: p["metadata"]["name"])

    def pods(self, job: str) -> list[dict]:
        """The job's training nodes' pods."""
        return [p for p in self.all_pods(job) if LABEL_RANK in p["metadata"]["labels"]]

    def pod(self, name: str) -> dict | None:
        response = self.plane.http("GET", f"/api/v1/namespaces/{self.namespace}/pods/{name}")
        return response.json() if response.status_code == 200 else None

    def wait_pods(self, job: str, count: int, attempt: int | None = None, timeout: float = 60.0) -> list[dict]:
        """Wait until the job has exactly `count` live pods (of `attempt`, when given), all bound."""
        def ready():
            pods = [p for p in self.pods(job) if not p["metadata"].get("deletionTimestamp")]
            if attempt is not None and any(int(p["metadata"]["labels"][LABEL_ATTEMPT]) != attempt for p in pods):
                return None
            if len(pods) != count or (self.bind and not all(p["spec"].get("nodeName") for p in pods)):
                return None
            return pods

        return wait_for(ready, timeout=timeout, interval=0.05, what=f"{count} pods of {job}" + (f" in attempt {attempt}" if attempt is not None else ""))

    def wait_no_pods(self, job: str, timeout: float = 60.0) -> None:
        wait_for(lambda: not self.all_pods(job), timeout=timeout, interval=0.05, what=f"no pods of {job}")

    def created(self, job: str) -> list[PodRecord]:
        with self._lock:
            return [r for r in self.history if r.type == "ADDED" and r.name.startswith(f"{job}-node-")]

    # Writing pod statuses, as a kubelet does

    def set_status(self, name: str, pod_status: dict) -> dict:
        response = self.plane.http(
            "PATCH", f"/api/v1/namespaces/{self.namespace}/pods/{name}/status",
            json={"status": pod_status}, headers={"Content-Type": "application/merge-patch+json"},
        )
        assert response.status_code == 200, response.text
        return response.json()

    def run(self, job: str, *ranks: int) -> None:
        for rank in ranks:
            self.set_status(pod_name(job, rank), running())

    def run_all(self, job: str, count: int) -> None:
        self.run(job, *range(count))

    def exit(self, job: str, rank: int, code: int = 0, reason: str | None = None, message: str | None = None) -> None:
        self.set_status(pod_name(job, rank), exited(code, reason, message))


def container(state: dict, name: str = TRAINER_CONTAINER, restarts: int = 0) -> dict:
    return {"name": name, "image": "trainer:test", "imageID": "", "ready": "running" in state, "restartCount": restarts,
            "started": "running" in state, "state": state, "lastState": {}}


def running() -> dict:
    return {"phase": "Running", "startTime": now(), "containerStatuses": [container({"running": {"startedAt": now()}})]}


def exited(code: int, reason: str | None = None, message: str | None = None) -> dict:
    terminated = {"exitCode": code, "reason": reason or ("Completed" if code == 0 else "Error"), "startedAt": now(), "finishedAt": now()}
    if message:
        terminated["message"] = message
    return {"phase": "Succeeded" if code == 0 else "Failed", "containerStatuses": [container({"terminated": terminated})]}


def waiting(reason: str, message: str = "") -> dict:
    return {"phase": "Pending", "containerStatuses": [container({"waiting": {"reason": reason, "message": message}})]}


def unschedulable(message: str) -> dict:
    return {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}]}


def evicted(message: str) -> dict:
    return {"phase": "Failed", "reason": "Evicted", "message": message,
            "containerStatuses": [container({"terminated": {"exitCode": 137, "reason": "Error", "finishedAt": now()}})]}


def node_lost() -> dict:
    return {"phase": "Unknown", "containerStatuses": [container({"running": {"startedAt": now()}})]}
