"""Server-side printing: the `meta.k8s.io/v1` Table that `kubectl get` asks for.

kubectl sends `Accept: application/json;as=Table;g=meta.k8s.io;v=v1` and prints the columns
the server defines; without a Table it shows only NAME and AGE. As a real server does, the
cells of every column are sent, and kubectl hides those with priority > 0 unless `-o wide`.
Custom resources get a Name column and their additionalPrinterColumns (Age alone when they
have none); the built-ins get printers modelled on the real ones; anything else gets Name and
Created At. Ages are computed here, as the real server does: kubectl prints cells verbatim.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from pinery.local.apiserver.resources import ResourceType
from pinery.schema.field import go_float

INCLUDE_OBJECT = ("None", "Metadata", "Object")

Row = list[Any]
Column = dict[str, Any]


def to_table(
    rtype: ResourceType,
    objects: list[dict[str, Any]],
    *,
    resource_version: str = "",
    continue_token: str = "",
    include_object: str = "Metadata",
    now: datetime | None = None,
) -> dict[str, Any]:
    """The Table of `objects` (one object for a GET of a name, the items of a list)."""
    if include_object not in INCLUDE_OBJECT:
        raise ValueError(f"includeObject must be one of {', '.join(INCLUDE_OBJECT)}, not {include_object!r}")
    now = now or datetime.now(timezone.utc)
    columns, cells = _printer(rtype)
    rows = []
    for obj in objects:
        row: dict[str, Any] = {"cells": cells(obj, now)}
        conditions = _row_conditions(rtype, obj)
        if conditions:
            row["conditions"] = conditions
        if include_object == "Object":
            row["object"] = obj
        elif include_object == "Metadata":
            row["object"] = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": obj.get("metadata", {}),
            }
        rows.append(row)
    metadata = {}
    if resource_version:
        metadata["resourceVersion"] = resource_version
    if continue_token:
        metadata["continue"] = continue_token
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": metadata, "columnDefinitions": columns, "rows": rows}


# --- columns ----------------------------------------------------------------------------------

_NAME_DOC = "Name must be unique within a namespace; it cannot be updated."
_AGE_DOC = "Time since the object was created (its creationTimestamp)."


def _col(name: str, type_: str = "string", description: str = "", priority: int = 0, format_: str = "") -> Column:
    return {"name": name, "type": type_, "format": format_, "description": description, "priority": priority}


def _name_col(priority: int = 0) -> Column:
    return _col("Name", description=_NAME_DOC, priority=priority, format_="name")


def _printer(rtype: ResourceType) -> tuple[list[Column], Callable[[dict[str, Any], datetime], Row]]:
    if rtype.from_crd:
        return _custom_printer(rtype)
    builtin = _BUILTIN.get((rtype.group, rtype.kind))
    if builtin is not None:
        return builtin
    return (
        [_name_col(), _col("Created At", "date", "When the object was created.")],
        lambda obj, now: [_meta(obj, "name"), _meta(obj, "creationTimestamp") or None],
    )


# --- custom resources -------------------------------------------------------------------------

_DEFAULT_CUSTOM_COLUMNS = ({"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp", "description": _AGE_DOC},)


def _custom_printer(rtype: ResourceType) -> tuple[list[Column], Callable[[dict[str, Any], datetime], Row]]:
    specs = rtype.printer_columns or _DEFAULT_CUSTOM_COLUMNS
    columns = [_name_col()] + [
        _col(c["name"], c.get("type", "string"), c.get("description", ""), int(c.get("priority", 0)), c.get("format", ""))
        for c in specs
    ]
    paths = [_parse_path(c.get("jsonPath", "")) for c in specs]

    def cells(obj: dict[str, Any], now: datetime) -> Row:
        row: Row = [_meta(obj, "name")]
        for spec, path in zip(specs, paths, strict=True):
            found = _evaluate(path, obj) if path is not None else []
            row.append(None if not found else _cell(spec.get("type", "string"), found[0], now))
        return row

    return columns, cells


def _cell(type_: str, value: Any, now: datetime) -> Any:
    """A printer-column cell from the first value its JSONPath finds, typed as the column says."""
    if type_ == "string":
        return _go_text(value)
    if value is None:
        return None
    if type_ == "integer" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    if type_ == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if type_ == "boolean" and isinstance(value, bool):
        return value
    if type_ == "date" and isinstance(value, str):
        moment = _parse_time(value)
        return "<invalid>" if moment is None else human_duration(now - moment)
    return None


# A small evaluator for the JSONPaths printer columns use: .a.b, ['key'], [0], [*],
# and [?(@.field=="value")] filters.
_TOKEN = re.compile(
    r"""\.(?P<field>[^.\[\]]+)"""
    r"""|\[\s*(?:'(?P<sq>[^']*)'|"(?P<dq>[^"]*)")\s*\]"""
    r"""|\[(?P<index>-?\d+)\]"""
    r"""|\[(?P<all>\*)\]"""
    r"""|\[\?\(@(?P<fpath>(?:\.[^.=!\s)]+)+)\s*(?P<op>==|!=)\s*(?:'(?P<fsq>[^']*)'|"(?P<fdq>[^"]*)"|(?P<fnum>-?[\d.]+|true|false))\s*\)\]"""
)


