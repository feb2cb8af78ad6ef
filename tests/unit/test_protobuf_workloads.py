"""Protobuf bodies of the workload kinds (v1 Pod and Service, apps/v1 Deployment and ReplicaSet).

Messages are built here field by field, with the numbers of k8s.io/api core/v1 and apps/v1
generated.proto and apimachinery's meta/v1, intstr and resource generated.proto; then the bytes
real kubectl sends are decoded and compared with the JSON kubectl writes for the same command.
"""

from __future__ import annotations

import copy
import json

import pytest

from pinery.local.apiserver import apps_policy
from pinery.local.apiserver.protobuf import CONTENT_TYPE, ProtobufError, decode
from pinery.local.apiserver.resources import BUILTIN_TYPES
from tests.support.kubectl import KubectlStub, kubectl_binary
from tests.unit.test_protobuf import body, entry, field, meta, varint

# --- helpers: the shapes shared by many messages ------------------------------------------------


def msg(*fields: bytes) -> bytes:
    return b"".join(fields)


def int_or_string(value: int | str) -> bytes:
    """intstr.IntOrString: 1 type (0 int, 1 string), 2 intVal, 3 strVal; Go writes all three."""
    if isinstance(value, int):
        return field(1, 0) + field(2, value) + field(3, "")
    return field(1, 1) + field(2, 0) + field(3, value)


def quantity(text: str) -> bytes:
    return field(1, text)  # resource.Quantity: 1 string


def container(*fields: bytes) -> bytes:
    """A Container as Go writes it: its non-pointer fields even when empty (resources {})."""
    return msg(field(8, b""), field(13, ""), field(20, ""), field(14, ""), field(16, 0), field(17, 0), field(18, 0), *fields)


def pod_spec(*fields: bytes) -> bytes:
    return msg(field(3, ""), field(6, ""), field(11, 0), field(12, 0), field(13, 0), field(19, ""), *fields)


def pod(spec: bytes, status: bytes = b"") -> bytes:
    return body("Pod", meta(field(1, "p")) + field(2, spec) + field(3, status))


def spec_of(raw: bytes) -> dict:
    return decode(pod(raw))["spec"]


def one_container(*fields: bytes) -> dict:
    (decoded,) = spec_of(pod_spec(field(2, container(field(1, "c"), *fields))))["containers"]
    return decoded


# --- the pod spec ---------------------------------------------------------------------------------


