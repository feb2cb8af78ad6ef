"""The FSDPJob API: a multi-node PyTorch (torchrun) training job with gang restarts."""

from __future__ import annotations

from typing import Annotated, Literal, Optional, Union

from pydantic import (
    Field,
    PositiveInt,
    StringConstraints,
    ValidationInfo,
    WithJsonSchema,
    model_validator,
)

from pinery.api.base import (
    DNS_1035_PATTERN,
    ApiModel,
    LabelValue,
    LocalObjectReference,
    ObjectName,
    OpaqueObject,
    QualifiedName,
    Quantity,
    immutable,
    report_problems,
)
from pinery.api.conditions import Condition
from pinery.api.resource import CelRule, PrinterColumn, ResourceInfo
from pinery.schema.errors import FieldError
from pinery_trainer.config import TrainerConfig

# Environment variables the operator sets on every training container. Users may not set them:
# a silently overridden MASTER_ADDR or WORLD_SIZE is the most common way multi-node jobs break.
RESERVED_ENV = frozenset(
    {
        "MASTER_ADDR",
        "MASTER_PORT",
        "NNODES",
        "NODE_RANK",
        "NPROC_PER_NODE",
        "WORLD_SIZE",
        "RANK",
        "LOCAL_RANK",
        "LOCAL_WORLD_SIZE",
        "TORCH_DISABLE_SHARE_RDZV_TCP_STORE",
    }
)
RESERVED_ENV_PREFIXES = ("PET_", "PINERY_")

# Names of the volumes pinery adds to every pod start with this; users' volumes may not.
RESERVED_VOLUME_PREFIX = "pinery-"
SHM_PATH = "/dev/shm"
TRAINER_CONFIG_DIR = "/etc/pinery"

# Time a pod gets after SIGTERM unless podTemplate says otherwise: enough for the trainer to
# write a checkpoint of a mid-sized model to a network volume (Kubernetes' own default is 30 s).
DEFAULT_TERMINATION_GRACE_SECONDS = 120

# Longest job name: pods are `<job>-node-<i>` and must stay valid 63-character host names.
JOB_NAME_MAX = 50
MAX_NODES = 1000

Phase = Literal["Pending", "Queued", "Running", "Restarting", "Succeeded", "Failed", "Suspended"]
ConditionType = Literal["Created", "Queued", "Running", "Restarting", "Succeeded", "Failed", "Suspended", "Synced"]

# Gang schedulers pinery makes a PodGroup for, and the scheduler name its pods get unless
# podTemplate.schedulerName says otherwise: scheduler-plugins' chart runs coscheduling as a
# second scheduler under this name (manifests/install/charts/as-a-second-scheduler), Volcano's
# scheduler is `volcano`.
GangScheduler = Literal["coscheduling", "volcano"]
DEFAULT_SCHEDULER_NAMES: dict[str, str] = {"coscheduling": "scheduler-plugins-scheduler", "volcano": "volcano"}
# Default and cap of spec.maxDisruptions; cap of the gang restart backoff.
DEFAULT_MAX_DISRUPTIONS = 10
MAX_RESTART_BACKOFF_SECONDS = 3600
# Cap of the progress watchdog's deadlines (a week): a step that takes longer is no step.
MAX_PROGRESS_DEADLINE_SECONDS = 7 * 24 * 3600
# Default and cap of spec.nodeAvoidance.maxAvoidedNodes (also the length of status.avoidedNodes).
DEFAULT_MAX_AVOIDED_NODES = 8
MAX_AVOIDED_NODES = 64


# int-or-string: `minimum` applies to integers and `pattern` to strings, so the schema alone
# accepts exactly the positive integers and "auto".
NprocPerNode = Annotated[
    Union[PositiveInt, Literal["auto"]],
    WithJsonSchema(
        {
            "x-kubernetes-int-or-string": True,
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "minimum": 1,
            "pattern": "^auto$",
        }
    ),
]

ShortString = Annotated[str, StringConstraints(max_length=4096)]
# Keys and values as Kubernetes requires them of labels, node selectors and annotations: the
# pods pinery makes from them would be refused otherwise.
LabelMap = dict[QualifiedName, LabelValue]
AnnotationMap = dict[QualifiedName, Annotated[str, StringConstraints(max_length=65536)]]
# A volume's sub-path: relative, and no `..` element (as Kubernetes checks volume mounts).
_PATH_ELEMENT = r"([^/]|[^/.][^/]|[^/][^/.]|[^/]{3,})"  # anything but '..' and '/'
SUB_PATH_PATTERN = rf"^({_PATH_ELEMENT}(/{_PATH_ELEMENT}?)*)?$"


