"""The pod runner's control loop: watch pods and Services, run the pods bound to its nodes.

The runner stands in for one node, `pinery-local`, or for several (`nodes`: pinery-local,
pinery-local-2, ...), all on this machine. A pod is bound on sight to a node its node selector
and node affinity allow (as a scheduler would: scheduling.py), given its loopback address, and
run: init containers in order, then its containers, each a local process. Status goes back
to the API at every transition. Deleting a pod stops its processes (SIGTERM, grace period,
SIGKILL of everything the container started); with graceful deletion the runner then removes
the pod object, as a kubelet does. PersistentVolumeClaims are bound as by a local provisioner.

When the runner stops (`pinery local down`), the processes stop with it. A runner that starts
on the same state directory kills whatever its predecessor left, and treats the pods that were
running as a rebooted node does: a pod with `restartPolicy: Never` is Failed with reason
NodeLost (its processes are gone); other pods start again, their restart counts raised.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from pinery.local.kubeclient import ApiError, KubeClient
from pinery.local.podrunner import crilog, events, images, processes, scheduling, serviceaccount, waiting
from pinery.local.podrunner.dns import ClusterDNS, loopback_range_usable
from pinery.local.podrunner.environment import EnvError, container_env, expand
from pinery.local.podrunner.status import ContainerRun, PodRun, pod_status, termination_message
from pinery.local.podrunner.volumes import VolumeError, claim_dir, mount_map, prepare_volumes, remove_pod_volumes, rewrite_paths

log = logging.getLogger("pinery.podrunner")
NODE_NAME = "pinery-local"
RESOLVER_DIR = Path(__file__).parent / "resolver"
CONFIG_RETRY_SECONDS = 2.0
# Grace given to running pods when the runner itself stops (a node shutting down).
SHUTDOWN_GRACE_SECONDS = 10.0
# restartPolicy backoff: 1 s doubling to 30 s (the kubelet starts at 10 s and caps at 300 s).
BACKOFF_START, BACKOFF_CAP = 1.0, 30.0


def now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def pod_path(ns: str, name: str, sub: str = "") -> str:
    return f"/api/v1/namespaces/{ns}/pods/{name}{sub}"


@dataclass
class Worker:
    pod: dict
    run: PodRun = field(default_factory=PodRun)
    # The running process of each container (removed when it has ended).
    processes: dict[str, asyncio.subprocess.Process] = field(default_factory=dict)
    task: asyncio.Task | None = None
    stopping: bool = False
    # ConfigMaps and Secrets the pod refers to, as read when it started.
    lookup: Callable[[str, str], dict | None] | None = None
    status_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    conditions: list = field(default_factory=list)
    # The service account's token directory, when the pod gets one.
    account_dir: Path | None = None

    def __post_init__(self) -> None:
        spec = self.pod.get("spec") or {}
        reason = waiting.default_reason(bool(spec.get("initContainers")))
        self.run.init = [ContainerRun(c["name"], c.get("image", ""), reason=reason) for c in spec.get("initContainers") or []]
        self.run.main = [ContainerRun(c["name"], c.get("image", ""), reason=reason) for c in spec.get("containers") or []]

    @property
    def namespace(self) -> str:
        return self.pod["metadata"].get("namespace", "default")

    @property
    def name(self) -> str:
        return self.pod["metadata"]["name"]

    @property
    def uid(self) -> str:
        return self.pod["metadata"].get("uid", "")

    @property
    def restart_policy(self) -> str:
        return (self.pod.get("spec") or {}).get("restartPolicy", "Always")


class PodRunner:
    def __init__(self, client: KubeClient, state_dir: Path, *, logs_dir: Path | None = None,
                 node_name: str = NODE_NAME, domain: str = "cluster.local", nodes: int = 1):
        self.client = client
        self.state_dir = Path(state_dir).resolve()
        self.logs_dir = Path(logs_dir) if logs_dir is not None else self.state_dir / "logs"
        self.node_name = node_name
        # The nodes it stands in for: the first is `node_name`, the others numbered after it.
        self.node_names = [node_name] + [f"{node_name}-{i}" for i in range(2, max(nodes, 1) + 1)]
        # Pods bound to each node and not finished, by uid (the tie-break of scheduling.choose_node).
        self._placed: dict[str, str] = {}
        self.dns = ClusterDNS(domain=domain, shared_address=None if loopback_range_usable() else "127.0.0.1")
        self.workers: dict[str, Worker] = {}
        self._hosts: dict[str, list[str]] | None = None
        # Every process the runner starts carries this marker, so that nothing escapes a stop.
        self.owner = str(self.state_dir)
        # The local Python environment stands in for every image.
        self.bin_dir = str(Path(sys.executable).parent)
        self.ready = asyncio.Event()
        self.events = events.Recorder(client, node_name)
        # Stops and clean-ups under way (kept referenced until they end).
        self._background: set[asyncio.Task] = set()

    # --- main loop -------------------------------------------------------------------------

    async def run(self, stop: asyncio.Event) -> None:
        killed = await asyncio.to_thread(processes.kill_marked, processes.OWNER_VARIABLE, self.owner)
        if killed:
            log.warning("killed %d processes left by a previous pod runner on %s", killed, self.state_dir)
        self._write_hosts()
        await self._register_node()
        tasks = [
            asyncio.create_task(self._watch("/api/v1/services", self._on_service, stop)),
            asyncio.create_task(self._watch("/api/v1/persistentvolumeclaims", self._on_claim, stop)),
            asyncio.create_task(self._watch("/api/v1/pods", self._on_pod, stop)),
        ]
        self.ready.set()
        try:
            await stop.wait()
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await self.shutdown()

    async def shutdown(self) -> None:
        """Stop every pod's processes, as a node shutting down; their API objects stay."""
        workers = list(self.workers.values())
        await asyncio.gather(*(self._terminate(w, grace=self._shutdown_grace(w), finalize=False) for w in workers))
        if self._background:
            await asyncio.wait(self._background, timeout=SHUTDOWN_GRACE_SECONDS)
        for task in self._background:
            task.cancel()
        await asyncio.to_thread(processes.kill_marked, processes.OWNER_VARIABLE, self.owner)

    def _spawn(self, coro) -> None:
        task = asyncio.create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    @staticmethod
    def _shutdown_grace(worker: Worker) -> float:
        grace = (worker.pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30)
        return min(float(grace), SHUTDOWN_GRACE_SECONDS)

    async def _watch(self, path: str, handler, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                async for kind, obj in self.client.list_and_watch(path, stop):
                    try:
                        await handler(kind, obj)
                    except ApiError as exc:  # one object's trouble must not stop the others
                        log.warning("could not handle %s %s: %s", kind, (obj.get("metadata") or {}).get("name"), exc)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the API server restarting, a dropped connection
                log.warning("watch of %s failed (%s); retrying", path, exc)
                await asyncio.sleep(1)

    def node_object(self, name: str) -> dict:
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "pinery.dev/local": "true"}},
            "status": {
                "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}, {"type": "Hostname", "address": name}],
                "capacity": {"cpu": str(os.cpu_count() or 1), "pods": "1000"},
                "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "pinery local pod runner"}],
            },
        }

    async def _register_node(self) -> None:
        for name in self.node_names:
            try:
                await self.client.create("/api/v1/nodes", self.node_object(name))
            except ApiError as exc:
                if exc.status not in (404, 405, 409):
                    raise

    # --- services, claims and DNS ------------------------------------------------------------

    async def _on_service(self, kind: str, service: dict) -> None:
        if kind == "LISTED":
            return
        if kind == "DELETED":
            self.dns.remove_service(service)
        else:
            self.dns.add_service(service)
        self._write_hosts()

    async def _on_claim(self, kind: str, claim: dict) -> None:
        """Bind new claims at once, as a default storage class with a local provisioner would;
        a deleted claim's data goes with it (reclaim policy Delete)."""
        meta, spec = claim.get("metadata") or {}, claim.get("spec") or {}
        if kind == "DELETED":
            shutil.rmtree(claim_dir(self.state_dir, meta.get("namespace", "default"), meta["name"]), ignore_errors=True)
            return
        if kind not in ("ADDED", "MODIFIED") or (claim.get("status") or {}).get("phase") == "Bound":
            return
        if meta.get("deletionTimestamp"):
            return
        size = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "1Gi")
        status = {"phase": "Bound", "accessModes": spec.get("accessModes") or ["ReadWriteOnce"], "capacity": {"storage": size}}
        path = f"/api/v1/namespaces/{meta.get('namespace', 'default')}/persistentvolumeclaims/{meta['name']}/status"
        try:
            await self.client.merge_patch(path, {"status": status})
        except ApiError as exc:
            if exc.status != 404:
                log.warning("could not bind claim %s: %s", meta["name"], exc)

    def _write_hosts(self) -> None:
        hosts = self.dns.hosts()
        if hosts == self._hosts:
            return
        self._hosts = hosts
        path = self.hosts_file
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text("".join(f"{name} {' '.join(ips)}\n" for name, ips in sorted(hosts.items())))
        tmp.replace(path)

    @property
    def hosts_file(self) -> Path:
        return self.state_dir / "hosts"

    # --- pods --------------------------------------------------------------------------------

    async def _on_pod(self, kind: str, pod: dict) -> None:
        worker: Worker | None
        if kind == "LISTED":
            live = set(pod["uids"])
            for uid, worker in list(self.workers.items()):
                if uid not in live:
                    self._spawn(self._forget(worker, grace=0))
            return
        meta, spec = pod["metadata"], pod.get("spec") or {}
        uid = meta.get("uid", "")
        if kind == "DELETED":
            self._placed.pop(uid, None)
            self.dns.remove_pod(pod)
            self._write_hosts()
            worker = self.workers.get(uid)
            if worker is not None:
                self._spawn(self._forget(worker, grace=meta.get("deletionGracePeriodSeconds", 0)))
            return
        self.dns.add_pod(pod)
        self._write_hosts()
        if spec.get("nodeName") and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
            self._placed[uid] = spec["nodeName"]
        else:
            self._placed.pop(uid, None)
        worker = self.workers.get(uid)
        if worker is not None:
            worker.pod = pod
        if meta.get("deletionTimestamp"):
            if spec.get("nodeName") in self.node_names:
                grace = meta.get("deletionGracePeriodSeconds", spec.get("terminationGracePeriodSeconds", 30))
                if worker is not None and not worker.stopping:
                    self._spawn(self._terminate(worker, grace=grace, finalize=True))
                elif worker is None:
                    await self._finalize(pod)
            return
        if not spec.get("nodeName"):
            await self._bind(pod)
            return
        if spec["nodeName"] not in self.node_names or worker is not None:
            return
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            return
        worker = Worker(pod)
        if _had_started(pod):  # it ran under a previous runner, and its processes are gone
            if worker.restart_policy == "Never":
                await self._report_lost(pod)
                return
            _carry_restart_counts(worker, pod)
        self.workers[uid] = worker
        worker.task = asyncio.create_task(self._lifecycle(worker))

    async def _bind(self, pod: dict) -> None:
        meta = pod["metadata"]
        ns, name = meta.get("namespace", "default"), meta["name"]
        nodes = [self.node_object(n) for n in self.node_names]
        load: dict[str, int] = {}
        for placed in self._placed.values():
            load[placed] = load.get(placed, 0) + 1
        node = scheduling.choose_node(pod, nodes, load) if len(nodes) > 1 else self.node_name
        if node is None:
            await self._unschedulable(pod, scheduling.unschedulable_message(pod, nodes))
            return
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": ns},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        try:
            await self.client.create(pod_path(ns, name, "/binding"), binding)
            self._placed[meta.get("uid", "")] = node
            await self.events.pod(pod, "Normal", "Scheduled", events.scheduled(pod, node), component=events.SCHEDULER)
        except ApiError as exc:
            if exc.status == 409:  # already bound
                return
            if exc.status not in (404, 405):
                raise
            # No binding subresource (or the pod is gone): set the field directly.
            try:
                await self.client.merge_patch(pod_path(ns, name), {"spec": {"nodeName": node}})
            except ApiError as patch_exc:
                if patch_exc.status != 404:
                    raise

    async def _unschedulable(self, pod: dict, message: str) -> None:
        """No node fits: PodScheduled False, reason Unschedulable, and a FailedScheduling Event,
        as the scheduler leaves such a pod (schedule_one.go handleSchedulingFailure); once."""
        conditions = (pod.get("status") or {}).get("conditions") or []
        if any(c.get("type") == "PodScheduled" and c.get("reason") == "Unschedulable" for c in conditions):
            return
        condition = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message, "lastTransitionTime": now()}
        await self._patch_status(pod, {"phase": "Pending", "conditions": [condition]})
        await self.events.pod(pod, "Warning", "FailedScheduling", message, component=events.SCHEDULER)

    async def _report_lost(self, pod: dict) -> None:
        """A `restartPolicy: Never` pod that ran under a previous runner: Failed, NodeLost."""
        meta = pod["metadata"]
        run = PodRun(pod_ip=self.dns.address(meta.get("namespace", "default"), meta["name"]))
        run.start_time = (pod.get("status") or {}).get("startTime")
        run.failure = ("NodeLost", "the pod's processes were lost when local mode stopped (the pod runner restarted)")
        status = pod_status(run, "Never", now(), (pod.get("status") or {}).get("conditions"))
        for key in ("initContainerStatuses", "containerStatuses"):
            status[key] = [_lost(cs) for cs in (pod.get("status") or {}).get(key) or []]
        await self._patch_status(pod, status)

    async def _finalize(self, pod: dict) -> None:
        meta = pod["metadata"]
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0, "preconditions": {"uid": meta.get("uid")}}
        try:
            await self.client.delete(pod_path(meta.get("namespace", "default"), meta["name"]), body)
        except ApiError as exc:
            if exc.status != 409:  # 409: a newer pod of the same name
                log.warning("could not remove pod %s: %s", meta["name"], exc)

    async def _forget(self, worker: Worker, grace: float) -> None:
        """The pod object is gone: stop what is left and remove its directories and logs."""
        await self._terminate(worker, grace=grace, finalize=False)
        self.workers.pop(worker.uid, None)
        remove_pod_volumes(worker.pod, self._pod_dir(worker.pod))
        # Logs are kept by pod name (the API serves them so): after a gang restart a newer pod of
        # the same name may already be writing there, and its logs are not this pod's to remove.
        if any((w.namespace, w.name) == (worker.namespace, worker.name) for w in self.workers.values()):
            return
        log_dir = self.logs_dir / worker.namespace / worker.name
        for path in log_dir.glob("*.log"):
            path.unlink(missing_ok=True)

    async def _terminate(self, worker: Worker, *, grace: float, finalize: bool) -> None:
        if not worker.stopping:
            worker.stopping = True
            if finalize:  # a deletion: the kubelet's Killing event for each running container
                for name in list(worker.processes):
                    await self.events.pod(worker.pod, "Normal", "Killing", events.killing(name), container=name)
            await asyncio.gather(*(
                processes.stop(process, grace, self._marker(worker, name))
                for name, process in list(worker.processes.items())
            ))
            if worker.task is not None:
                worker.task.cancel()
                await asyncio.gather(worker.task, return_exceptions=True)
        if finalize:
            await self._finalize(worker.pod)

    # --- one pod -----------------------------------------------------------------------------

    def _node_of(self, worker: Worker) -> str:
        return (worker.pod.get("spec") or {}).get("nodeName") or self.node_name

    def _pod_dir(self, pod: dict) -> Path:
        meta = pod["metadata"]
        return self.state_dir / "pods" / meta.get("namespace", "default") / f"{meta['name']}-{meta.get('uid', '')[:8]}"

    def _marker(self, worker: Worker, container: str) -> tuple[str, str]:
        return processes.CONTAINER_VARIABLE, f"{worker.uid}/{container}"

    async def _lifecycle(self, worker: Worker) -> None:
        try:
            await self._run_pod(worker)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # never leave a pod silently stuck
            log.exception("pod %s/%s failed in the pod runner", worker.namespace, worker.name)
            worker.run.failure = ("RunnerError", f"the local pod runner could not run the pod: {exc}")
            await self._write_status(worker)

    async def _run_pod(self, worker: Worker) -> None:
        spec = worker.pod.get("spec") or {}
        run = worker.run
        run.pod_ip = self.dns.address(worker.namespace, worker.name)
        run.start_time = run.start_time or now()
        await self._write_status(worker)
        volume_dirs = await self._prepare(worker)
        if volume_dirs is None:
            return
        for container, state in zip(spec.get("initContainers") or [], run.init, strict=True):
            while not worker.stopping:
                code = await self._run_container(worker, container, state, volume_dirs)
                if code == 0:
                    break
                if worker.restart_policy == "Never" or code is None:
                    await self._write_status(worker)
                    return
                await self._backoff(worker, state)
        await asyncio.gather(*(
            self._keep_running(worker, container, state, volume_dirs)
            for container, state in zip(spec.get("containers") or [], run.main, strict=True)
        ))
        await self._write_status(worker)

    async def _keep_running(self, worker: Worker, container: dict, state: ContainerRun, volume_dirs: dict) -> None:
        while not worker.stopping:
            code = await self._run_container(worker, container, state, volume_dirs)
            policy = worker.restart_policy
            if code is None or policy == "Never" or (policy == "OnFailure" and code == 0):
                return
            await self._backoff(worker, state)

    async def _backoff(self, worker: Worker, state: ContainerRun) -> None:
        delay = min(BACKOFF_CAP, BACKOFF_START * 2 ** min(state.restarts, 6))
        state.back_off(waiting.crash_loop_message(delay, state.name, events.format_pod(worker.pod)))
        await self.events.pod(worker.pod, "Warning", "BackOff", events.back_off(state.name, worker.pod), container=state.name)
        await self._write_status(worker)
        await asyncio.sleep(delay)

    async def _prepare(self, worker: Worker) -> dict | None:
        """Volumes and referenced objects; waits (CreateContainerConfigError) while any is missing."""
        while not worker.stopping:
            lookup = await self._lookup_for(worker.pod)
            try:
                dirs = prepare_volumes(
                    worker.pod, self._pod_dir(worker.pod), self.state_dir, lookup, pod_ip=worker.run.pod_ip, node=self._node_of(worker),
                )
            except VolumeError as exc:
                # A volume that cannot be set up: FailedMount, containers keep waiting to be created.
                await self.events.pod(worker.pod, "Warning", "FailedMount", events.failed_mount(exc.volume, str(exc)))
                await self._write_status(worker)
                await asyncio.sleep(CONFIG_RETRY_SECONDS)
                continue
            try:
                worker.account_dir = await serviceaccount.mount(self.client, worker.pod, self._pod_dir(worker.pod) / "volumes" / "kube-api-access")
            except ApiError as exc:
                await self.events.pod(worker.pod, "Warning", "FailedMount", events.failed_mount("kube-api-access", str(exc)))
                await self._write_status(worker)
                await asyncio.sleep(CONFIG_RETRY_SECONDS)
                continue
            try:
                for container in _all_containers(worker.pod):
                    name = container["name"]
                    container_env(worker.pod, container, lookup, pod_ip=worker.run.pod_ip, node=self._node_of(worker))
                worker.lookup = lookup
                return dirs
            except EnvError as exc:
                state = next(c for c in [*worker.run.init, *worker.run.main] if c.name == name)
                state.reason, state.message = waiting.CREATE_CONTAINER_CONFIG_ERROR, str(exc)
                # kuberuntime_container.go startContainer: the image step ran, then the config failed.
                image = container.get("image", "")
                await self.events.pod(worker.pod, "Normal", "Pulled", events.pulled(image), container=name)
                await self.events.pod(worker.pod, "Warning", "Failed", events.failed(str(exc)), container=name)
                await self._write_status(worker)
                await asyncio.sleep(CONFIG_RETRY_SECONDS)
        return None

    async def _lookup_for(self, pod: dict):
        """ConfigMaps and Secrets the pod refers to, fetched now (kubelet reads them at start)."""
        ns = pod["metadata"].get("namespace", "default")
        found = {}
        for kind, name in _references(pod):
            plural = "configmaps" if kind == "ConfigMap" else "secrets"
            found[(kind, name)] = await self.client.get_or_none(f"/api/v1/namespaces/{ns}/{plural}/{name}")
        return lambda kind, name: found.get((kind, name))

    def _container_setup(self, worker: Worker, container: dict, mounts: dict[str, str]) -> tuple[dict[str, str], list[str] | None]:
        """The process environment and argv of a container, names and mount paths mapped."""
        spec = worker.pod.get("spec") or {}
        ns = worker.namespace
        assert worker.lookup is not None, "set when the pod started"
        user = container_env(worker.pod, container, worker.lookup, pod_ip=worker.run.pod_ip, node=self._node_of(worker))
        # $(VAR) in command and args refers to the container's variables as declared.
        argv = images.argv(container)
        if argv:
            argv = [expand(part, user) for part in argv]
            argv = [rewrite_paths(self.dns.rewrite(part, ns), mounts) for part in argv]
        user = {k: rewrite_paths(v, mounts) for k, v in self.dns.rewrite_env(user, ns).items()}
        pod_dir = self._pod_dir(worker.pod)
        env = {
            **serviceaccount.service_env(self.client.server),
            "PATH": f"{self.bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(pod_dir / "home"),
            "TMPDIR": str(pod_dir / "tmp"),
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            "HOSTNAME": spec.get("hostname") or worker.name,
        }
        env.update(user)
        env.update({
            "PYTHONPATH": os.pathsep.join(p for p in (str(RESOLVER_DIR), user.get("PYTHONPATH", "")) if p),
            "PINERY_LOCAL_HOSTS": str(self.hosts_file),
            "PINERY_LOCAL_SEARCH": f"{ns}.svc.{self.dns.domain} svc.{self.dns.domain} {self.dns.domain}",
            "PINERY_LOCAL_DOMAIN": self.dns.domain,
            # Absolute mount paths a Python library reads by itself (sitecustomize maps them).
            "PINERY_LOCAL_MOUNTS": json.dumps(mounts),
            processes.OWNER_VARIABLE: self.owner,
            processes.CONTAINER_VARIABLE: self._marker(worker, container["name"])[1],
        })
        for key in ("HOME", "TMPDIR"):
            Path(env[key]).mkdir(parents=True, exist_ok=True)
        return env, argv

    def _working_dir(self, worker: Worker, container: dict, env: dict[str, str], mounts: dict[str, str]) -> Path:
        """The container's workingDir: a mounted path, an existing local directory, or a
        directory of the pod standing in for the image's own."""
        wanted = container.get("workingDir")
        if not wanted:
            return Path(env["HOME"])
        mapped = rewrite_paths(wanted, mounts)
        if mapped != wanted or Path(wanted).is_dir():
            path = Path(mapped)
        else:
            path = self._pod_dir(worker.pod) / "rootfs" / wanted.lstrip("/")
        path.mkdir(parents=True, exist_ok=True)
        return path

    async def _run_container(self, worker: Worker, container: dict, state: ContainerRun, volume_dirs: dict) -> int | None:
        """Run one container to its end; its exit code, or None when it cannot be created."""
        pod_dir = self._pod_dir(worker.pod)
        message_file = pod_dir / "termination" / state.name
        message_file.parent.mkdir(parents=True, exist_ok=True)
        message_file.write_text("")
        mounts = mount_map(container, volume_dirs)
        mounts[container.get("terminationMessagePath") or "/dev/termination-log"] = str(message_file)
        if worker.account_dir is not None:  # a volume the container mounts there itself wins
            mounts.setdefault(serviceaccount.MOUNT_PATH, str(worker.account_dir))
        env, argv = self._container_setup(worker, container, mounts)
        log_path = self.logs_dir / worker.namespace / worker.name / f"{state.name}.log"
        await self.events.pod(worker.pod, "Normal", "Pulled", events.pulled(container.get("image", "")), container=state.name)
        if argv is None:
            # Kubernetes keeps such a pod Pending: the container cannot be created.
            state.state, state.reason = "waiting", waiting.CREATE_CONTAINER_ERROR
            state.message = f"container {state.name} has no command (local mode knows no entrypoint of image {container.get('image', '')!r})"
            await self.events.pod(worker.pod, "Warning", "Failed", events.failed(state.message), container=state.name)
            await self._write_status(worker)
            return None
        if log_path.exists():
            log_path.replace(log_path.with_name(f"{state.name}.previous.log"))
        try:
            if processes.resolve_executable(argv[0], env["PATH"]) is None:
                raise FileNotFoundError(f'exec: "{argv[0]}": executable file not found in $PATH')
            cwd = self._working_dir(worker, container, env, mounts)
            process, output = await processes.start(argv, env, cwd, log_path)
        except OSError as exc:
            log_path.parent.mkdir(parents=True, exist_ok=True)
            with open(log_path, "ab") as fh:
                fh.write(crilog.record("stderr", f"{exc}\n", time.time_ns()))
            state.fail_to_start(now(), f"failed to start container {state.name}: {exc}")
            # The runtime created the container and could not start its process.
            await self.events.pod(worker.pod, "Normal", "Created", events.created(state.name), container=state.name)
            await self.events.pod(worker.pod, "Warning", "Failed", events.failed(state.message), container=state.name)
            await self._write_status(worker)
            return state.exit_code
        worker.processes[state.name] = process
        await self.events.pod(worker.pod, "Normal", "Created", events.created(state.name), container=state.name)
        await self.events.pod(worker.pod, "Normal", "Started", events.started(state.name), container=state.name)
        state.pid, state.state, state.reason, state.message = process.pid, "running", "", ""
        state.started_at, state.finished_at, state.exit_code = now(), None, None
        await self._write_status(worker)
        try:
            code = processes.exit_code(await process.wait())
            # A container's end is its cgroup's end: nothing it started outlives it.
            await processes.reap(process, self._marker(worker, state.name))
        finally:
            # Only now: what the container started may have held its output pipes until reaped.
            # Stopped or not, the whole output is in the file and the file closed before the
            # status, the termination message or a next attempt (which renames it) reads it.
            await output.drain()
        worker.processes.pop(state.name, None)
        policy = container.get("terminationMessagePolicy", "File")
        written = message_file.read_text(errors="replace") if message_file.exists() else ""
        state.finish(code, now(), termination_message(written, _tail(log_path), policy, code))
        if not worker.stopping:
            await self._write_status(worker)
        return code

    async def _write_status(self, worker: Worker) -> None:
        if worker.stopping:
            return
        async with worker.status_lock:
            status = pod_status(worker.run, worker.restart_policy, now(), worker.conditions)
            worker.conditions = status["conditions"]
            await self._patch_status(worker.pod, status)

    async def _patch_status(self, pod: dict, status: dict) -> None:
        """A strategic merge patch, as the kubelet's status manager sends (kubernetes
        pkg/util/pod PatchPodStatus): conditions merge by type, so a condition the runner does
        not own (DisruptionTarget from an eviction, written by the API server) stays, as the
        kubelet's mergePodStatus keeps every condition not owned by the kubelet."""
        meta = pod["metadata"]
        try:
            await self.client.strategic_patch(pod_path(meta.get("namespace", "default"), meta["name"], "/status"), {"status": status})
        except ApiError as exc:
            if exc.status != 404:
                log.warning("could not write status of pod %s: %s", meta["name"], exc)


