"""The OpenAPI v3 documents the local control plane serves (`GET /openapi/v3[/...]`).

kubectl reads them for three things:
- `apply`/`create -f` check that the PATCH operation of the kind carries a `fieldValidation`
  query parameter; then they send `fieldValidation=Strict` and leave validation to the server
  instead of downloading `/openapi/v2`;
- client-side `apply` of an existing object builds its strategic merge patch from the schema
  tagged with the kind's `x-kubernetes-group-version-kind`, when the PATCH operation accepts
  strategic merge patches. A schema that lacks a field of the object makes kubectl warn
  ("error calculating patch from openapi v3 spec"), so only complete schemas carry the tag:
  the CRDs' own schemas and the few simple built-ins written out below. For other built-ins
  kubectl falls back to its compiled-in types, which is what a real cluster's schema yields;
- `explain` renders the tagged schemas.
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

from pinery.local.apiserver.resources import ResourceType

META = "io.k8s.apimachinery.pkg.apis.meta.v1."
OBJECT_META = META + "ObjectMeta"
LIST_META = META + "ListMeta"
STATUS = META + "Status"
PATCH = META + "Patch"
SERVER_VERSION = "v1.32.0"

_JSON = "application/json"
_PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml")
_SMP = "application/strategic-merge-patch+json"


def v3_index(types: list[ResourceType]) -> dict[str, Any]:
    """`GET /openapi/v3`: one entry per group-version; the hash changes when its document does."""
    paths = {}
    for group, version in _group_versions(types):
        document = v3_document(group, version, types)
        digest = hashlib.sha512(json.dumps(document, sort_keys=True).encode()).hexdigest().upper()
        rel = _gv_path(group, version).lstrip("/")
        paths[rel] = {"serverRelativeURL": f"/openapi/v3/{rel}?hash={digest}"}
    return {"paths": paths}


def v3_document(group: str, version: str, types: list[ResourceType]) -> dict[str, Any]:
    """`GET /openapi/v3/api/v1` or `/openapi/v3/apis/<group>/<version>` (empty paths for an
    unknown group-version). Nested parts are shared between calls: serialise it, don't mutate it."""
    served = [t for t in types if (t.group, t.version) == (group, version)]
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = dict(_meta_schemas())
    for rtype in sorted(served, key=lambda t: t.plural):
        paths.update(_paths(rtype))
        schemas[schema_name(rtype)] = _kind_schema(rtype)
        schemas[schema_name(rtype) + "List"] = _list_schema(rtype)
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": SERVER_VERSION},
        "paths": paths,
        "components": {"schemas": schemas},
    }


def schema_name(rtype: ResourceType) -> str:
    """The component name of a kind, as a real server names it."""
    if rtype.group == "":
        return f"io.k8s.api.core.{rtype.version}.{rtype.kind}"
    if rtype.group == "apiextensions.k8s.io":
        return f"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.{rtype.version}.{rtype.kind}"
    if rtype.group.endswith(".k8s.io") and rtype.crd_name is None:
        return f"io.k8s.api.{rtype.group.split('.')[0]}.{rtype.version}.{rtype.kind}"
    return ".".join(reversed(rtype.group.split("."))) + f".{rtype.version}.{rtype.kind}"


def _group_versions(types: list[ResourceType]) -> list[tuple[str, str]]:
    seen: dict[tuple[str, str], None] = {}
    for t in types:
        seen.setdefault((t.group, t.version), None)
    return list(seen)


def _gv_path(group: str, version: str) -> str:
    return f"/apis/{group}/{version}" if group else f"/api/{version}"


def _gvk(rtype: ResourceType, kind: str | None = None) -> dict[str, str]:
    return {"group": rtype.group, "version": rtype.version, "kind": kind or rtype.kind}


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


# --- paths ------------------------------------------------------------------------------------


