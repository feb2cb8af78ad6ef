"""The verbs of the API on stored objects: get, list, create, update, patch, delete.

The HTTP layer (`routes`) and the in-process controllers (`gc`, `controllers`) both call these,
so every write, whoever makes it, goes through one pipeline:

create: namespace checks, name/generateName, server-owned metadata (uid, creationTimestamp,
        generation 1, resourceVersion), status dropped where a status subresource owns it,
        built-in defaults, admission (metadata rules, built-in rules, CRD schema), 409 if taken.
update: 409 on a stale resourceVersion, server-owned metadata kept, status kept (main endpoint)
        or only status taken (`/status`), no new finalizers while deleting, admission with the
        old object (transition rules), nothing stored and no event when nothing changed,
        generation bumped when more than metadata (and status) changed, and the object removed
        when it is being deleted and its last finalizer goes.
delete: preconditions, propagation policy (the orphan and foregroundDeletion finalizers), graceful
        deletion of pods bound to a node (the pod runner confirms with gracePeriodSeconds=0),
        deletionTimestamp while finalizers remain.
"""

from __future__ import annotations

import base64
import binascii
import copy
import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from pinery.local.apiserver import admission, builtins, errors, yaml_body
from pinery.local.apiserver.apply import apply_config, default_manager, track_update
from pinery.local.apiserver.conversion import present, to_storage
from pinery.local.apiserver.objectmeta import (
    SERVER_FIELDS,
    decoding_error,
    finalizers,
    generated_name,
    is_deleting,
    metadata,
    new_uid,
    now,
    without_version,
)
from pinery.local.apiserver.patch import APPLY, JSON_PATCH, MERGE, STRATEGIC, json_patch, merge_patch
from pinery.local.apiserver.resources import ResourceType, TypeRegistry
from pinery.local.apiserver.selectors import FieldSelector, LabelSelector
from pinery.local.apiserver.store import Store
from pinery.local.apiserver.strategic import strategic_merge
from pinery.schema.errors import FieldError

CRD_KEY = ("apiextensions.k8s.io", "customresourcedefinitions")
NAMESPACE_KEY = ("", "namespaces")
PROTECTED_NAMESPACES = ("default", "kube-system", "kube-public")
ORPHAN = "orphan"
FOREGROUND = "foregroundDeletion"
# Kinds with a status subresource whose create may still set status (a kubelet registers its
# Node with its status).
_STATUS_SET_ON_CREATE = {("", "Node")}
# Kinds whose DELETE answers with the deleted object rather than a Status.
_RETURNS_DELETED_OBJECT = {("", "pods"), ("", "services")}


# The field managers a cluster records for its own writes: the first token of the writer's user
# agent (apiserver `managerOrUserAgent`). The deployment, replicaset, garbage-collector and
# serviceaccounts controllers run in kube-controller-manager; the CRD finalizer and status
# controllers in the API server itself (apiextensions-apiserver).
KUBE_CONTROLLER_MANAGER = "kube-controller-manager"
KUBE_APISERVER = "kube-apiserver"


@dataclass
class WriteOptions:
    dry_run: bool = False
    field_manager: str = ""
    field_validation: str = "Warn"
    force: bool = False
    warnings: list[str] = field(default_factory=list)
    user_agent: str = ""  # names the manager of an update that sends no fieldManager
    applied: bool = False  # managedFields already set by a server-side apply


@dataclass
class DeleteOptions:
    propagation: str | None = None
    grace_seconds: int | None = None
    uid: str | None = None
    resource_version: str | None = None
    dry_run: bool = False

    @classmethod
    def from_body(cls, body: dict[str, Any] | None, query: dict[str, str]) -> "DeleteOptions":
        body = body or {}
        pre = body.get("preconditions") or {}
        propagation = query.get("propagationPolicy") or body.get("propagationPolicy")
        orphan = query.get("orphanDependents", body.get("orphanDependents"))
        if propagation is None and orphan is not None:
            propagation = "Orphan" if str(orphan).lower() == "true" else "Background"
        if propagation not in (None, "Orphan", "Foreground", "Background"):
            raise errors.bad_request(f'propagationPolicy: Unsupported value: "{propagation}": supported values: "Foreground", "Background", "Orphan"')
        grace = query.get("gracePeriodSeconds", body.get("gracePeriodSeconds"))
        dry_run = query.get("dryRun") or body.get("dryRun")
        return cls(
            propagation=propagation,
            grace_seconds=int(grace) if grace not in (None, "") else None,
            uid=pre.get("uid"),
            resource_version=pre.get("resourceVersion"),
            dry_run=bool(dry_run),
        )


