"""Pod Events as a kubelet and a scheduler record them (core/v1 Events).

Reasons are the kubelet's (pkg/kubelet/events/event.go); messages are those of
kuberuntime_container.go (Created, Started, Killing, Failed, BackOff), images/image_manager.go
(Pulled) and the scheduler's binding step (Scheduled). Involved objects and names follow
client-go's recorder (tools/record/event.go: name `<object>.<hex nanoseconds>`), container
events carry the field path of kubecontainer.GenerateContainerRef (`spec.containers{name}`,
`spec.initContainers{name}`).

Repeats are folded as client-go's EventCorrelator folds them (tools/record/events_cache.go,
eventLogger): an event equal to an earlier one in source, involved object, type, reason and
message raises that event's `count` and `lastTimestamp` instead of making a new object. The
correlator's other step, merging *similar* events (same key but message) into "(combined
from similar events)" after 10 in 10 minutes, and its rate limit, are not emulated.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone

log = logging.getLogger("pinery.podrunner.events")

SCHEDULER = "default-scheduler"
KUBELET = "kubelet"


def pod_ref(pod: dict, field_path: str = "") -> dict:
    """The involvedObject of an event about `pod` (or one of its containers)."""
    meta = pod["metadata"]
    ref = {
        "kind": "Pod",
        "namespace": meta.get("namespace", "default"),
        "name": meta["name"],
        "uid": meta.get("uid", ""),
        "apiVersion": "v1",
        "resourceVersion": meta.get("resourceVersion", ""),
    }
    if field_path:
        ref["fieldPath"] = field_path
    return ref


def container_field_path(pod: dict, container: str) -> str:
    """kubecontainer.GenerateContainerRef: which list of the spec holds the container."""
    spec = pod.get("spec") or {}
    if any(c.get("name") == container for c in spec.get("initContainers") or []):
        return f"spec.initContainers{{{container}}}"
    return f"spec.containers{{{container}}}"


def event_key(event: dict) -> tuple:
    """eventLogger's key (getEventKey): source, involved object, type, reason and message."""
    ref, source = event["involvedObject"], event.get("source") or {}
    return (
        source.get("component", ""), source.get("host", ""),
        ref.get("kind"), ref.get("namespace"), ref.get("name"), ref.get("uid"), ref.get("apiVersion"), ref.get("fieldPath", ""),
        event.get("type"), event.get("reason"), event.get("message"),
    )


def new_event(ref: dict, type_: str, reason: str, message: str, component: str, host: str, at: datetime) -> dict:
    stamp = _rfc3339(at)
    source = {"component": component, **({"host": host} if host else {})}
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{ref['name']}.{int(at.timestamp() * 1e9):x}", "namespace": ref["namespace"]},
        "involvedObject": ref,
        "type": type_,
        "reason": reason,
        "message": message,
        "source": source,
        "reportingComponent": component,
        "reportingInstance": host or component,
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
    }


@dataclass
class Folding:
    """What eventLogger remembers: the name and count of the last event of each key."""

    seen: dict[tuple, tuple[str, int]] = field(default_factory=dict)

    def fold(self, event: dict) -> tuple[dict, bool]:
        """The event to write and whether it repeats one already written (then PATCH it)."""
        key = event_key(event)
        if key in self.seen:
            name, count = self.seen[key]
            event = {**event, "metadata": {**event["metadata"], "name": name}, "count": count + 1}
            event.pop("firstTimestamp", None)
            self.seen[key] = (name, count + 1)
            return event, True
        self.seen[key] = (event["metadata"]["name"], 1)
        return event, False

    def forget(self, event: dict) -> None:
        self.seen.pop(event_key(event), None)


class Recorder:
    """Posts events through the runner's client; a failed write is logged, never raised
    (a kubelet drops events it cannot write)."""

    def __init__(self, client, host: str):
        self.client, self.host = client, host
        self.folding = Folding()

    async def pod(self, pod: dict, type_: str, reason: str, message: str, *, container: str = "", component: str = KUBELET) -> None:
        ref = pod_ref(pod, container_field_path(pod, container) if container else "")
        host = self.host if component == KUBELET else ""
        event, repeat = self.folding.fold(new_event(ref, type_, reason, message, component, host, _now()))
        path = f"/api/v1/namespaces/{ref['namespace']}/events"
        try:
            if repeat:
                patch = {"count": event["count"], "lastTimestamp": event["lastTimestamp"], "message": message}
                try:
                    await self.client.merge_patch(f"{path}/{event['metadata']['name']}", patch)
                    return
                except Exception:  # deleted meanwhile: record it afresh
                    self.folding.forget(event)
                    event, _ = self.folding.fold(new_event(ref, type_, reason, message, component, host, _now()))
            await self.client.create(path, event)
        except Exception as exc:
            log.debug("could not record event %s for %s: %s", reason, ref["name"], exc)


def _now() -> datetime:
    return datetime.fromtimestamp(time.time(), timezone.utc)


def _rfc3339(at: datetime) -> str:
    return at.replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- messages (upstream's wording) -------------------------------------------------------------

def scheduled(pod: dict, node: str) -> str:
    """pkg/scheduler/schedule_one.go, bind: "Successfully assigned %v/%v to %v"."""
    meta = pod["metadata"]
    return f"Successfully assigned {meta.get('namespace', 'default')}/{meta['name']} to {node}"


def pulled(image: str) -> str:
    """images/image_manager.go EnsureImageExists, image present and policy allows it."""
    return f'Container image "{image}" already present on machine'


def created(container: str) -> str:
    """kuberuntime_container.go startContainer (upstream's current "Created container: %v")."""
    return f"Created container: {container}"


def started(container: str) -> str:
    return f"Started container {container}"


def killing(container: str) -> str:
    """kuberuntime_container.go killContainer, no other message given."""
    return f"Stopping container {container}"


def failed(error: str) -> str:
    """kuberuntime_container.go startContainer: "Error: %v" for config, create and start errors."""
    return f"Error: {error}"


def back_off(container: str, pod: dict) -> str:
    """kuberuntime_manager.go doBackOff; format.Pod is name_namespace(uid)."""
    return f"Back-off restarting failed container {container} in pod {format_pod(pod)}"


def failed_mount(volume: str, error: str) -> str:
    """volume operation_generator.go GenerateMountVolumeFunc: MountVolume.SetUp failed."""
    return f'MountVolume.SetUp failed for volume "{volume}" : {error}'


def format_pod(pod: dict) -> str:
    """pkg/kubelet/util/format.Pod."""
    meta = pod["metadata"]
    return f"{meta['name']}_{meta.get('namespace', 'default')}({meta.get('uid', '')})"
