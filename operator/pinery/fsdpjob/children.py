"""Pure builders of an FSDPJob's children: the headless Service, the trainer ConfigMap, the pods,
and an elastic job's rendezvous store pod (rendezvous.py).

The operator creates exactly these objects and `pinery render` prints them, so what a user
reviews in Git is what runs.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Optional

import yaml

from pinery.api.base import controller_reference
from pinery.api.fsdpjob import DEFAULT_TERMINATION_GRACE_SECONDS, RESERVED_VOLUME_PREFIX, SHM_PATH, FSDPJobSpec, PodTemplate
from pinery.api.immutability import mutable_fields
from pinery.fsdpjob import gang, node_avoidance, rendezvous
from pinery.fsdpjob.env import container_env
from pinery.fsdpjob.naming import (
    ANNOTATION_SPEC,
    CONFIG_DIR,
    CONFIG_FILE,
    CONFIG_PATH,
    KIND,
    LABEL_MANAGED_BY,
    LABEL_ROLE,
    RENDEZVOUS_CONTAINER,
    RENDEZVOUS_WAIT_CONTAINER,
    ROLE_RENDEZVOUS,
    TRAINER_CONTAINER,
    WAIT_CONTAINER,
    WAIT_RESOURCES,
    JobRef,
    config_map_name,
    master_addr,
    node_waits,
    pod_labels,
    pod_name,
    rendezvous_fqdn,
    rendezvous_pod_name,
    selector_labels,
    service_name,
)
from pinery.fsdpjob.placement import NO_PLACEMENT, Placement
from pinery.settings import OperatorSettings
from pinery_trainer.config import TrainerConfig

# The launcher is torchrun itself, but it checks the configuration first and exits with the
# workers' own codes (78, 143), which plain torchrun turns into 1.
DEFAULT_COMMAND = ("python", "-m", "pinery_trainer.launch", "--config", CONFIG_PATH)
PORT_NAME = "rendezvous"
SHM_VOLUME = f"{RESERVED_VOLUME_PREFIX}shm"
CHECKPOINT_VOLUME = f"{RESERVED_VOLUME_PREFIX}checkpoint"
CONFIG_VOLUME = f"{RESERVED_VOLUME_PREFIX}trainer-config"

DEFAULT_POD_SECURITY = {
    "runAsNonRoot": True,
    "runAsUser": 1000,
    "runAsGroup": 1000,
    # Lets the non-root user write to the checkpoint volume; OnRootMismatch avoids a recursive
    # chown of a large volume at every start.
    "fsGroup": 1000,
    "fsGroupChangePolicy": "OnRootMismatch",
    "seccompProfile": {"type": "RuntimeDefault"},
}
DEFAULT_CONTAINER_SECURITY = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
# Annotations are limited to 256 KiB in all; a spec larger than this is not recorded.
MAX_ACCEPTED_SPEC = 128 * 1024


def _metadata(job: JobRef, name: str, labels: dict[str, str], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": job.namespace,
        "labels": labels,
        "ownerReferences": [controller_reference(KIND, job.name, job.uid)],
    }
    if annotations:
        meta["annotations"] = annotations
    return meta


def accepted_spec(spec: FSDPJobSpec) -> dict[str, Any]:
    """The immutable part of a spec, in API form: what the children are built from."""
    mutable = set(mutable_fields(FSDPJobSpec))
    return {k: v for k, v in spec.to_api().items() if k not in mutable}


def build_service(job: JobRef, spec: FSDPJobSpec) -> dict[str, Any]:
    """Headless Service giving every pod a stable DNS name, published before pods are ready
    (ranks must find rank 0 while it is still starting)."""
    record = json.dumps(accepted_spec(spec), sort_keys=True, separators=(",", ":"))
    annotations = {ANNOTATION_SPEC: record} if len(record) <= MAX_ACCEPTED_SPEC else None
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _metadata(job, service_name(job.name), {LABEL_MANAGED_BY: "pinery", **selector_labels(job.name)}, annotations),
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": True,
            "selector": selector_labels(job.name),
            "ports": [{"name": PORT_NAME, "port": spec.master_port, "targetPort": spec.master_port, "protocol": "TCP"}],
        },
    }


# libyaml's emitter where PyYAML was built with it: the same text (tests/unit/fsdpjob/
# test_children.py) at a fifth of the pure-Python emitter's cost, once per new job.
YAML_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def trainer_config_yaml(spec: FSDPJobSpec) -> str:
    config = spec.trainer or TrainerConfig()
    data = config.model_dump(by_alias=True, exclude_none=True, mode="json")
    text: str = yaml.dump(data, Dumper=YAML_DUMPER, sort_keys=False)  # a str when no stream is given
    return text


def build_config_map(job: JobRef, spec: FSDPJobSpec) -> dict[str, Any] | None:
    """The built-in trainer's configuration; None when the job runs its own command."""
    if spec.command is not None:
        return None
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": _metadata(job, config_map_name(job.name), {LABEL_MANAGED_BY: "pinery", **selector_labels(job.name)}),
        "data": {CONFIG_FILE: trainer_config_yaml(spec)},
    }


