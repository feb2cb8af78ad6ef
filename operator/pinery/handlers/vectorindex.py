"""VectorIndex handlers: create, update, resume and resync reconcile; delete releases the index."""

from __future__ import annotations

import logging
from typing import Any

import kopf
from pydantic import ValidationError

from pinery.api.base import GROUP, VERSION
from pinery.api.conditions import set_condition
from pinery.api.vectorindex import VectorIndexSpec
from pinery.pinecone_gateway import PineconeCallError
from pinery.services import Services
from pinery.settings import OperatorSettings
from pinery.vectorindex.errors import backoff, classify
from pinery.vectorindex.reconcile import Identity, Step, decide, decide_deletion
from pinery.vectorindex.status import READY, SYNCED, phase

PLURAL = "vectorindexes"
# The finalizer gives up on Pinecone after this many failed attempts (about an hour with the
# capped backoff) and releases the object with a Warning naming the index left behind, so that
# a GitOps prune never hangs forever.
MAX_DELETE_ATTEMPTS = 20


def register(registry: kopf.OperatorRegistry, services: Services) -> None:
    resource = (GROUP, VERSION, PLURAL)
    resync = services.settings.resync_seconds
    timed = services.metrics.timed

    @kopf.on.create(*resource, registry=registry)
    @kopf.on.update(*resource, registry=registry, field="spec")
    @kopf.on.resume(*resource, registry=registry)
    @timed("VectorIndex", "reconcile")
    async def vectorindex_reconcile(body, spec, meta, status, patch, retry, logger, **_):
        await reconcile(body, spec, meta, status, patch, retry, services, logger, from_listing=False)

    @kopf.timer(*resource, registry=registry, interval=resync, initial_delay=resync, idle=resync / 2)
    @timed("VectorIndex", "resync")
    async def vectorindex_resync(body, spec, meta, status, patch, logger, **_):
        await reconcile(body, spec, meta, status, patch, 0, services, logger, from_listing=True)

    @kopf.on.delete(*resource, registry=registry)
    @timed("VectorIndex", "delete")
    async def vectorindex_delete(body, spec, meta, status, patch, retry, logger, **_):
        await release(body, spec, meta, status, patch, retry, services, logger)


# --- reconcile --------------------------------------------------------------------------

async def reconcile(body, spec, meta, status, patch, retry: int, services: Services, logger: logging.Logger, *, from_listing: bool) -> None:
    generation = meta.get("generation")
    conditions = list(status.get("conditions") or [])

    try:
        parsed = VectorIndexSpec.model_validate(dict(spec))
    except ValidationError as exc:
        _write(patch, body, conditions, generation, ("False", "InvalidSpec", _first_error(exc)), ("False", "InvalidSpec", _first_error(exc)))
        return

    api_key = await _api_key(parsed, meta["namespace"], services)
    if api_key is None:
        ref = _secret_ref(parsed, meta["namespace"], services.settings)
        msg = f"Secret {ref[0]}/{ref[1]} with key {ref[2]!r} holding the Pinecone API key was not found"
        _write(patch, body, conditions, generation, ("False", "SecretNotFound", msg), ("False", "SecretNotFound", msg))
        raise kopf.TemporaryError(msg, delay=backoff(retry, cap=60))

    who = Identity(services.settings.cluster_name, meta["namespace"], meta["name"])
    name = parsed.index_name_for(meta["name"])
    gateway = services.pinecone
    try:
        if from_listing:
            index = await gateway.describe_from_listing(api_key, name, max_age=services.settings.resync_seconds / 2)
            if index is None:  # a listing can be stale: confirm before recreating anything
                index = await gateway.describe(api_key, name)
        else:
            index = await gateway.describe(api_key, name)
        step = decide(parsed, who, index, known_index_name=status.get("indexName"), polls=retry)
        if step.action == "create":
            await gateway.create(api_key, step.request)
        elif step.action == "configure":
            await gateway.configure(api_key, name, step.request)
    except PineconeCallError as exc:
        verdict = classify(exc.failure, retry)
        logger.warning("%s", verdict.message)
        cond = ("False", verdict.reason, verdict.message)
        ready = _current(conditions, READY) if verdict.reason == "PineconeUnavailable" and _is_true(conditions, READY) else cond
        if _write(patch, body, conditions, generation, ready, cond):
            kopf.event(body, type="Warning", reason=verdict.reason, message=verdict.message)
        services.metrics.reconciled("VectorIndex", "error")
        if not from_listing:  # handlers retry (slowly for terminal reasons); sweeps just report
            raise kopf.TemporaryError(verdict.message, delay=verdict.delay)
        return

    changed = _write(patch, body, conditions, generation, step.ready, step.synced, step=step, index_name=name, parsed=parsed)
    for event in step.events:
        if step.action in ("create", "configure") or changed:
            kopf.event(body, type=event.type, reason=event.reason, message=event.message)
    if step.ready[0] == "True" and parsed.connection_config_map and step.host:
        await services.kube.apply(connection_config_map(body, parsed, name, step.host, services.settings.pinecone_host))
    services.metrics.reconciled("VectorIndex", step.action)
    services.metrics.index_state(meta["namespace"], meta["name"], step.state)
    if step.requeue is not None and not from_listing:
        raise kopf.TemporaryError(step.ready[2], delay=step.requeue)


