"""Decoding kubectl's protobuf request bodies: hand-built messages, then the real bytes kubectl sends."""

from __future__ import annotations

import base64
import json

import pytest

from pinery.local.apiserver.protobuf import CONTENT_TYPE, MAGIC, ProtobufError, decode
from pinery.local.apiserver.resources import BUILTIN_TYPES, ResourceType
from tests.support.kubectl import KubectlStub, kubectl_binary

# --- a minimal encoder, to build the messages the decoder must read ---------------------------


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number: int, value: int | bytes | str) -> bytes:
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    data = value.encode() if isinstance(value, str) else value
    return varint(number << 3 | 2) + varint(len(data)) + data


def entry(number: int, key: str, value: str | bytes) -> bytes:
    return field(number, field(1, key) + field(2, value))


def body(kind: str, raw: bytes, api_version: str = "v1", *extra: bytes) -> bytes:
    return MAGIC + field(1, field(1, api_version) + field(2, kind)) + field(2, raw) + b"".join(extra)


def meta(*fields: bytes) -> bytes:
    return field(1, b"".join(fields))


# --- hand-built messages ----------------------------------------------------------------------


def test_namespace_with_labels_annotations_and_go_zero_values_left_out():
    raw = meta(
        field(1, "team-a"), field(2, ""), field(3, ""), field(7, 0),  # Go writes zero values too
        entry(11, "env", "dev"), entry(11, "owner", "ml"), entry(12, "note", "x=1"),
        field(8, b""),  # an unset creationTimestamp
    ) + field(2, field(1, "kubernetes")) + field(3, b"")
    assert decode(body("Namespace", raw)) == {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "team-a", "labels": {"env": "dev", "owner": "ml"}, "annotations": {"note": "x=1"}},
        "spec": {"finalizers": ["kubernetes"]},
    }


def test_configmap_binary_data_is_base64_and_a_false_immutable_is_kept():
    blob = bytes(range(256))
    raw = meta(field(1, "cfg"), field(3, "jobs")) + entry(2, "a", "1") + entry(3, "blob", blob) + field(4, 0)
    obj = decode(body("ConfigMap", raw))
    assert obj["metadata"] == {"name": "cfg", "namespace": "jobs"}
    assert obj["data"] == {"a": "1"}
    assert base64.b64decode(obj["binaryData"]["blob"]) == blob
    assert obj["immutable"] is False


def test_secret_data_string_data_and_type():
    raw = meta(field(2, "key-")) + entry(2, "apiKey", b"\x00s3cret") + field(3, "Opaque") + entry(4, "plain", "text")
    assert decode(body("Secret", raw)) == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"generateName": "key-"},
        "data": {"apiKey": base64.b64encode(b"\x00s3cret").decode()},
        "type": "Opaque",
        "stringData": {"plain": "text"},
    }


def test_service_account_references_and_automount():
    raw = (
        meta(field(1, "runner"))
        + field(2, field(1, "Secret") + field(3, "token"))
        + field(3, field(1, "registry"))
        + field(3, field(1, "mirror"))
        + field(4, 1)
    )
    assert decode(body("ServiceAccount", raw)) == {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "runner"},
        "secrets": [{"kind": "Secret", "name": "token"}],
        "imagePullSecrets": [{"name": "registry"}, {"name": "mirror"}],
        "automountServiceAccountToken": True,
    }


def test_object_meta_times_owners_finalizers_and_managed_fields():
    owner = field(1, "FSDPJob") + field(3, "job") + field(4, "uid-1") + field(5, "pinery.dev/v1alpha1") + field(6, 1)
    managed = field(1, "kubectl") + field(2, "Update") + field(4, field(1, 1700000000)) + field(6, "FieldsV1") + field(
        7, field(1, b'{"f:data":{}}')
    )
    raw = meta(
        field(1, "cm"), field(5, "u-1"), field(6, "42"), field(7, 3),
        field(8, field(1, 1700000000) + field(2, 5)), field(10, 0),
        field(13, owner), field(14, "pinery.dev/cleanup"), field(17, managed),
    )
    assert decode(body("ConfigMap", raw))["metadata"] == {
        "name": "cm",
        "uid": "u-1",
        "resourceVersion": "42",
        "generation": 3,
        "creationTimestamp": "2023-11-14T22:13:20Z",
        "deletionGracePeriodSeconds": 0,
        "ownerReferences": [
            {"kind": "FSDPJob", "name": "job", "uid": "uid-1", "apiVersion": "pinery.dev/v1alpha1", "controller": True}
        ],
        "finalizers": ["pinery.dev/cleanup"],
        "managedFields": [
            {"manager": "kubectl", "operation": "Update", "time": "2023-11-14T22:13:20Z", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:data": {}}}
        ],
    }


def test_negative_int64_and_unknown_fields_of_every_wire_type_are_read_past():
    unknown = field(99, 5) + field(98, b"skip me") + varint(97 << 3 | 5) + b"\x01\x02\x03\x04" + varint(96 << 3 | 1) + bytes(8)
    raw = meta(field(1, "x"), unknown, field(10, -1)) + unknown
    assert decode(body("ConfigMap", raw))["metadata"] == {"name": "x", "deletionGracePeriodSeconds": -1}


# --- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"kind": "Namespace"}', "does not start with the k8s"),
        (b"", "does not start with the k8s"),
        (body("DaemonSet", meta(field(1, "d")), "apps/v1"), "cannot read apps/v1/DaemonSet from protobuf"),
        (body("Event", meta(field(1, "e"))), "cannot read v1/Event"),
        (MAGIC + field(2, b""), "cannot read ?/?"),
        (body("ConfigMap", meta(field(1, "x")), "v1", field(3, "gzip")), "unsupported content encoding"),
        (body("ConfigMap", meta(field(1, "x")))[:-3], "truncated data"),
        (body("ConfigMap", field(1, field(1, b"\xff\xfe"))), "ConfigMap.metadata.name: invalid UTF-8"),
        (body("ConfigMap", field(1, 7)), "ConfigMap.metadata: expected length-delimited"),
        (body("Secret", field(5, b"yes")), "Secret.immutable: expected a number"),
        (body("Secret", field(2, 3)), "Secret.data: expected a map entry"),
        (body("Secret", varint(1 << 3 | 3)), "unsupported wire type 3"),
        (body("Secret", b"\x00"), "invalid field number 0"),
        (body("Secret", b"\x08"), "a number runs past the end"),
        (body("Secret", b"\x08" + b"\xff" * 11), "malformed varint"),
    ],
)
def test_unreadable_bodies_raise_a_clear_protobuf_error(data, message):
    with pytest.raises(ProtobufError, match=message.replace("?", r"\?")) as caught:
        decode(data)
    assert isinstance(caught.value, ValueError)