def _volumes(job: JobRef, spec: FSDPJobSpec, template: PodTemplate) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(pod volumes, training container mounts): pinery's first, then the user's."""
    volumes: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = []
    if spec.shm_size is not None:
        volumes.append({"name": SHM_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": str(spec.shm_size)}})
        mounts.append({"name": SHM_VOLUME, "mountPath": SHM_PATH})
    if spec.command is None:
        volumes.append({"name": CONFIG_VOLUME, "configMap": {"name": config_map_name(job.name), "items": [{"key": CONFIG_FILE, "path": CONFIG_FILE}]}})
        mounts.append({"name": CONFIG_VOLUME, "mountPath": CONFIG_DIR, "readOnly": True})
    if spec.checkpoint is not None:
        volumes.append({"name": CHECKPOINT_VOLUME, "persistentVolumeClaim": {"claimName": spec.checkpoint.volume_claim_name}})
        mounts.append({"name": CHECKPOINT_VOLUME, "mountPath": spec.checkpoint.path})
    volumes += [v.to_api() for v in template.volumes or []]
    mounts += [m.to_api() for m in template.volume_mounts or []]
    return volumes, mounts


def _trainer_container(
    job: JobRef,
    spec: FSDPJobSpec,
    rank: int,
    attempt: int,
    settings: OperatorSettings,
    mounts: list[dict[str, Any]],
    template: PodTemplate,
    run_id: Optional[str] = None,
) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": TRAINER_CONTAINER,
        "image": spec.image or settings.trainer_image,
    }
    if spec.image_pull_policy:
        container["imagePullPolicy"] = spec.image_pull_policy
    container["command"] = list(spec.command) if spec.command is not None else list(DEFAULT_COMMAND)
    if spec.args:
        container["args"] = list(spec.args)
    container["env"] = container_env(job, spec, rank, attempt, settings, run_id)
    container["ports"] = [{"name": PORT_NAME, "containerPort": spec.master_port, "protocol": "TCP"}]
    if spec.resources is not None:
        container["resources"] = spec.resources.to_api()
    if mounts:
        container["volumeMounts"] = mounts
    container["securityContext"] = template.container_security_context or DEFAULT_CONTAINER_SECURITY
    # torchrun exits 1 whatever its worker returned; its failure summary at the end of the log
    # names the worker's exit code, and the kubelet keeps that tail in the container status.
    container["terminationMessagePolicy"] = "FallbackToLogsOnError"
    return container


def _wait_container(job: JobRef, spec: FSDPJobSpec, settings: OperatorSettings) -> dict[str, Any]:
    """Static nodes other than rank 0 wait for rank 0's port, elastic nodes for the store's."""
    if spec.elastic is None:
        name, host = WAIT_CONTAINER, master_addr(job.name, job.namespace, settings.cluster_domain)
    else:
        name, host = RENDEZVOUS_WAIT_CONTAINER, rendezvous_fqdn(job.name, job.namespace, settings.cluster_domain)
    target = f"{host}:{spec.master_port}"
    return {
        "name": name,
        "image": settings.operator_image,
        "command": ["pinery", "wait-for", target, "--timeout", str(spec.startup_timeout_seconds)],
        "resources": WAIT_RESOURCES,
        "securityContext": DEFAULT_CONTAINER_SECURITY,
    }


def build_pod(job: JobRef, spec: FSDPJobSpec, rank: int, attempt: int, settings: OperatorSettings,
              placement: Placement = NO_PLACEMENT, run_id: Optional[str] = None) -> dict[str, Any]:
    """The pod of node `rank` in restart attempt `attempt`, with what the scheduling
    integrations add (`placement`: a PodGroup's label, an admission's node labels, the nodes
    failed-node avoidance keeps it off); `run_id`: the elastic rendezvous it joins (env.py)."""
    template = spec.pod_template or PodTemplate()
    # pinery's own labels win: the operator finds and counts its pods by them.
    labels = {**(template.labels or {}), **placement.labels, **pod_labels(job.name, rank, attempt)}
    volumes, mounts = _volumes(job, spec, template)
    pod_spec: dict[str, Any] = {
        "hostname": pod_name(job.name, rank),
        "subdomain": service_name(job.name),
        # pinery restarts the whole gang; a kubelet restart of one rank would never rejoin it.
        "restartPolicy": "Never",
        # Service links would inject <SERVICE>_PORT variables, and a Service named `master`
        # would overwrite MASTER_PORT.
        "enableServiceLinks": False,
        # Suspend, restarts and deadlines stop pods with SIGTERM: time to write a checkpoint.
        "terminationGracePeriodSeconds": (
            template.termination_grace_period_seconds
            if template.termination_grace_period_seconds is not None
            else DEFAULT_TERMINATION_GRACE_SECONDS
        ),
    }
    if node_waits(spec.elastic is not None, rank):
        pod_spec["initContainers"] = [_wait_container(job, spec, settings)]
    pod_spec["containers"] = [_trainer_container(job, spec, rank, attempt, settings, mounts, template, run_id)]
    if volumes:
        pod_spec["volumes"] = volumes
    if template.service_account_name:
        pod_spec["serviceAccountName"] = template.service_account_name
    else:
        # Training needs no Kubernetes API access: progress is read from the logs by the operator.
        pod_spec["automountServiceAccountToken"] = False
    tolerations = list(template.tolerations or []) + [dict(t) for t in placement.tolerations if t not in (template.tolerations or [])]
    optional = {
        "nodeSelector": {**(template.node_selector or {}), **placement.node_selector},
        "tolerations": tolerations,
        "affinity": node_avoidance.merge_affinity(template.affinity, placement.avoid_nodes, placement.avoid_mode),
        "priorityClassName": template.priority_class_name,
        "schedulerName": placement.scheduler_name or template.scheduler_name,
        "runtimeClassName": template.runtime_class_name,
        "imagePullSecrets": [s.to_api() for s in template.image_pull_secrets] if template.image_pull_secrets else None,
    }
    pod_spec.update({k: v for k, v in optional.items() if v})
    pod_spec["securityContext"] = template.security_context or DEFAULT_POD_SECURITY
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": _metadata(job, pod_name(job.name, rank), labels, {**(template.annotations or {}), **placement.annotations} or None),
        "spec": pod_spec,
    }
    return copy.deepcopy(pod)  # no dict shared with the spec, the defaults or another pod


def build_rendezvous_pod(job: JobRef, spec: FSDPJobSpec, settings: OperatorSettings) -> Optional[dict[str, Any]]:
    """An elastic job's rendezvous store (rendezvous.py): one pod for the job's life, named and
    addressed under the job's Service like a node, labelled as no node (no node-rank label: the
    lifecycle, logs and metrics count only nodes). It runs the training image, so store and
    agents share a torch version, where the training pods may be scheduled and pulled (their
    node selector, tolerations, pull secrets and priority), but with the default scheduler and
    outside any PodGroup or avoided node: it is no member of the gang. None for a static job."""
    if spec.elastic is None:
        return None
    template = spec.pod_template or PodTemplate()
    name = rendezvous_pod_name(job.name)
    container: dict[str, Any] = {
        "name": RENDEZVOUS_CONTAINER,
        "image": spec.image or settings.trainer_image,
        "command": [*rendezvous.STORE_COMMAND, str(spec.master_port)],
        "env": [{"name": "PYTHONUNBUFFERED", "value": "1"}],
        "ports": [{"name": PORT_NAME, "containerPort": spec.master_port, "protocol": "TCP"}],
        "resources": rendezvous.STORE_RESOURCES,
        "securityContext": template.container_security_context or DEFAULT_CONTAINER_SECURITY,
        "terminationMessagePolicy": "FallbackToLogsOnError",
    }
    if spec.image_pull_policy:
        container["imagePullPolicy"] = spec.image_pull_policy
    pod_spec: dict[str, Any] = {
        "hostname": name,
        "subdomain": service_name(job.name),
        # A store that crashed restarts in place; its agents then fail their next round and the
        # gang restarts on the fresh store (rendezvous.store_step replaces one that ended).
        "restartPolicy": "Always",
        "enableServiceLinks": False,
        "automountServiceAccountToken": False,
        "terminationGracePeriodSeconds": 5,
        "containers": [container],
    }
    optional = {
        "nodeSelector": dict(template.node_selector or {}),
        "tolerations": list(template.tolerations or []),
        "priorityClassName": template.priority_class_name,
        "runtimeClassName": template.runtime_class_name,
        "imagePullSecrets": [s.to_api() for s in template.image_pull_secrets] if template.image_pull_secrets else None,
    }
    pod_spec.update({k: v for k, v in optional.items() if v})
    pod_spec["securityContext"] = template.security_context or DEFAULT_POD_SECURITY
    labels = {LABEL_MANAGED_BY: "pinery", **selector_labels(job.name), LABEL_ROLE: ROLE_RENDEZVOUS}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": _metadata(job, name, labels), "spec": pod_spec}
    return copy.deepcopy(pod)


def build_children(job: JobRef, spec: FSDPJobSpec, settings: OperatorSettings, attempt: int = 0,
                   admission: Placement = NO_PLACEMENT) -> list[dict[str, Any]]:
    """Everything the operator creates for a new job, in creation order (a gang's PodGroup
    before its pods, which carry its label or annotation); `admission` is what a Kueue
    admission adds to the pods, composed with the gang's as the lifecycle composes them."""
    config_map = build_config_map(job, spec)
    group = gang.pod_group(job, spec, attempt)
    placement = admission + gang.placement(job, spec, attempt)
    store = build_rendezvous_pod(job, spec, settings)
    pods = [build_pod(job, spec, rank, attempt, settings, placement) for rank in range(spec.num_nodes)]
    optional = [obj for obj in (config_map, group, store) if obj]
    return [build_service(job, spec), *optional, *pods]
