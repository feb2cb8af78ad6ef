"""Why a container is waiting, by the kubelet's rules (pure).

pkg/kubelet/kubelet_pods.go, convertToAPIContainerStatuses: a container the runtime has not
created yet waits with `ContainerCreating`, or `PodInitializing` when the pod has init
containers (for the init containers too, until the runtime reports one); a reason the kubelet
cached for the container (kuberuntime: CrashLoopBackOff, CreateContainerConfigError,
CreateContainerError) replaces that default. `ErrImagePull`/`ImagePullBackOff` never occur
here: local mode pulls no image.
"""

from __future__ import annotations

CONTAINER_CREATING = "ContainerCreating"
POD_INITIALIZING = "PodInitializing"
CRASH_LOOP_BACK_OFF = "CrashLoopBackOff"
CREATE_CONTAINER_CONFIG_ERROR = "CreateContainerConfigError"
CREATE_CONTAINER_ERROR = "CreateContainerError"


def default_reason(has_init_containers: bool) -> str:
    return POD_INITIALIZING if has_init_containers else CONTAINER_CREATING


def waiting_reason(has_init_containers: bool, cached: str = "") -> str:
    """The reason shown for a waiting container: the cached one, else the default."""
    return cached or default_reason(has_init_containers)


def crash_loop_message(delay_seconds: float, container: str, pod_name: str) -> str:
    """kuberuntime_manager.go doBackOff: "back-off %s restarting failed container=%s pod=%s",
    the delay as Go prints a Duration (10s, 1m20s, 5m0s); pod_name is format.Pod's."""
    return f"back-off {go_duration(delay_seconds)} restarting failed container={container} pod={pod_name}"


def go_duration(seconds: float) -> str:
    """time.Duration.String for whole seconds (what the back-off delays are)."""
    total = int(round(seconds))
    minutes, secs = divmod(total, 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    if minutes:
        return f"{minutes}m{secs}s"
    return f"{secs}s"
