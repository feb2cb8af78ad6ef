"""What the route handlers are given: the emulator's state, which server.py builds.

`PineconeEmulator` (server.py) makes one `Context` and puts it in its application under
`CONTEXT`; the route modules (control.py, data.py, records.py, imports.py,
v2026_07_documents.py, admin.py) read it with `context(request)` and never import server.py.
Storage is reached through one interface, the emulator's `Store` (state.py): `store(request)`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from aiohttp import web

from pinery.local.pinecone.errors import ApiError
from pinery.local.pinecone.faults import Faults
from pinery.local.pinecone.state import Store

DEFAULT_PROJECT = "default"


@dataclass
class Settings:
    """What tests and the admin endpoint may change while the emulator runs."""

    ready_delay: float = 1.0
    scale_delay: float = 1.0
    read_capacity_delay: float = 1.0  # how long dedicated read capacity is Scaling or Migrating
    terminate_delay: float = 1.0
    collection_delay: float = 1.0
    backup_delay: float = 1.0
    restore_delay: float = 1.0
    import_delay: float = 1.0  # how long a bulk import stays Pending
    index_quota: int | None = None
    fail_initialization: set[str] = field(default_factory=set)
    # Backups (backups.py): how many a project may hold (None: no limit; beyond it create_backup is
    # the 2025-10 spec's 403 "You've exceed your backup quota"), whether the plan has backups at all
    # (False: 403, as on Pinecone's Starter and Builder plans), and source index names whose backups
    # fail (`InitializationFailed` after the backup delay).
    backup_quota: int | None = None
    backups_allowed: bool = True
    fail_backups: set[str] = field(default_factory=set)

    NAME_SETS: ClassVar[tuple[str, ...]] = ("fail_initialization", "fail_backups")
    LIMITS: ClassVar[tuple[str, ...]] = ("index_quota", "backup_quota")

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        for key in self.NAME_SETS:
            out[key] = sorted(getattr(self, key))
        return out

    def update(self, changes: Mapping[str, Any]) -> None:
        for key, value in changes.items():
            if key not in self.__dataclass_fields__:
                raise ValueError(f"unknown setting {key!r} (known: {', '.join(sorted(self.__dataclass_fields__))})")
            if key in self.NAME_SETS:
                value = set(value or ())
            elif key in self.LIMITS:
                value = None if value is None else int(value)
            elif key == "backups_allowed":
                if not isinstance(value, bool):
                    raise ValueError(f"{key} must be true or false")
            else:
                value = float(value)
                if value < 0:
                    raise ValueError(f"{key} must be >= 0")
            setattr(self, key, value)


class Context:
    """The emulator as its route handlers see it: storage, settings, faults, API keys, its URL
    and a way to write pending vector data."""

    def __init__(self, store: Store, settings: Settings, faults: Faults, api_keys: dict[str, str] | None,
                 url: Callable[[], str], flush: Callable[[], Awaitable[None]]) -> None:
        self.store = store
        self.settings = settings
        self.faults = faults
        # API key -> project; None accepts any non-empty key (as the default project).
        self.api_keys = api_keys
        self._url = url
        self._flush = flush

    @property
    def url(self) -> str:
        """The control-plane URL (known once the server listens)."""
        return self._url()

    async def flush(self) -> None:
        """Write changed vector data to the state directory."""
        await self._flush()

    def project(self, request: web.Request) -> str:
        """The project of the request's API key (401 when it has none or an unknown one)."""
        key = request.headers.get("Api-Key", "")
        if not key:
            raise ApiError(401, "API key is missing. Send it in the Api-Key header.", "UNAUTHENTICATED")
        if self.api_keys is None:
            return DEFAULT_PROJECT
        project = self.api_keys.get(key)
        if project is None:
            raise ApiError(401, "Invalid API key.", "UNAUTHENTICATED")
        return project


CONTEXT: web.AppKey[Context] = web.AppKey("pinecone_emulator", Context)


def context(request: web.Request) -> Context:
    return request.app[CONTEXT]


def store(request: web.Request) -> Store:
    """The emulator's storage: indexes, collections, backups, restore jobs, imports, vector data."""
    return request.app[CONTEXT].store


def settings(request: web.Request) -> Settings:
    """The emulator's delays, index and backup quotas, and names that fail initialization."""
    return request.app[CONTEXT].settings


def project(request: web.Request) -> str:
    """The project of the request's API key."""
    return request.app[CONTEXT].project(request)