class EnvVar(ApiModel):
    """An environment variable of the training container (as in a Kubernetes container)."""

    name: str = Field(
        min_length=1,
        max_length=256,
        pattern=r"^[-._a-zA-Z][-._a-zA-Z0-9]*$",
        description="Name of the variable. The rendezvous variables pinery sets are reserved.",
    )
    value: Optional[str] = Field(None, max_length=65536, description="Value of the variable.")
    value_from: Optional[OpaqueObject] = Field(
        None,
        description="Source of the value (secretKeyRef, configMapKeyRef, fieldRef, resourceFieldRef); not together with a non-empty value.",
    )


class ResourceRequirements(ApiModel):
    """Compute resources of the training container, per node."""

    limits: Optional[dict[QualifiedName, Quantity]] = Field(
        None,
        max_length=32,
        description="Maximum resources (cpu, memory, nvidia.com/gpu, ...).",
    )
    requests: Optional[dict[QualifiedName, Quantity]] = Field(
        None,
        max_length=32,
        description="Requested resources; GPU requests decide nprocPerNode 'auto'.",
    )


class VolumeMount(ApiModel):
    """Where a volume from podTemplate.volumes appears in the training container."""

    name: str = Field(min_length=1, max_length=63, description="Name of a volume in podTemplate.volumes.")
    mount_path: str = Field(
        min_length=1, max_length=4096, pattern=r"^/", description="Absolute path of the mount."
    )
    read_only: Optional[bool] = Field(None, description="Mount read-only.")
    sub_path: Optional[str] = Field(
        None, max_length=4096, pattern=SUB_PATH_PATTERN,
        description="Sub-path of the volume to mount: relative, without '..' elements.",
    )


class Volume(ApiModel):
    """A pod volume; everything besides the name is passed to the pod unchanged."""

    model_config = {"extra": "allow"}

    name: str = Field(
        min_length=1, max_length=63, pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
        description="Name of the volume.",
    )