def test_the_refusal_of_another_kind_tells_the_user_what_works():
    with pytest.raises(ProtobufError) as caught:
        decode(body("PersistentVolumeClaim", meta(field(1, "data"))))
    text = str(caught.value)
    assert "v1/Namespace, v1/ConfigMap, v1/Secret, v1/ServiceAccount, v1/Pod, v1/Service, apps/v1/Deployment, apps/v1/ReplicaSet" in text
    assert "--dry-run=client -o yaml | kubectl apply -f -" in text


# --- the bytes real kubectl sends -------------------------------------------------------------


QUOTAS = ResourceType("", "v1", "ResourceQuota", "resourcequotas", namespaced=True)  # served by the stub, not read in protobuf


@pytest.fixture
def stub(tmp_path):
    kubectl_binary()
    with KubectlStub([*BUILTIN_TYPES, QUOTAS], tmp_path) as server:
        yield server


def created(stub: KubectlStub, *args: str) -> dict:
    """Run a kubectl generator command; the decoded body of the one create it sent."""
    before = len(stub.requests)
    result = stub.kubectl(*args, cwd=stub.workdir)
    assert result.returncode == 0, result.stderr
    posts = [r for r in stub.requests[before:] if r.method == "POST"]
    assert len(posts) == 1
    # kubectl 1.32 sends every generator object in protobuf, with server-side validation asked for.
    assert posts[0].content_type == CONTENT_TYPE
    assert posts[0].query == {"fieldManager": "kubectl-create", "fieldValidation": "Strict"}
    return decode(posts[0].body)


def test_kubectl_create_namespace(stub):
    assert created(stub, "create", "namespace", "team-a") == {
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"},
    }


def test_kubectl_create_configmap_from_literal_and_files(stub):
    blob = bytes(range(256)) * 4
    (stub.workdir / "train.yaml").write_text("steps: 20\nlr: 0.001\n")
    (stub.workdir / "weights.bin").write_bytes(blob)
    obj = created(
        stub, "create", "configmap", "trainer-config", "-n", "jobs", "--from-literal=preset=tiny",
        "--from-file=train.yaml", "--from-file=init=weights.bin", "--save-config",
    )
    assert obj["metadata"]["name"] == "trainer-config"
    assert obj["metadata"]["namespace"] == "jobs"  # in the body as in the URL, when -n is given
    assert obj["data"] == {"preset": "tiny", "train.yaml": "steps: 20\nlr: 0.001\n"}
    assert base64.b64decode(obj["binaryData"]["init"]) == blob
    last_applied = json.loads(obj["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"])
    assert last_applied["data"] == obj["data"]
    assert last_applied["binaryData"] == obj["binaryData"]
    assert stub.posts()[-1].path == "/api/v1/namespaces/jobs/configmaps"


def test_kubectl_create_secret_generic(stub):
    (stub.workdir / "ca.der").write_bytes(b"\x30\x82\x00\xff")
    obj = created(
        stub, "create", "secret", "generic", "pinecone", "--from-literal=apiKey=pc-123", "--from-file=ca.der",
    )
    assert obj == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "pinecone"},
        "data": {"apiKey": base64.b64encode(b"pc-123").decode(), "ca.der": base64.b64encode(b"\x30\x82\x00\xff").decode()},
    }  # no type: kubectl leaves it to the server's default, Opaque
    typed = created(stub, "create", "secret", "generic", "typed", "--from-literal=k=v", "--type=pinery.dev/api-key")
    assert typed["type"] == "pinery.dev/api-key"


def test_kubectl_create_serviceaccount(stub):
    assert created(stub, "create", "serviceaccount", "trainer") == {
        "apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "trainer"},
    }


def test_other_generator_kinds_get_the_decoder_message(stub):
    # The server answers ProtobufError as 415; kubectl shows its message and does not retry in JSON.
    result = stub.kubectl("create", "quota", "pods", "--hard=pods=2")
    assert result.returncode != 0
    assert "cannot read v1/ResourceQuota from protobuf" in result.stderr
    assert "--dry-run=client -o yaml | kubectl apply -f -" in result.stderr
    assert [r.content_type for r in stub.posts()] == [CONTENT_TYPE]
