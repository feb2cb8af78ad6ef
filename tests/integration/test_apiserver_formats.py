"""Content negotiation on the local control plane: Tables, OpenAPI v3, protobuf bodies and the
answers to kubectl's aggregated-discovery and protobuf Accept headers."""

import json

from tests.integration.helpers import configmap, install_widgets, widget, widgets_path

TABLE = {"Accept": "application/json;as=Table;g=meta.k8s.io;v=v1,application/json"}
PROTOBUF = "application/vnd.kubernetes.protobuf"


def test_tables_for_lists_objects_and_watches(control_plane):
    install_widgets(control_plane)
    control_plane.http("POST", widgets_path(), json=widget("t1", size=4))
    table = control_plane.http("GET", widgets_path(), headers=TABLE).json()
    assert (table["kind"], table["apiVersion"]) == ("Table", "meta.k8s.io/v1")
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Size", "Phase"]
    (row,) = table["rows"]
    assert row["cells"][:2] == ["t1", 4]
    assert row["object"]["kind"] == "PartialObjectMetadata" and row["object"]["metadata"]["name"] == "t1"
    assert table["metadata"]["resourceVersion"]

    one = control_plane.http("GET", widgets_path(name="t1") + "?includeObject=Object", headers=TABLE).json()
    assert one["rows"][0]["object"]["spec"]["size"] == 4
    beta = control_plane.http("GET", widgets_path(), headers={"Accept": "application/json;as=Table;g=meta.k8s.io;v=v1beta1"}).json()
    assert beta["apiVersion"] == "meta.k8s.io/v1beta1"
    plain = control_plane.http("GET", widgets_path()).json()
    assert plain["kind"] == "WidgetList"

    since = plain["metadata"]["resourceVersion"]
    control_plane.http("POST", widgets_path(), json=widget("t2", size=5))
    watched = control_plane.http("GET", widgets_path() + f"?watch=true&resourceVersion={since}&timeoutSeconds=1", headers=TABLE)
    (event,) = [json.loads(line) for line in watched.text.splitlines()]
    assert event["type"] == "ADDED" and event["object"]["kind"] == "Table"
    assert event["object"]["rows"][0]["cells"][:2] == ["t2", 5]
    assert control_plane.http("GET", widgets_path() + "?includeObject=Everything", headers=TABLE).status_code == 400


def test_openapi_v3_documents_follow_the_types(control_plane):
    index = control_plane.http("GET", "/openapi/v3").json()
    assert "api/v1" in index["paths"] and "apis/test.pinery.dev/v1" not in index["paths"]
    install_widgets(control_plane)
    index = control_plane.http("GET", "/openapi/v3").json()
    url = index["paths"]["apis/test.pinery.dev/v1"]["serverRelativeURL"]
    document = control_plane.http("GET", url).json()
    post = document["paths"]["/apis/test.pinery.dev/v1/namespaces/{namespace}/widgets"]["post"]
    assert any(p["name"] == "fieldValidation" for p in post.get("parameters", []))
    assert control_plane.http("GET", "/openapi/v3/apis/nope.example.com/v1").status_code == 404
    # /openapi/v2 is a Swagger 2.0 document without definitions (openapi_v2.py says why).
    v2 = control_plane.http("GET", "/openapi/v2", headers={"Accept": "application/json"})
    assert v2.status_code == 200 and v2.json()["swagger"] == "2.0" and v2.json()["definitions"] == {}


def test_json_answers_to_aggregated_discovery_and_protobuf_accept(control_plane):
    aggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
    response = control_plane.http("GET", "/apis", headers={"Accept": aggregated})
    assert response.headers["Content-Type"].startswith("application/json")
    assert response.json()["kind"] == "APIGroupList"
    proto = control_plane.http("GET", "/api/v1/namespaces/default", headers={"Accept": f"{PROTOBUF}, application/json"})
    assert proto.headers["Content-Type"].startswith("application/json") and proto.json()["kind"] == "Namespace"


def test_protobuf_bodies_of_other_kinds_are_415(control_plane):
    # runtime.Unknown {1 typeMeta {1 "v1", 2 "PersistentVolumeClaim"}, 2 raw (empty)}
    body = b"k8s\x00\x0a\x1b\x0a\x02v1\x12\x15PersistentVolumeClaim\x12\x00"
    response = control_plane.http("POST", "/api/v1/namespaces/default/persistentvolumeclaims", data=body, headers={"Content-Type": PROTOBUF})
    assert response.status_code == 415
    assert response.json()["reason"] == "UnsupportedMediaType"
    assert "cannot read v1/PersistentVolumeClaim from protobuf" in response.json()["message"]
    garbage = control_plane.http("POST", "/api/v1/namespaces/default/configmaps", data=b"not protobuf", headers={"Content-Type": PROTOBUF})
    assert garbage.status_code == 415


def test_yaml_bodies(control_plane):
    body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  a: '1'\n"
    response = control_plane.http("POST", "/api/v1/namespaces/default/configmaps", data=body, headers={"Content-Type": "application/yaml"})
    assert response.status_code == 201 and response.json()["data"] == {"a": "1"}
    assert control_plane.http("POST", "/api/v1/namespaces/default/configmaps", data=json.dumps(configmap("x")),
                              headers={"Content-Type": "text/csv"}).status_code == 415