class PodTemplate(ApiModel):
    """Settings applied to every pod of the job."""

    labels: Optional[LabelMap] = Field(None, max_length=64, description="Extra pod labels.")
    annotations: Optional[AnnotationMap] = Field(None, max_length=64, description="Extra pod annotations.")
    node_selector: Optional[LabelMap] = Field(None, max_length=64, description="Node selector of the pods.")
    tolerations: Optional[list[OpaqueObject]] = Field(None, max_length=64, description="Tolerations of the pods.")
    affinity: Optional[OpaqueObject] = Field(None, description="Affinity of the pods.")
    service_account_name: Optional[ObjectName] = Field(None, description="Service account the pods run as.")
    priority_class_name: Optional[ObjectName] = Field(None, description="Priority class of the pods.")
    scheduler_name: Optional[ObjectName] = Field(
        None, description="Scheduler of the pods (for example a gang scheduler such as volcano)."
    )
    runtime_class_name: Optional[ObjectName] = Field(None, description="Runtime class of the pods.")
    termination_grace_period_seconds: Optional[int] = Field(
        None,
        ge=0,
        le=86400,
        description=(
            "Seconds a pod has after SIGTERM (suspend, gang restart, deadline, deletion) before it "
            f"is killed; the built-in trainer saves a checkpoint in that time. Defaults to {DEFAULT_TERMINATION_GRACE_SECONDS}."
        ),
    )
    volumes: Optional[list[Volume]] = Field(
        None,
        max_length=64,
        json_schema_extra={"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]},
        description="Extra pod volumes (any Kubernetes volume source).",
    )
    volume_mounts: Optional[list[VolumeMount]] = Field(
        None,
        max_length=64,
        json_schema_extra={"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["mountPath"]},
        description="Mounts of those volumes in the training container; each mountPath once.",
    )
    image_pull_secrets: Optional[list[LocalObjectReference]] = Field(
        None, max_length=16, description="Secrets for pulling the image."
    )
    security_context: Optional[OpaqueObject] = Field(
        None,
        description="Pod security context. Without one pods run as non-root user 1000 with the RuntimeDefault seccomp profile.",
    )
    container_security_context: Optional[OpaqueObject] = Field(
        None,
        description="Security context of the training container. Without one privilege escalation is off and all capabilities are dropped.",
    )


class ElasticSpec(ApiModel):
    """Elastic training with torchrun's c10d rendezvous, in a store pod of the job's own: the job runs while any minNodes are alive."""

    min_nodes: int = Field(ge=1, le=MAX_NODES, description="Fewest nodes training may continue with.")
    max_nodes: Optional[int] = Field(
        None, ge=1, le=MAX_NODES, description="Most nodes that may join. Defaults to numNodes."
    )
    max_restarts: int = Field(
        3, ge=0, le=1000, description="Restarts torchrun itself makes when membership changes."
    )


class CheckpointSpec(ApiModel):
    """A volume for checkpoints, shared by every node, passed to the trainer."""

    volume_claim_name: ObjectName = Field(
        description="PersistentVolumeClaim mounted on every node (ReadWriteMany for multiple nodes)."
    )
    path: str = Field(
        "/checkpoints", min_length=1, max_length=4096, pattern=r"^/",
        description="Mount path of the volume in the training container.",
    )
    interval_steps: int = Field(
        100, ge=1, description="Checkpoint every this many steps (passed as PINERY_CHECKPOINT_INTERVAL)."
    )


class GangSpec(ApiModel):
    """Gang scheduling: a PodGroup per attempt, so the scheduler places all of a job's pods or none."""

    scheduler: GangScheduler = Field(
        description=(
            "coscheduling (scheduler-plugins: scheduling.x-k8s.io/v1alpha1 PodGroup) or volcano "
            "(scheduling.volcano.sh/v1beta1 PodGroup). The pods get the scheduler name "
            "scheduler-plugins-scheduler or volcano unless podTemplate.schedulerName is set."
        )
    )
    schedule_timeout_seconds: Optional[int] = Field(
        None, ge=1, le=86400,
        description="coscheduling only: how long the scheduler waits for the whole gang before it gives up on an attempt. Defaults to the plugin's own.",
    )
    queue: Optional[ObjectName] = Field(None, description="volcano only: the Volcano queue of the PodGroup. Defaults to Volcano's default queue.")


_MUTABLE_NOTE = "Can be changed while the job exists."


class NodeAvoidanceSpec(ApiModel):
    """Which failures make later attempts avoid the Kubernetes node they happened on, and how."""

    policy: Literal["Auto", "Always", "Never"] = Field(
        "Auto",
        description=(
            "Auto: avoid the node of a failure that is not the job's own (a disruption other than preemption, a node-level "
            "pod failure such as Evicted or NodeLost, death by SIGKILL without OOMKilled or by SIGBUS, a device or NCCL "
            "system error in the termination message, a stall of some nodes only); Always: the node of every failure; "
            "Never: no avoidance."
        ),
    )
    mode: Literal["Auto", "Required", "Preferred"] = Field(
        "Auto",
        description=(
            "How pods avoid the nodes: Required (requiredDuringScheduling node affinity: never on them), Preferred "
            "(preferredDuringScheduling: elsewhere when the scheduler can), or Auto: Required when the operator sees "
            "enough Ready, schedulable nodes matching the pods' node selector besides the avoided ones, else Preferred."
        ),
    )
    max_avoided_nodes: int = Field(
        DEFAULT_MAX_AVOIDED_NODES, ge=1, le=MAX_AVOIDED_NODES,
        description="Most nodes avoided at once; past it the node avoided longest ago is used again.",
    )


class FSDPJobSpec(ApiModel):
    """Desired state of a multi-node PyTorch FSDP job.

    Only suspend, the deadlines (activeDeadlineSeconds, progressDeadlineSeconds,
    firstProgressDeadlineSeconds), ttlSecondsAfterFinished, maxDisruptions and
    restartBackoffSeconds can change after creation.
    """

    num_nodes: int = Field(
        ge=1, le=MAX_NODES, json_schema_extra=immutable(),
        description="Number of nodes (pods); each runs torchrun with nprocPerNode processes.",
    )
    nproc_per_node: NprocPerNode = Field(
        "auto",
        json_schema_extra=immutable(),
        description=(
            "Processes per node: a positive integer, or 'auto' for the number of GPUs the "
            "container requests (nvidia.com/gpu or amd.com/gpu), or 1 without GPUs."
        ),
    )
    image: Optional[ShortString] = Field(
        None,
        min_length=1,
        pattern=r"^\S(.*\S)?$",
        json_schema_extra=immutable(),
        description="Container image. Defaults to the operator's configured trainer image.",
    )
    image_pull_policy: Optional[Literal["Always", "IfNotPresent", "Never"]] = Field(
        None, json_schema_extra=immutable(), description="Image pull policy of the training container."
    )
    command: Optional[list[ShortString]] = Field(
        None,
        min_length=1,
        max_length=256,
        json_schema_extra=immutable(),
        description=(
            "Command of the training container, for example [torchrun, train.py]. The "
            "rendezvous is in the environment, so torchrun needs no flags. Without a command "
            "the built-in trainer runs with spec.trainer."
        ),
    )
    args: Optional[list[ShortString]] = Field(
        None, max_length=256, json_schema_extra=immutable(), description="Arguments to the command."
    )
    env: Optional[list[EnvVar]] = Field(
        None,
        max_length=256,
        json_schema_extra=immutable(),
        description=(
            "Extra environment variables. The rendezvous variables pinery sets "
            "(MASTER_ADDR, WORLD_SIZE, RANK, PET_*, PINERY_*, ...) cannot be set here."
        ),
    )
    resources: Optional[ResourceRequirements] = Field(
        None, json_schema_extra=immutable(), description="Resources of the training container on each node."
    )
    master_port: int = Field(
        29500, ge=1, le=65535, json_schema_extra=immutable(),
        description="Port of the rendezvous: on node 0, or on the job's rendezvous store pod with elastic.",
    )
    max_restarts: int = Field(
        3, ge=0, le=1000, json_schema_extra=immutable(),
        description="Gang restarts allowed before the job fails. Counted in status.restarts, which nothing resets.",
    )
    non_retryable_exit_codes: Optional[list[Annotated[int, Field(ge=1, le=255)]]] = Field(
        None,
        max_length=255,
        json_schema_extra=immutable(),
        description="Exit codes that fail the job at once instead of restarting it.",
    )
    suspend: bool = Field(
        False, description=f"Remove the pods but keep the job and its status. {_MUTABLE_NOTE}"
    )
    active_deadline_seconds: Optional[int] = Field(
        None, ge=1, description=f"Fail the job when it has run this long. {_MUTABLE_NOTE}"
    )
    progress_deadline_seconds: Optional[int] = Field(
        None, ge=1, le=MAX_PROGRESS_DEADLINE_SECONDS,
        description=(
            "Restart the gang (reason Stalled, spending maxRestarts) when the running job's reported step "
            "(status.progress.step, from rank 0's progress lines) has not changed for this long. Unset: no watchdog. "
            f"{_MUTABLE_NOTE}"
        ),
    )
    first_progress_deadline_seconds: Optional[int] = Field(
        None, ge=1, le=MAX_PROGRESS_DEADLINE_SECONDS,
        description=(
            "Restart the gang (reason Stalled) when it has run this long without reporting a step: the first "
            "progress line of each gang must come within it (model loading, a checkpoint restore, compilation). "
            f"Defaults to progressDeadlineSeconds; unset with it unset: no first-step deadline. {_MUTABLE_NOTE}"
        ),
    )
    startup_timeout_seconds: int = Field(
        600, ge=1, json_schema_extra=immutable(),
        description="Fail the job when its pods are not all running this long after they were created (Pending, unschedulable, image pull errors).",
    )
    ttl_seconds_after_finished: Optional[int] = Field(
        None, ge=0, description=f"Delete the job this long after it finished. {_MUTABLE_NOTE}"
    )
    shm_size: Optional[Quantity] = Field(
        None, json_schema_extra=immutable(),
        description="Size of a memory-backed /dev/shm (for example 8Gi); data loaders and NCCL need more than the default 64Mi.",
    )
    elastic: Optional[ElasticSpec] = Field(
        None, json_schema_extra=immutable(),
        description="Elastic rendezvous; without it all numNodes nodes must train together.",
    )
    checkpoint: Optional[CheckpointSpec] = Field(
        None, json_schema_extra=immutable(), description="Checkpoint volume shared by the nodes."
    )
    trainer: Optional[TrainerConfig] = Field(
        None, json_schema_extra=immutable(),
        description="Configuration of the built-in trainer, used when command is not set.",
    )
    pod_template: Optional[PodTemplate] = Field(
        None, json_schema_extra=immutable(), description="Settings applied to every pod."
    )
    gang: Optional[GangSpec] = Field(
        None, json_schema_extra=immutable(),
        description="Gang scheduling through a PodGroup of the named scheduler; without it pods are scheduled one by one.",
    )
    max_disruptions: int = Field(
        DEFAULT_MAX_DISRUPTIONS, ge=0, le=1000,
        description=(
            "Gang restarts after disruptions (preemption, eviction, node loss: not the job's fault) that do not "
            "spend maxRestarts; past this many, a disruption counts as a failure. Counted in status.disruptions. "
            f"{_MUTABLE_NOTE}"
        ),
    )
    node_avoidance: NodeAvoidanceSpec = Field(
        default_factory=NodeAvoidanceSpec,
        description=(
            "Failed-node avoidance: the pods of later attempts avoid the Kubernetes nodes where earlier ones failed for "
            f"reasons not the job's own (status.avoidedNodes, NodeAvoided Events). On by default. {_MUTABLE_NOTE}"
        ),
    )
    restart_backoff_seconds: int = Field(
        0, ge=0, le=MAX_RESTART_BACKOFF_SECONDS,
        description=(
            "Base of the exponential wait before a gang restart's new pods are created (doubled per restart, "
            f"capped at {MAX_RESTART_BACKOFF_SECONDS}s; status.nextAttemptAfter). 0 restarts at once. {_MUTABLE_NOTE}"
        ),
    )

    def problems(self) -> list[FieldError]:
        """Cross-field rules (each also a CEL rule in the CRD; a test keeps them in step)."""
        out: list[FieldError] = []
        for i, var in enumerate(self.env or []):
            if is_reserved_env(var.name):
                out.append(FieldError(f"spec.env[{i}].name", f"{var.name} is set by pinery and cannot be overridden"))
            if var.value and var.value_from is not None:
                out.append(FieldError(f"spec.env[{i}].valueFrom", "cannot be set together with a non-empty value"))
        if self.command is not None and self.trainer is not None:
            out.append(FieldError("spec.trainer", "is used only without spec.command; remove one of them"))
        if self.trainer is not None:
            out.extend(FieldError(f"spec.trainer.{path}", msg) for path, msg in self.trainer.problems())
            out.extend(self._shard_group_problems())
        if self.elastic is not None:
            max_nodes = self.elastic.max_nodes or self.num_nodes
            if self.elastic.min_nodes > max_nodes:
                out.append(FieldError("spec.elastic.minNodes", f"must not exceed maxNodes ({max_nodes})"))
            if not self.elastic.min_nodes <= self.num_nodes <= max_nodes:
                out.append(FieldError("spec.numNodes", f"must lie between elastic.minNodes and elastic.maxNodes ({self.elastic.min_nodes}..{max_nodes})"))
        if self.gang is not None:
            if self.gang.schedule_timeout_seconds is not None and self.gang.scheduler != "coscheduling":
                out.append(FieldError("spec.gang.scheduleTimeoutSeconds", "is a coscheduling setting (Volcano's PodGroup has none)"))
            if self.gang.queue is not None and self.gang.scheduler != "volcano":
                out.append(FieldError("spec.gang.queue", "is a volcano setting; queue with Kueue by the label kueue.x-k8s.io/queue-name"))
        template = self.pod_template or PodTemplate()
        volumes = {v.name for v in template.volumes or []}
        for i, volume in enumerate(template.volumes or []):
            if volume.name.startswith(RESERVED_VOLUME_PREFIX):
                out.append(
                    FieldError(
                        f"spec.podTemplate.volumes[{i}].name",
                        f"names starting with {RESERVED_VOLUME_PREFIX!r} are reserved for the volumes pinery adds",
                    )
                )
        taken = self.reserved_mount_paths()
        for i, mount in enumerate(template.volume_mounts or []):
            if mount.mount_path in taken:
                out.append(FieldError(f"spec.podTemplate.volumeMounts[{i}].mountPath", f"{mount.mount_path} is where pinery mounts {taken[mount.mount_path]}"))
        for i, mount in enumerate(template.volume_mounts or []):
            if mount.name not in volumes:
                out.append(
                    FieldError(
                        f"spec.podTemplate.volumeMounts[{i}].name",
                        f"no volume named {mount.name!r} in podTemplate.volumes",
                    )
                )
        return out

    def _shard_group_problems(self) -> list[FieldError]:
        """A hybrid shard group must divide every world size the job can have.

        The workers check it too (pinery_trainer/mesh.py), but only once pods are scheduled;
        with an integer nprocPerNode the world sizes are known here. 'auto' is left to them.
        """
        assert self.trainer is not None
        fsdp = self.trainer.fsdp
        if fsdp.strategy != "hybrid" or not isinstance(self.nproc_per_node, int):
            return []
        nproc = self.nproc_per_node
        group = fsdp.shard_group_size if fsdp.shard_group_size is not None else nproc
        if self.elastic is None:
            nodes = [self.num_nodes]
        else:
            nodes = list(range(self.elastic.min_nodes, (self.elastic.max_nodes or self.num_nodes) + 1))
        bad = [n for n in nodes if (n * nproc) % group]
        if not bad:
            return []
        worlds = ", ".join(str(n * nproc) for n in bad)
        return [FieldError("spec.trainer.fsdp.shardGroupSize",
                           f"{group} must divide the world size (nodes x nprocPerNode {nproc}: {worlds})")]

    def reserved_mount_paths(self) -> dict[str, str]:
        """Mount paths of the volumes pinery adds to the training container, and what they hold."""
        paths = {}
        if self.shm_size is not None:
            paths[SHM_PATH] = "the shared-memory volume (shmSize)"
        if self.command is None:
            paths[TRAINER_CONFIG_DIR] = "the built-in trainer's configuration"
        if self.checkpoint is not None:
            paths[self.checkpoint.path] = "the checkpoint volume"
        return paths

    @model_validator(mode="after")
    def _check_rules(self, info: ValidationInfo) -> "FSDPJobSpec":
        report_problems(self.problems(), info)
        return self


def is_reserved_env(name: str) -> bool:
    return name in RESERVED_ENV or name.startswith(RESERVED_ENV_PREFIXES)


class NodeStatus(ApiModel):
    """Observed state of one node (pod) of the job."""

    index: int = Field(ge=0, description="Node rank.")
    pod: Optional[str] = Field(None, description="Name of the node's current pod.")
    phase: Optional[Literal["Pending", "Running", "Succeeded", "Failed", "Unknown"]] = Field(
        None, description="Phase of the pod."
    )
    exit_code: Optional[int] = Field(None, description="Exit code of the training container, once it has exited.")
    restarts: int = Field(0, ge=0, description="Times this node's pod was replaced.")
    attempt: int = Field(
        0, ge=0,
        description="Attempt the node's pod belongs to (its pinery.dev/attempt label); pods of older attempts are being replaced.",
    )
    reason: Optional[str] = Field(None, description="Why the pod is in this phase (for example OOMKilled, ImagePullBackOff).")
    node_name: Optional[str] = Field(None, description="Kubernetes node the pod was bound to (its spec.nodeName).")


class AvoidedNode(ApiModel):
    """A Kubernetes node the job's pods avoid (spec.nodeAvoidance)."""

    node_name: str = Field(description="Name of the Kubernetes node.")
    reason: str = Field(description="Why: the failure's reason (EvictionByEvictionAPI, NodeLost, Signal, DeviceError, Stalled, ...).")
    message: Optional[str] = Field(None, description="The failure on that node, as reported.")
    node: Optional[int] = Field(None, ge=0, description="Rank of the job's node that failed there.")
    attempt: Optional[int] = Field(None, ge=0, description="Attempt that failed there.")
    time: Optional[str] = Field(None, json_schema_extra={"format": "date-time"}, description="When pinery started avoiding it.")


class DisruptionStatus(ApiModel):
    """The last disruption that restarted the gang without spending maxRestarts."""

    reason: str = Field(description="The pod's DisruptionTarget reason (PreemptionByScheduler, EvictionByEvictionAPI, ...) or NodeLost.")
    message: Optional[str] = Field(None, description="What the pod's condition said.")
    node: Optional[int] = Field(None, ge=0, description="Rank of the node disrupted first.")
    time: Optional[str] = Field(None, json_schema_extra={"format": "date-time"}, description="When pinery acted on it.")


class FailureStatus(ApiModel):
    """A failed attempt: its first failing node, and the end of that node's log."""

    attempt: int = Field(ge=0, description="The attempt that failed (the pods' pinery.dev/attempt label).")
    node: int = Field(ge=0, description="Rank of the node that failed first.")
    pod: Optional[str] = Field(None, description="Name of its pod (deleted by the restart that followed).")
    reason: Optional[str] = Field(None, description="Why it failed (Error, OOMKilled, ...).")
    exit_code: Optional[int] = Field(None, description="The exit code (the worker's own under torchrun).")
    time: Optional[str] = Field(None, json_schema_extra={"format": "date-time"}, description="When pinery acted on it.")
    log_tail: Optional[str] = Field(
        None, max_length=4096,
        description=(
            "The last lines of the training container's log (at most 80 lines and 2048 bytes, whole lines, "
            "torchrun's own failure report left out, values shaped like credentials masked)."
        ),
    )


class PodGroupStatus(ApiModel):
    """The PodGroup of the current attempt, as its scheduler reports it."""

    name: str = Field(description="Name of the PodGroup.")
    scheduler: Optional[GangScheduler] = Field(None, description="coscheduling or volcano.")
    phase: Optional[str] = Field(None, description="The PodGroup's status.phase (Pending, Scheduling, Inqueue, Running, ...).")
    message: Optional[str] = Field(None, description="What the scheduler says about the group, when it says something.")
    enqueued_time: Optional[str] = Field(
        None, json_schema_extra={"format": "date-time"},
        description="When the group was first seen let in by its Volcano queue (Pending to Inqueue or later): startupTimeoutSeconds counts from then.",
    )


class AdmissionStatus(ApiModel):
    """The Kueue admission the current attempt's pods were built from."""

    workload: str = Field(description="Name of the job's Workload.")
    cluster_queue: Optional[str] = Field(None, description="ClusterQueue that admitted the Workload.")
    flavors: Optional[dict[str, str]] = Field(None, description="ResourceFlavor assigned per resource.")
    count: Optional[int] = Field(None, ge=0, description="Nodes admitted.")
    node_selector: Optional[dict[str, str]] = Field(None, description="Node labels the admission added to the pods.")
    tolerations: Optional[list[OpaqueObject]] = Field(None, description="Tolerations the admission added to the pods.")
    labels: Optional[dict[str, str]] = Field(None, description="Pod labels from admission checks.")
    annotations: Optional[dict[str, str]] = Field(None, description="Pod annotations from admission checks.")


class Progress(ApiModel):
    """Training progress reported by rank 0 (the built-in trainer, or any script: docs/fsdpjob.md, "Progress")."""

    step: Optional[int] = Field(None, ge=0, description="Last completed optimizer step.")
    total_steps: Optional[int] = Field(None, ge=0, description="Steps the run will take.")
    loss: Optional[float] = Field(None, description="Training loss at that step.")
    tokens_per_second: Optional[float] = Field(None, ge=0, description="Training throughput over the whole job.")
    last_checkpoint_step: Optional[int] = Field(None, ge=0, description="Step of the newest complete checkpoint.")
    updated_at: Optional[str] = Field(
        None, json_schema_extra={"format": "date-time"}, description="When progress was last reported (the newest line)."
    )
    step_time: Optional[str] = Field(
        None, json_schema_extra={"format": "date-time"},
        description="When the step last changed (the first line that reported it); progressDeadlineSeconds counts from then.",
    )


class FSDPJobStatus(ApiModel):
    """Observed state of the job, written by the operator."""

    conditions: list[Condition] = Field(
        default_factory=list,
        max_length=16,
        json_schema_extra={"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"]},
        description=(
            "Created, Queued, Running, Restarting, Succeeded, Failed and Suspended; Synced is False when "
            "an immutable field was changed and the pods keep running the spec they were created from."
        ),
    )
    phase: Optional[Phase] = Field(
        None, description="Pending, Queued, Running, Restarting, Succeeded, Failed or Suspended."
    )
    restarts: int = Field(0, ge=0, description="Gang restarts so far (never reset).")
    disruptions: int = Field(
        0, ge=0, description="Gang restarts after disruptions that did not spend maxRestarts (never reset)."
    )
    requeues: int = Field(
        0, ge=0,
        description=(
            "Kueue evictions (and lost admissions) after which the gang started again in a new attempt "
            "without spending maxRestarts (never reset; Kueue counts them in the Workload's requeueState)."
        ),
    )
    last_disruption: Optional[DisruptionStatus] = Field(None, description="The last of those disruptions.")
    next_attempt_after: Optional[str] = Field(
        None, json_schema_extra={"format": "date-time"},
        description=(
            "After a gang restart with restartBackoffSeconds: when the attempt's pods are (or were first) created; "
            "the startup timeout counts from then."
        ),
    )
    failures: list[FailureStatus] = Field(
        default_factory=list,
        max_length=3,
        description=(
            "The last failed attempts (at most 3, oldest first), each with the end of its failing node's log: "
            "what is left of an attempt whose pods a gang restart deleted (`pinery logs JOB --attempt K` shows it)."
        ),
    )
    avoided_nodes: list[AvoidedNode] = Field(
        default_factory=list, max_length=MAX_AVOIDED_NODES,
        json_schema_extra={"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["nodeName"]},
        description="Kubernetes nodes the pods of new attempts avoid, oldest first (spec.nodeAvoidance).",
    )
    avoidance_mode: Optional[Literal["Required", "Preferred"]] = Field(
        None, description="How the current attempt's pods avoid those nodes (spec.nodeAvoidance.mode).",
    )
    pod_group: Optional[PodGroupStatus] = Field(None, description="The current attempt's PodGroup (spec.gang).")
    admission: Optional[AdmissionStatus] = Field(None, description="The Kueue admission of the current attempt (label kueue.x-k8s.io/queue-name).")
    nodes: list[NodeStatus] = Field(
        default_factory=list,
        max_length=MAX_NODES,
        json_schema_extra={"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["index"]},
        description="Per-node state.",
    )
    progress: Optional[Progress] = Field(None, description="Training progress (built-in trainer).")
    start_time: Optional[str] = Field(
        None, json_schema_extra={"format": "date-time"}, description="When the job's pods were first created."
    )
    completion_time: Optional[str] = Field(
        None, json_schema_extra={"format": "date-time"}, description="When the job succeeded or failed."
    )
    observed_generation: Optional[int] = Field(None, ge=0, description="The metadata.generation the operator last acted on.")
    settled_generation: Optional[int] = Field(
        None, ge=0,
        description="Set when the job has finished and the operator has nothing left to do for it (its pods stopped, its "
                    "Workload released, no ttlSecondsAfterFinished to wait for): the metadata.generation it settled at. "
                    "The operator keeps no task for a settled job; a new generation wakes it again.",
    )


SPEC_RULES = (
    CelRule(
        rule=(
            "!has(self.env) || self.env.all(e, !(e.name in " + repr(sorted(RESERVED_ENV)) + ")"
            " && !e.name.startsWith('PET_') && !e.name.startsWith('PINERY_'))"
        ),
        message="env must not set the variables pinery sets (MASTER_ADDR, WORLD_SIZE, RANK, PET_*, PINERY_*, ...)",
        field_path=".env",
    ),
    CelRule(
        rule="!has(self.env) || self.env.all(e, !has(e.valueFrom) || !has(e.value) || e.value == '')",
        message="env entries cannot have both a non-empty value and valueFrom",
        field_path=".env",
    ),
    CelRule(
        rule="!has(self.command) || !has(self.trainer)",
        message="trainer is used only without command; remove one of them",
        field_path=".trainer",
    ),
    CelRule(
        rule="!has(self.elastic) || self.elastic.minNodes <= (has(self.elastic.maxNodes) ? self.elastic.maxNodes : self.numNodes)",
        message="elastic.minNodes must not exceed elastic.maxNodes",
        field_path=".elastic.minNodes",
    ),
    CelRule(
        rule=(
            "!has(self.elastic) || (self.elastic.minNodes <= self.numNodes"
            " && self.numNodes <= (has(self.elastic.maxNodes) ? self.elastic.maxNodes : self.numNodes))"
        ),
        message="numNodes must lie between elastic.minNodes and elastic.maxNodes",
        field_path=".numNodes",
    ),
    CelRule(
        rule="!has(self.gang) || !has(self.gang.scheduleTimeoutSeconds) || self.gang.scheduler == 'coscheduling'",
        message="gang.scheduleTimeoutSeconds is a coscheduling setting (Volcano's PodGroup has none)",
        field_path=".gang.scheduleTimeoutSeconds",
    ),
    CelRule(
        rule="!has(self.gang) || !has(self.gang.queue) || self.gang.scheduler == 'volcano'",
        message="gang.queue is a volcano setting; queue with Kueue by the label kueue.x-k8s.io/queue-name",
        field_path=".gang.queue",
    ),
    CelRule(
        rule="!has(self.podTemplate) || !has(self.podTemplate.volumes) || self.podTemplate.volumes.all(v, !v.name.startsWith('pinery-'))",
        message="podTemplate.volumes names starting with 'pinery-' are reserved for the volumes pinery adds",
        field_path=".podTemplate.volumes",
    ),
    CelRule(
        rule=(
            "!has(self.podTemplate) || !has(self.podTemplate.volumeMounts) || self.podTemplate.volumeMounts.all(m,"
            " !(has(self.shmSize) && m.mountPath == '/dev/shm')"
            " && !(!has(self.command) && m.mountPath == '/etc/pinery')"
            " && !(has(self.checkpoint) && m.mountPath == self.checkpoint.path))"
        ),
        message=(
            "podTemplate.volumeMounts must not use the paths pinery mounts "
            "(/dev/shm with shmSize, /etc/pinery without command, checkpoint.path)"
        ),
        field_path=".podTemplate.volumeMounts",
    ),
    CelRule(
        rule=(
            "!has(self.podTemplate) || !has(self.podTemplate.volumeMounts)"
            " || self.podTemplate.volumeMounts.all(m, has(self.podTemplate.volumes) && self.podTemplate.volumes.exists(v, v.name == m.name))"
        ),
        message="every podTemplate.volumeMounts entry must name a volume in podTemplate.volumes",
        field_path=".podTemplate.volumeMounts",
    ),
)

FSDP_JOB = ResourceInfo(
    kind="FSDPJob",
    plural="fsdpjobs",
    short_names=("fj",),
    description=(
        "A multi-node PyTorch FSDP training job: one headless Service and one pod per node "
        "running torchrun with the rendezvous wired in, gang restarts and honest status."
    ),
    spec_model=FSDPJobSpec,
    status_model=FSDPJobStatus,
    spec_rules=SPEC_RULES,
    printer_columns=(
        PrinterColumn("Nodes", ".spec.numNodes", "integer", "Number of nodes."),
        PrinterColumn("Procs", ".spec.nprocPerNode", "string", "Processes per node."),
        PrinterColumn("Phase", ".status.phase", "string", "Summary of the conditions."),
        PrinterColumn("Restarts", ".status.restarts", "integer", "Gang restarts so far."),
        PrinterColumn("Step", ".status.progress.step", "integer", "Last training step reported."),
        PrinterColumn("Age", ".metadata.creationTimestamp", "date", "Time since the object was created."),
        PrinterColumn("Loss", ".status.progress.loss", "number", "Last training loss reported.", priority=1),
        PrinterColumn("Disruptions", ".status.disruptions", "integer", "Gang restarts after disruptions (not counted as restarts).", priority=1),
    ),
    name_max_length=JOB_NAME_MAX,
    name_pattern=DNS_1035_PATTERN,
    name_hint=(
        f"a DNS-1035 label of at most {JOB_NAME_MAX} characters (lowercase letters, digits and "
        "'-', starting with a letter): it names the job's Service and pods"
    ),
)
