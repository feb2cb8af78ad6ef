"""Every call pinery makes to Pinecone goes through here (the `pinecone` SDK 10.x).

The SDK speaks API 2026-07, and so does the operator, for every call but one: creating the
indexes 2026-07 refuses to create (pod-based ones, and those made from a collection) goes to
API 2026-04 (`LEGACY_CREATE_VERSION`, chosen by `pinery.vectorindex.desired.create_request`)
through the SDK's own HTTP client, configured as the SDK configures its own, so that errors,
retries and timeouts behave the same. Indexes come back in the 2026-07 `IndexModel` shape
(`pinery.vectorindex.observed` reads them; a 2026-04 answer is translated).

- one SDK client per API key (keys are never logged; clients are keyed by a hash);
- a global cap on calls in flight, so that hundreds of VectorIndexes cannot storm Pinecone;
- one `list_indexes` per API key per resync sweep, shared by every object of the sweep;
- SDK objects become plain dicts in the REST shape, SDK exceptions become `PineconeCallError`
  carrying a `PineconeFailure` with the key removed from every message.

Moving to a newer Pinecone API is a change to this module alone.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable

from pinery.gateways.per_sweep import PerSweep
from pinery.vectorindex import observed
from pinery.vectorindex.desired import LEGACY_CREATE_VERSION, CreateRequest
from pinery.vectorindex.errors import PineconeFailure, redact

log = logging.getLogger("pinery.pinecone")

# The SDK retries retryable statuses itself, sleeping in our worker thread while it holds a
# slot of the concurrency cap: one retry, after at most a few seconds, keeps that bounded. A 429
# is not among them: the SDK caps its wait at SDK_MAX_WAIT_SECONDS, and would come back sooner
# than a longer Retry-After; the operator's own requeue honours it in full, holding nothing.
SDK_MAX_RETRIES = 1
SDK_MAX_WAIT_SECONDS = 2.0
SDK_RETRYABLE_STATUSES = frozenset({408, 500, 502, 503, 504})
SDK_TIMEOUT_SECONDS = 20.0
_MAX_CLIENTS = 64


class PineconeCallError(Exception):
    """A failed Pinecone call; `failure` says how, without secrets."""

    def __init__(self, failure: PineconeFailure):
        super().__init__(f"{failure.operation}: {failure.status}: {failure.message}")
        self.failure = failure


@dataclass
class _Listing:
    indexes: dict[str, dict[str, Any]]
    # Names this operator changed since the listing was taken: their entries are stale.
    stale: set[str] = field(default_factory=set)


def key_id(api_key: str) -> str:
    """A stable, non-reversible name for an API key (for caches and logs)."""
    return hashlib.sha256(api_key.encode()).hexdigest()[:12]


# The SDK decodes a schema field that comes without `type` (a legacy metadata field) into a
# struct tagged with this, which is not on the wire (pinecone/models/indexes/schema.py,
# UNTYPED_FIELD_TAG, LegacyMetadataField).
_SDK_UNTYPED_TAG = "__untyped__"


def struct_to_dict(model: Any) -> dict[str, Any]:
    """An SDK model (a msgspec Struct: IndexModel, BackupModel, ...) as its 2026-07 wire dict.
    Only the struct's own fields: the deprecated views the SDK computes (`spec`, `dimension`,
    ...) are not read."""
    import msgspec

    data: dict[str, Any] = msgspec.to_builtins(model)
    for declared in observed.fields(data).values():
        if isinstance(declared, dict) and declared.get("type") == _SDK_UNTYPED_TAG:
            del declared["type"]
    return data


index_to_dict = struct_to_dict


def failure_from(exc: BaseException, operation: str, api_key: str) -> PineconeFailure:
    """Reduce any SDK exception to what the operator needs to decide."""
    from pinecone.errors.exceptions import ApiError, PineconeTimeoutError, PineconeTypeError, PineconeValueError

    message = redact(getattr(exc, "message", None) or str(exc), [api_key])
    if isinstance(exc, ApiError):
        return PineconeFailure(
            operation,
            exc.status_code,
            exc.error_code,
            message,
            getattr(exc, "retry_after", None),
        )
    if isinstance(exc, (PineconeValueError, PineconeTypeError)):
        return PineconeFailure(operation, 400, "INVALID_ARGUMENT", message)
    if isinstance(exc, (PineconeTimeoutError, TimeoutError)):
        return PineconeFailure(operation, None, "TIMEOUT", message or "timed out")
    return PineconeFailure(operation, None, type(exc).__name__, message or type(exc).__name__)


class PineconeGateway:
    """Pinecone's control plane as the operator uses it. Methods are coroutines; the blocking
    SDK runs in worker threads under a concurrency cap."""

    def __init__(
        self,
        host: str = "",
        concurrency: int = 8,
        on_call: Callable[[str, str], None] | None = None,
        timeout: float = SDK_TIMEOUT_SECONDS,
    ):
        self.host = host
        self.timeout = timeout
        self._semaphore = asyncio.Semaphore(concurrency)
        # key id -> (SDK client, HTTP client of LEGACY_CREATE_VERSION or None until first used)
        self._clients: OrderedDict[str, list[Any]] = OrderedDict()
        self._clients_lock = threading.Lock()
        self._listings: PerSweep[_Listing] = PerSweep()  # by key_id
        # (operation, outcome) -> None, for metrics; outcome is an HTTP status or "ok"/"error".
        self._on_call = on_call or (lambda operation, outcome: None)

    def _client(self, api_key: str) -> Any:
        return self._entry(api_key)[0]

    def warm_up(self) -> None:
        """Load what the SDK loads for its first client and the parts of it the gateway calls
        (about 270 modules, 6 MiB: httpx, msgspec, its models): at start, rather than in the
        first VectorIndex's first pass, which would wait for it, and where the operator's memory
        would count it against the objects (docs/performance.md, "Operator memory"). Making a
        client sends no request. A failure here only means the first pass loads it."""
        try:
            from pinecone import Pinecone

            client = Pinecone(api_key="warm-up", host=self.host or None, source_tag="pinery")
            for part in ("indexes", "backups", "restore_jobs"):
                getattr(client, part)
        except Exception as exc:  # an SDK that builds its client otherwise: not a reason to stop
            log.warning("the Pinecone SDK could not be loaded ahead of the first VectorIndex: %s", exc)

    def _legacy_http(self, api_key: str) -> Any:
        """The SDK's HTTP client, on the SDK client's configuration (host, timeout, retries,
        source tag), sending LEGACY_CREATE_VERSION (the 10.x SDK: pinecone/_client.py builds its
        own the same way, `HTTPClient(config, CONTROL_PLANE_API_VERSION)`)."""
        from pinecone._internal.http_client import HTTPClient

        entry = self._entry(api_key)
        with self._clients_lock:
            if entry[1] is None:
                entry[1] = HTTPClient(entry[0].config, LEGACY_CREATE_VERSION)
            return entry[1]

    def _entry(self, api_key: str) -> list[Any]:
        from pinecone import Pinecone, RetryConfig

        kid = key_id(api_key)
        with self._clients_lock:
            entry = self._clients.get(kid)
            if entry is None:
                client = Pinecone(
                    api_key=api_key,
                    host=self.host or None,
                    timeout=self.timeout,
                    retry_config=RetryConfig(max_retries=SDK_MAX_RETRIES, max_wait=SDK_MAX_WAIT_SECONDS,
                                             retryable_status_codes=SDK_RETRYABLE_STATUSES),
                    source_tag="pinery",
                )
                entry = self._clients[kid] = [client, None]
                while len(self._clients) > _MAX_CLIENTS:
                    self._clients.popitem(last=False)
            else:
                self._clients.move_to_end(kid)
            return entry

    async def _call(self, operation: str, api_key: str, fn: Callable[[Any], Any]) -> Any:
        async with self._semaphore:
            try:
                result = await asyncio.to_thread(lambda: fn(self._client(api_key)))
            except Exception as exc:  # every SDK failure becomes a PineconeFailure
                failure = failure_from(exc, operation, api_key)
                self._on_call(operation, str(failure.status or "error"))
                raise PineconeCallError(failure) from None
        self._on_call(operation, "ok")
        return result

    async def _call_or_none(self, operation: str, api_key: str, fn: Callable[[Any], Any]) -> Any:
        """`_call`, with Pinecone's 404 as None: what was asked about does not exist."""
        try:
            return await self._call(operation, api_key, fn)
        except PineconeCallError as exc:
            if exc.failure.status == 404:
                return None
            raise

    async def describe(self, api_key: str, name: str) -> dict[str, Any] | None:
        """The index named `name`, or None when Pinecone has none."""
        model = await self._call_or_none("describe_index", api_key, lambda pc: pc.indexes.describe(name))
        return None if model is None else index_to_dict(model)

    async def list_indexes(self, api_key: str) -> dict[str, dict[str, Any]]:
        """Every index of the key's project, by name."""
        models = await self._call("list_indexes", api_key, lambda pc: list(pc.indexes.list()))
        return {m.name: index_to_dict(m) for m in models}

    async def describe_in_sweep(self, api_key: str, name: str, sweep: int) -> dict[str, Any] | None:
        """The index as seen by the shared `list_indexes` of resync sweep number `sweep`.

        However many VectorIndexes share a key, one list call per sweep serves them all. An
        index absent from the listing, or changed by this operator since, is described
        individually: a listing never causes a recreation on its own.
        """
        async def fetch() -> _Listing:
            return _Listing(await self.list_indexes(api_key))

        listing = await self._listings.read(key_id(api_key), sweep, fetch)
        found = listing.indexes.get(name)
        if found is None or name in listing.stale:
            return await self.describe(api_key, name)
        return found

    def _changed(self, api_key: str, name: str) -> None:
        """Mark the index's entry in the key's listing stale (this operator just changed it)."""
        listing = self._listings.newest(key_id(api_key))
        if listing is not None:
            listing.stale.add(name)

    async def create(self, api_key: str, request: CreateRequest) -> dict[str, Any]:
        """Create an index (returns at once; readiness is polled by the caller)."""
        body = dict(request.body)
        if request.route == LEGACY_CREATE_VERSION:
            answer = await self._call("create_index", api_key,
                                      lambda pc: self._legacy_http(api_key).post("/indexes", json=body).json())
            self._changed(api_key, request.name)
            return observed.from_2025_10(answer)
        if request.route == "for-model":
            model = await self._call("create_index", api_key, lambda pc: pc.indexes.create_for_model(**body, timeout=-1))
        else:
            model = await self._call("create_index", api_key, lambda pc: pc.indexes.create(**body, timeout=-1))
        self._changed(api_key, request.name)
        return index_to_dict(model)

    async def configure(self, api_key: str, name: str, changes: dict[str, Any]) -> None:
        await self._call("configure_index", api_key, lambda pc: pc.indexes.configure(name, **changes))
        self._changed(api_key, name)

    async def delete(self, api_key: str, name: str) -> None:
        """Ask Pinecone to delete the index (returns at once). An absent index is not an error."""
        await self._call_or_none("delete_index", api_key, lambda pc: pc.indexes.delete(name, timeout=-1))
        self._changed(api_key, name)

    # --- backups and restores (10.x SDK: pinecone/client/backups.py, client/restore_jobs.py,
    # Pinecone.create_index_from_backup in pinecone/_client.py) --------------------------------

    async def create_backup(self, api_key: str, index_name: str, name: str, description: str | None) -> dict[str, Any]:
        """Ask Pinecone to back up an index; the backup starts `Initializing`."""
        model = await self._call("create_backup", api_key,
                                 lambda pc: pc.backups.create(index_name=index_name, name=name, description=description))
        return struct_to_dict(model)

    async def describe_backup(self, api_key: str, backup_id: str) -> dict[str, Any] | None:
        """The backup, or None when Pinecone has none of this id."""
        model = await self._call_or_none("describe_backup", api_key, lambda pc: pc.backups.describe(backup_id=backup_id))
        return None if model is None else struct_to_dict(model)

    async def find_backup(self, api_key: str, index_name: str, name: str) -> dict[str, Any] | None:
        """The backup of `index_name` called `name` (every page of the index's backups), or None;
        None too when the index is gone."""
        models = await self._call_or_none("list_backups", api_key, lambda pc: list(pc.indexes.list_backups(index_name)))
        found = [struct_to_dict(m) for m in models or [] if m.name == name]
        return found[0] if found else None

    async def delete_backup(self, api_key: str, backup_id: str) -> None:
        """Delete a backup; an absent one is not an error."""
        await self._call_or_none("delete_backup", api_key, lambda pc: pc.backups.delete(backup_id=backup_id))

    async def restore(self, api_key: str, backup_id: str, name: str, *, tags: dict[str, str],
                      deletion_protection: str) -> dict[str, Any]:
        """Create index `name` from a backup; returns `restore_job_id` and `index_id` at once."""
        answer = await self._call("create_index_from_backup", api_key, lambda pc: pc.create_index_from_backup(
            name=name, backup_id=backup_id, tags=tags, deletion_protection=deletion_protection, timeout=-1))
        self._changed(api_key, name)
        return struct_to_dict(answer)

    async def describe_restore_job(self, api_key: str, job_id: str) -> dict[str, Any] | None:
        model = await self._call_or_none("describe_restore_job", api_key, lambda pc: pc.restore_jobs.describe(job_id=job_id))
        return None if model is None else struct_to_dict(model)