def _parse_path(path: str) -> list[tuple[str, Any]] | None:
    """The steps of a JSONPath; None for one beyond this evaluator, whose cells stay empty."""
    path = path.strip()
    if path.startswith("{") and path.endswith("}"):
        path = path[1:-1]
    path = path.removeprefix("$")
    steps: list[tuple[str, Any]] = []
    pos = 0
    while pos < len(path):
        m = _TOKEN.match(path, pos)
        if m is None:
            return None
        if m["field"] is not None:
            steps.append(("key", m["field"]))
        elif m["sq"] is not None or m["dq"] is not None:
            steps.append(("key", m["sq"] if m["sq"] is not None else m["dq"]))
        elif m["index"] is not None:
            steps.append(("index", int(m["index"])))
        elif m["all"] is not None:
            steps.append(("all", None))
        else:
            literal: Any = m["fsq"] if m["fsq"] is not None else m["fdq"]
            if literal is None:
                literal = {"true": True, "false": False}.get(m["fnum"], None)
                if literal is None:
                    literal = float(m["fnum"])
            steps.append(("filter", (m["fpath"].strip(".").split("."), m["op"], literal)))
        pos = m.end()
    return steps


def _evaluate(steps: list[tuple[str, Any]], obj: Any) -> list[Any]:
    current = [obj]
    for kind, arg in steps:
        following: list[Any] = []
        for value in current:
            if kind == "key" and isinstance(value, dict) and arg in value:
                following.append(value[arg])
            elif kind == "index" and isinstance(value, list) and -len(value) <= arg < len(value):
                following.append(value[arg])
            elif kind == "all" and isinstance(value, (list, dict)):
                following.extend(value if isinstance(value, list) else value.values())
            elif kind == "filter" and isinstance(value, list):
                fields, op, literal = arg
                for item in value:
                    found = _evaluate([("key", f) for f in fields], item)
                    if found and (_equal(found[0], literal) == (op == "==")):
                        following.append(item)
        current = following
    return current


def _equal(value: Any, literal: Any) -> bool:
    if isinstance(literal, float) and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value) == literal
    return bool(value == literal and type(value) is type(literal))


def _go_text(value: Any) -> str:
    """A value as Go's fmt prints it, which is how string columns show non-strings."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go_text(v)}" for k, v in sorted(value.items())) + "]"
    if isinstance(value, list):
        return "[" + " ".join(_go_text(v) for v in value) + "]"
    return "<nil>"


# --- time -------------------------------------------------------------------------------------


def _parse_time(value: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def human_duration(delta: Any) -> str:
    """An elapsed time as kubectl's AGE column shows it ("45s", "3m20s", "5h", "12d")."""
    seconds = int(delta.total_seconds())
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        return f"{minutes}m{seconds % 60}s" if seconds % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = seconds // 3600
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d{hours % 24}h" if hours % 24 else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        years, days = hours // 24 // 365, (hours // 24) % 365
        return f"{years}y{days}d" if days else f"{years}y"
    return f"{hours // 24 // 365}y"


def _since(timestamp: Any, now: datetime) -> str:
    moment = _parse_time(timestamp) if isinstance(timestamp, str) and timestamp else None
    return "<unknown>" if moment is None else human_duration(now - moment)


def _meta(obj: dict[str, Any], key: str) -> Any:
    return (obj.get("metadata") or {}).get(key, "")


