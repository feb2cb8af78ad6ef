"""Real kubectl's protobuf bodies of the workload kinds (protobuf_workloads.py): `kubectl create
deployment` and `kubectl create service ...` send apps/v1 Deployments and v1 Services in
`application/vnd.kubernetes.protobuf`; the control plane reads them and stores what was sent."""

from __future__ import annotations

import json

from tests.support.waiting import wait_for

PROTOBUF = "application/vnd.kubernetes.protobuf"


def get(plane, *args: str) -> dict:
    return json.loads(plane.kubectl("get", *args, "-o", "json").stdout)


def test_kubectl_create_deployment_and_services(control_plane):
    plane = control_plane
    created = plane.kubectl("create", "deployment", "web", "--image=nginx", "--replicas=2", "--port=80", "-v=8")
    assert created.stdout.strip() == "deployment.apps/web created"
    assert f"Content-Type: {PROTOBUF}" in created.stderr  # kubectl sent protobuf, and it was read

    deployment = get(plane, "deployment", "web")
    assert deployment["metadata"]["labels"] == {"app": "web"}
    spec = deployment["spec"]
    assert spec["replicas"] == 2
    assert spec["selector"] == {"matchLabels": {"app": "web"}}
    assert spec["template"]["metadata"]["labels"] == {"app": "web"}
    (container,) = spec["template"]["spec"]["containers"]
    assert (container["name"], container["image"], container["ports"]) == ("nginx", "nginx", [{"containerPort": 80, "protocol": "TCP"}])
    # `strategy: {}` and `resources: {}` as sent, then the API defaults
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    assert container["resources"] == {} and container["imagePullPolicy"] == "Always"
    assert spec["template"]["spec"]["restartPolicy"] == "Always" and spec["template"]["spec"]["dnsPolicy"] == "ClusterFirst"
    wait_for(lambda: get(plane, "replicasets", "-l", "app=web")["items"], timeout=15, what="the deployment's ReplicaSet")
    (replica_set,) = get(plane, "replicasets", "-l", "app=web")["items"]
    assert replica_set["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx"

    plane.kubectl("create", "deployment", "sleeper", "--image=busybox", "-n", "default", "--", "sleep", "3600")
    (sleeper,) = get(plane, "deployment", "sleeper")["spec"]["template"]["spec"]["containers"]
    assert sleeper["command"] == ["sleep", "3600"]

    assert plane.kubectl("create", "service", "clusterip", "web", "--tcp=80:8080").stdout.strip() == "service/web created"
    service = get(plane, "service", "web")
    assert service["spec"]["type"] == "ClusterIP"
    assert service["spec"]["selector"] == {"app": "web"}
    assert service["spec"]["ports"] == [{"name": "80-8080", "protocol": "TCP", "port": 80, "targetPort": 8080}]

    plane.kubectl("create", "service", "nodeport", "np", "--tcp=80:http", "--node-port=30080")
    (np_port,) = get(plane, "service", "np")["spec"]["ports"]
    assert (np_port["targetPort"], np_port["nodePort"]) == ("http", 30080)
    plane.kubectl("create", "service", "externalname", "ext", "--external-name=example.com")
    external = get(plane, "service", "ext")["spec"]
    assert (external["type"], external["externalName"]) == ("ExternalName", "example.com")
    plane.kubectl("create", "service", "loadbalancer", "lb", "--tcp=443")
    assert get(plane, "service", "lb")["spec"]["ports"][0]["targetPort"] == 443  # defaulted from the port

    # what kubectl sends is validated as JSON would be
    bad = plane.kubectl("create", "deployment", "Bad_Name", "--image=nginx", check=False)
    assert bad.returncode != 0 and "Invalid" in bad.stderr and "415" not in bad.stderr


def test_a_field_this_server_does_not_read_is_a_415_naming_it(control_plane):
    def field(number: int, data: bytes) -> bytes:
        return bytes([number << 3 | 2, len(data)]) + data

    envelope = field(1, field(1, b"v1") + field(2, b"Pod"))
    # Pod {1 metadata {1 name}, 2 spec {34 ephemeralContainers}}: field 34 is two bytes of key
    raw = field(1, field(1, b"p")) + field(2, b"\x92\x02\x00")
    response = control_plane.http("POST", "/api/v1/namespaces/default/pods", data=b"k8s\x00" + envelope + field(2, raw),
                                  headers={"Content-Type": PROTOBUF})
    assert response.status_code == 415
    message = response.json()["message"]
    assert "Pod.spec: field 34" in message and "send JSON instead" in message
    assert control_plane.http("GET", "/api/v1/namespaces/default/pods/p").status_code == 404