def test_a_pod_as_go_writes_it_keeps_its_empty_structs_and_drops_its_zero_values():
    assert decode(pod(pod_spec(field(2, container(field(1, "c"), field(2, "busybox")))))) == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "busybox", "resources": {}}]},
        "status": {},
    }


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ((field(3, "sleep"), field(3, "100"), field(4, "-v")), {"command": ["sleep", "100"], "args": ["-v"]}),
        ((field(5, "/work"), field(14, "IfNotPresent")), {"workingDir": "/work", "imagePullPolicy": "IfNotPresent"}),
        ((field(6, msg(field(1, "http"), field(2, 0), field(3, 80), field(4, "TCP"), field(5, ""))),),
         {"ports": [{"name": "http", "containerPort": 80, "protocol": "TCP"}]}),
        ((field(7, msg(field(1, "A"), field(2, "B"))), field(7, msg(field(1, "EMPTY"), field(2, "")))),
         {"env": [{"name": "A", "value": "B"}, {"name": "EMPTY"}]}),
        ((field(7, msg(field(1, "NODE"), field(2, ""), field(3, field(1, msg(field(1, "v1"), field(2, "spec.nodeName")))))),),
         {"env": [{"name": "NODE", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}}]}),
        ((field(7, msg(field(1, "KEY"), field(3, field(4, msg(field(1, field(1, "api")), field(2, "key"), field(3, 0)))))),),
         {"env": [{"name": "KEY", "valueFrom": {"secretKeyRef": {"name": "api", "key": "key", "optional": False}}}]}),
        ((field(7, msg(field(1, "CPU"), field(3, field(2, msg(field(1, ""), field(2, "limits.cpu"), field(3, quantity("1m"))))))),),
         {"env": [{"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "1m"}}}]}),
        ((field(19, msg(field(1, "CFG_"), field(2, field(1, field(1, "settings"))))),),
         {"envFrom": [{"prefix": "CFG_", "configMapRef": {"name": "settings"}}]}),
        ((field(8, msg(entry(1, "cpu", quantity("500m")), entry(1, "nvidia.com/gpu", quantity("1")),
                       entry(2, "memory", quantity("1Gi")))),),
         {"resources": {"limits": {"cpu": "500m", "nvidia.com/gpu": "1"}, "requests": {"memory": "1Gi"}}}),
        ((field(9, msg(field(1, "data"), field(2, 1), field(3, "/data"), field(4, ""), field(6, ""))),),
         {"volumeMounts": [{"name": "data", "readOnly": True, "mountPath": "/data"}]}),
        ((field(9, msg(field(1, "data"), field(2, 0), field(3, "/data"))),), {"volumeMounts": [{"name": "data", "mountPath": "/data"}]}),
        ((field(10, msg(field(1, field(2, msg(field(1, "/healthz"), field(2, int_or_string(8080)), field(3, ""), field(4, "HTTP")))),
                        field(2, 5), field(3, 1), field(4, 10), field(5, 1), field(6, 3))),),
         {"livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"}, "initialDelaySeconds": 5,
                            "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}}),
        ((field(11, msg(field(1, field(3, msg(field(1, int_or_string("http")), field(2, "")))), field(2, 0))),),
         {"readinessProbe": {"tcpSocket": {"port": "http"}}}),
        ((field(22, field(1, field(1, msg(field(1, "cat"), field(1, "/ready"))))),),
         {"startupProbe": {"exec": {"command": ["cat", "/ready"]}}}),
        ((field(12, field(2, field(4, field(1, 5)))),), {"lifecycle": {"preStop": {"sleep": {"seconds": 5}}}}),
        ((field(15, msg(field(1, msg(field(2, "ALL"))), field(4, 0), field(5, 1), field(7, 0))),),
         {"securityContext": {"capabilities": {"drop": ["ALL"]}, "runAsUser": 0, "runAsNonRoot": True,
                              "allowPrivilegeEscalation": False}}),
        ((field(16, 1), field(18, 1)), {"stdin": True, "tty": True}),
        ((field(23, msg(field(1, "cpu"), field(2, "NotRequired"))), field(24, "Always")),
         {"resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"}], "restartPolicy": "Always"}),
    ],
)
def test_container_fields(fields, expected):
    assert one_container(*fields) == {"name": "c", "resources": {}, **expected}


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ((field(3, "Never"), field(6, "Default"), field(4, 0), field(5, 600)),
         {"restartPolicy": "Never", "dnsPolicy": "Default", "terminationGracePeriodSeconds": 0, "activeDeadlineSeconds": 600}),
        ((entry(7, "gpu", "a100"), field(8, "trainer"), field(21, 0), field(10, "local")),
         {"nodeSelector": {"gpu": "a100"}, "serviceAccountName": "trainer", "automountServiceAccountToken": False,
          "nodeName": "local"}),
        ((field(11, 1), field(27, 1), field(16, "h"), field(17, "sub")),
         {"hostNetwork": True, "shareProcessNamespace": True, "hostname": "h", "subdomain": "sub"}),
        ((field(14, msg(field(2, 1000), field(4, 5), field(4, 6), field(5, 2000))),),
         {"securityContext": {"runAsUser": 1000, "supplementalGroups": [5, 6], "fsGroup": 2000}}),
        ((field(14, field(4, varint(5) + varint(6))),), {"securityContext": {"supplementalGroups": [5, 6]}}),  # packed
        ((field(15, field(1, "registry")), field(24, "high"), field(25, 0)),
         {"imagePullSecrets": [{"name": "registry"}], "priorityClassName": "high", "priority": 0}),
        ((field(22, msg(field(1, "gpu"), field(2, "Exists"), field(3, ""), field(4, "NoSchedule"))),),
         {"tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]}),
        ((field(23, msg(field(1, "10.0.0.1"), field(2, "db"))), field(26, field(3, msg(field(1, "ndots"), field(2, "2"))))),
         {"hostAliases": [{"ip": "10.0.0.1", "hostnames": ["db"]}], "dnsConfig": {"options": [{"name": "ndots", "value": "2"}]}}),
        ((field(18, field(1, field(1, field(1, field(1, msg(field(1, "zone"), field(2, "In"), field(3, "a"))))))),),
         {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
             "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}}}),
        ((field(18, field(3, field(2, msg(field(1, 100), field(2, msg(field(1, entry(1, "app", "web")),
                                                                       field(3, "kubernetes.io/hostname"))))))),),
         {"affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
             "weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}},
                                                "topologyKey": "kubernetes.io/hostname"}}]}}}),
        ((field(33, msg(field(1, 1), field(2, "zone"), field(3, "DoNotSchedule"), field(4, b""))),),
         {"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                         "labelSelector": {}}]}),
        ((field(29, "gvisor"), field(30, 1), field(31, "Never"), entry(32, "cpu", quantity("250m")), field(36, field(1, "linux"))),
         {"runtimeClassName": "gvisor", "enableServiceLinks": True, "preemptionPolicy": "Never", "overhead": {"cpu": "250m"},
          "os": {"name": "linux"}}),
        ((field(28, field(1, "ready")), field(38, field(1, "wait"))),
         {"readinessGates": [{"conditionType": "ready"}], "schedulingGates": [{"name": "wait"}]}),
    ],
)
def test_pod_spec_fields(fields, expected):
    assert spec_of(pod_spec(*fields)) == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (field(2, msg(field(1, "Memory"), field(2, quantity("1Gi")))), {"emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}}),
        (field(2, b""), {"emptyDir": {}}),
        (field(1, msg(field(1, "/var/log"), field(2, "Directory"))), {"hostPath": {"path": "/var/log", "type": "Directory"}}),
        (field(19, msg(field(1, field(1, "cfg")), field(2, msg(field(1, "a"), field(2, "a.txt"), field(3, 0o400))), field(3, 0o644))),
         {"configMap": {"name": "cfg", "items": [{"key": "a", "path": "a.txt", "mode": 0o400}], "defaultMode": 0o644}}),
        (field(6, msg(field(1, "tls"), field(4, 1))), {"secret": {"secretName": "tls", "optional": True}}),
        (field(10, msg(field(1, "data"), field(2, 0))), {"persistentVolumeClaim": {"claimName": "data"}}),
        (field(7, msg(field(1, "nfs.local"), field(2, "/export"), field(3, 1))),
         {"nfs": {"server": "nfs.local", "path": "/export", "readOnly": True}}),
        (field(16, field(1, msg(field(1, "labels"), field(2, msg(field(1, "v1"), field(2, "metadata.labels")))))),
         {"downwardAPI": {"items": [{"path": "labels", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels"}}]}}),
        (field(26, msg(field(1, field(4, msg(field(1, "vault"), field(2, 3600), field(3, "token")))),
                       field(1, field(3, field(1, field(1, "ca")))))),
         {"projected": {"sources": [{"serviceAccountToken": {"audience": "vault", "expirationSeconds": 3600, "path": "token"}},
                                    {"configMap": {"name": "ca"}}]}}),
        (field(28, msg(field(1, "csi.example.com"), entry(4, "size", "1"))),
         {"csi": {"driver": "csi.example.com", "volumeAttributes": {"size": "1"}}}),
        (field(30, msg(field(1, "quay.io/weights:v1"), field(2, "IfNotPresent"))),
         {"image": {"reference": "quay.io/weights:v1", "pullPolicy": "IfNotPresent"}}),
    ],
)
def test_volume_sources_join_the_volume(source, expected):
    (volume,) = spec_of(pod_spec(field(1, msg(field(1, "v"), field(2, source)))))["volumes"]
    assert volume == {"name": "v", **expected}


def test_pod_status_a_client_may_send():
    status = msg(field(1, "Pending"), field(2, msg(field(1, "PodScheduled"), field(2, "False"), field(3, b""),
                                                   field(4, field(1, 1700000000)))), field(5, "10.0.0.2"),
                 field(12, field(1, "10.1.0.7")), field(9, "BestEffort"), field(14, ""))
    assert decode(pod(pod_spec(), status))["status"] == {
        "phase": "Pending",
        "conditions": [{"type": "PodScheduled", "status": "False", "lastTransitionTime": "2023-11-14T22:13:20Z"}],
        "hostIP": "10.0.0.2", "podIPs": [{"ip": "10.1.0.7"}], "qosClass": "BestEffort",
    }


# --- services ---------------------------------------------------------------------------------


def service(spec: bytes) -> dict:
    return decode(body("Service", meta(field(1, "s")) + field(2, spec) + field(3, field(1, b""))))


def port(*fields: bytes) -> bytes:
    return msg(field(1, ""), field(2, "TCP"), *fields)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (msg(field(1, port(field(3, 80), field(4, int_or_string(8080)), field(5, 0))), entry(2, "app", "web"), field(4, "ClusterIP")),
         {"ports": [{"protocol": "TCP", "port": 80, "targetPort": 8080}], "selector": {"app": "web"}, "type": "ClusterIP"}),
        (field(1, port(field(3, 80), field(4, int_or_string("http")), field(5, 30080), field(6, "kubernetes.io/h2c"))),
         {"ports": [{"protocol": "TCP", "port": 80, "targetPort": "http", "nodePort": 30080, "appProtocol": "kubernetes.io/h2c"}]}),
        (field(1, port(field(3, 80), field(4, int_or_string(0)))), {"ports": [{"protocol": "TCP", "port": 80}]}),  # the server defaults it
        (msg(field(4, "ExternalName"), field(10, "example.com")), {"type": "ExternalName", "externalName": "example.com"}),
        (msg(field(3, "None"), field(18, "None"), field(13, 0)), {"clusterIP": "None", "clusterIPs": ["None"]}),
        (msg(field(4, "LoadBalancer"), field(9, "10.0.0.0/8"), field(11, "Local"), field(12, 31000), field(20, 0),
             field(21, "example.com/lb"), field(17, "SingleStack"), field(19, "IPv4")),
         {"type": "LoadBalancer", "loadBalancerSourceRanges": ["10.0.0.0/8"], "externalTrafficPolicy": "Local",
          "healthCheckNodePort": 31000, "allocateLoadBalancerNodePorts": False, "loadBalancerClass": "example.com/lb",
          "ipFamilyPolicy": "SingleStack", "ipFamilies": ["IPv4"]}),
        (msg(field(7, "ClientIP"), field(14, field(1, field(1, 10800)))),
         {"sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 10800}}}),
    ],
)
def test_service_spec_fields(spec, expected):
    obj = service(spec)
    assert obj["spec"] == expected
    assert obj["status"] == {"loadBalancer": {}}


# --- deployments and replica sets ---------------------------------------------------------------


def template(*containers: bytes) -> bytes:
    labels = meta(entry(11, "app", "web"), field(8, b""))
    return labels + field(2, pod_spec(*(field(2, c) for c in containers)))


def test_deployment_strategy_replicas_selector_and_template():
    spec = msg(
        field(1, 0), field(2, entry(1, "app", "web")), field(3, template(container(field(1, "web"), field(2, "nginx")))),
        field(4, msg(field(1, "RollingUpdate"), field(2, msg(field(1, int_or_string(0)), field(2, int_or_string("50%")))))),
        field(5, 0), field(6, 3), field(7, 0), field(9, 120),
    )
    obj = decode(body("Deployment", meta(field(1, "web")) + field(2, spec) + field(3, msg(field(1, 0), field(2, 0))), "apps/v1"))
    assert obj["spec"] == {
        "replicas": 0,  # a pointer: 0 is what the user asked for
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}},
                     "spec": {"containers": [{"name": "web", "image": "nginx", "resources": {}}]}},
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "50%"}},
        "revisionHistoryLimit": 3,
        "progressDeadlineSeconds": 120,
    }
    assert obj["status"] == {}