def _paths(rtype: ResourceType) -> dict[str, Any]:
    base = _gv_path(rtype.group, rtype.version)
    scope = "/namespaces/{namespace}" if rtype.namespaced else ""
    collection = f"{base}{scope}/{rtype.plural}"
    item = collection + "/{name}"
    kind_ref, list_ref = _ref(schema_name(rtype)), _ref(schema_name(rtype) + "List")
    ns_param = [_path_param("namespace", "object name and auth scope, such as for teams and projects")] if rtype.namespaced else []
    name_param = _path_param("name", f"name of the {rtype.kind}")
    verbs = set(rtype.verbs)
    out: dict[str, Any] = {}

    ops: dict[str, Any] = {}
    if "list" in verbs:
        ops["get"] = _op(rtype, "list", list_ref, _LIST_PARAMS)
    if "create" in verbs:
        ops["post"] = _op(rtype, "post", kind_ref, _WRITE_PARAMS, body=kind_ref, created=True)
    if "deletecollection" in verbs:
        ops["delete"] = _op(rtype, "deletecollection", _ref(STATUS), _LIST_PARAMS)
    if ops:
        out[collection] = {"parameters": ns_param, **ops}

    ops = {}
    if "get" in verbs:
        ops["get"] = _op(rtype, "get", kind_ref, [])
    if "update" in verbs:
        ops["put"] = _op(rtype, "put", kind_ref, _WRITE_PARAMS, body=kind_ref, created=True)
    if "patch" in verbs:
        ops["patch"] = _patch_op(rtype, kind_ref)
    if "delete" in verbs:
        ops["delete"] = _op(rtype, "delete", _ref(STATUS), [_query("gracePeriodSeconds", "integer"),
                                                               _query("propagationPolicy", "string")])
    if ops:
        out[item] = {"parameters": [name_param, *ns_param], **ops}

    for sub in rtype.subresources:
        if sub != "status":
            continue  # pods/log is text, not an object of the kind
        out[f"{item}/status"] = {
            "parameters": [name_param, *ns_param],
            "get": _op(rtype, "get", kind_ref, [], sub=sub),
            "put": _op(rtype, "put", kind_ref, _WRITE_PARAMS, body=kind_ref, created=True, sub=sub),
            "patch": _patch_op(rtype, kind_ref, sub=sub),
        }
    return out


def _path_param(name: str, what: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "description": what, "schema": {"type": "string", "uniqueItems": True}}


def _query(name: str, type_: str, description: str = "") -> dict[str, Any]:
    param = {"name": name, "in": "query", "schema": {"type": type_, "uniqueItems": True}}
    if description:
        param["description"] = description
    return param


_WRITE_PARAMS = [
    _query("dryRun", "string", "When present, modifications are not persisted. Valid value: All."),
    _query("fieldManager", "string", "Name of the actor making the change."),
    _query(
        "fieldValidation", "string",
        "How the server treats unknown or duplicate fields: Ignore drops them, Warn drops them and "
        "answers with a warning per field, Strict rejects the request.",
    ),
]
_LIST_PARAMS = [
    _query(name, type_) for name, type_ in (
        ("allowWatchBookmarks", "boolean"), ("continue", "string"), ("fieldSelector", "string"),
        ("labelSelector", "string"), ("limit", "integer"), ("resourceVersion", "string"),
        ("resourceVersionMatch", "string"), ("sendInitialEvents", "boolean"), ("timeoutSeconds", "integer"),
        ("watch", "boolean"),
    )
]