def connection_config_map(body: Any, spec: VectorIndexSpec, index_name: str, host: str, controller_host: str) -> dict:
    """The ConfigMap applications read the index from (owned by the VectorIndex)."""
    data = {"PINECONE_INDEX_NAME": index_name, "PINECONE_INDEX_HOST": host}
    if controller_host:  # local mode or a proxy: applications must use the same control plane
        data["PINECONE_CONTROLLER_HOST"] = controller_host
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": spec.connection_config_map,
            "namespace": body["metadata"]["namespace"],
            "labels": {"app.kubernetes.io/managed-by": "pinery", "pinery.dev/vectorindex": body["metadata"]["name"]},
            "ownerReferences": [_owner_reference(body)],
        },
        "data": data,
    }


def _owner_reference(body: Any) -> dict:
    return {
        "apiVersion": body["apiVersion"],
        "kind": body["kind"],
        "name": body["metadata"]["name"],
        "uid": body["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


# --- delete -----------------------------------------------------------------------------

async def release(body, spec, meta, status, patch, retry: int, services: Services, logger: logging.Logger) -> None:
    patch.status["phase"] = "Terminating"
    try:
        parsed = VectorIndexSpec.model_validate(dict(spec))
    except ValidationError:
        kopf.event(body, type="Warning", reason="InvalidSpec", message="the spec is invalid; no Pinecone index was touched")
        return
    name = parsed.index_name_for(meta["name"])
    api_key = await _api_key(parsed, meta["namespace"], services)
    if api_key is None:
        if retry < MAX_DELETE_ATTEMPTS // 2:
            raise kopf.TemporaryError("waiting for the Pinecone API key Secret to delete the index", delay=backoff(retry, cap=60))
        kopf.event(body, type="Warning", reason="IndexLeft", message=f"the API key Secret is gone, so index {name} could not be deleted and was left in Pinecone")
        return
    who = Identity(services.settings.cluster_name, meta["namespace"], meta["name"])
    try:
        index = await services.pinecone.describe(api_key, name)
        step = decide_deletion(parsed, who, index, polls=retry)
        if step.action == "delete":
            await services.pinecone.delete(api_key, name)
    except PineconeCallError as exc:
        verdict = classify(exc.failure, retry)
        if exc.failure.status == 403:  # protection switched on in between: never force it
            kopf.event(body, type="Warning", reason="DeletionProtected", message=f"index {name} could not be deleted ({verdict.message}); it was left in Pinecone")
            return
        if retry < MAX_DELETE_ATTEMPTS:
            raise kopf.TemporaryError(verdict.message, delay=verdict.delay)
        kopf.event(body, type="Warning", reason="IndexLeft", message=f"giving up on deleting index {name} after {retry} attempts ({verdict.message}); it was left in Pinecone")
        return
    if step.event is not None and (step.action != "delete" or retry == 0):
        kopf.event(body, type=step.event.type, reason=step.event.reason, message=step.event.message)
    if step.action in ("delete", "wait"):
        raise kopf.TemporaryError(f"waiting for index {name} to be deleted", delay=step.requeue or 2)
    services.metrics.forget_index(meta["namespace"], meta["name"])


# --- helpers ----------------------------------------------------------------------------

def _secret_ref(spec: VectorIndexSpec, namespace: str, settings: OperatorSettings) -> tuple[str, str, str]:
    if spec.api_key_secret_ref is not None:
        return namespace, spec.api_key_secret_ref.name, spec.api_key_secret_ref.key
    return settings.default_secret_namespace, settings.pinecone_secret_name, settings.pinecone_secret_key


async def _api_key(spec: VectorIndexSpec, namespace: str, services: Services) -> str | None:
    ns, name, key = _secret_ref(spec, namespace, services.settings)
    return await services.kube.secret_value(ns, name, key)


def _write(patch, body, conditions: list[dict], generation: int | None, ready: tuple, synced: tuple,
           *, step: Step | None = None, index_name: str | None = None, parsed: VectorIndexSpec | None = None) -> bool:
    """Put conditions, phase and index facts into the status patch; True when a condition changed."""
    from pinery.handlers import condition_changes

    new = set_condition(conditions, READY, *ready, generation=generation)
    new = set_condition(new, SYNCED, *synced, generation=generation)
    patch.status["conditions"] = new
    patch.status["phase"] = phase(new)
    patch.status["observedGeneration"] = generation
    if step is not None:
        if step.action in ("create", "configure", "none", "wait") and index_name:
            patch.status["indexName"] = index_name
        if parsed is not None:
            patch.status["type"] = parsed.deployment_type
        if step.host:
            patch.status["host"] = step.host
        if step.state:
            patch.status["state"] = step.state
    return condition_changes(conditions, new)


def _current(conditions: list[dict], type_: str) -> tuple:
    for cond in conditions:
        if cond.get("type") == type_:
            return (cond["status"], cond["reason"], cond.get("message", ""))
    return ("Unknown", "Pending", "")


def _is_true(conditions: list[dict], type_: str) -> bool:
    return _current(conditions, type_)[0] == "True"


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    return f"spec.{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