def test_an_empty_strategy_stays_empty_and_is_defaulted_after():
    spec = msg(field(2, entry(1, "app", "web")), field(3, template(container(field(1, "web")))), field(4, field(1, "")),
               field(7, 0))
    obj = decode(body("Deployment", meta(field(1, "web")) + field(2, spec) + field(3, b""), "apps/v1"))
    assert obj["spec"]["strategy"] == {}
    apps_policy.default_deployment(obj)
    assert obj["spec"]["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    assert obj["spec"]["replicas"] == 1
    assert obj["spec"]["template"]["spec"]["restartPolicy"] == "Always"
    assert obj["spec"]["template"]["spec"]["containers"][0]["terminationMessagePath"] == "/dev/termination-log"
    assert apps_policy.deployment_problems(obj) == []


def test_replica_set_and_its_status():
    spec = msg(field(1, 2), field(4, 10), field(2, entry(1, "app", "web")), field(3, template(container(field(1, "web")))))
    status = msg(field(1, 2), field(2, 2), field(4, 1), field(5, 1), field(3, 4),
                 field(6, msg(field(1, "ReplicaFailure"), field(2, "True"), field(3, b""), field(4, "FailedCreate"))))
    obj = decode(body("ReplicaSet", meta(field(1, "web-1")) + field(2, spec) + field(3, status), "apps/v1"))
    assert obj["spec"]["replicas"] == 2 and obj["spec"]["minReadySeconds"] == 10
    assert obj["status"] == {"replicas": 2, "fullyLabeledReplicas": 2, "readyReplicas": 1, "availableReplicas": 1,
                             "observedGeneration": 4,
                             "conditions": [{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate"}]}


# --- what is refused ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (pod(pod_spec(field(34, b""))), "Pod.spec: field 34 of this message is not read"),  # ephemeralContainers
        (pod(pod_spec(field(2, container(field(1, "c"))), field(2, container(field(1, "d"), field(25, b""))))),
         r"Pod.spec.containers\[1\]: field 25 of this message"),  # restartPolicyRules
        (pod(pod_spec(field(1, msg(field(1, "v"), field(3, b""))))), r"Pod.spec.volumes\[0\]: field 3"),  # gcePersistentDisk
        (pod(pod_spec(), field(8, b"")), "Pod.status: field 8"),  # containerStatuses
        (body("Deployment", meta(field(1, "d"), field(15, "c")), "apps/v1"), "Deployment.metadata: field 15"),
        (body("Deployment", meta(field(1, "d")) + field(4, b""), "apps/v1"), "Deployment: field 4"),
        (body("Deployment", field(2, field(3, field(2, field(2, container(field(1, "c"), field(8, field(3, field(9, 1)))))))), "apps/v1"),
         r"Deployment.spec.template.spec.containers\[0\].resources.claims\[0\]: field 9"),
        (body("Service", field(2, field(1, field(4, field(1, 2))))), r"Service.spec.ports\[0\].targetPort: IntOrString of unknown type 2"),
        (body("Service", field(2, field(1, field(3, "80")))), r"Service.spec.ports\[0\].port: expected a number"),
    ],
)
def test_fields_this_server_does_not_read_are_refused_not_dropped(data, message):
    with pytest.raises(ProtobufError, match=message) as caught:
        decode(data)
    if "field" in message:
        assert "send JSON instead" in str(caught.value)


def test_the_other_kinds_still_skip_unknown_fields():
    # ObjectMeta field 15 (clusterName, long removed) is read past in a ConfigMap as before.
    assert decode(body("ConfigMap", meta(field(1, "x"), field(15, "c"))))["metadata"] == {"name": "x"}
    assert decode(body("Namespace", meta(field(1, "n")) + field(2, b"") + field(3, b""))) == {
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}}


# --- the bytes real kubectl 1.32 sends ----------------------------------------------------------


@pytest.fixture
def stub(tmp_path):
    kubectl_binary()
    with KubectlStub(list(BUILTIN_TYPES), tmp_path) as server:
        yield server


def without_nulls(value):
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


@pytest.mark.parametrize(
    "args",
    [
        ["create", "deployment", "web", "--image=nginx", "--replicas=2", "--port=80"],
        ["create", "deployment", "zero", "--image=nginx", "--replicas=0"],
        ["create", "deployment", "two", "--image=nginx", "--image=busybox:1.36"],
        ["create", "deployment", "cmd", "--image=busybox", "-n", "jobs", "--", "sleep", "3600"],
        ["create", "service", "clusterip", "web", "--tcp=80:8080", "--tcp=443"],
        ["create", "service", "clusterip", "headless", "--clusterip=None"],
        ["create", "service", "nodeport", "np", "--tcp=80:8080", "--node-port=30080"],
        ["create", "service", "loadbalancer", "lb", "--tcp=80:http"],
        ["create", "service", "externalname", "ext", "--external-name=example.com"],
    ],
)
def test_kubectl_bodies_decode_to_the_json_kubectl_writes(stub, args):
    """The protobuf kubectl sends decodes to what it writes with `--dry-run=client -o json`
    (less the nulls: `creationTimestamp: null` is an unset time, left out)."""
    result = stub.kubectl(*args)
    assert result.returncode == 0, result.stderr
    (post,) = stub.posts()
    assert post.content_type == CONTENT_TYPE
    dry = stub.kubectl(*_dry_run(args))
    assert dry.returncode == 0, dry.stderr
    assert decode(post.body) == without_nulls(json.loads(dry.stdout))


def _dry_run(args: list[str]) -> list[str]:
    """The same command printing its object: the flags go before a `--` command."""
    if "--" in args:
        at = args.index("--")
        return [*args[:at], "--dry-run=client", "-o", "json", *args[at:]]
    return [*args, "--dry-run=client", "-o", "json"]


def test_kubectl_create_deployment_fields(stub):
    result = stub.kubectl("create", "deployment", "web", "--image=nginx", "--replicas=2", "--port=80")
    assert result.returncode == 0, result.stderr
    obj = decode(stub.posts()[0].body)
    before = copy.deepcopy(obj)
    assert obj["spec"] == {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}},
                     "spec": {"containers": [{"name": "nginx", "image": "nginx", "ports": [{"containerPort": 80}], "resources": {}}]}},
        "strategy": {},
    }
    apps_policy.default_deployment(obj)
    assert obj["spec"]["strategy"]["type"] == "RollingUpdate" and before["spec"]["strategy"] == {}
