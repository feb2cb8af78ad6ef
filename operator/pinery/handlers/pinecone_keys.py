"""Which Secret holds the Pinecone API key of an object, and reading it."""

from __future__ import annotations

from pinery.api.base import SecretKeyRef
from pinery.services import Services
from pinery.settings import OperatorSettings


def secret_ref(ref: SecretKeyRef | None, namespace: str, settings: OperatorSettings) -> tuple[str, str, str]:
    """(namespace, Secret, key): the object's own reference, in its namespace, else the
    operator's configured Secret."""
    if ref is not None:
        return namespace, ref.name, ref.key
    return settings.default_secret_namespace, settings.pinecone_secret_name, settings.pinecone_secret_key


async def api_key(ref: SecretKeyRef | None, namespace: str, services: Services, sweep: int | None = None) -> str | None:
    """The API key, or None when its Secret or key is missing; read once per resync sweep
    (`sweep`, its number) for all the passes of that sweep."""
    ns, name, key = secret_ref(ref, namespace, services.settings)
    return await services.kube.secret_value(ns, name, key, sweep) or None


def missing_key_message(ref: SecretKeyRef | None, namespace: str, settings: OperatorSettings) -> str:
    ns, secret, key = secret_ref(ref, namespace, settings)
    return f"Secret {ns}/{secret} with key {key!r} holding the Pinecone API key was not found"
