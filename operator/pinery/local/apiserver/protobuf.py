"""Decode the protobuf request bodies that kubectl and other Go clients send.

`kubectl create namespace|configmap|secret generic|serviceaccount|deployment|service ...` send
`application/vnd.kubernetes.protobuf`: the magic `k8s\\x00`, then a `runtime.Unknown` message
(1 typeMeta {1 apiVersion, 2 kind}, 2 raw, 3 contentEncoding, 4 contentType) whose `raw` is the
object's own message. This module turns the kinds in KINDS into the JSON shape the rest of the
server works with. Field numbers are those of k8s.io/api core/v1 and apimachinery's
generated.proto. Zero values that Go always writes (empty strings, 0, unset times) are left
out, as `omitempty` would; `bytes` fields become base64 text, as in JSON.

The workload kinds (Pod, Service, Deployment, ReplicaSet: `protobuf_workloads`) are read
strictly: a field number not in their tables is refused, not skipped, and an empty nested
message (`strategy`, `resources`, `status`) stays `{}`, as Go's JSON has it.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

from pinery.local.apiserver import protobuf_workloads

MAGIC = b"k8s\x00"
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"

_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5


class ProtobufError(ValueError):
    """A body that is not a Kubernetes protobuf object this server can read."""


# A message is {field number: (JSON name, type)}. Types: "str", "int" and "flag" (a Go bool:
# left out when zero or false), "bool", "optint" and "optstr" (pointers in Go: kept when sent),
# "bytes" (base64), "time" (RFC 3339), "fieldsv1" (a message holding raw JSON bytes),
# "quantity" (resource.Quantity {1 string}: its text), "intorstr" / "optintorstr"
# (intstr.IntOrString {1 type: 0 int, 1 string; 2 intVal; 3 strVal}: a number or a string, the
# second a pointer), "objectmeta" (meta/v1 ObjectMeta, for the tables of other modules),
# "map" / "bytesmap" / "quantitymap" (map<string, string|bytes|Quantity>), a nested message
# (dict), ("list", type) for repeated fields, or ("inline", message) for an embedded Go struct
# (`json:",inline"`), whose fields join the parent's.
_POINTERS = ("bool", "optint", "optstr", "optintorstr")
_MAP_VALUES = {"map": "str", "bytesmap": "bytes", "quantitymap": "quantity"}
_TIME = "time"
_OWNER_REFERENCE = {
    1: ("kind", "str"),
    3: ("name", "str"),
    4: ("uid", "str"),
    5: ("apiVersion", "str"),
    6: ("controller", "bool"),
    7: ("blockOwnerDeletion", "bool"),
}
_MANAGED_FIELDS_ENTRY = {
    1: ("manager", "str"),
    2: ("operation", "str"),
    3: ("apiVersion", "str"),
    4: ("time", _TIME),
    6: ("fieldsType", "str"),
    7: ("fieldsV1", "fieldsv1"),
    8: ("subresource", "str"),
}
_OBJECT_META = {
    1: ("name", "str"),
    2: ("generateName", "str"),
    3: ("namespace", "str"),
    4: ("selfLink", "str"),
    5: ("uid", "str"),
    6: ("resourceVersion", "str"),
    7: ("generation", "int"),
    8: ("creationTimestamp", _TIME),
    9: ("deletionTimestamp", _TIME),
    10: ("deletionGracePeriodSeconds", "optint"),
    11: ("labels", "map"),
    12: ("annotations", "map"),
    13: ("ownerReferences", ("list", _OWNER_REFERENCE)),
    14: ("finalizers", ("list", "str")),
    17: ("managedFields", ("list", _MANAGED_FIELDS_ENTRY)),
}
_OBJECT_REFERENCE = {
    1: ("kind", "str"),
    2: ("namespace", "str"),
    3: ("name", "str"),
    4: ("uid", "str"),
    5: ("apiVersion", "str"),
    6: ("resourceVersion", "str"),
    7: ("fieldPath", "str"),
}
_NAMESPACE_CONDITION = {
    1: ("type", "str"),
    2: ("status", "str"),
    4: ("lastTransitionTime", _TIME),
    5: ("reason", "str"),
    6: ("message", "str"),
}

# The kinds kubectl's generators send, by (apiVersion, kind).
KINDS: dict[tuple[str, str], dict[int, tuple[str, Any]]] = {
    ("v1", "Namespace"): {
        1: ("metadata", _OBJECT_META),
        2: ("spec", {1: ("finalizers", ("list", "str"))}),
        3: ("status", {1: ("phase", "str"), 2: ("conditions", ("list", _NAMESPACE_CONDITION))}),
    },
    ("v1", "ConfigMap"): {
        1: ("metadata", _OBJECT_META),
        2: ("data", "map"),
        3: ("binaryData", "bytesmap"),
        4: ("immutable", "bool"),
    },
    ("v1", "Secret"): {
        1: ("metadata", _OBJECT_META),
        2: ("data", "bytesmap"),
        3: ("type", "str"),
        4: ("stringData", "map"),
        5: ("immutable", "bool"),
    },
    ("v1", "ServiceAccount"): {
        1: ("metadata", _OBJECT_META),
        2: ("secrets", ("list", _OBJECT_REFERENCE)),
        3: ("imagePullSecrets", ("list", {1: ("name", "str")})),
        4: ("automountServiceAccountToken", "bool"),
    },
}
# Pod, Service, Deployment, ReplicaSet: read strictly (an unread field is refused, not dropped).
KINDS.update(protobuf_workloads.KINDS)
STRICT_KINDS = frozenset(protobuf_workloads.KINDS)
# meta/v1 DeleteOptions (apimachinery pkg/apis/meta/v1/generated.proto), the body of a DELETE:
# client-go sends it in the protobuf of the resource's own group version (`v1` for Helm's
# release Secrets), and the API server reads it in any group version (delete.go, "per group
# DeleteOptions").
DELETE_OPTIONS = {
    1: ("gracePeriodSeconds", "optint"),
    2: ("preconditions", {1: ("uid", "str"), 2: ("resourceVersion", "str")}),
    3: ("orphanDependents", "bool"),
    4: ("propagationPolicy", "str"),
    5: ("dryRun", ("list", "str")),
    6: ("ignoreStoreReadErrorWithClusterBreakingPotential", "bool"),
}
# policy/v1 Eviction (k8s.io/api policy/v1 generated.proto: 1 metadata, 2 deleteOptions), what a
# Go client configured for protobuf posts to pods/{name}/eviction (eviction.py; kubectl sends JSON).
KINDS[("policy/v1", "Eviction")] = {1: ("metadata", _OBJECT_META), 2: ("deleteOptions", DELETE_OPTIONS)}
_ENVELOPE = {1: ("typeMeta", {1: ("apiVersion", "str"), 2: ("kind", "str")}), 2: ("raw", "raw"),
             3: ("contentEncoding", "str"), 4: ("contentType", "str")}


def decode(body: bytes) -> dict[str, Any]:
    """The JSON-shaped object of a `application/vnd.kubernetes.protobuf` request body."""
    if not body.startswith(MAGIC):
        raise ProtobufError("not a Kubernetes protobuf body: it does not start with the k8s\\x00 prefix")
    envelope = _message(body[len(MAGIC):], _ENVELOPE, "runtime.Unknown")
    type_meta = envelope.get("typeMeta", {})
    api_version, kind = type_meta.get("apiVersion", ""), type_meta.get("kind", "")
    if envelope.get("contentEncoding") or envelope.get("contentType"):
        raise ProtobufError(
            f"{kind or 'object'}: unsupported content encoding/type "
            f"{envelope.get('contentEncoding', '')!r}/{envelope.get('contentType', '')!r}"
        )
    fields = DELETE_OPTIONS if kind == "DeleteOptions" else KINDS.get((api_version, kind))
    if fields is None:
        known = ", ".join(f"{v}/{k}" for v, k in KINDS)
        raise ProtobufError(
            f"cannot read {api_version or '?'}/{kind or '?'} from protobuf: this server reads protobuf only for "
            f"{known}; {_SEND_JSON}"
        )
    obj = _message(envelope.get("raw", b""), fields, kind, (api_version, kind) in STRICT_KINDS)
    return {"apiVersion": api_version, "kind": kind, **obj}


_SEND_JSON = "send JSON instead, e.g. `kubectl create ... --dry-run=client -o yaml | kubectl apply -f -`"


def _message(data: bytes, fields: dict[int, tuple[str, Any]], what: str, strict: bool = False) -> dict[str, Any]:
    """One message as a JSON object. Strict: an unknown field number is an error, and an empty
    nested message that was sent is kept as {} (Go writes its struct fields; JSON shows them)."""
    out: dict[str, Any] = {}
    for number, wire, value in _fields(data, what):
        if number not in fields:
            if strict:
                raise ProtobufError(
                    f"{what}: field {number} of this message is not read by this server, and dropping it would "
                    f"lose data; {_SEND_JSON}"
                )
            continue  # fields this server does not need, as any protobuf reader skips them
        name, kind = fields[number]
        where = f"{what}.{name}"
        if isinstance(kind, tuple) and kind[0] == "inline":
            out.update(_value(kind[1], wire, value, what, strict))
        elif isinstance(kind, tuple):
            items = out.setdefault(name, [])
            if kind[1] == "int" and wire == _LEN:  # a packed repeated number
                assert isinstance(value, bytes)
                items.extend(_signed(n) for n in _packed(value, where))
            else:
                items.append(_value(kind[1], wire, value, f"{where}[{len(items)}]", strict))
        elif isinstance(kind, str) and kind in _MAP_VALUES:
            key, item = _entry(kind, wire, value, where, strict)
            out.setdefault(name, {})[key] = item
        else:
            out[name] = _value(kind, wire, value, where, strict)
    dropped: tuple[Any, ...] = ("", 0, None, []) if strict else ("", 0, None, {}, [])  # strict: a {} that was sent stays
    return {k: v for k, v in out.items() if v not in dropped or _kept_when_zero(fields, k)}


def _kept_when_zero(fields: dict[int, tuple[str, Any]], name: str) -> bool:
    return any(n == name and kind in _POINTERS for n, kind in fields.values())


def _value(kind: Any, wire: int, value: int | bytes, where: str, strict: bool = False) -> Any:
    if kind in ("int", "optint", "bool", "flag"):
        if wire != _VARINT:
            raise ProtobufError(f"{where}: expected a number, found wire type {wire}")
        assert isinstance(value, int)
        if kind in ("bool", "flag"):
            return value != 0
        return _signed(value)
    if wire != _LEN:
        raise ProtobufError(f"{where}: expected length-delimited data, found wire type {wire}")
    assert isinstance(value, bytes)
    if kind in ("str", "optstr"):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProtobufError(f"{where}: invalid UTF-8 text") from exc
    if kind == "raw":
        return value
    if kind == "bytes":
        return base64.b64encode(value).decode("ascii")
    if kind == "fieldsv1":
        raw = _message(value, {1: ("raw", "raw")}, where, strict).get("raw", b"")
        try:
            return json.loads(raw) if raw else None
        except ValueError as exc:
            raise ProtobufError(f"{where}: invalid JSON") from exc
    if kind == _TIME:
        return _time(value, where, strict)
    if kind == "quantity":
        return _message(value, {1: ("string", "str")}, where, strict).get("string", "")
    if kind in ("intorstr", "optintorstr"):
        parts = _message(value, _INT_OR_STRING, where, strict)
        if parts.get("type", 0) not in (0, 1):
            raise ProtobufError(f"{where}: IntOrString of unknown type {parts['type']}")
        return parts.get("strVal", "") if parts.get("type") == 1 else parts.get("intVal", 0)
    if kind == "objectmeta":
        return _message(value, _OBJECT_META, where, strict)
    if isinstance(kind, dict):
        return _message(value, kind, where, strict)
    raise AssertionError(kind)


_INT_OR_STRING = {1: ("type", "int"), 2: ("intVal", "int"), 3: ("strVal", "str")}  # apimachinery pkg/util/intstr/generated.proto


def _entry(kind: str, wire: int, value: int | bytes, where: str, strict: bool) -> tuple[str, Any]:
    """One map entry: a message with key = 1, value = 2."""
    if wire != _LEN:
        raise ProtobufError(f"{where}: expected a map entry, found wire type {wire}")
    assert isinstance(value, bytes)
    entry = _message(value, {1: ("key", "str"), 2: ("value", _MAP_VALUES[kind])}, where, strict)
    return entry.get("key", ""), entry.get("value", "")


def _time(value: bytes, where: str, strict: bool) -> str | None:
    parts = _message(value, {1: ("seconds", "int"), 2: ("nanos", "int")}, where, strict)
    if not parts:
        return None
    moment = datetime.fromtimestamp(parts.get("seconds", 0), tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _signed(number: int) -> int:
    return number - (1 << 64) if number >= 1 << 63 else number  # int64 two's complement


def _packed(data: bytes, where: str) -> Iterator[int]:
    """The numbers of a packed repeated field (Go writes them unpacked; others may not)."""
    pos = 0
    while pos < len(data):
        number, pos = _varint(data, pos, where)
        yield number


def _fields(data: bytes, what: str) -> Iterator[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) of each field of one message, in order."""
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos, what)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ProtobufError(f"{what}: invalid field number 0 at byte {pos}")
        if wire == _VARINT:
            value, pos = _varint(data, pos, what)
            yield number, wire, value
            continue
        if wire == _LEN:
            size, pos = _varint(data, pos, what)
        elif wire in (_I64, _I32):
            size = 8 if wire == _I64 else 4
        else:
            raise ProtobufError(f"{what}: unsupported wire type {wire} for field {number}")
        if pos + size > len(data):
            raise ProtobufError(f"{what}: truncated data in field {number} ({size} bytes announced, {len(data) - pos} left)")
        yield number, wire, data[pos:pos + size]
        pos += size


def _varint(data: bytes, pos: int, what: str) -> tuple[int, int]:
    result = shift = 0
    while pos < len(data):
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise ProtobufError(f"{what}: malformed varint")
    raise ProtobufError(f"{what}: truncated data (a number runs past the end)")
