"""Field ownership: who manages which field, as `metadata.managedFields` records it.

A pure policy over objects as the API shows them, following upstream:
- structured-merge-diff merge/update.go: `Updater.Apply` (merge the configuration, the
  applier's set becomes the configuration's field set, prune what it applied before and no
  one owns now, then `update`), `Updater.Update` (the updater gains what changed), and
  `update` (fields another manager owns that change are conflicts; without force they fail
  the apply, with force they move; removed fields leave every owner).
- apimachinery pkg/util/managedfields/internal: the manager identity (BuildManagerIdentifier:
  manager, operation, apiVersion for updates only, subresource), skipNonApplied (updates of
  an object that has no managed fields are not tracked; the first apply to one gives its
  fields to `before-first-apply`), managedFieldsUpdater (an update adds to the manager's set;
  time changes only when the manager changed something), stripMeta (identity and server
  fields are owned by no one), capManagers (more than 10 update managers: the oldest merge
  into `ancient-changes`), the encoding order (sortEncodedManagedFields) and the conflict
  message (conflict.go getConflictMessage, printManager).
Not emulated: lastAppliedManager/lastAppliedUpdater (client-side apply's annotation does not
excuse conflicts and is not rewritten by a server-side apply), version conversion of sets.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

from pinery.local.apiserver import fieldpath as fp
from pinery.local.apiserver.fieldschema import Shape
from pinery.local.apiserver.fieldsets import compare, field_set, merge, remove

Path = fp.Path
MAX_UPDATE_MANAGERS = 10
# stripmeta.go: never owned.
_STRIPPED = {
    ("f:apiVersion",), ("f:kind",), ("f:metadata",),
    *(("f:metadata", "f:" + name) for name in (
        "name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName",
        "generation", "managedFields", "resourceVersion")),
}


@dataclass(frozen=True)
class Manager:
    manager: str
    operation: str  # "Apply" or "Update"
    api_version: str = ""  # part of the identity for updates only
    subresource: str = ""

    def printed(self) -> str:
        """printManager: `"name"`, `"name" with subresource "status"`, then ` using v1` for updates."""
        out = json.dumps(self.manager)
        if self.subresource:
            out += f" with subresource {json.dumps(self.subresource)}"
        if self.operation == "Update":
            out += f" using {self.api_version}"
        return out


@dataclass
class Owned:
    paths: set[Path]
    api_version: str
    time: str | None = None


Managed = dict[Manager, Owned]


class Conflicts(Exception):
    def __init__(self, conflicts: list[tuple[Manager, Path]]) -> None:
        self.conflicts = conflicts
        super().__init__(self.message())

    def message(self) -> str:
        if len(self.conflicts) == 1:
            who, path = self.conflicts[0]
            return f"Apply failed with 1 conflict: conflict with {who.printed()}: {fp.path_string(path)}"
        lines: list[str] = []
        for who in sorted({w for w, _ in self.conflicts}, key=lambda m: m.printed()):
            lines.append(f"conflicts with {who.printed()}:")
            lines += [f"- {fp.path_string(p)}" for w, p in self.conflicts if w == who]
        return f"Apply failed with {len(self.conflicts)} conflicts: " + "\n".join(lines)

    def causes(self) -> list[dict[str, str]]:
        return [
            {"reason": "FieldManagerConflict", "message": f"conflict with {who.printed()}", "field": fp.path_string(path)}
            for who, path in self.conflicts
        ]


# Encoding

def decode(entries: Any) -> Managed:
    out: Managed = {}
    for e in entries if isinstance(entries, list) else []:
        if not isinstance(e, dict) or e.get("operation") not in ("Apply", "Update"):
            continue
        who = Manager(e.get("manager") or "", e["operation"], e.get("apiVersion", "") if e["operation"] == "Update" else "", e.get("subresource") or "")
        out[who] = Owned(fp.from_fields_v1(e.get("fieldsV1")), e.get("apiVersion") or "", e.get("time"))
    return out


def encode(managed: Managed) -> list[dict[str, Any]]:
    entries = []
    for who, owned in managed.items():
        entry: dict[str, Any] = {"manager": who.manager, "operation": who.operation, "apiVersion": owned.api_version}
        if owned.time:
            entry["time"] = owned.time
        entry["fieldsType"] = "FieldsV1"
        entry["fieldsV1"] = fp.to_fields_v1(owned.paths)
        if who.subresource:
            entry["subresource"] = who.subresource
        entries.append(entry)
    entries.sort(key=lambda e: (e["operation"], e.get("time") or "", e["manager"], e["apiVersion"], e.get("subresource", "")))
    return entries


# The Updater

@dataclass
class FieldManager:
    shape: Shape
    api_version: str
    now: Callable[[], str]
    subresource: str = ""
    # Reset fields: a status write owns status only; a main write does not own status
    # (the strategies' GetResetFields, as the Updater's IgnoredFields).
    ignore: Callable[[Path], bool] = field(default=lambda path: False)

    def _keep(self, paths: set[Path]) -> set[Path]:
        return {p for p in paths if not self.ignore(p)}

    def _changes(self, live: Any, new: Any):
        c = compare(self.shape, _bare(live), _bare(new))
        return self._keep(c.added), self._keep(c.removed), self._keep(c.modified)

    def _update(self, live: Any, new: Any, managed: Managed, me: Manager | None, force: bool) -> tuple[Managed, set[Path], set[Path], set[Path]]:
        added, removed, modified = self._changes(live, new)
        changed = added | modified
        conflicts = [(who, p) for who, owned in managed.items() if who != me for p in fp.iterate(owned.paths & changed)]
        if conflicts and not force:
            raise Conflicts(conflicts)
        out: Managed = {}
        for who, owned in managed.items():
            paths = owned.paths if who == me else owned.paths - changed - removed
            if paths:
                out[who] = Owned(paths, owned.api_version, owned.time)
        return out, added, removed, modified

    def update(self, live: dict[str, Any], new: dict[str, Any], managed: Managed, manager: str, tracked: bool) -> Managed:
        """An Update (create, update, non-apply patch) by `manager`; `tracked`: live has managed fields or is new."""
        if not managed and not tracked:
            return managed  # skipNonApplied
        me = Manager(manager or "unknown", "Update", self.api_version, self.subresource)
        managed, added, removed, modified = self._update(live, new, managed, None, True)
        gained = _strip(added | modified)
        if gained or me in managed:
            previous = managed.get(me)
            paths = (previous.paths if previous else set()) | gained
            time = self.now() if gained else previous.time if previous else None
            managed[me] = Owned(paths, self.api_version, time)
        managed = {w: o for w, o in managed.items() if o.paths}
        return _cap(managed)

    def apply(self, live: dict[str, Any], config: dict[str, Any], managed: Managed, manager: str, force: bool) -> tuple[dict[str, Any], Managed]:
        me = Manager(manager, "Apply", "", self.subresource)
        if not managed:
            # skipNonApplied: what is already there belongs to "before-first-apply".
            managed = self.update({}, live, {}, "before-first-apply", True)
        merged = merge(self.shape, _bare(live), _bare(config))
        last = managed.get(me)
        applied = _strip(self._keep(field_set(self.shape, _bare(config))))
        previous_time = last.time if last else None
        managed = {**managed, me: Owned(applied, self.api_version, previous_time)}
        if last:
            owned = set().union(*(o.paths for o in managed.values()))
            for path in sorted(last.paths - owned, key=len, reverse=True):
                if not any(len(p) > len(path) and fp.has_prefix(p, path) for p in owned):
                    remove(self.shape, merged, path)
        managed, *_ = self._update(live, merged, managed, me, force)
        if me in managed and (_bare(merged) != _bare(live) or last is None or last.paths != applied):
            managed[me].time = self.now()
        return merged, managed


def _bare(obj: Any) -> Any:
    """The object without metadata.managedFields, which is never compared."""
    if isinstance(obj, dict) and isinstance(obj.get("metadata"), dict) and "managedFields" in obj["metadata"]:
        obj = {**obj, "metadata": {k: v for k, v in obj["metadata"].items() if k != "managedFields"}}
    return obj


def _strip(paths: set[Path]) -> set[Path]:
    return {p for p in paths if p not in _STRIPPED and p[:2] != ("f:metadata", "f:managedFields")}


def _cap(managed: Managed) -> Managed:
    """capManagers: past 10 update managers, the oldest merge into "ancient-changes" per version."""
    updaters = sorted((w for w in managed if w.operation == "Update"), key=lambda w: (managed[w].time or "", w.manager))
    excess = len(updaters) - MAX_UPDATE_MANAGERS
    first_of_version: dict[str, Manager] = {}
    for who in updaters:
        if excess <= 0:
            break
        owned = managed[who]
        bucket = Manager("ancient-changes", "Update", owned.api_version, "")
        first = first_of_version.get(owned.api_version)
        if first is None:
            first_of_version[owned.api_version] = who
            continue
        if bucket not in managed:
            managed[bucket] = managed.pop(first)
        managed[bucket] = Owned(managed[bucket].paths | owned.paths, owned.api_version, owned.time)
        del managed[who]
        excess -= 1
    return managed