def _apply_patch_body(patch: bytes) -> Any:
    """apiserver handlers/patch.go: util/yaml.ToJSON keeps a body starting with `{` as JSON,
    else YAMLToJSON; applyPatcher then reads it with sigs.k8s.io/yaml (yaml_body)."""
    try:
        if yaml_body.is_json(patch):
            try:
                return yaml_body.json_numbers(json.loads(patch))
            except (ValueError, UnicodeDecodeError) as exc:
                raise yaml_body.YamlBodyError(str(exc)) from None
        return yaml_body.decode(patch)
    except yaml_body.YamlBodyError as exc:
        raise errors.bad_request(f"error decoding patch: {exc}") from None


def pending_finalizers(obj: dict[str, Any]) -> list[str]:
    """metadata.finalizers, plus a Namespace's spec.finalizers."""
    out = finalizers(obj)
    if obj.get("kind") == "Namespace":
        out += list((obj.get("spec") or {}).get("finalizers") or [])
    return out


def _content(rtype: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    """What metadata.generation tracks: everything but metadata (and status, when a subresource
    owns it)."""
    skip = ("metadata", "status") if rtype.has_status else ("metadata",)
    return {k: v for k, v in obj.items() if k not in skip}


def _continue_token(rv: int, ns: str, name: str) -> str:
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": [ns, name]}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _parse_continue(token: str) -> tuple[int, tuple[str, str]]:
    try:
        raw = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        ns, name = raw["start"]
        return int(raw["rv"]), (str(ns), str(name))
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise errors.bad_request("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)") from None


class Api:
    def __init__(self, store: Store, registry: TypeRegistry) -> None:
        self.store = store
        self.registry = registry
        self.ips = builtins.ClusterIPs()
        for _, svc in store.snapshot():
            if svc.get("kind") == "Service" and (svc.get("spec") or {}).get("clusterIP") not in (None, "", "None"):
                self.ips.reserve(svc["spec"]["clusterIP"])

    # Helpers

    def primary(self, rtype: ResourceType) -> ResourceType:
        """The type whose rules apply to the stored form (core Event for events.k8s.io)."""
        if rtype.stored_as:
            return self.registry.for_storage(rtype.storage_key) or rtype
        return rtype

    def _stored(self, rtype: ResourceType, namespace: str, name: str) -> dict[str, Any]:
        obj = self.store.get(rtype.storage_key, namespace if rtype.namespaced else "", name)
        if obj is None:
            raise errors.not_found(rtype, name)
        return obj

    def _check_namespace_open(self, namespace: str) -> None:
        ns = self.store.get(NAMESPACE_KEY, "", namespace)
        if ns is None:
            raise errors.ApiError(404, "NotFound", f'namespaces "{namespace}" not found', {"name": namespace, "kind": "namespaces"})
        if is_deleting(ns):
            raise errors.forbidden(
                f"unable to create new content in namespace {namespace} because it is being terminated",
            )

    def _check_crd_open(self, rtype: ResourceType) -> None:
        if not rtype.crd_name:
            return
        crd = self.store.get(CRD_KEY, "", rtype.crd_name)
        if crd is not None and is_deleting(crd):
            raise errors.method_not_allowed("create not allowed while custom resource definition is terminating")

    @staticmethod
    def _typed(rtype: ResourceType, body: dict[str, Any]) -> dict[str, Any]:
        """The body with apiVersion and kind first; a body may omit them, not contradict them."""
        api_version, kind = body.get("apiVersion"), body.get("kind")
        if api_version and api_version != rtype.api_version:
            raise errors.bad_request(f"the API version in the data ({api_version}) does not match the expected API version ({rtype.api_version})")
        if kind and kind != rtype.kind:
            raise errors.bad_request(f"the kind in the data ({kind}) does not match the expected kind ({rtype.kind})")
        problem = decoding_error(body.get("metadata"))
        if problem:
            raise errors.bad_request(problem)
        return {"apiVersion": rtype.api_version, "kind": rtype.kind, **body}

    def _admit(self, rtype: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None, opts: WriteOptions) -> dict[str, Any]:
        primary = self.primary(rtype)
        problems = admission.metadata_problems(primary, obj) + builtins.validate(primary, obj)
        if rtype.storage_key == CRD_KEY:
            # ValidateCustomResourceDefinition checks the CRD's name with its own name function.
            problems = [p for p in problems if p.path not in ("metadata.name", "metadata.generateName")]
            problems += admission.crd_problems(obj, old)
        if problems:
            raise errors.invalid(rtype, metadata(obj).get("name", ""), problems)
        if rtype.is_custom:
            obj = admission.admit_custom(rtype, obj, old, opts.field_validation, opts.warnings)
        return obj

    def _release(self, obj: dict[str, Any]) -> None:
        if obj.get("kind") == "Service":
            ip = (obj.get("spec") or {}).get("clusterIP")
            if ip and ip != "None":
                self.ips.release(ip)

    # Reads

    def get(self, rtype: ResourceType, namespace: str, name: str) -> dict[str, Any]:
        return present(rtype, self._stored(rtype, namespace, name))

    def list(
        self,
        rtype: ResourceType,
        namespace: str | None,
        labels: LabelSelector,
        fields: FieldSelector,
        limit: int = 0,
        continue_token: str = "",
        resource_version: str = "",
        resource_version_match: str = "",
    ) -> dict[str, Any]:
        current = self.store.rv
        if resource_version not in ("", "0"):
            try:
                wanted = int(resource_version)
            except ValueError:
                raise errors.bad_request(f'resourceVersion: Invalid value: "{resource_version}": must be an integer') from None
            if resource_version_match == "Exact" and wanted != current:
                raise errors.gone("The resourceVersion for the provided list is too old.")
            if wanted > current:
                raise errors.timeout(f"Too large resource version: {wanted}, current: {current}")
        list_rv = current
        after = None
        if continue_token:
            list_rv, after = _parse_continue(continue_token)
        primary = self.primary(rtype)
        matches = self.store.iterate(
            rtype.storage_key, namespace if rtype.namespaced else None, labels, fields, primary.kind, after
        )
        items: list[dict[str, Any]] = []
        more = False
        remaining = 0
        for obj in matches:
            if limit and len(items) >= limit:
                more = True
                remaining += 1
                if labels or fields:
                    break
                continue
            items.append(obj)
        body: dict[str, Any] = {
            "kind": rtype.list_kind,
            "apiVersion": rtype.api_version,
            "metadata": {"resourceVersion": str(list_rv)},
            "items": [self._list_item(rtype, o) for o in items],
        }
        if more:
            last = metadata(items[-1])
            body["metadata"]["continue"] = _continue_token(list_rv, last.get("namespace") or "", last["name"])
            if not (labels or fields):
                body["metadata"]["remainingItemCount"] = remaining
        return body

    @staticmethod
    def _list_item(rtype: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
        shown = present(rtype, obj)
        if rtype.from_crd:
            return shown
        # Built-in lists carry kind and apiVersion on the list only, as a real server's do.
        return {k: v for k, v in shown.items() if k not in ("kind", "apiVersion")}

    # Create

    def create(self, rtype: ResourceType, namespace: str, body: Any, opts: WriteOptions) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise errors.bad_request(f"the body of the request must be a {rtype.kind} object")
        obj = to_storage(rtype, self._typed(rtype, copy.deepcopy(body)))
        m = metadata(obj)
        if rtype.namespaced:
            if m.get("namespace") and m["namespace"] != namespace:
                raise errors.bad_request("the namespace of the provided object does not match the namespace sent on the request")
            m["namespace"] = namespace
            self._check_namespace_open(namespace)
        else:
            m.pop("namespace", None)
        self._check_crd_open(rtype)
        key = rtype.storage_key
        if not m.get("name"):
            if not m.get("generateName"):
                raise errors.invalid(rtype, "", [FieldError("metadata.name", "Required value: name or generateName is required")])
            for _ in range(8):
                m["name"] = generated_name(m["generateName"])
                if self.store.get(key, m.get("namespace") or "", m["name"]) is None:
                    break
        for server_field in SERVER_FIELDS:
            m.pop(server_field, None)
        m["uid"] = new_uid()
        m["creationTimestamp"] = now()
        m["generation"] = 1
        if rtype.has_status and (rtype.group, rtype.kind) not in _STATUS_SET_ON_CREATE:
            obj.pop("status", None)
        primary = self.primary(rtype)
        if self.store.get(key, m.get("namespace") or "", m["name"]) is not None:
            raise errors.already_exists(rtype, m["name"])
        builtins.prepare_create(primary, obj, self.ips)
        try:
            obj = self._admit(rtype, obj, None, opts)
        except errors.ApiError:
            self._release(obj)
            raise
        self._track(rtype, None, obj, opts)
        if opts.dry_run:
            self._release(obj)
            return present(rtype, obj)
        metadata(obj)["resourceVersion"] = str(self.store.next_rv())
        self.store.commit("ADDED", key, obj)
        return present(rtype, obj)

    # Update

    def replace(
        self, rtype: ResourceType, namespace: str, name: str, body: Any, opts: WriteOptions, subresource: str | None = None
    ) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise errors.bad_request(f"the body of the request must be a {rtype.kind} object")
        old = self._stored(rtype, namespace, name)
        new = to_storage(rtype, self._typed(rtype, copy.deepcopy(body)))
        if rtype.from_crd and not metadata(new).get("resourceVersion"):
            # Custom resources do not allow unconditional updates.
            raise errors.invalid(rtype, name, [FieldError("metadata.resourceVersion", "Invalid value: 0x0: must be specified for an update")])
        return present(rtype, self.write_update(rtype, old, new, opts, subresource))

    def patch(
        self,
        rtype: ResourceType,
        namespace: str,
        name: str,
        content_type: str,
        patch: bytes,
        opts: WriteOptions,
        subresource: str | None = None,
    ) -> tuple[dict[str, Any], bool]:
        """Apply a patch; returns (object, created) (server-side apply can create)."""
        key = rtype.storage_key
        old = self.store.get(key, namespace if rtype.namespaced else "", name)
        if content_type == APPLY:
            return self._apply(rtype, namespace, name, old, patch, opts, subresource)
        if old is None:
            raise errors.not_found(rtype, name)
        document = _decode_json(patch)
        shown = copy.deepcopy(present(rtype, old))
        if content_type == MERGE:
            if not isinstance(document, dict):
                raise errors.bad_request("the body of a merge patch must be a JSON object")
            patched = merge_patch(shown, document)
        elif content_type == JSON_PATCH:
            patched = json_patch(shown, document)
        elif content_type == STRATEGIC:
            if rtype.from_crd:
                raise errors.unsupported_media_type(
                    f"the body of the request was in an unknown format - accepted media types include: {JSON_PATCH}, {MERGE}, {APPLY}"
                )
            patched = strategic_merge(self.primary(rtype).kind, shown, document)
        else:
            raise errors.unsupported_media_type(
                f"the body of the request was in an unknown format - accepted media types include: {JSON_PATCH}, {MERGE}, {APPLY}, {STRATEGIC}"
            )
        if not isinstance(patched, dict):
            raise errors.bad_request("the patched object must be a JSON object")
        # A patch that sets metadata.resourceVersion is a precondition on it, like an update.
        new = to_storage(rtype, self._typed(rtype, patched))
        return present(rtype, self.write_update(rtype, old, new, opts, subresource)), False

    def _apply(
        self,
        rtype: ResourceType,
        namespace: str,
        name: str,
        old: dict[str, Any] | None,
        patch: bytes,
        opts: WriteOptions,
        subresource: str | None,
    ) -> tuple[dict[str, Any], bool]:
        if not opts.field_manager:
            raise errors.bad_request("PATCH, fieldManager is required for apply requests")
        config = _apply_patch_body(patch)
        if not isinstance(config, dict):
            raise errors.bad_request("the body of an apply patch must be an object")
        config = self._typed(rtype, config)
        cm = metadata(config)
        if cm.get("name") not in (None, name):
            raise errors.bad_request(f"the name of the object ({cm.get('name')}) does not match the name on the URL ({name})")
        cm["name"] = name
        if old is None:
            if subresource:
                raise errors.not_found(rtype, name)
            live = {"apiVersion": rtype.api_version, "kind": rtype.kind, "metadata": {"name": name}}
            merged = self._apply_config(rtype, live, config, opts, subresource)
            return self.create(rtype, namespace, merged, dataclasses.replace(opts, applied=True)), True
        shown = copy.deepcopy(present(rtype, old))
        merged = self._apply_config(rtype, shown, config, opts, subresource)
        new = to_storage(rtype, merged)
        return present(rtype, self.write_update(rtype, old, new, dataclasses.replace(opts, applied=True), subresource)), False

    # Field ownership (apply.py, fieldmanager.py)

    def _apply_config(self, rtype: ResourceType, live: dict[str, Any], config: dict[str, Any], opts: WriteOptions, subresource: str | None) -> dict[str, Any]:
        return apply_config(
            self.primary(rtype).kind, live, config, opts.field_manager, rtype.api_version, force=opts.force,
            schema=rtype.schema if rtype.from_crd else None, subresource=subresource, has_status=rtype.has_status,
        )

    def _track(
        self, rtype: ResourceType, old: dict[str, Any] | None, new: dict[str, Any], opts: WriteOptions,
        subresource: str | None = None, requested: Any = None,
    ) -> None:
        """Record the write in new's managedFields as upstream's field manager does."""
        if opts.applied:
            if subresource and old is not None:  # the status write kept old's metadata
                if requested is None:
                    new["metadata"].pop("managedFields", None)
                else:
                    new["metadata"]["managedFields"] = requested
            return
        track_update(
            self.primary(rtype).kind, old, new, default_manager(opts.field_manager, opts.user_agent), rtype.api_version,
            schema=rtype.schema if rtype.from_crd else None, subresource=subresource, has_status=rtype.has_status,
        )

    def write_update(
        self,
        rtype: ResourceType,
        old: dict[str, Any],
        new: dict[str, Any],
        opts: WriteOptions,
        subresource: str | None = None,
    ) -> dict[str, Any]:
        """The common update pipeline; `new` is a fresh stored-form dict. Returns the stored result."""
        om = old["metadata"]
        m = metadata(new)
        requested_fields = m.get("managedFields")
        if m.get("name") and m["name"] != om["name"]:
            raise errors.bad_request(f"the name of the object ({m['name']}) does not match the name on the URL ({om['name']})")
        if om.get("namespace") and m.get("namespace") and m["namespace"] != om["namespace"]:
            raise errors.bad_request("the namespace of the provided object does not match the namespace sent on the request")
        if m.get("resourceVersion") and m["resourceVersion"] != om["resourceVersion"]:
            raise errors.stale(rtype, om["name"])
        if m.get("uid") and m["uid"] != om.get("uid"):
            raise errors.conflict(rtype, om["name"], f"Precondition failed: UID in precondition: {m['uid']}, UID in object meta: {om.get('uid')}")
        if subresource == "status":
            result = copy.deepcopy(old)
            if "status" in new:
                result["status"] = new["status"]
            else:
                result.pop("status", None)
            new = result
            m = new["metadata"]
        else:
            for server_field in SERVER_FIELDS:
                if server_field in om:
                    m[server_field] = om[server_field]
                else:
                    m.pop(server_field, None)
            if "managedFields" not in m and "managedFields" in om:
                m["managedFields"] = om["managedFields"]  # omitted: kept, as on a real server
            m["name"] = om["name"]
            if om.get("namespace"):
                m["namespace"] = om["namespace"]
            else:
                m.pop("namespace", None)
            if rtype.has_status:
                if "status" in old:
                    new["status"] = old["status"]
                else:
                    new.pop("status", None)
            if is_deleting(old):
                added = [f for f in finalizers(new) if f not in finalizers(old)]
                if added:
                    shown = ", ".join(f'"{f}"' for f in added)
                    raise errors.invalid(
                        rtype, om["name"],
                        [FieldError(
                            "metadata.finalizers",
                            f"Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{{{shown}}}",
                        )],
                    )
        new["apiVersion"], new["kind"] = old["apiVersion"], old["kind"]
        primary = self.primary(rtype)
        problems = builtins.prepare_update(primary, new, old, self.ips) if subresource != "status" else []
        if problems:
            raise errors.invalid(rtype, om["name"], problems)
        new = self._admit(rtype, new, old, opts)
        self._track(rtype, old, new, opts, subresource, requested_fields)
        if without_version(new) == without_version(old):
            return old
        if _content(rtype, new) != _content(rtype, old):
            new["metadata"]["generation"] = int(om.get("generation") or 1) + 1
        if opts.dry_run:
            return new
        if is_deleting(new) and not pending_finalizers(new):
            return self._remove(rtype.storage_key, new)
        new["metadata"]["resourceVersion"] = str(self.store.next_rv())
        self.store.commit("MODIFIED", rtype.storage_key, new, old)
        return new

    def _remove(self, key: tuple[str, str], obj: dict[str, Any]) -> dict[str, Any]:
        gone = {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(self.store.next_rv())}}
        self.store.commit("DELETED", key, gone)
        self._release(gone)
        return gone

    # Delete

    def delete(self, rtype: ResourceType, namespace: str, name: str, options: DeleteOptions) -> dict[str, Any]:
        """Delete (or start deleting) an object; returns the response body."""
        old = self._stored(rtype, namespace, name)
        om = old["metadata"]
        if options.uid and options.uid != om.get("uid"):
            raise errors.conflict(rtype, name, f"Precondition failed: UID in precondition: {options.uid}, UID in object meta: {om.get('uid')}")
        if options.resource_version and options.resource_version != om.get("resourceVersion"):
            raise errors.conflict(
                rtype,
                name,
                f"Precondition failed: ResourceVersion in precondition: {options.resource_version}, "
                f"ResourceVersion in object meta: {om.get('resourceVersion')}",
            )
        if rtype.storage_key == NAMESPACE_KEY:
            return present(rtype, self._delete_namespace(old, options))
        new = copy.deepcopy(old)
        m = new["metadata"]
        wanted = list(finalizers(old))
        if options.propagation == "Foreground" and FOREGROUND not in wanted:
            wanted = [f for f in wanted if f != ORPHAN] + [FOREGROUND]
        elif options.propagation == "Orphan" and ORPHAN not in wanted:
            wanted = [f for f in wanted if f != FOREGROUND] + [ORPHAN]
        elif options.propagation == "Background":
            wanted = [f for f in wanted if f not in (ORPHAN, FOREGROUND)]
        grace = self._grace_seconds(old, options)
        if is_deleting(old):
            if grace == 0 and not pending_finalizers(old) and not options.dry_run:
                return self._deleted_response(rtype, self._remove(rtype.storage_key, old))
            if wanted != finalizers(old) and not options.dry_run:
                m["finalizers"] = wanted
                m["resourceVersion"] = str(self.store.next_rv())
                self.store.commit("MODIFIED", rtype.storage_key, new, old)
                return present(rtype, new)
            return present(rtype, old)
        if wanted or grace:
            m["deletionTimestamp"] = now(grace or 0)
            m["deletionGracePeriodSeconds"] = grace or 0
            m["generation"] = int(m.get("generation") or 1) + 1
            if wanted:
                m["finalizers"] = wanted
            else:
                m.pop("finalizers", None)
            if options.dry_run:
                return present(rtype, new)
            m["resourceVersion"] = str(self.store.next_rv())
            self.store.commit("MODIFIED", rtype.storage_key, new, old)
            return present(rtype, new)
        if options.dry_run:
            return self._deleted_response(rtype, old)
        return self._deleted_response(rtype, self._remove(rtype.storage_key, old))

    def _deleted_response(self, rtype: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
        if rtype.from_crd or rtype.storage_key in _RETURNS_DELETED_OBJECT:
            return present(rtype, obj)
        details: dict[str, Any] = {"name": obj["metadata"]["name"]}
        if rtype.group:
            details["group"] = rtype.group
        details["kind"] = rtype.plural
        details["uid"] = obj["metadata"].get("uid")
        return errors.status_body(200, "", "", details)

    @staticmethod
    def _grace_seconds(pod: dict[str, Any], options: DeleteOptions) -> int:
        """Pods bound to a node wait for their kubelet (the pod runner); others go at once."""
        if pod.get("kind") != "Pod" or pod.get("apiVersion") != "v1":
            return 0
        spec, status = pod.get("spec") or {}, pod.get("status") or {}
        if not spec.get("nodeName") or status.get("phase") in ("Succeeded", "Failed"):
            return 0
        if options.grace_seconds is not None:
            return max(0, options.grace_seconds)
        return int(spec.get("terminationGracePeriodSeconds", 30))

    def _delete_namespace(self, old: dict[str, Any], options: DeleteOptions) -> dict[str, Any]:
        name = old["metadata"]["name"]
        if name in PROTECTED_NAMESPACES:
            raise errors.forbidden(f'namespaces "{name}" is forbidden: this namespace may not be deleted', None)
        if is_deleting(old) or options.dry_run:
            return old
        new = copy.deepcopy(old)
        new["metadata"]["deletionTimestamp"] = now()
        new["metadata"]["deletionGracePeriodSeconds"] = 0
        new["status"] = {**(new.get("status") or {}), "phase": "Terminating"}
        if not pending_finalizers(new):
            return self._remove(NAMESPACE_KEY, new)
        new["metadata"]["resourceVersion"] = str(self.store.next_rv())
        self.store.commit("MODIFIED", NAMESPACE_KEY, new, old)
        return new

    def finalize_namespace(self, name: str, body: Any, opts: WriteOptions) -> dict[str, Any]:
        """PUT /api/v1/namespaces/{name}/finalize: only spec.finalizers changes."""
        rtype = self.registry.lookup("", "v1", "namespaces")
        assert rtype is not None
        old = self._stored(rtype, "", name)
        new = copy.deepcopy(old)
        spec_finalizers = ((body or {}).get("spec") or {}).get("finalizers") or []
        new.setdefault("spec", {})["finalizers"] = list(spec_finalizers)
        if not spec_finalizers:
            new["spec"].pop("finalizers")
        if new == old or opts.dry_run:
            return present(rtype, new)
        if is_deleting(new) and not pending_finalizers(new):
            return present(rtype, self._remove(NAMESPACE_KEY, new))
        new["metadata"]["resourceVersion"] = str(self.store.next_rv())
        self.store.commit("MODIFIED", NAMESPACE_KEY, new, old)
        return present(rtype, new)

    def delete_collection(
        self, rtype: ResourceType, namespace: str | None, labels: LabelSelector, fields: FieldSelector, options: DeleteOptions
    ) -> dict[str, Any]:
        primary = self.primary(rtype)
        targets = list(self.store.iterate(rtype.storage_key, namespace if rtype.namespaced else None, labels, fields, primary.kind))
        deleted = []
        for obj in targets:
            m = obj["metadata"]
            try:
                result = self.delete(rtype, m.get("namespace") or "", m["name"], options)
            except errors.ApiError as exc:
                if exc.code == 404:
                    continue
                raise
            deleted.append(result if result.get("kind") != "Status" else present(rtype, obj))
        return {
            "kind": rtype.list_kind,
            "apiVersion": rtype.api_version,
            "metadata": {"resourceVersion": str(self.store.rv)},
            "items": [self._list_item(rtype, o) for o in deleted],
        }

    def bind_pod(self, namespace: str, name: str, binding: Any, opts: WriteOptions) -> dict[str, Any]:
        """POST pods/{name}/binding: what a scheduler does to put a pod on a node."""
        rtype = self.registry.lookup("", "v1", "pods")
        assert rtype is not None
        old = self._stored(rtype, namespace, name)
        target = ((binding or {}).get("target") or {}).get("name")
        if not target:
            raise errors.invalid(rtype, name, [FieldError("target.name", "Required value")])
        if (old.get("spec") or {}).get("nodeName"):
            raise errors.conflict(rtype, name, f"pod {name} is already assigned to node \"{old['spec']['nodeName']}\"")
        if is_deleting(old):
            raise errors.conflict(rtype, name, f"pod {name} is being deleted, cannot be assigned to a host")
        new = copy.deepcopy(old)
        new["spec"]["nodeName"] = target
        conditions = [c for c in (new.setdefault("status", {}).get("conditions") or []) if c.get("type") != "PodScheduled"]
        conditions.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": now()})
        new["status"]["conditions"] = conditions
        if not opts.dry_run:
            new["metadata"]["resourceVersion"] = str(self.store.next_rv())
            self.store.commit("MODIFIED", rtype.storage_key, new, old)
        return errors.status_body(201, "", "", None)


def _decode_json(raw: bytes) -> Any:
    try:
        return json.loads(raw or b"null")
    except (ValueError, UnicodeDecodeError) as exc:
        raise errors.bad_request(f"error decoding patch: {exc}") from None
