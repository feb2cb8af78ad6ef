"""What must hold once the chaos is over: pure checks of one snapshot of the world against what
each lifecycle expects. Each broken rule is one line naming the object and what is wrong.

- every VectorIndex that should live is Ready and Synced at its current generation, and its
  index matches the spec (tags, protection, replicas, pod type); every deleted one is gone;
- the emulator holds exactly the indexes of live VectorIndexes plus those kept on deletion;
  no index was created twice; no index that policy, protection or ownership keeps was deleted;
- every FSDPJob that should live ended as its script dictates, with exactly the restarts its
  failures caused; every pod and Service belongs to a live job; no pod process outlives its pod;
- the API key appears nowhere in the logs, Events and statuses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pinery.vectorindex.ownership import ownership_tags

VI, JOB = "VectorIndex", "FSDPJob"
LABEL_JOB = "pinery.dev/job-name"


@dataclass
class Expect:
    """How one lifecycle must end."""

    kind: str
    name: str
    live: bool = True
    # VectorIndex: the index, and on deletion whether it must stay (True), be gone (False) or
    # either (None: the lifecycle could not know, e.g. deleted before the operator acted).
    index: str | None = None
    kept: bool | None = None
    tags: dict[str, str] = field(default_factory=dict)
    protection: bool = False
    replicas: int | None = None
    pod_type: str | None = None
    reason: str | None = None  # a live object that must stay refused (e.g. NotOwned)
    # FSDPJob
    phase: str | None = None
    restarts: int | None = None
    num_nodes: int = 2
    # The attempts the finished job's nodes may show (all the same one); None: `restarts` (each
    # restart starts one attempt). A resume starts one more.
    attempts: tuple[int, ...] | None = None


@dataclass
class World:
    """One snapshot: the API objects of the namespace, the emulator's indexes and request log,
    the pod processes still alive, and where the API key was found."""

    namespace: str
    cluster_name: str
    vectorindexes: dict[str, dict]
    jobs: dict[str, dict]
    pods: list[dict]
    services: list[dict]
    indexes: dict[str, dict]
    requests: list[dict]
    stray_processes: list[int] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)


def _condition(obj: dict, kind: str) -> dict:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == kind), {})


def _succeeded(entry: dict) -> bool:
    return 200 <= entry["status"] < 300


def vectorindex_violations(world: World, expect: Expect) -> list[str]:
    name, obj = expect.name, world.vectorindexes.get(expect.name)
    where = f"VectorIndex {name}"
    if not expect.live:
        out = [f"{where}: still exists after deletion (finalizers {obj['metadata'].get('finalizers')})"] if obj else []
        index = world.indexes.get(expect.index or name)
        if expect.kept is False and index is not None:
            out.append(f"{where}: index {expect.index} was to be deleted and still exists")
        return out
    if obj is None:
        return [f"{where}: missing"]
    status, meta = obj.get("status") or {}, obj["metadata"]
    ready, synced = _condition(obj, "Ready"), _condition(obj, "Synced")
    if expect.reason is not None:
        if ready.get("reason") != expect.reason:
            return [f"{where}: Ready reason is {ready.get('reason')!r}, expected {expect.reason!r}"]
        return []
    out = []
    if (ready.get("status"), synced.get("status")) != ("True", "True"):
        out.append(f"{where}: not converged: Ready={ready.get('status')} ({ready.get('reason')}), "
                   f"Synced={synced.get('status')} ({synced.get('reason')}: {synced.get('message')})")
    if status.get("observedGeneration") != meta.get("generation"):
        out.append(f"{where}: observedGeneration {status.get('observedGeneration')} != generation {meta.get('generation')}")
    index = world.indexes.get(expect.index or name)
    if index is None:
        return out + [f"{where}: its index {expect.index} does not exist"]
    want_tags = {**expect.tags, **ownership_tags(world.cluster_name, world.namespace, name)}
    if (index.get("tags") or {}) != want_tags:
        out.append(f"{where}: index tags {index.get('tags')} != {want_tags}")
    protection = "enabled" if expect.protection else "disabled"
    if index.get("deletion_protection") != protection:
        out.append(f"{where}: index deletion protection {index.get('deletion_protection')} != {protection}")
    pod = index.get("deployment") or {}  # a 2026-07 IndexModel (pinery.vectorindex.observed)
    if expect.replicas is not None and pod.get("replicas") != expect.replicas:
        out.append(f"{where}: index replicas {pod.get('replicas')} != {expect.replicas}")
    if expect.pod_type is not None and pod.get("pod_type") != expect.pod_type:
        out.append(f"{where}: index pod type {pod.get('pod_type')} != {expect.pod_type}")
    return out


def job_violations(world: World, expect: Expect) -> list[str]:
    name, job = expect.name, world.jobs.get(expect.name)
    where = f"FSDPJob {name}"
    pods = [p for p in world.pods if (p["metadata"].get("labels") or {}).get(LABEL_JOB) == name]
    if not expect.live:
        out = [f"{where}: still exists after deletion"] if job else []
        return out + [f"{where}: pod {p['metadata']['name']} outlived the job" for p in pods]
    if job is None:
        return [f"{where}: missing"]
    status = job.get("status") or {}
    out = []
    if status.get("restarts") != expect.restarts:
        out.append(f"{where}: restarts {status.get('restarts')}, expected exactly {expect.restarts}")
    if status.get("phase") != expect.phase:
        return [f"{where}: phase {status.get('phase')}, expected {expect.phase}", *out]
    running = [p["metadata"]["name"] for p in pods if (p.get("status") or {}).get("phase") in ("Pending", "Running")]
    if running and status.get("phase") in ("Succeeded", "Failed"):
        out.append(f"{where}: {status.get('phase')} but pods still run: {running}")
    if expect.phase == "Succeeded":
        nodes = status.get("nodes") or []
        allowed = expect.attempts if expect.attempts is not None else (expect.restarts,)
        attempts = sorted({n.get("attempt") for n in nodes})
        if len(nodes) != expect.num_nodes or len(attempts) != 1 or attempts[0] not in allowed:
            out.append(f"{where}: nodes {[(n.get('index'), n.get('attempt'), n.get('exitCode')) for n in nodes]} "
                       f"do not all show one attempt of {list(allowed)}")
        labels = sorted((p["metadata"].get("labels") or {}).get("pinery.dev/attempt", "?") for p in pods)
        if len(set(labels)) != 1 or len(labels) != expect.num_nodes or labels[0] not in {str(a) for a in allowed}:
            out.append(f"{where}: pods' attempts {labels}, expected {expect.num_nodes} of one attempt of {list(allowed)}")
    return out


def orphan_violations(world: World) -> list[str]:
    """Pods and Services of FSDPJobs must be owned by a live job (by uid)."""
    live = {j["metadata"]["uid"] for j in world.jobs.values()}
    out = []
    for obj in [*world.pods, *world.services]:
        meta = obj["metadata"]
        if LABEL_JOB not in (meta.get("labels") or {}):
            continue
        owners = {o.get("uid") for o in meta.get("ownerReferences") or [] if o.get("kind") == JOB}
        if not owners & live:
            out.append(f"{obj.get('kind', 'object')} {meta['name']}: orphan (owners {sorted(owners)} are gone)")
    return out


def index_violations(world: World, expects: list[Expect]) -> list[str]:
    """Exactly the expected indexes exist; none was created twice; none that must stay was deleted."""
    expected = {e.index or e.name for e in expects if e.kind == VI and (e.live or e.kept)}
    maybe = {e.index or e.name for e in expects if e.kind == VI and not e.live and e.kept is None}
    out = [f"index {name}: exists, but no VectorIndex should have it (a double or an orphan)"
           for name in sorted(set(world.indexes) - expected - maybe)]
    created: dict[str, int] = {}
    deleted: set[str] = set()
    for entry in world.requests:
        if entry["operation"] == "create_index" and _succeeded(entry):
            created[entry["index"]] = created.get(entry["index"], 0) + 1
        if entry["operation"] == "delete_index" and _succeeded(entry):
            deleted.add(entry["index"])
    out += [f"index {name}: created {count} times" for name, count in sorted(created.items()) if count > 1]
    for e in expects:
        name = e.index or e.name
        if e.kind != VI or not (e.live or e.kept):
            continue
        if name in deleted:
            out.append(f"index {name}: deleted, but {'its VectorIndex lives' if e.live else 'policy, protection or ownership keeps it'}")
        elif not e.live and name in created and name not in world.indexes:
            out.append(f"index {name}: was created, must be kept, and is gone")
    return out


def violations(world: World, expects: list[Expect]) -> list[str]:
    out: list[str] = []
    for expect in expects:
        out += vectorindex_violations(world, expect) if expect.kind == VI else job_violations(world, expect)
    out += index_violations(world, expects)
    out += orphan_violations(world)
    if world.stray_processes:
        out.append(f"pod processes outlived their pods: {world.stray_processes}")
    out += [f"the API key appears in {where}" for where in world.leaks]
    return out


def summary(expects: list[Expect]) -> dict[str, Any]:
    """Lifecycles by kind and ending, for the result."""
    counts: dict[str, int] = {}
    for e in expects:
        if e.kind == VI:
            end = "live" if e.live else {True: "deleted, index kept", False: "deleted with its index", None: "deleted"}[e.kept]
        else:
            end = e.phase if e.live else "deleted"
        key = f"{e.kind}: {end}"
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))
