"""Server-side apply and managedFields tracking, between the operations and fieldmanager.py.

The request handlers of upstream's apiserver (pkg/endpoints/handlers create.go, update.go,
patch.go) run the field manager on every write: creates, updates and non-apply patches as
an Update by `fieldManager` (or the user agent's first token, managerOrUserAgent), applies
as an Apply (a fieldManager is required). A conflict answers 409 as apimachinery's
errors.NewApplyConflict shapes it.
"""

from __future__ import annotations

import copy
from typing import Any

from pinery.local.apiserver import errors
from pinery.local.apiserver.fieldmanager import Conflicts, FieldManager, _strip, decode, encode
from pinery.local.apiserver.fieldpath import Path, from_fields_v1, to_fields_v1  # noqa: F401 (re-exported)
from pinery.local.apiserver.fieldschema import Shape
from pinery.local.apiserver.fieldsets import field_set as _typed_field_set
from pinery.local.apiserver.objectmeta import now

FIELD_MANAGER_MAX_LENGTH = 128


def default_manager(field_manager: str, user_agent: str) -> str:
    """managerOrUserAgent / prefixFromUserAgent (handlers/create.go)."""
    if field_manager:
        return field_manager
    prefix = "".join(ch for ch in user_agent.split("/")[0] if ch.isprintable())
    return prefix.encode()[:FIELD_MANAGER_MAX_LENGTH].decode(errors="ignore")


def field_set(kind: str, value: Any) -> set[Path]:
    """The fields a configuration of a built-in kind sets, as its Apply entry records them."""
    return _strip(_typed_field_set(Shape(kind), value))


def _manager(kind: str, api_version: str, schema: dict[str, Any] | None, subresource: str, has_status: bool) -> FieldManager:
    if subresource == "status":
        ignore = lambda path: path[:1] != ("f:status",)  # noqa: E731
    elif has_status:
        ignore = lambda path: path[:1] == ("f:status",)  # noqa: E731
    else:
        ignore = lambda path: False  # noqa: E731
    return FieldManager(Shape(kind, schema), api_version, now, subresource or "", ignore)


def apply_config(
    kind: str,
    live: dict[str, Any],
    config: dict[str, Any],
    manager: str,
    api_version: str,
    *,
    force: bool = False,
    schema: dict[str, Any] | None = None,
    subresource: str | None = None,
    has_status: bool = False,
) -> dict[str, Any]:
    """The object after `manager` applies `config` to `live` (both as the API shows them),
    with its managedFields; raises a 409 ApiError on conflicts unless `force`."""
    fm = _manager(kind, api_version, schema, subresource or "", has_status)
    config = copy.deepcopy(config)
    config.get("metadata", {}).pop("managedFields", None)
    managed = decode((live.get("metadata") or {}).get("managedFields"))
    try:
        merged, managed = fm.apply(live, config, managed, manager, force)
    except Conflicts as exc:
        raise errors.ApiError(409, "Conflict", exc.message(), {"causes": exc.causes()}) from None
    _set_managed(merged, managed)
    return merged


def track_update(
    kind: str,
    old: dict[str, Any] | None,
    new: dict[str, Any],
    manager: str,
    api_version: str,
    *,
    schema: dict[str, Any] | None = None,
    subresource: str | None = None,
    has_status: bool = False,
) -> None:
    """Record an Update by `manager` in `new`'s managedFields (create when `old` is None)."""
    fm = _manager(kind, api_version, schema, subresource or "", has_status)
    live = old or {}
    requested = (new.get("metadata") or {}).get("managedFields")
    old_entries = (live.get("metadata") or {}).get("managedFields")
    # decodeLiveOrNew: a subresource write uses the live sets; otherwise the request's own,
    # unless it sent none ([] or [{}] resets them).
    if subresource or requested is None:
        managed = decode(old_entries)
    elif requested == [] or requested == [{}]:
        managed = {}
    else:
        managed = decode(requested) or decode(old_entries)
    managed = fm.update(live, new, managed, manager, tracked=old is None)
    _set_managed(new, managed)
    if old is not None and _same_but_time(new, old):
        new["metadata"]["managedFields"] = copy.deepcopy(old_entries)


def _set_managed(obj: dict[str, Any], managed: Any) -> None:
    m = obj.setdefault("metadata", {})
    entries = encode(managed)
    if entries:
        m["managedFields"] = entries
    else:
        m.pop("managedFields", None)


def _same_but_time(new: dict[str, Any], old: dict[str, Any]) -> bool:
    """IgnoreManagedFieldsTimestampsTransformer: a no-op write keeps the old timestamps."""
    def without_time(entries: Any) -> Any:
        return [{k: v for k, v in e.items() if k != "time"} for e in entries or []]

    def rest(obj: dict[str, Any]) -> Any:
        meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in ("managedFields", "resourceVersion")}
        return {**obj, "metadata": meta}

    a = (new.get("metadata") or {}).get("managedFields")
    b = (old.get("metadata") or {}).get("managedFields")
    return without_time(a) == without_time(b) and rest(new) == rest(old)
