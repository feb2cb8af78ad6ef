"""The VectorIndex operator under KopfRunner against the local control plane and the Pinecone
emulator: fixtures, object builders and waiters shared by the test_vectorindex_* modules.

The operator is the real one (`build_registry(services)`, `kopf_settings`, `--standalone`, all
namespaces); only its clocks are short: the emulator's delays, the resync interval and the
operator's poll and retry timings.
"""

from __future__ import annotations

import base64
import contextlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from prometheus_client import generate_latest

from pinery.api.base import GROUP, VERSION
from pinery.local.pinecone import EmulatorAdmin, PineconeEmulator
from pinery.services import Services
from pinery.settings import OperatorSettings
from pinery.vectorindex.schedule import Timing
from tests.support.control_plane import ControlPlane, running_control_plane
from tests.support.operator_harness import LogCapture, OperatorRun
from tests.support.waiting import wait_for

API_KEY = "pclocal-vi-key-5f1e9a7c"
OTHER_KEY = "pclocal-vi-other-2b8d4e6f"
SYSTEM_NS = "pinery-system"
NS = "default"
PLURAL = "vectorindexes"
CLUSTER = "test-cluster"

# Short clocks: the emulator answers in fractions of a second, the operator polls and retries
# in fractions of a second, and sweeps run every RESYNC seconds.
RESYNC = 2.0
FAST = Timing(poll_first=0.1, poll_max=0.5, retry_first=0.1, retry_max=1.0, secret_retry_max=0.5, create_landing=3.0)
SDK_TIMEOUT = 1.0
EMULATOR_DELAYS = {"ready_delay": 0.5, "scale_delay": 0.5, "terminate_delay": 0.3}


def vi_logs() -> LogCapture:
    """The operator's log output: every record of the process, formatted with its exception
    text, except those of the local servers the tests run beside it."""
    return LogCapture(exclude=LogCapture.SERVERS, fmt="%(name)s %(levelname)s %(message)s")


class Operator(OperatorRun):
    """The VectorIndex tests' operator: on all namespaces, verbose, with its metrics."""

    def metrics(self) -> str:
        return generate_latest(self.services.metrics.registry).decode()


def operator_services(plane: ControlPlane, emulator_url: str, *, resync: float = RESYNC,
                      timing: Timing = FAST) -> Services:
    """What the operator's handlers are given, with the tests' short clocks (close
    `services.kube.api_client` when done)."""
    settings = OperatorSettings(
        pinecone_host=emulator_url, resync_seconds=resync, operator_namespace=SYSTEM_NS,
        cluster_name=CLUSTER, metrics_port=0, health_port=0,
    )
    return Services.create(settings, str(plane.kubeconfig), timing=timing, pinecone_timeout=SDK_TIMEOUT)


@contextlib.contextmanager
def running_operator(plane: ControlPlane, emulator_url: str, *, resync: float = RESYNC,
                     logs: LogCapture | None = None, timing: Timing = FAST) -> Iterator[Operator]:
    """The operator in this process, stopped (and checked for a clean exit) on leaving."""
    services = operator_services(plane, emulator_url, resync=resync, timing=timing)
    with Operator(plane, services, verbose=True, logs=logs or vi_logs()) as op:
        yield op
    runner = op.runner
    assert runner is not None
    assert runner.exception is None and runner.exit_code == 0, runner.output[-3000:]


def start_emulator(state_dir: Path, **options: Any) -> PineconeEmulator:
    options = {**EMULATOR_DELAYS, **options}
    return PineconeEmulator(state_dir, api_keys={API_KEY: "default", OTHER_KEY: "other"}, **options).start_in_thread()


