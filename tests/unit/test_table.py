"""Server-side printing (Tables) for custom resources and the built-ins."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import pytest

from pinery.api import FSDP_JOB, VECTOR_INDEX
from pinery.generate.crds import build_crd
from pinery.local.apiserver.resources import BUILTIN_TYPES, ResourceType, types_from_crd
from pinery.local.apiserver.table import human_duration, to_table
from tests.support.kubectl import KubectlStub, kubectl_binary

NOW = datetime(2025, 6, 1, 12, 0, 0, tzinfo=timezone.utc)
FSDPJOB_TYPE = types_from_crd(build_crd(FSDP_JOB))[0]
VECTORINDEX_TYPE = types_from_crd(build_crd(VECTOR_INDEX))[0]


def builtin(kind: str, group: str = "") -> ResourceType:
    return next(t for t in BUILTIN_TYPES if (t.group, t.kind) == (group, kind))


def ago(**delta: float) -> str:
    return (NOW - timedelta(**delta)).strftime("%Y-%m-%dT%H:%M:%SZ")


def obj(name: str = "x", namespace: str = "default", created: str | None = None, **fields) -> dict:
    return {"metadata": {"name": name, "namespace": namespace, "creationTimestamp": created or ago(minutes=5)}, **fields}


def columns(table: dict) -> list[tuple[str, str, int]]:
    return [(c["name"], c["type"], c["priority"]) for c in table["columnDefinitions"]]


def cells(rtype: ResourceType, *objects: dict) -> list[list]:
    return [row["cells"] for row in to_table(rtype, list(objects), now=NOW)["rows"]]


# --- the Table itself -------------------------------------------------------------------------


def test_table_shape_metadata_and_partial_object_metadata():
    job = obj("train", spec={"numNodes": 2})
    table = to_table(FSDPJOB_TYPE, [job], resource_version="17", continue_token="abc", now=NOW)
    assert table["kind"] == "Table"
    assert table["apiVersion"] == "meta.k8s.io/v1"
    assert table["metadata"] == {"resourceVersion": "17", "continue": "abc"}
    assert table["rows"][0]["object"] == {
        "kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": job["metadata"],
    }
    assert to_table(FSDPJOB_TYPE, [], now=NOW)["metadata"] == {}


def test_include_object_none_and_object_and_invalid():
    job = obj("train", spec={"numNodes": 2})
    assert "object" not in to_table(FSDPJOB_TYPE, [job], include_object="None", now=NOW)["rows"][0]
    assert to_table(FSDPJOB_TYPE, [job], include_object="Object", now=NOW)["rows"][0]["object"] is job
    with pytest.raises(ValueError, match="includeObject must be one of None, Metadata, Object"):
        to_table(FSDPJOB_TYPE, [job], include_object="Everything")


# --- custom resources -------------------------------------------------------------------------


def test_fsdpjob_columns_follow_the_crd_printer_columns():
    assert columns(to_table(FSDPJOB_TYPE, [], now=NOW)) == [
        ("Name", "string", 0), ("Nodes", "integer", 0), ("Procs", "string", 0), ("Phase", "string", 0),
        ("Restarts", "integer", 0), ("Step", "integer", 0), ("Age", "date", 0), ("Loss", "number", 1), ("Disruptions", "integer", 1),
    ]
    name = to_table(FSDPJOB_TYPE, [], now=NOW)["columnDefinitions"][0]
    assert name["format"] == "name"
    assert to_table(FSDPJOB_TYPE, [], now=NOW)["columnDefinitions"][1]["description"] == "Number of nodes."


def test_fsdpjob_cells_and_missing_values():
    running = obj("a", created=ago(hours=3, minutes=20), spec={"numNodes": 4, "nprocPerNode": "auto"},
                  status={"phase": "Running", "restarts": 1, "progress": {"step": 150, "loss": 2.5}})
    fresh = obj("b", created=ago(seconds=42), spec={"numNodes": 2, "nprocPerNode": 8})
    assert cells(FSDPJOB_TYPE, running, fresh) == [
        ["a", 4, "auto", "Running", 1, 150, "3h20m", 2.5, None],
        ["b", 2, "8", None, None, None, "42s", None, None],  # a number in a string column prints as text
    ]


def test_vectorindex_columns():
    index = obj("docs", status={"indexName": "docs", "type": "serverless", "phase": "Ready", "host": "docs.svc",
                                "state": "Ready"})
    table = to_table(VECTORINDEX_TYPE, [index], now=NOW)
    assert [c[0] for c in columns(table)] == ["Name", "Index", "Type", "Phase", "Host", "Age", "State"]
    assert table["rows"][0]["cells"] == ["docs", "docs", "serverless", "Ready", "docs.svc", "5m", "Ready"]


def custom(*printer_columns: dict) -> ResourceType:
    return ResourceType("example.com", "v1", "Widget", "widgets", True, printer_columns=printer_columns,
                        crd_name="widgets.example.com")


@pytest.mark.parametrize(
    ("path", "type_", "expected"),
    [
        (".status.conditions[?(@.type==\"Ready\")].status", "string", "True"),
        (".status.conditions[?(@.type=='Synced')].reason", "string", "Behind"),
        (".status.conditions[?(@.type!=\"Ready\")].type", "string", "Synced"),
        (".status.conditions[0].type", "string", "Ready"),
        (".status.conditions[-1].type", "string", "Synced"),
        (".status.conditions[*].type", "string", "Ready"),  # the first result, as the real server
        (".metadata.labels['app.kubernetes.io/name']", "string", "widget"),
        (".spec.replicas", "integer", 3),
        (".spec.ratio", "integer", 0),  # a float in an integer column is truncated
        (".spec.replicas", "number", 3.0),
        (".spec.ratio", "number", 0.75),
        (".spec.enabled", "boolean", False),
        (".spec.enabled", "string", "false"),
        (".spec.ratio", "string", "0.75"),
        (".spec.big", "string", "1.5e+06"),
        (".spec.selector", "string", "map[app:web tier:front]"),
        (".spec.ports", "string", "[80 443]"),
        (".spec.replicas", "boolean", None),  # wrong type: empty, as the real server
        (".spec.name", "integer", None),
        (".spec.name", "date", "<invalid>"),
        (".spec.replicas", "date", None),
        (".spec.started", "date", "2d"),
        (".spec.missing", "string", None),
        (".status.conditions[?(@.type==\"Gone\")].status", "string", None),
        ("{.spec.name}", "string", "w"),
        (".spec.nothing[?(@.x==1)]", "string", None),
        (".spec..recursive", "string", None),  # beyond this evaluator: an empty cell
    ],
)
def test_printer_column_json_paths_and_types(path, type_, expected):
    widget = obj(
        "w",
        spec={"replicas": 3, "ratio": 0.75, "enabled": False, "big": 1.5e6, "name": "w", "started": ago(days=2),
              "selector": {"tier": "front", "app": "web"}, "ports": [80, 443]},
        status={"conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False", "reason": "Behind"}]},
    )
    widget["metadata"]["labels"] = {"app.kubernetes.io/name": "widget"}
    rtype = custom({"name": "Col", "type": type_, "jsonPath": path})
    assert cells(rtype, widget) == [["w", expected]]


def test_custom_resource_without_printer_columns_shows_name_and_age():
    rtype = ResourceType("example.com", "v1", "Gadget", "gadgets", True, crd_name="gadgets.example.com")
    assert columns(to_table(rtype, [], now=NOW)) == [("Name", "string", 0), ("Age", "date", 0)]
    assert cells(rtype, obj("g", created=ago(days=3, hours=4))) == [["g", "3d4h"]]
    peering = builtin("KopfPeering", "kopf.dev")  # a CRD on real clusters
    assert cells(peering, obj("default", created=ago(minutes=12))) == [["default", "12m"]]


def test_priority_is_carried_through():
    rtype = custom({"name": "A", "type": "string", "jsonPath": ".a"}, {"name": "B", "type": "string", "jsonPath": ".b", "priority": 2})
    assert columns(to_table(rtype, [], now=NOW)) == [("Name", "string", 0), ("A", "string", 0), ("B", "string", 2)]


@pytest.mark.parametrize(
    ("delta", "text"),
    [
        (timedelta(seconds=-5), "<invalid>"),
        (timedelta(seconds=-1), "0s"),
        (timedelta(seconds=0), "0s"),
        (timedelta(seconds=119), "119s"),
        (timedelta(minutes=2), "2m"),
        (timedelta(minutes=3, seconds=20), "3m20s"),
        (timedelta(minutes=10, seconds=59), "10m"),
        (timedelta(minutes=179), "179m"),
        (timedelta(hours=3), "3h"),
        (timedelta(hours=7, minutes=59), "7h59m"),
        (timedelta(hours=8, minutes=30), "8h"),
        (timedelta(hours=47), "47h"),
        (timedelta(days=2), "2d"),
        (timedelta(days=7, hours=23), "7d23h"),
        (timedelta(days=8, hours=5), "8d"),
        (timedelta(days=729), "729d"),
        (timedelta(days=730), "2y"),
        (timedelta(days=800), "2y70d"),
        (timedelta(days=365 * 9), "9y"),
    ],
)
def test_human_duration_matches_kubectl_ages(delta, text):
    assert human_duration(delta) == text


def test_unset_or_unparsable_timestamps():
    assert cells(builtin("Namespace"), {"metadata": {"name": "n"}, "status": {"phase": "Active"}}) == [["n", "Active", "<unknown>"]]
    assert cells(builtin("Namespace"), obj("n", created="yesterday")) == [["n", "", "<unknown>"]]


# --- built-ins --------------------------------------------------------------------------------


def pod(**status) -> dict:
    spec = status.pop("spec", {"containers": [{"name": "main"}]})
    return obj("p", created=ago(minutes=30), spec=spec, status=status)


def running(name: str = "main", ready: bool = True, restarts: int = 0, **extra) -> dict:
    return {"name": name, "ready": ready, "restartCount": restarts, "state": {"running": {"startedAt": ago(minutes=29)}}, **extra}


def test_pod_columns():
    assert columns(to_table(builtin("Pod"), [], now=NOW)) == [
        ("Name", "string", 0), ("Ready", "string", 0), ("Status", "string", 0), ("Restarts", "string", 0),
        ("Age", "string", 0), ("IP", "string", 1), ("Node", "string", 1), ("Nominated Node", "string", 1),
        ("Readiness Gates", "string", 1),
    ]


@pytest.mark.parametrize(
    ("status", "ready", "reason", "restarts"),
    [
        ({"phase": "Pending"}, "0/1", "Pending", "0"),
        ({"phase": "Running", "containerStatuses": [running()]}, "1/1", "Running", "0"),
        ({"phase": "Running", "containerStatuses": [running(ready=False)]}, "0/1", "Running", "0"),
        ({"phase": "Running", "containerStatuses": [
            {"name": "main", "restartCount": 2, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
             "lastState": {"terminated": {"exitCode": 1, "finishedAt": ago(minutes=4)}}}]},
         "0/1", "CrashLoopBackOff", "2 (4m ago)"),
        ({"phase": "Succeeded", "containerStatuses": [
            {"name": "main", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]}, "0/1", "Completed", "0"),
        ({"phase": "Failed", "containerStatuses": [
            {"name": "main", "state": {"terminated": {"exitCode": 3}}}]}, "0/1", "ExitCode:3", "0"),
        ({"phase": "Failed", "containerStatuses": [
            {"name": "main", "state": {"terminated": {"exitCode": 137, "signal": 9}}}]}, "0/1", "Signal:9", "0"),
        ({"phase": "Failed", "reason": "Evicted"}, "0/1", "Evicted", "0"),
        ({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]},
         "0/1", "SchedulingGated", "0"),
    ],
)
def test_pod_status_column(status, ready, reason, restarts):
    assert cells(builtin("Pod"), pod(**status))[0][1:4] == [ready, reason, restarts]


def test_pod_with_init_containers():
    spec = {"initContainers": [{"name": "fetch"}, {"name": "warm"}], "containers": [{"name": "main"}]}
    waiting = {"name": "warm", "state": {"waiting": {"reason": "PodInitializing"}}}
    done = {"name": "fetch", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
    assert cells(builtin("Pod"), pod(spec=spec, phase="Pending", initContainerStatuses=[done, waiting]))[0][2] == "Init:1/2"
    failed = {"name": "fetch", "restartCount": 1, "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}
    assert cells(builtin("Pod"), pod(spec=spec, phase="Pending", initContainerStatuses=[failed]))[0][2:4] == ["Init:Error", "1"]
    backoff = {"name": "fetch", "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
    assert cells(builtin("Pod"), pod(spec=spec, phase="Pending", initContainerStatuses=[backoff]))[0][2] == "Init:CrashLoopBackOff"
    sidecar_spec = {"initContainers": [{"name": "proxy", "restartPolicy": "Always"}], "containers": [{"name": "main"}]}
    sidecar = running("proxy", started=True, restarts=1)
    row = cells(builtin("Pod"), pod(spec=sidecar_spec, phase="Running", initContainerStatuses=[sidecar],
                                    containerStatuses=[running()], conditions=[{"type": "Initialized", "status": "True"}]))[0]
    assert row[1:4] == ["2/2", "Running", "1"]


def test_pod_completed_but_a_container_still_running():
    statuses = [{"name": "a", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}, running("b")]
    ready_pod = pod(spec={"containers": [{"name": "b"}, {"name": "a"}]}, phase="Running", containerStatuses=statuses[::-1],
                    conditions=[{"type": "Ready", "status": "True"}])
    assert cells(builtin("Pod"), ready_pod)[0][1:3] == ["1/2", "Running"]
    ready_pod["status"]["conditions"] = []
    assert cells(builtin("Pod"), ready_pod)[0][2] == "NotReady"


def test_pod_terminating_wide_columns_and_row_conditions():
    p = pod(phase="Running", containerStatuses=[running()], podIPs=[{"ip": "127.0.0.5"}], podIP="127.0.0.5")
    p["spec"].update(nodeName="local", readinessGates=[{"conditionType": "pinery.dev/ready"}])
    p["status"]["conditions"] = [{"type": "pinery.dev/ready", "status": "True"}]
    assert cells(builtin("Pod"), p)[0] == ["p", "1/1", "Running", "0", "30m", "127.0.0.5", "local", "<none>", "1/1"]
    p["metadata"]["deletionTimestamp"] = ago(seconds=3)
    assert cells(builtin("Pod"), p)[0][2] == "Terminating"
    assert cells(builtin("Pod"), pod(phase="Pending"))[0][5:] == ["<none>", "<none>", "<none>", "<none>"]
    done = to_table(builtin("Pod"), [pod(phase="Succeeded")], now=NOW)["rows"][0]
    assert done["conditions"] == [{"type": "Completed", "status": "True", "reason": "Succeeded",
                                   "message": "The pod has completed successfully."}]
    assert "conditions" not in to_table(builtin("Pod"), [p], now=NOW)["rows"][0]


def test_service():
    rtype = builtin("Service")
    assert [c[0] for c in columns(to_table(rtype, [], now=NOW))] == [
        "Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector"]
    headless = obj("job", spec={"clusterIP": "None", "clusterIPs": ["None"], "selector": {"job": "j", "app": "pinery"},
                                "ports": [{"port": 29500}]})
    lb = obj("web", spec={"type": "LoadBalancer", "clusterIPs": ["10.0.0.2"], "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"},
                                                                                     {"port": 53, "protocol": "UDP"}]})
    named = obj("ext", spec={"type": "ExternalName", "externalName": "api.example.com"})
    assert cells(rtype, headless, lb, named) == [
        ["job", "ClusterIP", "None", "<none>", "29500/TCP", "5m", "app=pinery,job=j"],
        ["web", "LoadBalancer", "10.0.0.2", "<pending>", "80:30080/TCP,53/UDP", "5m", "<none>"],
        ["ext", "ExternalName", "<none>", "api.example.com", "<none>", "5m", "<none>"],
    ]
    lb["status"] = {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}
    assert cells(rtype, lb)[0][3] == "1.2.3.4"


def test_namespace_configmap_secret_serviceaccount():
    assert cells(builtin("Namespace"), obj("jobs", status={"phase": "Terminating"})) == [["jobs", "Terminating", "5m"]]
    assert cells(builtin("ConfigMap"), obj("c", data={"a": "1", "b": "2"}, binaryData={"c": "AA=="})) == [["c", 3, "5m"]]
    assert cells(builtin("ConfigMap"), obj("empty")) == [["empty", 0, "5m"]]
    assert cells(builtin("Secret"), obj("s", type="Opaque", data={"apiKey": "eHl6"})) == [["s", "Opaque", 1, "5m"]]
    assert cells(builtin("ServiceAccount"), obj("default", secrets=[{"name": "t"}])) == [["default", 1, "5m"]]
    assert [c[0] for c in columns(to_table(builtin("Secret"), [], now=NOW))] == ["Name", "Type", "Data", "Age"]


def test_persistent_volume_claim():
    rtype = builtin("PersistentVolumeClaim")
    bound = obj("data", spec={"volumeName": "pv-1", "storageClassName": "local", "volumeMode": "Filesystem"},
                status={"phase": "Bound", "capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteMany", "ReadWriteOnce"]})
    pending = obj("new", spec={"resources": {"requests": {"storage": "1Gi"}}}, status={"phase": "Pending"})
    assert cells(rtype, bound, pending) == [
        ["data", "Bound", "pv-1", "10Gi", "RWO,RWX", "local", "<unset>", "5m", "Filesystem"],
        ["new", "Pending", "", "", "", "", "<unset>", "5m", "<unset>"],
    ]
    assert columns(to_table(rtype, [], now=NOW))[-1] == ("VolumeMode", "string", 1)


def test_events_core_and_events_k8s_io():
    core = obj("job.1", type="Warning", reason="BackOff", message=" restarting \n", count=3,
               involvedObject={"kind": "Pod", "name": "job-0", "fieldPath": "spec.containers{main}"},
               source={"component": "pinery", "host": "local"},
               firstTimestamp=ago(minutes=9), lastTimestamp=ago(minutes=1))
    new = obj("job.2", type="Normal", reason="Created", note="created pods", regarding={"kind": "FSDPJob", "name": "job"},
              reportingController="pinery.dev/operator", eventTime=ago(seconds=30).replace("Z", ".000000Z"))
    series = obj("job.3", type="Normal", reason="Progress", message="step", involvedObject={"kind": "FSDPJob", "name": "job"},
                 eventTime=ago(minutes=20), series={"count": 7, "lastObservedTime": ago(seconds=10)})
    rows = cells(builtin("Event"), core, series) + cells(builtin("Event", "events.k8s.io"), new)
    assert rows == [
        ["60s", "Warning", "BackOff", "pod/job-0", "spec.containers{main}", "pinery, local", "restarting", "9m", 3, "job.1"],
        ["10s", "Normal", "Progress", "fsdpjob/job", "", "", "step", "20m", 7, "job.3"],
        ["30s", "Normal", "Created", "fsdpjob/job", "", "pinery.dev/operator", "created pods", "30s", 1, "job.2"],
    ]
    assert [c[0] for c in columns(to_table(builtin("Event"), [], now=NOW)) if c[2] == 0] == [
        "Last Seen", "Type", "Reason", "Object", "Message"]


def test_endpoints_lease_and_the_default_table():
    endpoints = obj("job", subsets=[{"addresses": [{"ip": f"127.0.0.{i}"} for i in range(2, 7)], "ports": [{"port": 29500}]}])
    assert cells(builtin("Endpoints"), endpoints, obj("none")) == [
        ["job", "127.0.0.2:29500,127.0.0.3:29500,127.0.0.4:29500 + 2 more...", "5m"],
        ["none", "<none>", "5m"],
    ]
    assert cells(builtin("Lease", "coordination.k8s.io"), obj("leader", spec={"holderIdentity": "pod-a"}), obj("free")) == [
        ["leader", "pod-a", "5m"], ["free", None, "5m"]]
    crd = builtin("CustomResourceDefinition", "apiextensions.k8s.io")  # prints NAME and CREATED AT, as real clusters do
    assert columns(to_table(crd, [], now=NOW)) == [("Name", "string", 0), ("Created At", "date", 0)]
    assert cells(crd, obj("fsdpjobs.pinery.dev", created="2025-05-01T08:00:00Z")) == [["fsdpjobs.pinery.dev", "2025-05-01T08:00:00Z"]]


# --- what real kubectl prints from these Tables -----------------------------------------------


def kubectl_get(objects: list[dict], *args: str, tmp_path) -> list[list[str]]:
    kubectl_binary()
    types = [*BUILTIN_TYPES, FSDPJOB_TYPE, VECTORINDEX_TYPE]
    with KubectlStub(types, tmp_path, objects=objects) as stub:
        result = stub.kubectl("get", *args)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return [re.split(r"\s{2,}", line.strip()) for line in result.stdout.splitlines()]


def fsdpjob(name: str, **status) -> dict:
    job = obj(name, created=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
              spec={"numNodes": 2, "nprocPerNode": 4}, status=status)
    return {"apiVersion": "pinery.dev/v1alpha1", "kind": "FSDPJob", **job}


def test_kubectl_get_fsdpjobs_shows_the_printer_columns(tmp_path):
    jobs = [fsdpjob("train", phase="Running", restarts=1, progress={"step": 40, "loss": 2.25}), fsdpjob("queued")]
    lines = kubectl_get(jobs, "fsdpjobs", tmp_path=tmp_path)
    assert lines[0] == ["NAME", "NODES", "PROCS", "PHASE", "RESTARTS", "STEP", "AGE"]
    assert lines[1][:6] == ["train", "2", "4", "Running", "1", "40"]
    assert re.fullmatch(r"\d+s", lines[1][6])  # an age, not a timestamp
    assert lines[2][:3] == ["queued", "2", "4"]  # missing values print as blanks


def test_kubectl_get_wide_adds_the_priority_columns(tmp_path):
    lines = kubectl_get([fsdpjob("train", phase="Running", progress={"step": 40, "loss": 2.25})],
                        "fsdpjobs", "-o", "wide", tmp_path=tmp_path)
    assert lines[0] == ["NAME", "NODES", "PROCS", "PHASE", "RESTARTS", "STEP", "AGE", "LOSS", "DISRUPTIONS"]
    assert lines[1][-1] == "2.25"


def test_kubectl_get_one_by_name_all_namespaces_and_labels(tmp_path):
    other = fsdpjob("eval")
    other["metadata"].update(namespace="research", labels={"team": "nlp"})
    jobs = [fsdpjob("train"), other]
    assert kubectl_get(jobs, "fsdpjob", "eval", "-n", "research", tmp_path=tmp_path)[1][0] == "eval"
    # The NAMESPACE and LABELS columns come from each row's PartialObjectMetadata.
    lines = kubectl_get(jobs, "fsdpjobs", "-A", "--show-labels", tmp_path=tmp_path / "2")
    assert lines[0][0] == "NAMESPACE" and lines[0][-1] == "LABELS"
    assert [(line[0], line[1], line[-1]) for line in lines[1:]] == [
        ("default", "train", "<none>"), ("research", "eval", "team=nlp")]


def test_kubectl_get_pods_and_wide_pods(tmp_path):
    p = pod(phase="Running", containerStatuses=[running(restarts=0)], podIPs=[{"ip": "127.0.0.7"}])
    p.update(apiVersion="v1", kind="Pod")
    p["spec"]["nodeName"] = "local"
    lines = kubectl_get([p], "pods", tmp_path=tmp_path)
    assert lines[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert lines[1][:4] == ["p", "1/1", "Running", "0"]
    wide = kubectl_get([p], "pods", "-o", "wide", tmp_path=tmp_path / "2")
    assert wide[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES"]
    assert wide[1][5:] == ["127.0.0.7", "local", "<none>", "<none>"]