def _op(
    rtype: ResourceType, action: str, response: dict[str, Any], params: list[dict[str, Any]], *,
    body: dict[str, Any] | None = None, created: bool = False, sub: str = "",
) -> dict[str, Any]:
    verb = {"post": "create", "put": "replace", "get": "read"}.get(action, action)
    scope = "Namespaced" if rtype.namespaced else ""
    target = f"{rtype.kind}{'List' if action in ('list', 'deletecollection') else ''}{sub.capitalize()}"
    responses: dict[str, Any] = {"200": {"description": "OK", "content": {_JSON: {"schema": response}}}}
    if created:
        responses["201"] = {"description": "Created", "content": {_JSON: {"schema": response}}}
    responses["401"] = {"description": "Unauthorized"}
    op: dict[str, Any] = {
        "description": f"{verb} {'the status of ' if sub else ''}{rtype.kind}",
        "operationId": f"{verb}{_camel(rtype.group or 'core')}{rtype.version.capitalize()}{scope}{target}",
        "tags": [f"{(rtype.group or 'core').split('.')[0]}_{rtype.version}"],
        "parameters": params,
        "responses": responses,
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": _gvk(rtype),
    }
    if body is not None:
        op["requestBody"] = {"content": {"*/*": {"schema": body}}, "required": True}
    return op


def _patch_op(rtype: ResourceType, response: dict[str, Any], sub: str = "") -> dict[str, Any]:
    op = _op(rtype, "patch", response, [*_WRITE_PARAMS, _query("force", "boolean")], sub=sub)
    # CRDs take no strategic merge patch; built-ins do (kubectl apply chooses by this list).
    types = _PATCH_TYPES if rtype.from_crd else (*_PATCH_TYPES, _SMP)
    op["requestBody"] = {"content": {t: {"schema": _ref(PATCH)} for t in types}, "required": True}
    return op


def _camel(group: str) -> str:
    return "".join(part.capitalize() for part in group.replace("-", ".").split(".")[:2])


# --- schemas ----------------------------------------------------------------------------------


def _kind_schema(rtype: ResourceType) -> dict[str, Any]:
    if rtype.schema is not None:
        schema = copy.deepcopy(rtype.schema)
        props = schema.setdefault("properties", {})
        # As a real server publishes custom resources: metadata is the full ObjectMeta.
        props["metadata"] = _object_meta_property()
        props.setdefault("apiVersion", _str("The versioned schema of this representation of an object."))
        props.setdefault("kind", _str("The REST resource this object represents, in CamelCase."))
        schema["x-kubernetes-group-version-kind"] = [_gvk(rtype)]
        return schema
    complete = _BUILTIN_FIELDS.get((rtype.group, rtype.kind))
    schema = {
        "type": "object",
        "description": _BUILTIN_DESCRIPTIONS.get(rtype.kind, f"{rtype.kind} ({rtype.group_version})."),
        "properties": {
            "apiVersion": _str("The versioned schema of this representation of an object."),
            "kind": _str("The REST resource this object represents, in CamelCase."),
            "metadata": _object_meta_property(),
            **(complete or {}),
        },
    }
    if complete is None:
        schema["x-kubernetes-preserve-unknown-fields"] = True
    if complete is not None or rtype.from_crd:  # custom kinds take no strategic merge patch
        schema["x-kubernetes-group-version-kind"] = [_gvk(rtype)]
    return schema


def _list_schema(rtype: ResourceType) -> dict[str, Any]:
    return {
        "type": "object",
        "description": f"A list of {rtype.kind} objects.",
        "required": ["items"],
        "properties": {
            "apiVersion": _str("The versioned schema of this representation of an object."),
            "kind": _str("The REST resource this object represents, in CamelCase."),
            "items": {"type": "array", "description": f"The {rtype.kind} objects.", "items": _ref(schema_name(rtype))},
            "metadata": {"allOf": [_ref(LIST_META)], "default": {}, "description": "Standard list metadata."},
        },
        "x-kubernetes-group-version-kind": [_gvk(rtype, rtype.kind + "List")],
    }


def _object_meta_property() -> dict[str, Any]:
    return {
        "allOf": [_ref(OBJECT_META)],
        "default": {},
        "description": "Standard object's metadata: name, namespace, labels, annotations, owners and finalizers.",
    }