def _age(obj: dict[str, Any], now: datetime) -> str:
    return _since(_meta(obj, "creationTimestamp"), now)


def _labels(selector: dict[str, str] | None) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted((selector or {}).items())) or "<none>"


# --- built-in printers ------------------------------------------------------------------------


def _row_conditions(rtype: ResourceType, obj: dict[str, Any]) -> list[dict[str, str]]:
    if (rtype.group, rtype.kind) != ("", "Pod"):
        return []
    phase: str = (obj.get("status") or {}).get("phase") or ""
    message = {"Succeeded": "The pod has completed successfully.", "Failed": "The pod failed."}.get(phase)
    if message is None:
        return []
    return [{"type": "Completed", "status": "True", "reason": phase, "message": message}]


def _pod_cells(pod: dict[str, Any], now: datetime) -> Row:
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    init_specs = {c.get("name"): c for c in spec.get("initContainers") or []}
    sidecars = {name for name, c in init_specs.items() if c.get("restartPolicy") == "Always"}
    total = len(spec.get("containers") or []) + len(sidecars)
    ready = restarts = sidecar_restarts = 0
    last_restart = sidecar_last_restart = ""
    reason = status.get("reason") or status.get("phase") or ""
    for cond in status.get("conditions") or []:
        if cond.get("type") == "PodScheduled" and cond.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"

    initializing = False
    for i, cs in enumerate(status.get("initContainerStatuses") or []):
        restarts += cs.get("restartCount", 0)
        finished = ((cs.get("lastState") or {}).get("terminated") or {}).get("finishedAt", "")
        last_restart = max(last_restart, finished)
        if cs.get("name") in sidecars:
            sidecar_restarts += cs.get("restartCount", 0)
            sidecar_last_restart = max(sidecar_last_restart, finished)
        state = cs.get("state") or {}
        terminated, waiting = state.get("terminated"), state.get("waiting")
        if terminated and terminated.get("exitCode", 0) == 0:
            continue
        if cs.get("name") in sidecars and cs.get("started"):
            ready += 1 if cs.get("ready") else 0
            continue
        if terminated:
            reason = "Init:" + (terminated.get("reason") or _exit_text(terminated))
        elif waiting and waiting.get("reason") and waiting["reason"] != "PodInitializing":
            reason = "Init:" + waiting["reason"]
        else:
            reason = f"Init:{i}/{len(init_specs)}"
        initializing = True
        break

    initialized = any(c.get("type") == "Initialized" and c.get("status") == "True" for c in status.get("conditions") or [])
    if not initializing or initialized:
        restarts, last_restart = sidecar_restarts, sidecar_last_restart
        running = False
        for cs in reversed(status.get("containerStatuses") or []):
            restarts += cs.get("restartCount", 0)
            finished = ((cs.get("lastState") or {}).get("terminated") or {}).get("finishedAt", "")
            last_restart = max(last_restart, finished)
            state = cs.get("state") or {}
            terminated, waiting = state.get("terminated"), state.get("waiting")
            if waiting and waiting.get("reason"):
                reason = waiting["reason"]
            elif terminated:
                reason = terminated.get("reason") or _exit_text(terminated)
            elif cs.get("ready") and state.get("running") is not None:
                running = True
                ready += 1
        if reason == "Completed" and running:
            pod_ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
            reason = "Running" if pod_ready else "NotReady"

    if _meta(pod, "deletionTimestamp"):
        if status.get("reason") == "NodeLost":
            reason = "Unknown"
        elif status.get("phase") not in ("Succeeded", "Failed"):
            reason = "Terminating"

    restarts_text = str(restarts)
    if restarts and last_restart:
        restarts_text = f"{restarts} ({_since(last_restart, now)} ago)"
    pod_ips = status.get("podIPs") or []
    pod_ip = (pod_ips[0].get("ip") if pod_ips else status.get("podIP")) or "<none>"
    gates = spec.get("readinessGates") or []
    gates_text = "<none>"
    if gates:
        true = {c.get("type") for c in status.get("conditions") or [] if c.get("status") == "True"}
        gates_text = f"{sum(1 for g in gates if g.get('conditionType') in true)}/{len(gates)}"
    return [
        _meta(pod, "name"), f"{ready}/{total}", reason, restarts_text, _age(pod, now),
        pod_ip, spec.get("nodeName") or "<none>", status.get("nominatedNodeName") or "<none>", gates_text,
    ]