@dataclass
class World:
    """A control plane with pinery's CRDs, an emulator, the API key Secrets, and an operator."""

    plane: ControlPlane
    emulator: PineconeEmulator
    admin: EmulatorAdmin
    operator: Operator | None = None

    # --- Kubernetes objects ---------------------------------------------------------------

    @property
    def api(self):
        return self.plane.custom_objects()

    def create(self, name: str, namespace: str = NS, **spec: Any) -> dict:
        return self.api.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, vi(name, **spec))

    def get(self, name: str, namespace: str = NS) -> dict | None:
        import kubernetes

        try:
            return self.api.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name)
        except kubernetes.client.ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def patch_spec(self, name: str, spec: dict, namespace: str = NS) -> dict:
        return self.api.patch_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name, {"spec": spec})

    def delete(self, name: str, namespace: str = NS) -> None:
        self.api.delete_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name)

    def status(self, name: str, namespace: str = NS) -> dict:
        return (self.get(name, namespace) or {}).get("status") or {}

    def condition(self, name: str, type_: str, namespace: str = NS) -> dict:
        return next((c for c in self.status(name, namespace).get("conditions") or [] if c["type"] == type_), {})

    def wait_condition(self, name: str, type_: str, status: str, reason: str | None = None,
                       timeout: float = 15.0, namespace: str = NS) -> dict:
        def check():
            cond = self.condition(name, type_, namespace)
            return cond if cond.get("status") == status and (reason is None or cond.get("reason") == reason) else None

        try:
            return wait_for(check, timeout=timeout, interval=0.05, what=f"{name}: {type_}={status} {reason or ''}")
        except AssertionError:
            raise AssertionError(f"{name} never got {type_}={status} {reason or ''}; status: {self.status(name, namespace)}") from None

    def wait_ready(self, name: str, timeout: float = 15.0, namespace: str = NS) -> dict:
        self.wait_condition(name, "Ready", "True", timeout=timeout, namespace=namespace)
        self.wait_condition(name, "Synced", "True", "InSync", timeout=timeout, namespace=namespace)
        return self.get(name, namespace)

    def wait_synced(self, name: str, generation: int, timeout: float = 15.0, namespace: str = NS) -> dict:
        """Wait until Ready and Synced are True for `generation` (a spec change fully applied)."""
        def check():
            obj = self.get(name, namespace) or {}
            conds = {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}
            done = all(conds.get(t, {}).get("status") == "True" and conds[t].get("observedGeneration") == generation
                       for t in ("Ready", "Synced"))
            return obj if done else None

        try:
            return wait_for(check, timeout=timeout, interval=0.05, what=f"{name} in sync at generation {generation}")
        except AssertionError:
            raise AssertionError(f"{name} never synced generation {generation}; status: {self.status(name, namespace)}") from None

    def update(self, name: str, spec: dict, namespace: str = NS) -> dict:
        """Patch the spec and wait until the operator has applied it; returns the object."""
        generation = self.patch_spec(name, spec, namespace)["metadata"]["generation"]
        return self.wait_synced(name, generation, namespace=namespace)

    def wait_gone(self, name: str, timeout: float = 15.0, namespace: str = NS) -> None:
        wait_for(lambda: self.get(name, namespace) is None, timeout=timeout, interval=0.05, what=f"{name} deleted")

    def events(self, name: str, namespace: str = NS, kind: str = "VectorIndex") -> list[tuple[str, str, str]]:
        selector = f"involvedObject.name={name},involvedObject.kind={kind}"
        items = self.plane.core_v1().list_namespaced_event(namespace, field_selector=selector).items
        return [(e.type, e.reason, e.message) for e in sorted(items, key=lambda e: e.metadata.creation_timestamp or 0)]

    def wait_event(self, name: str, reason: str, type_: str | None = None, timeout: float = 10.0, namespace: str = NS) -> tuple:
        def check():
            return next((e for e in self.events(name, namespace) if e[1] == reason and (type_ is None or e[0] == type_)), None)

        try:
            return wait_for(check, timeout=timeout, interval=0.05, what=f"event {reason} on {name}")
        except AssertionError:
            raise AssertionError(f"no {reason} event on {name}; events: {self.events(name, namespace)}") from None

    def config_map(self, name: str, namespace: str = NS):
        return self.plane.core_v1().read_namespaced_config_map(name, namespace)

    def put_secret(self, name: str, namespace: str, value: str, key: str = "api-key") -> None:
        import kubernetes

        v1 = self.plane.core_v1()
        body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name},
                "data": {key: base64.b64encode(value.encode()).decode()}}
        try:
            v1.create_namespaced_secret(namespace, body)
        except kubernetes.client.ApiException as exc:
            if exc.status != 409:
                raise
            v1.replace_namespaced_secret(name, namespace, body)

    # --- Pinecone ---------------------------------------------------------------------------

    def pinecone(self, key: str = API_KEY):
        from pinecone import Pinecone

        return Pinecone(api_key=key, host=self.emulator.url)

    def index(self, name: str, key: str = API_KEY) -> dict | None:
        from pinery.gateways.pinecone import index_to_dict

        pc = self.pinecone(key)
        try:
            return index_to_dict(pc.indexes.describe(name)) if pc.indexes.exists(name) else None
        finally:
            pc.close()

    def requests(self, operation: str) -> int:
        return self.admin.stats()["requests"].get(operation, 0)

    def counting(self, *operations: str) -> Callable[[], dict[str, int]]:
        """A function returning how many requests of each operation came since this call."""
        start = {op: self.requests(op) for op in operations}
        return lambda: {op: self.requests(op) - start[op] for op in operations}


