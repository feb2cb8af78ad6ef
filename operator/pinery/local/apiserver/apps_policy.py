"""Pure rules of `apps/v1` Deployments and ReplicaSets: API defaults, validation, the
pod-template hash and the rolling-update arithmetic. The controllers (`apps_controllers`) and
admission (`builtins`) call these; `tests/unit/test_apps_policy.py` holds upstream's own cases.

Sources (kubernetes/kubernetes): `pkg/apis/apps/v1/defaults.go` (SetDefaults_Deployment,
SetDefaults_ReplicaSet), `pkg/apis/core/v1/defaults.go` (SetDefaults_PodSpec),
`pkg/apis/apps/validation/validation.go` (ValidateDeploymentSpec, ValidateReplicaSetSpec,
ValidatePodTemplateSpecForReplicaSet), `pkg/controller/controller_utils.go` (ComputeHash),
`pkg/controller/deployment/util/deployment_util.go` (ResolveFenceposts, MaxUnavailable,
MaxSurge, NewRSNewReplicas, DeploymentComplete, DeploymentProgressing, EqualIgnoreHash).
"""

from __future__ import annotations

import copy
import json
import math
import re
from typing import Any

from pinery.local.apiserver import podspec_defaults
from pinery.schema.errors import FieldError

HASH_LABEL = "pod-template-hash"  # apps.DefaultDeploymentUniqueLabelKey
REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
# Condition reasons, deployment_util.go
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
RS_UPDATED = "ReplicaSetUpdated"
NEW_RS_CREATED = "NewReplicaSetCreated"
MIN_AVAILABLE = "MinimumReplicasAvailable"
MIN_UNAVAILABLE = "MinimumReplicasUnavailable"


# --- defaults ---------------------------------------------------------------------------------


def default_template(template: dict[str, Any]) -> None:
    """SetDefaults_PodSpec and SetDefaults_Container as they apply to a PodTemplateSpec (the
    Pod-only defaults, serviceAccountName, tolerations, enableServiceLinks, come at pod creation)."""
    podspec_defaults.default_pod_spec(template.setdefault("spec", {}))