def _exit_text(terminated: dict[str, Any]) -> str:
    if terminated.get("signal"):
        return f"Signal:{terminated['signal']}"
    return f"ExitCode:{terminated.get('exitCode', 0)}"


def _service_cells(svc: dict[str, Any], now: datetime) -> Row:
    spec, status = svc.get("spec") or {}, svc.get("status") or {}
    svc_type = spec.get("type") or "ClusterIP"
    cluster_ips = spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
    external = spec.get("externalIPs") or []
    if svc_type in ("ClusterIP", "NodePort"):
        external_text = ",".join(external) or "<none>"
    elif svc_type == "LoadBalancer":
        ingress = sorted({i.get("ip") or i.get("hostname") for i in (status.get("loadBalancer") or {}).get("ingress") or []} - {None, ""})
        external_text = ",".join(ingress + external) or "<pending>"
    elif svc_type == "ExternalName":
        external_text = spec.get("externalName", "")
    else:
        external_text = "<unknown>"
    ports = ",".join(
        f"{p.get('port')}:{p['nodePort']}/{p.get('protocol', 'TCP')}" if p.get("nodePort") else f"{p.get('port')}/{p.get('protocol', 'TCP')}"
        for p in spec.get("ports") or []
    )
    return [_meta(svc, "name"), svc_type, cluster_ips[0] if cluster_ips else "<none>", external_text,
            ports or "<none>", _age(svc, now), _labels(spec.get("selector"))]


def _event_cells(event: dict[str, Any], now: datetime) -> Row:
    if "regarding" in event or "note" in event or "deprecatedCount" in event:  # events.k8s.io/v1
        event = {
            "involvedObject": event.get("regarding") or {},
            "message": event.get("note", ""),
            "firstTimestamp": event.get("deprecatedFirstTimestamp"),
            "lastTimestamp": event.get("deprecatedLastTimestamp"),
            "count": event.get("deprecatedCount", 0),
            "source": event.get("deprecatedSource") or {},
            **{k: event.get(k) for k in ("metadata", "type", "reason", "eventTime", "series",
                                         "reportingController", "reportingInstance")},
        }
    first = _since(event.get("firstTimestamp") or event.get("eventTime"), now)
    last = _since(event["lastTimestamp"], now) if event.get("lastTimestamp") else first
    count = event.get("count") or 1
    series = event.get("series")
    if series:
        last, count = _since(series.get("lastObservedTime"), now), series.get("count", count)
    involved = event.get("involvedObject") or {}
    target = str(involved.get("kind", "")).lower()
    if involved.get("name"):
        target = f"{target}/{involved['name']}"
    source = event.get("source") or {}
    component = source.get("component") or event.get("reportingController") or ""
    instance = source.get("host") or event.get("reportingInstance") or ""
    return [last, event.get("type", ""), event.get("reason", ""), target, involved.get("fieldPath", ""),
            f"{component}, {instance}" if instance else component, str(event.get("message") or "").strip(),
            first, int(count), _meta(event, "name")]


_ACCESS_MODES = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"), ("ReadWriteOncePod", "RWOP"))


def _pvc_cells(pvc: dict[str, Any], now: datetime) -> Row:
    spec, status = pvc.get("spec") or {}, pvc.get("status") or {}
    phase = "Terminating" if _meta(pvc, "deletionTimestamp") else status.get("phase", "")
    capacity = modes = ""
    if spec.get("volumeName"):
        capacity = str((status.get("capacity") or {}).get("storage", ""))
        have = set(status.get("accessModes") or [])
        modes = ",".join(short for mode, short in _ACCESS_MODES if mode in have)
    storage_class = spec.get("storageClassName") or (_meta(pvc, "annotations") or {}).get(
        "volume.beta.kubernetes.io/storage-class", "")
    return [_meta(pvc, "name"), phase, spec.get("volumeName", ""), capacity, modes, storage_class,
            spec.get("volumeAttributesClassName") or "<unset>", _age(pvc, now), spec.get("volumeMode") or "<unset>"]


