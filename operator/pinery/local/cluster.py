"""Local mode in one process tree: `pinery local up` and the end-to-end test harness.

On loopback: the local control plane (Kubernetes API emulator), the Pinecone emulator, the pod
runner, and the operator itself as a child process running `pinery run`, unchanged. State lives
in one directory; a second `up` on it finds its objects, ports, API key and token again.
"""

from __future__ import annotations

import asyncio
import base64
import fcntl
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Coroutine, TypeVar

from pinery.api import RESOURCES
from pinery.generate.crds import build_crd
from pinery.local.kubeclient import ApiError, KubeClient
from pinery.local.podrunner import processes

if TYPE_CHECKING:  # imported lazily, where local mode starts them
    from pinery.local.apiserver.server import LocalApiServer
    from pinery.local.pinecone import PineconeEmulator

T = TypeVar("T")

OPERATOR_NAMESPACE = "pinery-system"
SECRET_NAME = "pinecone-api-key"
SECRET_KEY = "api-key"
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def free_port(preferred: int = 0) -> int:
    """`preferred` when it is free (so kubeconfigs stay valid across restarts), else any."""
    for port in ([preferred] if preferred else []) + [0]:
        with socket.socket() as sock:
            # As the servers bind: connections of the last run still in TIME_WAIT (a client was
            # connected at `down`) must not move the port, and with it every index host.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return sock.getsockname()[1]
    raise OSError("no free port")


def operator_marker(state_dir: Path) -> str:
    """The marker local mode's operator process carries, so that a later start (or a check that
    nothing was left behind) finds one a crash left running."""
    return f"{Path(state_dir).resolve()}#operator"


def leftover_processes(state_dir: Path) -> list[int]:
    """Pod and operator processes of the local mode on `state_dir` that are still alive (not zombies)."""
    state_dir = Path(state_dir).resolve()
    pids = processes.marked(processes.OWNER_VARIABLE, str(state_dir / "pods"))
    pids += processes.marked(processes.OWNER_VARIABLE, operator_marker(state_dir))
    return [pid for pid in pids if not processes.ended(pid)]


@dataclass
class LocalState:
    """What must survive a restart of local mode (kept in <state>/local.json)."""

    apiserver_port: int = 0
    pinecone_port: int = 0
    token: str = field(default_factory=lambda: "local-" + secrets.token_hex(16))
    api_key: str = field(default_factory=lambda: "pclocal-" + secrets.token_hex(16))
    pid: int = 0

    @classmethod
    def load(cls, state_dir: Path) -> "LocalState":
        try:
            return cls(**json.loads((state_dir / "local.json").read_text()))
        except (OSError, ValueError, TypeError):
            return cls()

    def save(self, state_dir: Path) -> None:
        state_dir.mkdir(parents=True, exist_ok=True)
        tmp = state_dir / "local.json.tmp"
        tmp.write_text(json.dumps(asdict(self), indent=2))
        tmp.chmod(0o600)
        tmp.replace(state_dir / "local.json")


class AlreadyRunning(RuntimeError):
    """Another local mode holds the state directory."""

    def __init__(self, state_dir: Path, pid: int):
        super().__init__(f"local mode is already running on {state_dir} (pid {pid}); "
                         f"`pinery local down --state-dir {state_dir}` stops it")
        self.pid = pid


class StateLock:
    """An exclusive lock on a state directory, held while local mode runs on it. The kernel
    drops it when its holder dies, so a crash never leaves a stale lock behind."""

    def __init__(self, state_dir: Path):
        self.path = Path(state_dir) / "lock"
        self._fd: int | None = None

    def acquire(self) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd
        return True

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def holder(self) -> int | None:
        """The pid of the process that holds the lock (0 while it is still writing it), or
        None when nobody does."""
        if self.acquire():
            self.release()
            return None
        try:
            return int(self.path.read_text().strip() or 0)
        except (OSError, ValueError):
            return 0