def default_deployment(obj: dict[str, Any]) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    strategy = spec.setdefault("strategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        rolling.setdefault("maxUnavailable", "25%")
        rolling.setdefault("maxSurge", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    default_template(spec.setdefault("template", {}))


def default_replicaset(obj: dict[str, Any]) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    default_template(spec.setdefault("template", {}))


# --- label selectors (metav1.LabelSelector) -----------------------------------------------------


def selector_matches(selector: dict[str, Any] | None, labels: dict[str, str] | None) -> bool:
    """metav1.LabelSelectorAsSelector(...).Matches; an empty selector matches everything."""
    labels = labels or {}
    selector = selector or {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def selector_text(selector: dict[str, Any] | None) -> str:
    """metav1.FormatLabelSelector, as `kubectl get -o wide` and Scale.status.selector show it."""
    selector = selector or {}
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        op, key, values = expr.get("operator"), expr.get("key"), ",".join(expr.get("values") or [])
        parts.append({"In": f"{key} in ({values})", "NotIn": f"{key} notin ({values})",
                      "Exists": key, "DoesNotExist": f"!{key}"}.get(op, key))
    return ",".join(parts) or "<none>"


# --- validation -------------------------------------------------------------------------------

_INT_OR_PERCENT = re.compile(r"^(\d+)%$")


def _int_or_percent_problems(value: Any, path: str) -> list[FieldError]:
    # ValidatePositiveIntOrPercent and IsNotMoreThan100Percent
    if isinstance(value, bool) or value is None:
        return [FieldError(path, f"Invalid value: {json.dumps(value)}: must be an integer or percentage (e.g '5%')")]
    if isinstance(value, int):
        return [] if value >= 0 else [FieldError(path, f"Invalid value: {value}: must be greater than or equal to 0")]
    match = _INT_OR_PERCENT.match(str(value))
    if not match:
        return [FieldError(
            path,
            f'Invalid value: "{value}": a valid percent string must be a numeric string followed by an ending \'%\' '
            "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
        )]
    if int(match.group(1)) > 100:
        return [FieldError(path, f'Invalid value: "{value}": must not be greater than 100%')]
    return []


def _common_problems(spec: dict[str, Any], kind: str) -> list[FieldError]:
    out: list[FieldError] = []
    replicas = spec.get("replicas")
    if not isinstance(replicas, int) or replicas < 0:
        out.append(FieldError("spec.replicas", f"Invalid value: {json.dumps(replicas)}: must be greater than or equal to 0"))
    selector = spec.get("selector")
    template = spec.get("template") or {}
    labels = (template.get("metadata") or {}).get("labels") or {}
    if selector is None:
        out.append(FieldError("spec.selector", "Required value"))
    elif not (selector.get("matchLabels") or selector.get("matchExpressions")):
        out.append(FieldError("spec.selector", f"Invalid value: {json.dumps(selector)}: empty selector is invalid for {kind}"))
    elif not selector_matches(selector, labels):
        out.append(FieldError("spec.template.metadata.labels", f"Invalid value: {json.dumps(labels)}: `selector` does not match template `labels`"))
    policy = (template.get("spec") or {}).get("restartPolicy")
    if policy != "Always":
        out.append(FieldError("spec.template.spec.restartPolicy", f'Unsupported value: "{policy}": supported values: "Always"'))
    return out


def deployment_problems(obj: dict[str, Any]) -> list[FieldError]:
    spec = obj.get("spec") or {}
    out = _common_problems(spec, "deployment")
    strategy = spec.get("strategy") or {}
    if strategy.get("type") not in ("RollingUpdate", "Recreate"):
        out.append(FieldError("spec.strategy.type", f'Unsupported value: "{strategy.get("type")}": supported values: "Recreate", "RollingUpdate"'))
    if strategy.get("type") == "Recreate" and strategy.get("rollingUpdate") is not None:
        out.append(FieldError("spec.strategy.rollingUpdate", "Forbidden: may not be specified when strategy `type` is 'Recreate'"))
    rolling = strategy.get("rollingUpdate")
    if strategy.get("type") == "RollingUpdate" and isinstance(rolling, dict):
        surge, unavailable = rolling.get("maxSurge"), rolling.get("maxUnavailable")
        found = _int_or_percent_problems(surge, "spec.strategy.rollingUpdate.maxSurge")
        found += _int_or_percent_problems(unavailable, "spec.strategy.rollingUpdate.maxUnavailable")
        out += found
        if not found and _is_zero(surge) and _is_zero(unavailable):
            out.append(FieldError("spec.strategy.rollingUpdate.maxUnavailable", f"Invalid value: {json.dumps(unavailable)}: may not be 0 when `maxSurge` is 0"))
    for field in ("revisionHistoryLimit", "minReadySeconds"):
        if field in spec and (not isinstance(spec[field], int) or spec[field] < 0):
            out.append(FieldError(f"spec.{field}", f"Invalid value: {json.dumps(spec[field])}: must be greater than or equal to 0"))
    deadline = spec.get("progressDeadlineSeconds")
    if isinstance(deadline, int) and deadline <= int(spec.get("minReadySeconds") or 0):
        out.append(FieldError("spec.progressDeadlineSeconds", f"Invalid value: {deadline}: must be greater than minReadySeconds"))
    return out


def replicaset_problems(obj: dict[str, Any]) -> list[FieldError]:
    return _common_problems(obj.get("spec") or {}, "replicaset")


def selector_update_problems(new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    """apps/v1 selectors are immutable (ValidateDeploymentUpdate, ValidateReplicaSetUpdate)."""
    before, after = (old.get("spec") or {}).get("selector"), (new.get("spec") or {}).get("selector")
    if before != after:
        return [FieldError("spec.selector", f"Invalid value: {json.dumps(after)}: field is immutable")]
    return []


def _is_zero(value: Any) -> bool:
    return value in (0, "0%", "0")


# --- the pod-template hash --------------------------------------------------------------------

_SAFE = "bcdfghjklmnpqrstvwxz2456789"  # apimachinery util/rand alphanums


def safe_encode(text: str) -> str:
    """apimachinery `util/rand.SafeEncodeString`: each character to one of 27 safe ones."""
    return "".join(_SAFE[ord(c) % len(_SAFE)] for c in text)


def fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def template_hash(template: dict[str, Any], collision_count: int | None = None) -> str:
    """controller.ComputeHash: FNV-32a of the template, then of the collision count (uint32 little
    endian in 8 bytes), written as decimal and safe-encoded. Upstream hashes Go's spew dump of the
    typed struct, which Python cannot reproduce; canonical JSON stands in, so values differ from a
    real cluster's while keeping their form and their stability."""
    data = json.dumps(template, sort_keys=True, separators=(",", ":")).encode()
    h = 0x811C9DC5
    for chunk in (data, (collision_count or 0).to_bytes(8, "little") if collision_count is not None else b""):
        for byte in chunk:
            h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return safe_encode(str(h))


def equal_ignore_hash(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """EqualIgnoreHash: templates equal once the pod-template-hash label is dropped from both."""
    def strip(t: dict[str, Any]) -> dict[str, Any]:
        t = copy.deepcopy(t)
        labels = (t.get("metadata") or {}).get("labels")
        if isinstance(labels, dict):
            labels.pop(HASH_LABEL, None)
            if not labels:
                t["metadata"].pop("labels")
        if t.get("metadata") == {}:
            t.pop("metadata")
        return t
    return strip(a) == strip(b)


# --- rolling-update arithmetic ------------------------------------------------------------------


def scaled_value(value: Any, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent; ValueError for a malformed value."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        if value.endswith("%"):
            number = int(value[:-1])  # ValueError as strconv.Atoi fails
            scaled = number * total / 100
            return math.ceil(scaled) if round_up else math.floor(scaled)
        raise ValueError('invalid value for IntOrString: invalid type: string is not a percentage')
    raise ValueError("invalid value for IntOrString: invalid type: neither int nor percentage")


def resolve_fenceposts(max_surge: Any, max_unavailable: Any, desired: int) -> tuple[int, int]:
    """ResolveFenceposts: surge rounds up, unavailable down; both 0 means unavailable 1."""
    surge = scaled_value(max_surge if max_surge is not None else 0, desired, True)
    unavailable = scaled_value(max_unavailable if max_unavailable is not None else 0, desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def _rolling(deployment: dict[str, Any]) -> dict[str, Any]:
    return ((deployment.get("spec") or {}).get("strategy") or {}).get("rollingUpdate") or {}


def _is_rolling(deployment: dict[str, Any]) -> bool:
    return ((deployment.get("spec") or {}).get("strategy") or {}).get("type", "RollingUpdate") == "RollingUpdate"


def replicas(obj: dict[str, Any]) -> int:
    value = (obj.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value)


def max_unavailable(deployment: dict[str, Any]) -> int:
    """MaxUnavailable: 0 for Recreate or 0 replicas, never more than the replicas."""
    desired = replicas(deployment)
    if not _is_rolling(deployment) or desired == 0:
        return 0
    rolling = _rolling(deployment)
    _, unavailable = resolve_fenceposts(rolling.get("maxSurge"), rolling.get("maxUnavailable"), desired)
    return min(unavailable, desired)


def max_surge(deployment: dict[str, Any]) -> int:
    if not _is_rolling(deployment):
        return 0
    rolling = _rolling(deployment)
    surge, _ = resolve_fenceposts(rolling.get("maxSurge"), rolling.get("maxUnavailable"), replicas(deployment))
    return surge


def new_rs_new_replicas(deployment: dict[str, Any], all_rs: list[dict[str, Any]], new_rs: dict[str, Any]) -> int:
    """NewRSNewReplicas: how far the new ReplicaSet may scale up now."""
    desired = replicas(deployment)
    if not _is_rolling(deployment):
        return desired
    current = sum(replicas(rs) for rs in all_rs)
    most = desired + max_surge(deployment)
    if current >= most:
        return replicas(new_rs)
    scale_up = min(most - current, desired - replicas(new_rs))
    return replicas(new_rs) + scale_up


def deployment_complete(deployment: dict[str, Any], status: dict[str, Any]) -> bool:
    desired = replicas(deployment)
    return (status.get("updatedReplicas", 0) == desired and status.get("replicas", 0) == desired
            and status.get("availableReplicas", 0) == desired
            and status.get("observedGeneration", 0) >= (deployment.get("metadata") or {}).get("generation", 0))


def deployment_progressing(deployment: dict[str, Any], new_status: dict[str, Any]) -> bool:
    old = deployment.get("status") or {}
    old_old = old.get("replicas", 0) - old.get("updatedReplicas", 0)
    new_old = new_status.get("replicas", 0) - new_status.get("updatedReplicas", 0)
    return (new_status.get("updatedReplicas", 0) > old.get("updatedReplicas", 0) or new_old < old_old
            or new_status.get("readyReplicas", 0) > old.get("readyReplicas", 0)
            or new_status.get("availableReplicas", 0) > old.get("availableReplicas", 0))