def _endpoints_text(endpoints: dict[str, Any]) -> str:
    pairs: list[str] = []
    for subset in endpoints.get("subsets") or []:
        ports = [p.get("port") for p in subset.get("ports") or []] or [None]
        for address in subset.get("addresses") or []:
            pairs.extend(f"{address.get('ip')}:{port}" if port else str(address.get("ip")) for port in ports)
    if not pairs:
        return "<none>"
    return ",".join(pairs[:3]) + (f" + {len(pairs) - 3} more..." if len(pairs) > 3 else "")


_BUILTIN: dict[tuple[str, str], tuple[list[Column], Callable[[dict[str, Any], datetime], Row]]] = {
    ("", "Pod"): (
        [
            _name_col(),
            _col("Ready", description="Ready containers out of all containers."),
            _col("Status", description="The aggregate status of the containers in this pod."),
            _col("Restarts", description="Container restarts, and how long ago the last one was."),
            _col("Age", description=_AGE_DOC),
            _col("IP", description="IP address of the pod.", priority=1),
            _col("Node", description="Node the pod runs on.", priority=1),
            _col("Nominated Node", description="Node the scheduler nominated for preemption.", priority=1),
            _col("Readiness Gates", description="Readiness gates that are true, out of all.", priority=1),
        ],
        _pod_cells,
    ),
    ("", "Service"): (
        [
            _name_col(),
            _col("Type", description="How the service is exposed."),
            _col("Cluster-IP", description="Virtual IP address of the service inside the cluster."),
            _col("External-IP", description="Addresses the service is reachable at from outside."),
            _col("Port(s)", description="Ports the service exposes."),
            _col("Age", description=_AGE_DOC),
            _col("Selector", description="Labels of the pods behind the service.", priority=1),
        ],
        _service_cells,
    ),
    ("", "Namespace"): (
        [_name_col(), _col("Status", description="The status of the namespace."), _col("Age", description=_AGE_DOC)],
        lambda ns, now: [_meta(ns, "name"), (ns.get("status") or {}).get("phase", ""), _age(ns, now)],
    ),
    ("", "ConfigMap"): (
        [_name_col(), _col("Data", description="Number of keys in data and binaryData."), _col("Age", description=_AGE_DOC)],
        lambda cm, now: [_meta(cm, "name"), len(cm.get("data") or {}) + len(cm.get("binaryData") or {}), _age(cm, now)],
    ),
    ("", "Secret"): (
        [_name_col(), _col("Type", description="Type of the secret."), _col("Data", description="Number of keys in data."),
         _col("Age", description=_AGE_DOC)],
        lambda s, now: [_meta(s, "name"), s.get("type", ""), len(s.get("data") or {}), _age(s, now)],
    ),
    ("", "ServiceAccount"): (
        [_name_col(), _col("Secrets", description="Number of secrets of the account."), _col("Age", description=_AGE_DOC)],
        lambda sa, now: [_meta(sa, "name"), len(sa.get("secrets") or []), _age(sa, now)],
    ),
    ("", "PersistentVolumeClaim"): (
        [
            _name_col(),
            _col("Status", description="Phase of the claim."),
            _col("Volume", description="Volume bound to the claim."),
            _col("Capacity", description="Capacity of the bound volume."),
            _col("Access Modes", description="Access modes of the bound volume."),
            _col("StorageClass", description="StorageClass of the claim."),
            _col("VolumeAttributesClass", description="VolumeAttributesClass of the claim."),
            _col("Age", description=_AGE_DOC),
            _col("VolumeMode", description="Filesystem or Block.", priority=1),
        ],
        _pvc_cells,
    ),
    ("", "Endpoints"): (
        [_name_col(), _col("Endpoints", description="Addresses and ports."), _col("Age", description=_AGE_DOC)],
        lambda ep, now: [_meta(ep, "name"), _endpoints_text(ep), _age(ep, now)],
    ),
    ("coordination.k8s.io", "Lease"): (
        [_name_col(), _col("Holder", description="Identity of the holder."), _col("Age", description=_AGE_DOC)],
        lambda lease, now: [_meta(lease, "name"), (lease.get("spec") or {}).get("holderIdentity"), _age(lease, now)],
    ),
}