def vi(name: str, **spec: Any) -> dict:
    """A VectorIndex manifest: a small serverless index unless the spec says otherwise."""
    if not any(k in spec for k in ("serverless", "pod", "byoc")):
        spec["serverless"] = {"cloud": "aws", "region": "us-east-1"}
    if "embed" not in spec and "restoreFrom" not in spec:  # an embedding model (a backup) sets the dimension
        spec.setdefault("dimension", 8)
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "VectorIndex", "metadata": {"name": name}, "spec": spec}


@contextlib.contextmanager
def world(tmp: Path, *, install_crds: Callable[[ControlPlane], None] | None = None,
          with_operator: bool = True, **emulator_options: Any) -> Iterator[World]:
    """Everything a VectorIndex test needs, torn down on leaving."""
    emulator = start_emulator(tmp / "pinecone", **emulator_options)
    try:
        with running_control_plane(tmp / "control-plane") as plane:
            (install_crds or ControlPlane.install_crds)(plane)
            plane.core_v1().create_namespace({"metadata": {"name": SYSTEM_NS}})
            w = World(plane, emulator, EmulatorAdmin(emulator.url))
            w.put_secret("pinecone-api-key", SYSTEM_NS, API_KEY)
            if not with_operator:
                yield w
                return
            with running_operator(plane, emulator.url) as op:
                w.operator = op
                yield w
    finally:
        emulator.stop_thread()


@pytest.fixture(scope="module")
def vi_world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """One world shared by the tests of a module (objects and indexes carry unique names)."""
    with world(tmp_path_factory.mktemp("vi")) as w:
        yield w


@pytest.fixture
def no_faults(vi_world: World) -> Iterator[World]:
    """Clears the emulator's faults and settings changes after a test that makes some."""
    yield vi_world
    vi_world.admin.clear_faults()
    vi_world.admin.configure(index_quota=None, fail_initialization=[], backup_quota=None, backups_allowed=True, fail_backups=[],
                             **EMULATOR_DELAYS)


def settle(seconds: float) -> None:
    """Let the operator run for a while (to show that something does *not* happen)."""
    time.sleep(seconds)


def sweep_gap(quiet: float = 0.6) -> None:
    """Return at a moment followed by at least `quiet` x RESYNC seconds without a resync sweep
    (sweeps start on multiples of RESYNC of the wall clock, spread over its first tenth)."""
    now = time.time()
    phase = now % RESYNC
    start = 0.15 * RESYNC
    if not start <= phase <= RESYNC - quiet * RESYNC:
        time.sleep((start - phase) % RESYNC)


def delete_index_behind(w: World, name: str, key: str = API_KEY, wait_gone: bool = True) -> None:
    """Delete an index in Pinecone without the operator, and (unless told not to, for a test
    whose operator may make it again before a poll sees the gap) wait until it is gone."""
    pc = w.pinecone(key)
    try:
        pc.delete_index(name, timeout=-1)
        if wait_gone:
            wait_for(lambda: not pc.has_index(name), timeout=10, interval=0.05, what=f"index {name} gone")
    finally:
        pc.close()


def over_sweeps(w: World, sweeps: int, *operations: str) -> dict[str, int]:
    """Requests of each operation during exactly `sweeps` resync sweeps, counted from the
    middle of one interval to the middle of another: Pinecone's operations, and the control
    plane's by verb and resource (`get secrets`)."""
    phase = time.time() % RESYNC
    time.sleep((0.5 * RESYNC - phase) % RESYNC)
    plane_ops = [op for op in operations if " " in op]
    count, before = w.counting(*(op for op in operations if op not in plane_ops)), w.plane.server.request_counts()
    time.sleep(sweeps * RESYNC)
    after = w.plane.server.request_counts()
    return count() | {op: after.get(op, 0) - before.get(op, 0) for op in plane_ops}


def create_index_behind(w: World, name: str, key: str = API_KEY, dimension: int = 8, metric: str = "cosine",
                        tags: dict | None = None, spec: dict | None = None) -> None:
    """An index made in Pinecone without the operator (by hand, by Terraform, by another cluster)."""
    pc = w.pinecone(key)
    try:
        pc.create_index(name=name, dimension=dimension, metric=metric, tags=tags, timeout=-1,
                        spec=spec or {"serverless": {"cloud": "aws", "region": "us-east-1"}})
        wait_for(lambda: pc.describe_index(name).status.ready, timeout=10, interval=0.05, what=f"index {name} ready")
    finally:
        pc.close()


def configure_behind(w: World, name: str, key: str = API_KEY, **changes: Any) -> None:
    pc = w.pinecone(key)
    try:
        pc.configure_index(name, **changes)
    finally:
        pc.close()
