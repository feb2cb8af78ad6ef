"""The Pod `eviction` subresource: `POST /api/v1/namespaces/{ns}/pods/{name}/eviction`.

Follows kubernetes `pkg/registry/core/pod/storage/eviction.go` (`EvictionREST.Create`,
`propagateDryRun`, `canIgnorePDB`, `shouldEnforceResourceVersion`, `addConditionAndDeletePod`),
the create handler it runs under (apiserver `pkg/endpoints/handlers/create.go`: the body's
group version, `EnsureObjectNamespaceMatchesRequestNamespace`, a returned `Status` gets code
201) and the NamespaceLifecycle admission plugin (`plugin/pkg/admission/namespace/lifecycle/
admission.go` `Admit`: no create, evictions included, in a terminating namespace):

- the body is a `policy/v1` Eviction in JSON (what kubectl drain sends), YAML, or protobuf (Go
  clients configured for protobuf). Upstream's `AcceptsGroupVersion` also takes `policy/v1beta1`; this server serves
  no `policy` group at all, so it takes `policy/v1` only (another apiVersion is upstream's 400);
- the Eviction's name must be the pod's: 400 "name in URL does not match name in Eviction
  object"; a `dryRun` in the query and another in `deleteOptions` must agree (`propagateDryRun`);
- a missing pod is 404 (`pods "x" not found`);
- PodDisruptionBudgets: this server does not serve `policy/v1` PodDisruptionBudgets, so no pod
  is covered by one and every eviction is allowed (upstream's path when `getPodDisruptionBudgets`
  finds none). Terminal, pending and terminating pods skip that check (`canIgnorePDB`); the
  deletion of a pending one carries the pod's resourceVersion as a precondition
  (`shouldEnforceResourceVersion`), as upstream;
- `addConditionAndDeletePod`: unless it is a dry run, the pod first gets the condition
  `DisruptionTarget` True, reason `EvictionByEvictionAPI`, message `Eviction API: evicting`
  (`UpdatePodCondition`, pkg/api/pod/util.go), written through the pod's status (watchers see
  MODIFIED with it), after the uid and resourceVersion preconditions are checked with
  upstream's 409 messages; a resourceVersion precondition then moves to the written version.
  Then the pod is deleted with the Eviction's deleteOptions (grace period, preconditions,
  propagation), as `DELETE pods/{name}` deletes it;
- the answer is `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201}`
  with HTTP 201.

The functions above `evict_pod` are pure and table-tested (tests/unit/test_eviction.py, from
upstream's eviction_test.go); `evict_pod` carries them out on the store.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from pinery.local.apiserver import errors
from pinery.local.apiserver.objectmeta import is_deleting, now
from pinery.local.apiserver.operations import NAMESPACE_KEY, Api, DeleteOptions

EVICTION_GROUP_VERSION = "policy/v1"
EVICTION_KIND = "Eviction"
DISRUPTION_TARGET = "DisruptionTarget"
EVICTION_REASON = "EvictionByEvictionAPI"
EVICTION_MESSAGE = "Eviction API: evicting"
NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating"  # k8s.io/api core/v1 NamespaceTerminatingCause


def read_eviction(url_name: str, namespace: str, body: Any) -> dict[str, Any]:
    """The Eviction of a request, checked as the create handler and `EvictionREST.Create` check it."""
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request must be an Eviction object")
    api_version, kind = body.get("apiVersion"), body.get("kind")
    if api_version and api_version != EVICTION_GROUP_VERSION:
        raise errors.bad_request(f"the API version in the data ({api_version}) does not match the expected API version ({EVICTION_GROUP_VERSION})")
    if kind and kind != EVICTION_KIND:  # this server's wording (operations.Api._typed), not the Go decoder's
        raise errors.bad_request(f"the kind in the data ({kind}) does not match the expected kind ({EVICTION_KIND})")
    meta = body.get("metadata") or {}
    if not isinstance(meta, dict):
        raise errors.bad_request("the metadata of the Eviction must be an object")
    if meta.get("namespace") and meta["namespace"] != namespace:
        raise errors.bad_request("the namespace of the provided object does not match the namespace sent on the request")
    if meta.get("name", "") != url_name:
        raise errors.bad_request("name in URL does not match name in Eviction object")
    options = body.get("deleteOptions")
    if options is not None and not isinstance(options, dict):
        raise errors.bad_request("the deleteOptions of the Eviction must be an object")
    return {"apiVersion": EVICTION_GROUP_VERSION, "kind": EVICTION_KIND, **body, "metadata": {**meta, "namespace": namespace}}


def propagate_dry_run(delete_options: dict[str, Any] | None, request_dry_run: list[str]) -> dict[str, Any]:
    """`propagateDryRun`: the request's dryRun goes into the Eviction's deleteOptions; both set
    and different is an error (not a Status error upstream, so a 500 with reason Unknown)."""
    if delete_options is None:
        return {"dryRun": list(request_dry_run)} if request_dry_run else {}
    own = list(delete_options.get("dryRun") or [])
    if not own:
        return {**delete_options, "dryRun": list(request_dry_run)} if request_dry_run else dict(delete_options)
    if request_dry_run and own != list(request_dry_run):
        raise errors.ApiError(
            500, "Unknown",
            f"Non-matching dry-run options in request and content: [{' '.join(request_dry_run)}] and [{' '.join(own)}]",
        )
    return dict(delete_options)


def can_ignore_pdb(pod: dict[str, Any]) -> bool:
    """`canIgnorePDB`: a terminal, pending or terminating pod is deleted without a PDB check."""
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed", "Pending") or is_deleting(pod)


def should_enforce_resource_version(pod: dict[str, Any]) -> bool:
    """`shouldEnforceResourceVersion`: not for terminal or terminating pods; for the rest, so a
    pod that became ready meanwhile is not deleted behind a budget's back."""
    return not ((pod.get("status") or {}).get("phase") in ("Succeeded", "Failed") or is_deleting(pod))


