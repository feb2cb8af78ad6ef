"""The pod runner against the local control plane, and helpers to make and watch pods.

    def test_something(pod_runner):
        plane = pod_runner.plane                       # the control_plane fixture
        create(plane, pod_manifest("p", ["sh", "-c", "echo hi"]))
        pod = wait_for_phase(plane, "p", "Succeeded")

The runner runs in its own thread and event loop; `pod_runner.restart()` stops it (its pods'
processes stop, as on a node shutting down) and starts a new one on the same state directory.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
import requests

from pinery.local.kubeclient import KubeClient
from pinery.local.podrunner import processes
from pinery.local.podrunner.runner import PodRunner
from tests.support.control_plane import ControlPlane
from tests.support.waiting import wait_for


class RunnerThread:
    def __init__(self, plane: ControlPlane, state_dir: Path):
        self.plane = plane
        self.state_dir = state_dir
        self.runner: PodRunner | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None

    def start(self, timeout: float = 15) -> "RunnerThread":
        started = threading.Event()

        async def main() -> None:
            self._stop = asyncio.Event()
            async with KubeClient.from_kubeconfig(self.plane.kubeconfig) as client:
                self.runner = PodRunner(client, self.state_dir, logs_dir=self.plane.server.logs_dir)
                task = asyncio.create_task(self.runner.run(self._stop))
                await self.runner.ready.wait()
                started.set()
                await task

        def thread() -> None:
            self._loop = asyncio.new_event_loop()
            try:
                self._loop.run_until_complete(main())
            finally:
                self._loop.close()
                started.set()

        self._thread = threading.Thread(target=thread, name="pod-runner", daemon=True)
        self._thread.start()
        if not started.wait(timeout) or self.runner is None or not self.runner.ready.is_set():
            raise TimeoutError("the pod runner did not start")
        return self

    def stop(self, timeout: float = 30) -> None:
        if self._thread is None or not self._thread.is_alive():
            return
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the pod runner did not stop"

    def restart(self) -> "RunnerThread":
        self.stop()
        return self.start()

    @property
    def owner(self) -> str:
        return str(self.state_dir.resolve())


@pytest.fixture
def pod_runner(control_plane: ControlPlane, tmp_path: Path) -> Iterator[RunnerThread]:
    runner = RunnerThread(control_plane, tmp_path / "node").start()
    try:
        yield runner
    finally:
        runner.stop()
        left = processes.marked(processes.OWNER_VARIABLE, runner.owner)
        processes.kill_marked(processes.OWNER_VARIABLE, runner.owner)
        assert not left, f"processes outlived the pod runner: {left}"


# --- pods ------------------------------------------------------------------------------------

def pod_manifest(name: str, command: list[str], *, args: list[str] | None = None, namespace: str = "default",
                 restart_policy: str = "Never", **container: Any) -> dict:
    """A one-container pod running `command` (extra keys go to the container)."""
    main = {"name": container.pop("container_name", "main"), "image": "busybox", "command": command, **container}
    if args:
        main["args"] = args
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"restartPolicy": restart_policy, "containers": [main]},
    }


def create(plane: ControlPlane, obj: dict) -> dict:
    kind = obj["kind"]
    ns = obj["metadata"].get("namespace", "default")
    plural = {"Pod": "pods", "Service": "services", "ConfigMap": "configmaps", "Secret": "secrets",
              "PersistentVolumeClaim": "persistentvolumeclaims"}[kind]
    response = plane.http("POST", f"/api/v1/namespaces/{ns}/{plural}", json=obj)
    assert response.status_code == 201, response.text
    return response.json()


def get_pod(plane: ControlPlane, name: str, namespace: str = "default") -> dict | None:
    response = plane.http("GET", f"/api/v1/namespaces/{namespace}/pods/{name}")
    return response.json() if response.status_code == 200 else None




def wait_for_pod(plane: ControlPlane, name: str, predicate: Callable[[dict], bool], what: str,
                 namespace: str = "default", timeout: float = 20) -> dict:
    def check():
        try:
            pod = get_pod(plane, name, namespace)
        except requests.ConnectionError:  # this poll's connection was dropped (SSLError included): poll again
            return None
        return pod if pod is not None and predicate(pod) else None

    try:
        return wait_for(check, timeout=timeout, what=f"pod {name}: {what}")
    except AssertionError:
        pod = get_pod(plane, name, namespace)
        raise AssertionError(f"pod {name}: {what} did not happen; status: {(pod or {}).get('status')}") from None


def wait_for_phase(plane: ControlPlane, name: str, *phases: str, namespace: str = "default", timeout: float = 20) -> dict:
    return wait_for_pod(plane, name, lambda p: (p.get("status") or {}).get("phase") in phases,
                        f"phase {' or '.join(phases)}", namespace, timeout)


def wait_gone(plane: ControlPlane, name: str, namespace: str = "default", timeout: float = 20) -> None:
    wait_for(lambda: get_pod(plane, name, namespace) is None, timeout=timeout, what=f"pod {name} to be gone")


def container_status(pod: dict, name: str = "main", init: bool = False) -> dict:
    key = "initContainerStatuses" if init else "containerStatuses"
    return next(cs for cs in pod["status"][key] if cs["name"] == name)


def pod_log(plane: ControlPlane, name: str, container: str | None = None, namespace: str = "default") -> str:
    params = {"container": container} if container else {}
    response = plane.http("GET", f"/api/v1/namespaces/{namespace}/pods/{name}/log", params=params)
    assert response.status_code == 200, response.text
    return response.text


def container_processes(pod: dict, container: str = "main") -> list[int]:
    """Pids of processes that still belong to a container (by the runner's marker)."""
    return processes.marked(processes.CONTAINER_VARIABLE, f"{pod['metadata']['uid']}/{container}")


def alive(pid: int) -> bool:
    return not processes.ended(pid)
