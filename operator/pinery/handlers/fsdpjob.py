"""FSDPJob handlers: one daemon per job runs the reconcile loop; pod events wake it.

Each pass reads the job, its pods, Service and ConfigMap fresh from the API (never Kopf's
cached body: the restart protocol needs to see its own status writes), asks
`pinery.fsdpjob.plan` what to do, and applies the Plan's steps in order. The loop sleeps until
the plan's requeue time or until a pod or the job changes.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timezone

import kopf

from pinery.api.base import GROUP, VERSION
from pinery.fsdpjob import plan as plan_job
from pinery.fsdpjob import progress_from_logs
from pinery.fsdpjob.naming import LABEL_JOB, TRAINER_CONTAINER, config_map_name, pod_name, service_name
from pinery.fsdpjob.plan import Plan
from pinery.kube import KubeError
from pinery.services import Services
from pinery.vectorindex.errors import backoff

PLURAL = "fsdpjobs"
# Lines of rank 0's log read for progress each pass.
LOG_TAIL_LINES = 200
IDLE_SECONDS = 60.0


class Wakeups:
    """One asyncio.Event per job, set by pod and job events to cut a daemon's sleep short."""

    def __init__(self) -> None:
        self._events: dict[tuple[str, str], asyncio.Event] = {}

    def event(self, namespace: str, name: str) -> asyncio.Event:
        return self._events.setdefault((namespace, name), asyncio.Event())

    def wake(self, namespace: str, name: str) -> None:
        event = self._events.get((namespace, name))
        if event is not None:
            event.set()

    def forget(self, namespace: str, name: str) -> None:
        self._events.pop((namespace, name), None)