_EVENT_COLUMNS = [
    _col("Last Seen", description="When the event was last seen."),
    _col("Type", description="Normal or Warning."),
    _col("Reason", description="Why, as one CamelCase word."),
    _col("Object", description="The object the event is about."),
    _col("Subobject", description="The part of the object, such as a container.", priority=1),
    _col("Source", description="The component that reported the event.", priority=1),
    _col("Message", description="What happened, for people."),
    _col("First Seen", description="When the event was first seen.", priority=1),
    _col("Count", description="How many times it happened.", priority=1),
    _name_col(priority=1),
]
_BUILTIN[("", "Event")] = (_EVENT_COLUMNS, _event_cells)
_BUILTIN[("events.k8s.io", "Event")] = (_EVENT_COLUMNS, _event_cells)


def _binding_cells(binding: dict[str, Any], now: datetime) -> Row:
    """kubernetes pkg/printers/internalversion printRoleBinding: Role/<name>, SubjectsStrings."""
    ref = binding.get("roleRef") or {}
    subjects = binding.get("subjects") or []
    users = [s.get("name", "") for s in subjects if s.get("kind") == "User"]
    groups = [s.get("name", "") for s in subjects if s.get("kind") == "Group"]
    accounts = [f'{s.get("namespace", "")}/{s.get("name", "")}' for s in subjects if s.get("kind") == "ServiceAccount"]
    return [_meta(binding, "name"), f'{ref.get("kind", "")}/{ref.get("name", "")}', _age(binding, now),
            ", ".join(users), ", ".join(groups), ", ".join(accounts)]


_BINDING_COLUMNS = [
    _name_col(), _col("Role", description="The role the binding grants."), _col("Age", description=_AGE_DOC),
    _col("Users", description="Users bound.", priority=1), _col("Groups", description="Groups bound.", priority=1),
    _col("ServiceAccounts", description="ServiceAccounts bound.", priority=1),
]
_BUILTIN[("rbac.authorization.k8s.io", "RoleBinding")] = (_BINDING_COLUMNS, _binding_cells)
_BUILTIN[("rbac.authorization.k8s.io", "ClusterRoleBinding")] = (_BINDING_COLUMNS, _binding_cells)


# apps/v1, as kubernetes pkg/printers/internalversion/printers.go prints them
# (deploymentColumnDefinitions/printDeployment, replicaSetColumnDefinitions/printReplicaSet).
def _template_cells(obj: dict[str, Any]) -> list[str]:
    containers = (((obj.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []
    selector = (obj.get("spec") or {}).get("selector") or {}
    from pinery.local.apiserver.apps_policy import selector_text

    return [",".join(c.get("name", "") for c in containers), ",".join(c.get("image", "") for c in containers), selector_text(selector)]


def _deployment_cells(d: dict[str, Any], now: datetime) -> Row:
    spec, status = d.get("spec") or {}, d.get("status") or {}
    desired = spec.get("replicas", 1)
    return [_meta(d, "name"), f"{status.get('readyReplicas', 0)}/{desired}", status.get("updatedReplicas", 0),
            status.get("availableReplicas", 0), _age(d, now), *_template_cells(d)]


def _replicaset_cells(rs: dict[str, Any], now: datetime) -> Row:
    spec, status = rs.get("spec") or {}, rs.get("status") or {}
    return [_meta(rs, "name"), spec.get("replicas", 1), status.get("replicas", 0), status.get("readyReplicas", 0),
            _age(rs, now), *_template_cells(rs)]


_TEMPLATE_COLUMNS = [
    _col("Containers", description="Names of each container in the template.", priority=1),
    _col("Images", description="Images referenced by each container in the template.", priority=1),
    _col("Selector", description="Label selector for pods.", priority=1),
]
_BUILTIN[("apps", "Deployment")] = (
    [_name_col(), _col("Ready", description="Number of the pod with ready state"),
     _col("Up-to-date", "integer", "Total number of non-terminated pods targeted by this deployment that have the desired template spec."),
     _col("Available", "integer", "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment."),
     _col("Age", description=_AGE_DOC), *_TEMPLATE_COLUMNS],
    _deployment_cells,
)
_BUILTIN[("apps", "ReplicaSet")] = (
    [_name_col(), _col("Desired", "integer", "Replicas is the number of desired replicas."),
     _col("Current", "integer", "Replicas is the most recently observed number of replicas."),
     _col("Ready", "integer", "The number of ready replicas for this replica set."),
     _col("Age", description=_AGE_DOC), *_TEMPLATE_COLUMNS],
    _replicaset_cells,
)
