"""The pod runner's control loop: watch pods and Services, run the pods bound to this node.

A pod is bound to the local node on sight (as a scheduler would), given its loopback address,
and run: init containers in order, then its containers, each a local process. Status goes back
to the API at every transition. Deleting a pod stops its processes (SIGTERM, grace period,
SIGKILL of the whole process group); with graceful deletion the runner then removes the pod
object, as a kubelet does. A runner that restarts kills the processes of its predecessor and
reports the pods that were running as failed (their node lost them).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from pinery.local.kubeclient import ApiError, KubeClient
from pinery.local.podrunner import processes
from pinery.local.podrunner.dns import ClusterDNS, pod_ip
from pinery.local.podrunner.environment import EnvError, container_env, expand
from pinery.local.podrunner.status import ContainerRun, PodRun, exit_reason, pod_status
from pinery.local.podrunner.volumes import mount_map, prepare_volumes, remove_pod_volumes, rewrite_paths

log = logging.getLogger("pinery.podrunner")
NODE_NAME = "pinery-local"
RESOLVER_DIR = Path(__file__).parent / "resolver"
CONFIG_RETRY_SECONDS = 2.0


def now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def pod_path(ns: str, name: str, sub: str = "") -> str:
    return f"/api/v1/namespaces/{ns}/pods/{name}{sub}"


@dataclass
class Worker:
    pod: dict
    run: PodRun = field(default_factory=PodRun)
    processes: dict[str, asyncio.subprocess.Process] = field(default_factory=dict)
    task: asyncio.Task | None = None
    stopping: bool = False
    # ConfigMaps and Secrets the pod refers to, as read when it started.
    lookup: object = None
    status_lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def namespace(self) -> str:
        return self.pod["metadata"].get("namespace", "default")

    @property
    def name(self) -> str:
        return self.pod["metadata"]["name"]

    @property
    def restart_policy(self) -> str:
        return (self.pod.get("spec") or {}).get("restartPolicy", "Always")


class PodRunner:
    def __init__(self, client: KubeClient, state_dir: Path, *, node_name: str = NODE_NAME, domain: str = "cluster.local"):
        self.client = client
        self.state_dir = Path(state_dir)
        self.node_name = node_name
        self.dns = ClusterDNS(domain=domain)
        self.workers: dict[str, Worker] = {}
        self._hosts: dict[str, str] = {}
        self._pids_file = self.state_dir / "runner" / "pids.json"
        self._pids: dict[str, list[int]] = {}
        # The local Python environment stands in for every image.
        self.bin_dir = str(Path(sys.executable).parent)

    # --- main loop -------------------------------------------------------------------------

    async def run(self, stop: asyncio.Event) -> None:
        self._kill_orphans()
        await self._register_node()
        tasks = [
            asyncio.create_task(self._watch("/api/v1/services", self._on_service, stop)),
            asyncio.create_task(self._watch("/api/v1/pods", self._on_pod, stop)),
        ]
        await stop.wait()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.gather(*(self._terminate(w, grace=5, finalize=False) for w in list(self.workers.values())))

    async def _watch(self, path: str, handler, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                async for kind, obj in self.client.list_and_watch(path, stop):
                    await handler(kind, obj)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the API server restarting, a dropped connection
                log.warning("watch of %s failed (%s); retrying", path, exc)
                await asyncio.sleep(1)

    async def _register_node(self) -> None:
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": self.node_name, "labels": {"kubernetes.io/hostname": self.node_name, "pinery.dev/local": "true"}},
            "status": {
                "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}, {"type": "Hostname", "address": self.node_name}],
                "capacity": {"cpu": str(os.cpu_count() or 1), "pods": "1000"},
                "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "pinery local pod runner"}],
            },
        }
        try:
            await self.client.create("/api/v1/nodes", node)
        except ApiError as exc:
            if exc.status not in (404, 405, 409):
                raise

    # --- services and DNS ------------------------------------------------------------------

    async def _on_service(self, kind: str, service: dict) -> None:
        if kind == "LISTED":
            return
        if kind == "DELETED":
            self.dns.remove_service(service)
        else:
            self.dns.add_service(service)
        self._write_hosts()

    def _write_hosts(self) -> None:
        hosts = self.dns.hosts()
        if hosts == self._hosts:
            return
        self._hosts = hosts
        path = self.state_dir / "hosts"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text("".join(f"{name} {ip}\n" for name, ip in sorted(hosts.items())))
        tmp.replace(path)

    # --- pods --------------------------------------------------------------------------------

    async def _on_pod(self, kind: str, pod: dict) -> None:
        if kind == "LISTED":
            live = set(pod["uids"])
            for uid, worker in list(self.workers.items()):
                if uid not in live:
                    asyncio.create_task(self._forget(worker))
            return
        meta, spec = pod["metadata"], pod.get("spec") or {}
        uid = meta.get("uid", "")
        if kind == "DELETED":
            self.dns.remove_pod(pod)
            self._write_hosts()
            worker = self.workers.get(uid)
            if worker is not None:
                asyncio.create_task(self._forget(worker, grace=meta.get("deletionGracePeriodSeconds")))
            return
        self.dns.add_pod(pod)
        self._write_hosts()
        worker = self.workers.get(uid)
        if worker is not None:
            worker.pod = pod
        if meta.get("deletionTimestamp"):
            if spec.get("nodeName") == self.node_name:
                grace = meta.get("deletionGracePeriodSeconds", spec.get("terminationGracePeriodSeconds", 30))
                if worker is not None and not worker.stopping:
                    asyncio.create_task(self._terminate(worker, grace=grace, finalize=True))
                elif worker is None:
                    await self._finalize(pod)
            return
        if not spec.get("nodeName"):
            await self._bind(pod)
            return
        if spec["nodeName"] != self.node_name or worker is not None:
            return
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            return
        if _had_started(pod):
            await self._report_lost(pod)
            return
        worker = Worker(pod)
        self.workers[uid] = worker
        worker.task = asyncio.create_task(self._lifecycle(worker))

    async def _bind(self, pod: dict) -> None:
        meta = pod["metadata"]
        ns, name = meta.get("namespace", "default"), meta["name"]
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": ns},
            "target": {"apiVersion": "v1", "kind": "Node", "name": self.node_name},
        }
        try:
            await self.client.create(pod_path(ns, name, "/binding"), binding)
        except ApiError as exc:
            if exc.status == 409:  # already bound
                return
            if exc.status not in (404, 405):
                raise
            # No binding subresource (or the pod is gone): set the field directly.
            try:
                await self.client.merge_patch(pod_path(ns, name), {"spec": {"nodeName": self.node_name}})
            except ApiError as patch_exc:
                if patch_exc.status != 404:
                    raise

    async def _report_lost(self, pod: dict) -> None:
        """A pod that ran under a previous runner: its processes are gone with it."""
        run = PodRun(pod_ip=pod_ip(pod["metadata"].get("namespace", "default"), pod["metadata"]["name"]))
        run.failure = ("NodeLost", "the local pod runner restarted and the pod's processes were lost")
        status = pod_status(run, "Never", now())
        status["containerStatuses"] = (pod.get("status") or {}).get("containerStatuses", [])
        await self._patch_status(pod, status)

    async def _finalize(self, pod: dict) -> None:
        meta = pod["metadata"]
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0, "preconditions": {"uid": meta.get("uid")}}
        try:
            await self.client.delete(pod_path(meta.get("namespace", "default"), meta["name"]), body)
        except ApiError as exc:
            if exc.status != 409:  # 409: a newer pod of the same name
                log.warning("could not remove pod %s: %s", meta["name"], exc)

    async def _forget(self, worker: Worker, grace: float | None = None) -> None:
        await self._terminate(worker, grace=grace if grace is not None else 30, finalize=False)
        self.workers.pop(worker.pod["metadata"].get("uid", ""), None)
        remove_pod_volumes(worker.pod, self._pod_dir(worker.pod))
        log_dir = self.state_dir / "logs" / worker.namespace / worker.name
        for path in log_dir.glob("*.log"):
            path.unlink(missing_ok=True)

    async def _terminate(self, worker: Worker, *, grace: float, finalize: bool) -> None:
        if not worker.stopping:
            worker.stopping = True
            await asyncio.gather(*(processes.stop(p, grace) for p in worker.processes.values()))
            if worker.task is not None:
                worker.task.cancel()
                await asyncio.gather(worker.task, return_exceptions=True)
            self._pids.pop(worker.pod["metadata"].get("uid", ""), None)
            self._save_pids()
        if finalize:
            await self._finalize(worker.pod)

    # --- one pod -----------------------------------------------------------------------------

    def _pod_dir(self, pod: dict) -> Path:
        meta = pod["metadata"]
        return self.state_dir / "pods" / meta.get("namespace", "default") / f"{meta['name']}-{meta.get('uid', '')[:8]}"

    async def _lifecycle(self, worker: Worker) -> None:
        pod = worker.pod
        spec = pod.get("spec") or {}
        run = worker.run
        run.pod_ip = pod_ip(worker.namespace, worker.name)
        run.start_time = now()
        run.init = [ContainerRun(c["name"], c.get("image", "")) for c in spec.get("initContainers") or []]
        run.main = [ContainerRun(c["name"], c.get("image", "")) for c in spec.get("containers") or []]
        await self._write_status(worker)
        volume_dirs = await self._prepare(worker)
        if volume_dirs is None:
            return
        for container, state in zip(spec.get("initContainers") or [], run.init):
            while not worker.stopping:
                code = await self._run_container(worker, container, state, volume_dirs)
                if code == 0:
                    break
                if worker.restart_policy == "Never" or code is None:
                    await self._write_status(worker)
                    return
                await self._backoff(state)
        await asyncio.gather(*(
            self._keep_running(worker, container, state, volume_dirs)
            for container, state in zip(spec.get("containers") or [], run.main)
        ))
        await self._write_status(worker)

    async def _keep_running(self, worker: Worker, container: dict, state: ContainerRun, volume_dirs: dict) -> None:
        while not worker.stopping:
            code = await self._run_container(worker, container, state, volume_dirs)
            policy = worker.restart_policy
            if code is None or policy == "Never" or (policy == "OnFailure" and code == 0):
                return
            await self._backoff(state)

    async def _backoff(self, state: ContainerRun) -> None:
        state.restarts += 1
        await asyncio.sleep(min(30.0, 0.5 * 2 ** min(state.restarts, 6)))

    async def _prepare(self, worker: Worker) -> dict | None:
        """Volumes and referenced objects; waits (CreateContainerConfigError) while any is missing."""
        while not worker.stopping:
            lookup = await self._lookup_for(worker.pod)
            try:
                dirs = prepare_volumes(worker.pod, self._pod_dir(worker.pod), self.state_dir, lookup)
                for container in [*(worker.pod["spec"].get("initContainers") or []), *worker.pod["spec"]["containers"]]:
                    container_env(worker.pod, container, lookup, pod_ip=worker.run.pod_ip, node=self.node_name)
                worker.lookup = lookup
                return dirs
            except EnvError as exc:
                first = (worker.run.init or worker.run.main)[0]
                first.reason, first.message = "CreateContainerConfigError", str(exc)
                await self._write_status(worker)
                await asyncio.sleep(CONFIG_RETRY_SECONDS)
        return None

    async def _lookup_for(self, pod: dict):
        """ConfigMaps and Secrets the pod refers to, fetched now (kubelet reads them at start)."""
        ns = pod["metadata"].get("namespace", "default")
        wanted: set[tuple[str, str]] = set()
        spec = pod.get("spec") or {}
        for volume in spec.get("volumes") or []:
            if "configMap" in volume:
                wanted.add(("ConfigMap", volume["configMap"].get("name", "")))
            if "secret" in volume:
                wanted.add(("Secret", volume["secret"].get("secretName", "")))
        for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
            for source in container.get("envFrom") or []:
                if "configMapRef" in source:
                    wanted.add(("ConfigMap", source["configMapRef"].get("name", "")))
                if "secretRef" in source:
                    wanted.add(("Secret", source["secretRef"].get("name", "")))
            for var in container.get("env") or []:
                source = var.get("valueFrom") or {}
                if "configMapKeyRef" in source:
                    wanted.add(("ConfigMap", source["configMapKeyRef"].get("name", "")))
                if "secretKeyRef" in source:
                    wanted.add(("Secret", source["secretKeyRef"].get("name", "")))
        found = {}
        for kind, name in wanted:
            plural = "configmaps" if kind == "ConfigMap" else "secrets"
            found[(kind, name)] = await self.client.get_or_none(f"/api/v1/namespaces/{ns}/{plural}/{name}")
        return lambda kind, name: found.get((kind, name))

    def _command(self, worker: Worker, container: dict, env: dict[str, str], mounts: dict[str, str]) -> list[str] | None:
        command = container.get("command")
        if not command:
            return None
        argv = [expand(part, env) for part in [*command, *(container.get("args") or [])]]
        ns = worker.namespace
        return [rewrite_paths(self.dns.rewrite(part, ns), mounts) for part in argv]

    def _process_env(self, worker: Worker, container: dict, mounts: dict[str, str]) -> dict[str, str]:
        spec = worker.pod.get("spec") or {}
        pod_dir = self._pod_dir(worker.pod)
        user = container_env(worker.pod, container, worker.lookup, pod_ip=worker.run.pod_ip, node=self.node_name)
        user = self.dns.rewrite_env(user, worker.namespace)
        user = {k: rewrite_paths(v, mounts) for k, v in user.items()}
        ns, domain = worker.namespace, self.dns.domain
        env = {
            "PATH": f"{self.bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(pod_dir / "home"),
            "TMPDIR": str(pod_dir / "tmp"),
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            "HOSTNAME": spec.get("hostname") or worker.name,
            "PINERY_LOCAL_HOSTS": str(self.state_dir / "hosts"),
            "PINERY_LOCAL_SEARCH": f"{ns}.svc.{domain} svc.{domain} {domain}",
        }
        env.update(user)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(RESOLVER_DIR), user.get("PYTHONPATH", "")) if p)
        for key in ("HOME", "TMPDIR"):
            Path(env[key]).mkdir(parents=True, exist_ok=True)
        return env

    async def _run_container(self, worker: Worker, container: dict, state: ContainerRun, volume_dirs: dict) -> int | None:
        """Run one container to its end; its exit code, or None when it could not start."""
        mounts = mount_map(container, volume_dirs)
        env = self._process_env(worker, container, mounts)
        argv = self._command(worker, container, env, mounts)
        log_path = self.state_dir / "logs" / worker.namespace / worker.name / f"{state.name}.log"
        if log_path.exists():
            log_path.replace(log_path.with_name(f"{state.name}.previous.log"))
        if argv is None or processes.resolve_executable(argv[0], env["PATH"]) is None:
            what = "has no command (local mode cannot read an image's entrypoint)" if argv is None else f"runs {argv[0]!r}, which is not installed locally"
            state.state, state.reason, state.message = "waiting", "CreateContainerError", f"container {state.name} {what}"
            worker.run.failure = ("CreateContainerError", state.message) if worker.restart_policy == "Never" else None
            await self._write_status(worker)
            return None
        cwd = Path(rewrite_paths(container.get("workingDir") or env["HOME"], mounts))
        cwd.mkdir(parents=True, exist_ok=True)
        if state.state == "terminated":
            state.last = state.terminated()
        process = await processes.start(argv, env, cwd, log_path)
        worker.processes[state.name] = process
        self._pids.setdefault(worker.pod["metadata"].get("uid", ""), []).append(process.pid)
        self._save_pids()
        state.pid, state.state, state.reason, state.message = process.pid, "running", "", ""
        state.started_at, state.finished_at, state.exit_code = now(), None, None
        await self._write_status(worker)
        code = processes.exit_code(await process.wait())
        processes.signal_group(process.pid, signal.SIGKILL)  # leave no stray child of the container behind
        state.state, state.exit_code, state.finished_at, state.reason = "terminated", code, now(), exit_reason(code)
        if not worker.stopping:
            await self._write_status(worker)
        return code

    async def _write_status(self, worker: Worker) -> None:
        if worker.stopping:
            return
        async with worker.status_lock:
            await self._patch_status(worker.pod, pod_status(worker.run, worker.restart_policy, now()))

    async def _patch_status(self, pod: dict, status: dict) -> None:
        meta = pod["metadata"]
        try:
            await self.client.merge_patch(pod_path(meta.get("namespace", "default"), meta["name"], "/status"), {"status": status})
        except ApiError as exc:
            if exc.status != 404:
                log.warning("could not write status of pod %s: %s", meta["name"], exc)

    # --- leftovers of a previous runner -----------------------------------------------------

    def _save_pids(self) -> None:
        self._pids_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = self._pids_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(self._pids))
        tmp.replace(self._pids_file)

    def _kill_orphans(self) -> None:
        try:
            previous = json.loads(self._pids_file.read_text())
        except (OSError, ValueError):
            previous = {}
        for pids in previous.values():
            for pid in pids:
                processes.signal_group(pid, signal.SIGKILL)
        self._pids = {}
        self._save_pids()


def _had_started(pod: dict) -> bool:
    status = pod.get("status") or {}
    for cs in [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]:
        state = cs.get("state") or {}
        if "running" in state or "terminated" in state:
            return True
    return False