def register(registry: kopf.OperatorRegistry, services: Services) -> None:
    resource = (GROUP, VERSION, PLURAL)
    wakeups = Wakeups()

    @kopf.daemon(*resource, registry=registry, cancellation_timeout=5.0)
    async def fsdpjob_daemon(namespace, name, stopped, logger, **_):
        wake = wakeups.event(namespace, name)
        job = JobLoop(namespace, name, services, logger)
        try:
            while not stopped:
                wake.clear()
                delay = await job.step()
                if delay is None:
                    return
                sleeps = [asyncio.ensure_future(wake.wait()), asyncio.ensure_future(stopped.wait())]
                try:
                    await asyncio.wait(sleeps, timeout=delay, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    for task in sleeps:
                        task.cancel()
        finally:
            wakeups.forget(namespace, name)
            services.metrics.forget_job(namespace, name)

    @kopf.on.event(*resource, registry=registry)
    async def fsdpjob_event(namespace, name, **_):
        wakeups.wake(namespace, name)

    @kopf.on.event("", "v1", "pods", labels={LABEL_JOB: kopf.PRESENT}, registry=registry)
    async def fsdpjob_pod_event(namespace, labels, **_):
        wakeups.wake(namespace, labels[LABEL_JOB])


def refused(exc: KubeError) -> bool:
    """The API server will not create this as it is (quota, admission, validation): retrying
    at once changes nothing, and the user must hear of it. 409 and 429 are not refusals."""
    return 400 <= exc.status < 500 and exc.status not in (409, 429)


class JobLoop:
    """The state one job's daemon keeps between passes: errors, for backoff and reporting."""

    def __init__(self, namespace: str, name: str, services: Services, logger: logging.Logger):
        self.namespace, self.name = namespace, name
        self.services, self.logger = services, logger
        self.failures = 0
        # Creations the API server refused in the last pass: `Kind/name` -> its message.
        self.refused: dict[str, str] = {}
        self.refusals = 0

    async def step(self) -> float | None:
        """One pass; seconds until the next, or None when the job is gone."""
        try:
            delay = await self.reconcile()
            self.failures = 0
        except Exception as exc:  # an API error, the API server unreachable, or a bug: try again later
            self.failures += 1
            delay = backoff(self.failures, cap=60)
            self.logger.warning(
                "reconcile of FSDPJob %s/%s failed: %s; retrying in %.0fs", self.namespace, self.name, exc, delay,
                exc_info=not isinstance(exc, KubeError),
            )
            self.services.metrics.reconciled("FSDPJob", "error")
            return delay
        if delay is None:
            return None
        if self.refused:
            self.refusals += 1
            return min(delay, backoff(self.refusals - 1, base=1.0, cap=60))
        self.refusals = 0
        return delay

    async def reconcile(self) -> float | None:
        kube, namespace, name = self.services.kube, self.namespace, self.name
        job = await kube.get("FSDPJob", namespace, name)
        if job is None or job["metadata"].get("deletionTimestamp"):
            return None  # the children go with it (ownerReferences)
        pods = await kube.list("Pod", namespace, label_selector=f"{LABEL_JOB}={name}")
        service = await kube.get("Service", namespace, service_name(name))
        config_map = await kube.get("ConfigMap", namespace, config_map_name(name))
        result = plan_job(
            job, pods, datetime.now(timezone.utc),
            service=service, config_map=config_map, settings=self.services.settings, refused=self.refused,
        )
        self.refused = await apply(result, job, self.services, self.logger)
        self.services.metrics.reconciled("FSDPJob", "idle" if result.idle else "changed")
        self.services.metrics.job_phase(namespace, name, result.status.get("phase"))
        if result.delete_job:
            return None
        await update_progress(job, result, self.services)
        return result.requeue_after if result.requeue_after is not None else IDLE_SECONDS


async def apply(result: Plan, job: dict, services: Services, logger: logging.Logger) -> dict[str, str]:
    """Apply the plan's steps in order; return the creations the API server refused."""
    kube = services.kube
    namespace, name = job["metadata"]["namespace"], job["metadata"]["name"]
    refusals: dict[str, str] = {}
    for action, payload in result.steps():
        if action == "patch_status":
            await kube.merge_patch("FSDPJob", namespace, name, {"status": payload}, subresource="status")
            added = (payload.get("restarts") or 0) - ((job.get("status") or {}).get("restarts") or 0)
            if added > 0:
                services.metrics.fsdpjob_restarts.labels(namespace).inc(added)
        elif action == "delete_pod":
            await kube.delete("Pod", namespace, payload.name, uid=payload.uid, grace_seconds=0 if payload.force else None)
        elif action == "create":
            try:
                await kube.create(payload)
            except KubeError as exc:
                if not refused(exc):
                    raise
                key = f"{payload['kind']}/{payload['metadata']['name']}"
                refusals[key] = exc.message
                logger.warning("FSDPJob %s/%s: the API server refused to create %s: %s", namespace, name, key, exc)
        elif action == "event":
            kopf.event(job, type=payload.type, reason=payload.reason, message=payload.message)
        elif action == "delete_job":
            logger.info("deleting FSDPJob %s/%s: ttlSecondsAfterFinished has passed", namespace, name)
            await kube.delete("FSDPJob", namespace, name, propagation="Background")
    return refusals


async def update_progress(job: dict, result: Plan, services: Services) -> None:
    """Read rank 0's log tail and publish the trainer's progress (pods need no API access)."""
    phase = result.status.get("phase")
    if phase not in ("Running", "Succeeded", "Restarting"):
        return
    if phase == "Succeeded" and (job.get("status") or {}).get("phase") == "Succeeded":
        return  # the last lines were read when the job succeeded
    namespace, name = job["metadata"]["namespace"], job["metadata"]["name"]
    try:
        text = await services.kube.pod_log(
            namespace, pod_name(name, 0), container=TRAINER_CONTAINER, tail_lines=LOG_TAIL_LINES, timestamps=True
        )
    except KubeError:
        return  # no pod or no log yet
    previous = result.status.get("progress")
    progress = progress_from_logs(text, datetime.now(timezone.utc), previous=previous)
    if progress is not None and progress != previous:
        await services.kube.merge_patch("FSDPJob", namespace, name, {"status": {"progress": progress}}, subresource="status")