class LocalCluster:
    """Start and stop every piece of local mode. Use `start`/`stop` in a running loop, or
    `start_in_thread`/`stop_thread` from synchronous code (tests)."""

    def __init__(
        self,
        state_dir: Path,
        *,
        with_pinecone: bool = True,
        with_pod_runner: bool = True,
        with_operator: bool = True,
        pinecone_ready_delay: float = 2.0,
        operator_env: dict[str, str] | None = None,
        operator_form: str = "process",
        say: Callable[[str], None] = lambda line: None,
        nodes: int | None = None,
    ):
        self.state_dir = Path(state_dir).resolve()
        self.with_pinecone = with_pinecone
        self.with_pod_runner = with_pod_runner
        self.with_operator = with_operator
        self.pinecone_ready_delay = pinecone_ready_delay
        self.operator_env = dict(operator_env or {})
        # "process": `pinery run` as a child; "chart", "manifests", "kustomize": the operator
        # installed as on a cluster, its Deployment run by the pod runner (local/install.py).
        self.operator_form = operator_form
        # Nodes the pod runner stands in for (pinery-local, pinery-local-2, ...): PINERY_LOCAL_NODES, else 1.
        self.nodes = nodes if nodes is not None else int(os.environ.get("PINERY_LOCAL_NODES") or 1)
        self._installed: list[dict] = []  # what the plain manifests applied, for stop
        self.say = say
        self.state = LocalState.load(self.state_dir)
        self.apiserver: LocalApiServer | None = None
        self.pinecone: PineconeEmulator | None = None
        self.client: KubeClient | None = None
        self.operator: subprocess.Popen | None = None
        self._stop_runner = asyncio.Event()
        self._runner_task: asyncio.Task | None = None
        self._supervisor: asyncio.Task | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.lock = StateLock(self.state_dir)
        self.operator_marker = operator_marker(self.state_dir)

    @property
    def kubeconfig(self) -> Path:
        return self.state_dir / "kubeconfig"

    @property
    def pinecone_url(self) -> str:
        return self.pinecone.url if self.pinecone else ""

    # --- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Start every piece; on failure, stop what was started and raise."""
        if not self.lock.acquire():
            raise AlreadyRunning(self.state_dir, self.lock.holder() or 0)
        try:
            await self._start()
        except BaseException:
            await self.stop()
            raise

    async def _start(self) -> None:
        from pinery.local.apiserver.server import LocalApiServer

        await asyncio.to_thread(processes.kill_marked, processes.OWNER_VARIABLE, self.operator_marker)
        self.state.apiserver_port = free_port(self.state.apiserver_port)
        self.apiserver = LocalApiServer(
            self.state_dir / "apiserver", port=self.state.apiserver_port, token=self.state.token,
            logs_dir=self.state_dir / "pods" / "logs",  # where the pod runner writes container output
        )
        await self.apiserver.start()
        self.apiserver.write_kubeconfig(self.kubeconfig)
        self.client = KubeClient.from_kubeconfig(self.kubeconfig)
        self.say(f"control plane  {self.apiserver.url}")
        await self.install_crds()
        await self._ensure_namespace(OPERATOR_NAMESPACE)

        if self.with_pinecone:
            from pinery.local.pinecone import PineconeEmulator

            self.state.pinecone_port = free_port(self.state.pinecone_port)
            self.pinecone = PineconeEmulator(
                self.state_dir / "pinecone", port=self.state.pinecone_port, api_key=self.state.api_key,
                ready_delay=self.pinecone_ready_delay,
            )
            await self.pinecone.start()
            # The operator's default Secret, and the same in `default` for manifests that name it
            # (apiKeySecretRef refers to the VectorIndex's own namespace).
            for namespace in (OPERATOR_NAMESPACE, "default"):
                await self._apply_secret(namespace, SECRET_NAME, {SECRET_KEY: self.state.api_key})
            self.say(f"pinecone       {self.pinecone.url}  (API key in Secret {SECRET_NAME} of {OPERATOR_NAMESPACE} and default)")

        if self.with_pod_runner:
            from pinery.local.podrunner.runner import PodRunner

            runner = PodRunner(self.client, self.state_dir / "pods", logs_dir=self.apiserver.logs_dir, nodes=self.nodes)
            self._stop_runner = asyncio.Event()
            self._runner_task = asyncio.create_task(runner.run(self._stop_runner))
            ready = asyncio.create_task(runner.ready.wait())
            await asyncio.wait([ready, self._runner_task], return_when=asyncio.FIRST_COMPLETED)
            if not ready.done():
                ready.cancel()
                self._runner_task.result()  # raises what stopped the runner
            self.say(f"pod runner     node{'s' if len(runner.node_names) > 1 else ''} {', '.join(runner.node_names)}")

        self.state.pid = os.getpid()
        self.state.save(self.state_dir)
        if self.with_operator and self.operator_form == "chart":
            await self._install_chart()
        elif self.with_operator and self.operator_form in ("manifests", "kustomize"):
            await self._install_manifests()
        elif self.with_operator:
            operator = self.start_operator()
            self._supervisor = asyncio.create_task(self._supervise_operator())
            self.say(f"operator       pid {operator.pid}, log {self.state_dir / 'operator.log'}")

    async def stop(self) -> None:
        """Stop everything: the operator first (so that it does not react to pods stopping),
        then the pods, the emulator and the control plane."""
        if self._supervisor is not None:
            self._supervisor.cancel()
            await asyncio.gather(self._supervisor, return_exceptions=True)
            self._supervisor = None
        await asyncio.to_thread(self.stop_operator)
        if self.operator_form == "chart" and self.with_operator and self.client is not None:
            await self._uninstall_chart()
        if self._installed and self.client is not None:
            await self._uninstall_manifests()
        if self._runner_task is not None:
            self._stop_runner.set()
            await asyncio.gather(self._runner_task, return_exceptions=True)
            self._runner_task = None
        if self.pinecone is not None:
            await self.pinecone.stop()
            self.pinecone = None
        if self.client is not None:
            await self.client.close()
            self.client = None
        if self.apiserver is not None:
            await self.apiserver.stop()
            self.apiserver = None
        if self.lock.held:
            self.state.pid = 0
            self.state.save(self.state_dir)
            self.lock.release()

    # --- the operator, as its own process ---------------------------------------------------

    def operator_environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PINERY_") and k != "KUBECONFIG"}
        env.update(
            {
                "PINERY_OPERATOR_NAMESPACE": OPERATOR_NAMESPACE,
                "PINERY_PINECONE_HOST": self.pinecone_url,
                "PINERY_CLUSTER_NAME": "local",
                "PINERY_METRICS_PORT": "0",
                "PINERY_HEALTH_PORT": "0",
                "PINERY_RESYNC_SECONDS": "60",
                "PYTHONUNBUFFERED": "1",
                processes.OWNER_VARIABLE: self.operator_marker,
            }
        )
        env.update(self.operator_env)
        return env

    def start_operator(self) -> subprocess.Popen:
        log = open(self.state_dir / "operator.log", "ab")
        self.operator = subprocess.Popen(
            [sys.executable, "-m", "pinery", "run", "--kubeconfig", str(self.kubeconfig), "--standalone"],
            env=self.operator_environment(),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        return self.operator

    def stop_operator(self, sig: int = signal.SIGTERM, timeout: float = 15) -> None:
        self._end(self.operator, sig, timeout)

    def _end(self, operator: subprocess.Popen | None, sig: int, timeout: float = 15) -> None:
        if operator is not None and operator.poll() is None:
            operator.send_signal(sig)
            try:
                operator.wait(timeout)
            except subprocess.TimeoutExpired:
                operator.kill()
                operator.wait()
        processes.kill_marked(processes.OWNER_VARIABLE, self.operator_marker)

    async def restart_operator(self, sig: int = signal.SIGKILL, down: float = 0.0) -> int:
        """End the operator with `sig` (SIGKILL: as a node failure would), leave it down for
        `down` seconds, and start a new one; its pid. The supervisor's backoff is not involved:
        this is for tests that kill the operator many times (run it on local mode's loop)."""
        old, self.operator = self.operator, None  # the supervisor leaves it alone meanwhile
        await asyncio.to_thread(self._end, old, sig)
        if down > 0:
            await asyncio.sleep(down)
        return self.start_operator().pid

    async def _supervise_operator(self) -> None:
        """Restart the operator if it dies (as a Deployment would)."""
        delay = 1.0
        while True:
            await asyncio.sleep(1)
            if self.operator is not None and self.operator.poll() is not None:
                self.say(f"operator exited with {self.operator.returncode}; restarting in {delay:.0f}s")
                await asyncio.sleep(delay)
                self.start_operator()
                delay = min(delay * 2, 30)

    # --- the operator, installed by its chart -----------------------------------------------

    async def _install_chart(self) -> None:
        from pinery.local import install

        values = install.chart_values(self.pinecone_url, free_port())
        release = await asyncio.to_thread(install.helm_install, self.kubeconfig, OPERATOR_NAMESPACE, values)
        self.say(f"operator       helm release {install.RELEASE} revision {release.get('revision')} in {OPERATOR_NAMESPACE}")
        await install.wait_available(self._kube(), OPERATOR_NAMESPACE)
        self.say(f"               deployment available; logs: kubectl logs deploy/{install.RELEASE} -n {OPERATOR_NAMESPACE}")

    async def _uninstall_chart(self) -> None:
        """`helm uninstall`, so that a stopped local mode leaves no release behind; the pod
        runner then stops the operator's pod with the others."""
        from pinery.local import install

        try:
            await asyncio.to_thread(install.helm_uninstall, self.kubeconfig, OPERATOR_NAMESPACE)
        except Exception as exc:  # stopping must go on
            self.say(f"helm uninstall failed: {exc}")

    async def _install_manifests(self) -> None:
        from pinery.local import install

        command = {"manifests": "kubectl apply -f deploy/pinery.yaml", "kustomize": "kubectl apply --server-side -k deploy/kustomize"}
        self._installed = await asyncio.to_thread(
            install.apply_manifests, self.kubeconfig, self.operator_form, self.state_dir / "install",
            self.pinecone_url, free_port())
        self.say(f"operator       {command[self.operator_form]} (local settings patched in: {self.state_dir / 'install'})")
        await install.wait_available(self._kube(), OPERATOR_NAMESPACE)
        self.say(f"               deployment available; logs: kubectl logs deploy/{install.RELEASE} -n {OPERATOR_NAMESPACE}")

    async def _uninstall_manifests(self) -> None:
        """`kubectl delete` of what was applied but the CRDs and the namespace, so that a
        stopped local mode leaves no operator Deployment behind."""
        from pinery.local import install

        try:
            await asyncio.to_thread(install.delete_manifests, self.kubeconfig, self._installed)
        except Exception as exc:  # stopping must go on
            self.say(f"kubectl delete failed: {exc}")
        self._installed = []

    # --- API objects -------------------------------------------------------------------------

    def _kube(self) -> KubeClient:
        if self.client is None:
            raise RuntimeError("local mode is not started")
        return self.client

    async def install_crds(self) -> None:
        for res in RESOURCES:
            crd = build_crd(res)
            existing = await self._kube().get_or_none(f"{CRD_PATH}/{res.crd_name}")
            if existing is None:
                await self._kube().create(CRD_PATH, crd)
            else:
                crd["metadata"]["resourceVersion"] = existing["metadata"]["resourceVersion"]
                await self._kube().request("PUT", f"{CRD_PATH}/{res.crd_name}", body=crd)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            group = await self._kube().get_or_none(f"/apis/{RESOURCES[0].group}/{RESOURCES[0].version}")
            names = {r["name"] for r in (group or {}).get("resources", [])}
            if all(res.plural in names for res in RESOURCES):
                return
            await asyncio.sleep(0.1)
        raise RuntimeError("the pinery CRDs did not reach discovery")

    async def _ensure_namespace(self, name: str) -> None:
        try:
            await self._kube().create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        except ApiError as exc:
            if exc.status != 409:
                raise

    async def _apply_secret(self, namespace: str, name: str, values: dict[str, str]) -> None:
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": name, "namespace": namespace, "labels": {"app.kubernetes.io/managed-by": "pinery-local"}},
            "type": "Opaque",
            "data": {k: base64.b64encode(v.encode()).decode() for k, v in values.items()},
        }
        path = f"/api/v1/namespaces/{namespace}/secrets"
        try:
            await self._kube().create(path, secret)
        except ApiError as exc:
            if exc.status != 409:
                raise
            await self._kube().merge_patch(f"{path}/{name}", {"data": secret["data"]})

    # --- synchronous use ---------------------------------------------------------------------

    def start_in_thread(self, timeout: float = 60) -> "LocalCluster":
        ready = threading.Event()
        failure: list[BaseException] = []

        def main() -> None:
            self._loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self._loop)
            try:
                self._loop.run_until_complete(self.start())
            except BaseException as exc:  # report start failures to the caller
                failure.append(exc)
                self._loop.close()
                ready.set()
                return
            ready.set()
            self._loop.run_forever()
            self._loop.run_until_complete(self.stop())
            self._loop.close()

        self._thread = threading.Thread(target=main, name="pinery-local", daemon=True)
        self._thread.start()
        if not ready.wait(timeout):
            raise TimeoutError("local mode did not start in time")
        if failure:
            raise failure[0]
        return self

    def stop_thread(self, timeout: float = 60) -> None:
        if self._loop is not None and self._thread is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout)
            if self._thread.is_alive():
                raise TimeoutError("local mode did not stop in time")

    def run_coroutine(self, coro: Coroutine[Any, Any, T], timeout: float = 60) -> T:
        """Run a coroutine on local mode's loop from another thread."""
        if self._loop is None:
            raise RuntimeError("local mode is not running in a thread (start_in_thread)")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)