def _all_containers(pod: dict) -> list[dict]:
    spec = pod.get("spec") or {}
    return [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]


def _references(pod: dict) -> set[tuple[str, str]]:
    """(kind, name) of every ConfigMap and Secret the pod's volumes and containers use."""
    wanted: set[tuple[str, str]] = set()
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        if "configMap" in volume:
            wanted.add(("ConfigMap", volume["configMap"].get("name", "")))
        if "secret" in volume:
            wanted.add(("Secret", volume["secret"].get("secretName", "")))
        for source in (volume.get("projected") or {}).get("sources") or []:
            if "configMap" in source:
                wanted.add(("ConfigMap", source["configMap"].get("name", "")))
            if "secret" in source:
                wanted.add(("Secret", source["secret"].get("name", "")))
    for container in _all_containers(pod):
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
    return wanted


def _tail(path: Path, size: int = 16384) -> bytes:
    """The end of a container's log, as the container printed it (without the records' times)."""
    try:
        with open(path, "rb") as fh:
            start = max(0, fh.seek(0, os.SEEK_END) - size)
            fh.seek(start)
            return crilog.text_of(fh.read(), cut=start > 0)
    except OSError:
        return b""


def _had_started(pod: dict) -> bool:
    status = pod.get("status") or {}
    for cs in [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]:
        state = cs.get("state") or {}
        if "running" in state or "terminated" in state or cs.get("restartCount"):
            return True
    return False


def _lost(container_status: dict) -> dict:
    """A container status whose process vanished with the node: terminated, reason Unknown."""
    state = container_status.get("state") or {}
    if "terminated" in state:
        return container_status
    started = (state.get("running") or {}).get("startedAt")
    terminated = {"exitCode": 137, "reason": "Unknown", "message": "the container's processes were lost", "finishedAt": now()}
    if started:
        terminated["startedAt"] = started
    return {**container_status, "state": {"terminated": terminated}, "ready": False, "started": False}


def _carry_restart_counts(worker: Worker, pod: dict) -> None:
    """A restarted node runs the pod's containers again, each restart counted."""
    status = pod.get("status") or {}
    counts = {cs.get("name"): cs.get("restartCount", 0) for cs in status.get("containerStatuses") or []}
    for state in worker.run.main:
        state.restarts = counts.get(state.name, 0) + 1
    worker.run.start_time = status.get("startTime")