def _str(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _time(description: str) -> dict[str, Any]:
    return {"type": "string", "format": "date-time", "description": description}


def _string_map(description: str, fmt: str = "") -> dict[str, Any]:
    value: dict[str, Any] = {"type": "string", "default": ""}
    if fmt:
        value["format"] = fmt
    return {"type": "object", "additionalProperties": value, "description": description}


def _object(description: str, properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "description": description, "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


def _list(description: str, items: dict[str, Any], **extensions: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "array", "description": description, "items": items}
    out.update({f"x-kubernetes-{k.replace('_', '-')}": v for k, v in extensions.items()})
    return out


def _meta_schemas() -> dict[str, Any]:
    owner = _object(
        "An object that owns this one; when every owner is gone the object is garbage-collected.",
        {
            "apiVersion": _str("API version of the owner."),
            "kind": _str("Kind of the owner."),
            "name": _str("Name of the owner."),
            "uid": _str("UID of the owner."),
            "controller": {"type": "boolean", "description": "Whether this owner is the managing controller."},
            "blockOwnerDeletion": {
                "type": "boolean",
                "description": "Whether foreground deletion of the owner waits for this object to go.",
            },
        },
        ("apiVersion", "kind", "name", "uid"),
    )
    managed = _object(
        "Which manager set which fields, and when.",
        {
            "manager": _str("Name of the manager."),
            "operation": _str("Apply or Update."),
            "apiVersion": _str("API version of the fields."),
            "time": _time("When the fields were last set."),
            "fieldsType": _str("Format of fieldsV1: FieldsV1."),
            "fieldsV1": {"type": "object", "description": "The set of fields, as a trie."},
            "subresource": _str("The subresource the fields were set through, if any."),
        },
    )
    object_meta = _object(
        "Metadata every persisted object has.",
        {
            "name": _str("Name of the object, unique within its namespace and kind. Cannot be updated."),
            "generateName": _str("Prefix from which the server makes a unique name when name is empty."),
            "namespace": _str("Namespace of the object; empty for cluster-scoped kinds."),
            "selfLink": _str("Deprecated and always empty."),
            "uid": _str("Unique id the server sets at creation. Read-only."),
            "resourceVersion": _str("Opaque version of the object, for optimistic concurrency and watches. Read-only."),
            "generation": {"type": "integer", "format": "int64",
                           "description": "Sequence number of the desired state, bumped on spec changes. Read-only."},
            "creationTimestamp": _time("When the object was created. Read-only."),
            "deletionTimestamp": _time("When deletion was requested; the object goes once its finalizers are empty."),
            "deletionGracePeriodSeconds": {"type": "integer", "format": "int64",
                                           "description": "Seconds allowed for graceful termination."},
            "labels": _string_map("Key/value pairs to select objects by."),
            "annotations": _string_map("Key/value pairs for tools and extensions, not for selection."),
            "ownerReferences": _list(
                "Objects this one depends on.", _ref(META + "OwnerReference"),
                patch_merge_key="uid", patch_strategy="merge", list_type="map", list_map_keys=["uid"],
            ),
            "finalizers": _list(
                "Keys that must be removed before the object is deleted.", {"type": "string", "default": ""},
                patch_strategy="merge", list_type="set",
            ),
            "managedFields": _list("Field ownership, for server-side apply.", _ref(META + "ManagedFieldsEntry")),
        },
    )
    list_meta = _object(
        "Metadata of a list.",
        {
            "resourceVersion": _str("Version of the list, to start a watch from."),
            "continue": _str("Token for the next page, when the list was limited."),
            "remainingItemCount": {"type": "integer", "format": "int64", "description": "Items left after this page."},
        },
    )
    status = _object(
        "The result of an operation that returns no object.",
        {
            "apiVersion": _str("v1"),
            "kind": _str("Status"),
            "status": _str("Success or Failure."),
            "message": _str("What happened, for people."),
            "reason": _str("Why, as a machine-readable word."),
            "code": {"type": "integer", "format": "int32", "description": "HTTP status code."},
            "details": {"type": "object", "description": "More about the object concerned."},
            "metadata": {"allOf": [_ref(LIST_META)], "default": {}, "description": "Standard list metadata."},
        },
    )
    return {
        OBJECT_META: object_meta,
        META + "OwnerReference": owner,
        META + "ManagedFieldsEntry": managed,
        LIST_META: list_meta,
        STATUS: status,
        PATCH: {"type": "object", "description": "A patch body, in the format its Content-Type names."},
    }


_OBJECT_REFERENCE = _object(
    "A reference to an object.",
    {
        "apiVersion": _str("API version of the referent."),
        "kind": _str("Kind of the referent."),
        "name": _str("Name of the referent."),
        "namespace": _str("Namespace of the referent."),
        "uid": _str("UID of the referent."),
        "resourceVersion": _str("Resource version of the referent."),
        "fieldPath": _str("A field within the referent, when the reference is to part of it."),
    },
)

# Built-ins whose fields are all written out here, so that their schemas can carry the GVK.
_BUILTIN_FIELDS: dict[tuple[str, str], dict[str, Any]] = {
    ("", "Namespace"): {
        "spec": _object("Desired state of the namespace.", {
            "finalizers": _list("Keys that must be removed before the namespace is deleted.", {"type": "string", "default": ""},
                                list_type="set"),
        }),
        "status": _object("Observed state of the namespace.", {
            "phase": _str("Active or Terminating."),
            "conditions": _list("Conditions of the namespace.", _object("A namespace condition.", {
                "type": _str("Type of the condition."),
                "status": _str("True, False or Unknown."),
                "lastTransitionTime": _time("When the status last changed."),
                "reason": _str("Why, as one CamelCase word."),
                "message": _str("Why, for people."),
            }, ("type", "status")), patch_merge_key="type", patch_strategy="merge", list_type="map",
                list_map_keys=["type"]),
        }),
    },
    ("", "ConfigMap"): {
        "data": _string_map("UTF-8 configuration data by key."),
        "binaryData": _string_map("Binary configuration data by key, base64-encoded.", fmt="byte"),
        "immutable": {"type": "boolean", "description": "When true, data and binaryData cannot be changed."},
    },
    ("", "Secret"): {
        "data": _string_map("Secret data by key, base64-encoded.", fmt="byte"),
        "stringData": _string_map("Write-only convenience: plain-text values merged into data on write."),
        "type": _str("How the data is used, e.g. Opaque or kubernetes.io/dockerconfigjson."),
        "immutable": {"type": "boolean", "description": "When true, data cannot be changed."},
    },
    ("", "ServiceAccount"): {
        "secrets": _list("Secrets pods running as this account may use.", _OBJECT_REFERENCE,
                         patch_merge_key="name", patch_strategy="merge"),
        "imagePullSecrets": _list("Secrets used to pull images for pods running as this account.",
                                  _object("A reference to a Secret by name.", {"name": _str("Name of the Secret.")})),
        "automountServiceAccountToken": {"type": "boolean",
                                         "description": "Whether pods running as this account get an API token mounted."},
    },
}

_BUILTIN_DESCRIPTIONS = {
    "Namespace": "A scope for names: most objects live in one.",
    "ConfigMap": "Configuration data for pods to consume.",
    "Secret": "Sensitive data, such as an API key, for pods to consume.",
    "ServiceAccount": "An identity for processes that run in a pod.",
    "Pod": "A group of containers scheduled together.",
    "Service": "A named network endpoint for a set of pods.",
    "Event": "A report of something that happened to an object.",
    "PersistentVolumeClaim": "A request for storage that outlives pods.",
    "Endpoints": "The addresses behind a Service.",
    "Lease": "A lease, for leader election and heartbeats.",
    "CustomResourceDefinition": "A kind of object the API server serves from its schema.",
}