def precondition_conflict(pod: dict[str, Any], options: DeleteOptions) -> errors.ApiError | None:
    """`getLatestPod` in `addConditionAndDeletePod`: a uid or resourceVersion precondition that
    the stored pod does not meet is a 409 on the resource upstream names "Pod"."""
    meta = pod["metadata"]
    name = meta["name"]
    details = {"name": name, "kind": "Pod"}
    if options.uid and options.uid != meta.get("uid"):
        why = (f"the UID in the precondition ({options.uid}) does not match the UID in record ({meta.get('uid')}). "
               "The object might have been deleted and then recreated")
        return errors.ApiError(409, "Conflict", f'Operation cannot be fulfilled on Pod "{name}": {why}', details)
    if options.resource_version and options.resource_version != meta.get("resourceVersion"):
        why = (f"the ResourceVersion in the precondition ({options.resource_version}) does not match the ResourceVersion "
               f"in record ({meta.get('resourceVersion')}). The object might have been modified")
        return errors.ApiError(409, "Conflict", f'Operation cannot be fulfilled on Pod "{name}": {why}', details)
    return None


def disruption_target() -> dict[str, Any]:
    """The condition `addConditionAndDeletePod` appends (its lastTransitionTime is set by
    `update_pod_condition`)."""
    return {"type": DISRUPTION_TARGET, "status": "True", "reason": EVICTION_REASON, "message": EVICTION_MESSAGE}


def update_pod_condition(conditions: list[dict[str, Any]], condition: dict[str, Any], at: str) -> tuple[list[dict[str, Any]], bool]:
    """pkg/api/pod/util.go `UpdatePodCondition`: the conditions with `condition` added or
    replacing the one of its type, and whether anything changed. lastTransitionTime is `at`
    unless the status stays the same; lastProbeTime is the new condition's (unset: null)."""
    new = {"type": condition["type"], "status": condition["status"], "lastProbeTime": condition.get("lastProbeTime"),
           "lastTransitionTime": at, **{k: condition[k] for k in ("reason", "message") if condition.get(k)}}
    index = next((i for i, c in enumerate(conditions) if c.get("type") == condition["type"]), None)
    if index is None:
        return [*conditions, new], True
    old = conditions[index]
    if new["status"] == old.get("status"):
        new["lastTransitionTime"] = old.get("lastTransitionTime")
    same = all(new.get(k) == old.get(k) for k in ("status", "reason", "message", "lastProbeTime", "lastTransitionTime"))
    out = list(conditions)
    out[index] = new
    return out, not same


def namespace_terminating(namespace: str, name: str) -> errors.ApiError:
    """NamespaceLifecycle's refusal (admission.NewForbidden on pods, with the cause kubectl
    drain looks for)."""
    return errors.ApiError(
        403, "Forbidden",
        f'pods "{name}" is forbidden: unable to create new content in namespace {namespace} because it is being terminated',
        {"name": name, "kind": "pods", "causes": [
            {"reason": NAMESPACE_TERMINATING_CAUSE, "message": f"namespace {namespace} is being terminated", "field": "metadata.namespace"},
        ]},
    )


def evict_pod(api: Api, namespace: str, name: str, body: Any, request_dry_run: list[str]) -> dict[str, Any]:
    """`EvictionREST.Create` on this server's store; returns the Status to answer with."""
    rtype = api.registry.lookup("", "v1", "pods")
    assert rtype is not None
    ns = api.store.get(NAMESPACE_KEY, "", namespace)
    if ns is None:
        raise errors.ApiError(404, "NotFound", f'namespaces "{namespace}" not found', {"name": namespace, "kind": "namespaces"})
    if is_deleting(ns):
        raise namespace_terminating(namespace, name)
    eviction = read_eviction(name, namespace, body)
    options = DeleteOptions.from_body(propagate_dry_run(eviction.get("deleteOptions"), request_dry_run), {})
    pod = api.store.get(rtype.storage_key, namespace, name)
    if pod is None:
        raise errors.not_found(rtype, name)
    if can_ignore_pdb(pod) and should_enforce_resource_version(pod) and options.resource_version is None:
        options = dataclasses.replace(options, resource_version=pod["metadata"].get("resourceVersion"))
    # No PodDisruptionBudgets are served, so none covers the pod: straight to the deletion.
    if not options.dry_run:
        conflict = precondition_conflict(pod, options)
        if conflict is not None:
            raise conflict
        conditions, changed = update_pod_condition(list((pod.get("status") or {}).get("conditions") or []), disruption_target(), now())
        if changed:
            new = copy.deepcopy(pod)
            new.setdefault("status", {})["conditions"] = conditions
            new["metadata"]["resourceVersion"] = str(api.store.next_rv())
            api.store.commit("MODIFIED", rtype.storage_key, new, pod)
            if options.resource_version is not None:
                options = dataclasses.replace(options, resource_version=new["metadata"]["resourceVersion"])
    api.delete(rtype, namespace, name, options)
    return errors.status_body(201, "", "", None)
