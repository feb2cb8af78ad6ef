"""Pinecone faults: VectorIndexes created, scaled, tagged and deleted while a fifth of the
emulator's answers are 429s (with Retry-After), 5xx, slow or dropped connections.

The same lifecycles run twice in one local mode: without faults (the baseline), then with the
seeded fault rules. From the emulator's request log (operation, index, arrival and answer
times, status, Retry-After) the suite checks that

- everything converges: every step reaches Ready and Synced, every index is deleted;
- retries stay bounded: the operator's calls per operation, against the baseline's, within
  `RETRY_BOUND`; each index created, configured and deleted exactly as often as without faults;
- Retry-After is honoured: after a 429, the same operation on the same index comes back no
  sooner than the Retry-After it carried;
- no transient fault turns into a terminal condition, and the API key appears nowhere.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from typing import Any

from pinery.local.cluster import LocalCluster
from pinery.local.kubeclient import KubeClient
from pinery.local.pinecone import EmulatorAdmin
from tests.reliability.chaos import vector_index
from tests.reliability.harness import Api, Driver, secret_leaks

NAMESPACE = "faults"
# With faults, an operation may take at most this many times the calls it takes without.
RETRY_BOUND = 2.5
# The emulator's clock and the log's rounding: a retry this much early still counts as honouring.
CLOCK_SLACK = 0.02
# Reasons of conditions that need a person: a transient fault must never end in one of them.
TERMINAL_REASONS = {"Unauthorized", "PaymentRequired", "QuotaExceeded", "Forbidden", "InvalidSpec", "InitializationFailed"}
CHANGING = ("create_index", "configure_index", "delete_index")


@dataclass(frozen=True)
class Profile:
    indexes: int  # VectorIndexes per run (half pod-based, half serverless)
    step_timeout: float
    rate: float = 0.2  # share of requests that get a fault


PROFILES = {
    "reduced": Profile(indexes=4, step_timeout=90),
    "full": Profile(indexes=40, step_timeout=180),
}


def fault_rules(rate: float) -> list[dict]:
    """Five kinds of fault drawn independently, each at the same rate, so that a request gets
    at least one with probability `rate`. Two Retry-Afters: one shorter than the SDK's own
    retry wait, one longer."""
    each = 1 - (1 - rate) ** (1 / 5)
    return [
        {"operation": "*", "kind": "delay", "seconds": 1.5, "rate": each},
        {"operation": "*", "kind": "status", "status": 429, "retry_after": 1, "rate": each / 2},
        {"operation": "*", "kind": "status", "status": 429, "retry_after": 4, "rate": each / 2},
        {"operation": "*", "kind": "status", "status": 503, "rate": each},
        {"operation": "*", "kind": "status", "status": 500, "rate": each},
        {"operation": "*", "kind": "drop", "rate": each},
    ]


def hasty(i: int) -> bool:
    """Every fourth object is deleted right after its last change, without waiting for it."""
    return i % 4 == 3


async def lifecycle(driver: Driver, name: str, pod: bool, wait_last: bool) -> None:
    """Create, scale (pod replicas) or retag, retag, delete: one create, two configure calls and
    one delete, each waited for (the last change perhaps not)."""
    await driver.api.create(vector_index(name, pod=pod, tags={"run": name}))
    await driver.synced(name)
    if pod:
        await driver.patch_spec("VectorIndex", name, {"pod": {"replicas": 2}})
    else:
        await driver.patch_spec("VectorIndex", name, {"tags": {"run": name, "stage": "scaled"}})
    await driver.synced(name)
    await driver.patch_spec("VectorIndex", name, {"tags": {"run": name, "stage": "tagged"}})
    if wait_last:
        await driver.synced(name)
    await driver.delete("VectorIndex", name)


async def run_lifecycles(driver: Driver, prefix: str, count: int, rng: random.Random) -> float:
    async def one(i: int) -> None:
        await asyncio.sleep(rng.uniform(0, 2))
        await lifecycle(driver, f"{prefix}-{i}", pod=i % 2 == 1, wait_last=not hasty(i))

    started = time.monotonic()
    await asyncio.gather(*(one(i) for i in range(count)))
    return time.monotonic() - started


def calls(entries: list[dict], prefix: str) -> dict[str, int]:
    """The operator's requests per operation for the indexes named `prefix-*`."""
    counts: dict[str, int] = {}
    for entry in entries:
        if (entry["index"] or "").startswith(prefix + "-"):
            counts[entry["operation"]] = counts.get(entry["operation"], 0) + 1
    return dict(sorted(counts.items()))


def per_index(entries: list[dict], operation: str, *, succeeded: bool) -> dict[str, int]:
    counts: dict[str, int] = {}
    for entry in entries:
        if entry["operation"] == operation and (200 <= entry["status"] < 300) == succeeded:
            counts[entry["index"]] = counts.get(entry["index"], 0) + 1
    return counts


def retry_after_check(entries: list[dict]) -> tuple[dict[str, Any], list[str]]:
    """After each 429, when the same operation on the same index came back: the numbers, and a
    line naming each request that came back before the Retry-After it was given."""
    last: dict[tuple[str, str | None], dict] = {}
    throttled, retried, early, margins = 0, 0, [], []
    for entry in sorted(entries, key=lambda e: e["arrived"]):
        key = (entry["operation"], entry["index"])
        previous = last.get(key)
        if previous is not None and previous["status"] == 429 and previous["retryAfter"]:
            retried += 1
            waited = entry["arrived"] - previous["answered"]
            margins.append(waited - previous["retryAfter"])
            if waited + CLOCK_SLACK < previous["retryAfter"]:
                early.append(f"{key[0]} {key[1]}: came back {waited:.2f}s after a 429 with Retry-After {previous['retryAfter']:g}")
        if entry["status"] == 429:
            throttled += 1
        last[key] = entry
    numbers = {"throttled": throttled, "retriedAfterThrottle": retried, "early": len(early), "honoured": not early,
               "shortestWaitBeyondRetryAfter": round(min(margins), 3) if margins else None}
    return numbers, early


def bounded_violations(calm: dict[str, int], storm: dict[str, int], count: int) -> list[str]:
    out = []
    for operation in sorted(set(calm) | set(storm)):
        allowed = RETRY_BOUND * calm.get(operation, 0) + count  # a little room for rare operations
        if storm.get(operation, 0) > allowed:
            out.append(f"{operation}: {storm[operation]} calls with faults, more than {RETRY_BOUND}x the {calm.get(operation, 0)} without")
    return out


def exactness_violations(entries: list[dict], prefix: str, count: int) -> list[str]:
    """Each index created once, configured twice (at most, when deleted in haste) and deleted
    once, with faults as without."""
    out = []
    for operation in CHANGING:
        done = per_index([e for e in entries if (e["index"] or "").startswith(prefix + "-")], operation, succeeded=True)
        for i in range(count):
            name, times = f"{prefix}-{i}", done.get(f"{prefix}-{i}", 0)
            allowed = {2} if operation == "configure_index" and not hasty(i) else {1, 2} if operation == "configure_index" else {1}
            if times not in allowed:
                out.append(f"{name}: {operation} succeeded {times} times, expected {' or '.join(map(str, sorted(allowed)))}")
    return out


def faulted_share(entries: list[dict]) -> float:
    """The share of requests answered with a fault or slowly, from the log."""
    faulted = [e for e in entries if e["status"] in (0, 429) or e["status"] >= 500 or e["answered"] - e["arrived"] >= 1.4]
    return round(len(faulted) / len(entries), 3) if entries else 0.0


async def run_faults(cluster: LocalCluster, profile: Profile, seed: int) -> dict[str, Any]:
    client = KubeClient.from_kubeconfig(cluster.kubeconfig)
    api = Api(client, NAMESPACE)
    admin = EmulatorAdmin(cluster.pinecone_url)
    driver = Driver(api, profile.step_timeout)
    rng = random.Random(seed)
    try:
        await api.create_namespace()
        await asyncio.to_thread(admin.reset_stats)
        driver.say("baseline: no faults")
        calm_seconds = await run_lifecycles(driver, "calm", profile.indexes, random.Random(rng.random()))
        rules = fault_rules(profile.rate)
        await asyncio.to_thread(admin.set_faults, rules, seed)
        driver.say(f"with faults: {rules}")
        storm_seconds = await run_lifecycles(driver, "storm", profile.indexes, random.Random(rng.random()))
        stats = await asyncio.to_thread(admin.stats)
        await asyncio.to_thread(admin.clear_faults)
        entries = await asyncio.to_thread(admin.requests)
        events = await api.list("Event")
    finally:
        await client.close()

    calm, storm = calls(entries, "calm"), calls(entries, "storm")
    storm_entries = [e for e in entries if (e["index"] or "").startswith("storm-")]
    retry_after, early = retry_after_check(storm_entries)
    terminal = sorted({f"{e['involvedObject']['name']}: {e['reason']}" for e in events if e.get("reason") in TERMINAL_REASONS})
    violations = [*driver.stalls]
    violations += bounded_violations(calm, storm, profile.indexes)
    violations += exactness_violations(entries, "calm", profile.indexes)
    violations += exactness_violations(entries, "storm", profile.indexes)
    violations += early
    violations += [f"a transient fault became terminal: {t}" for t in terminal]
    log = (cluster.state_dir / "operator.log").read_text(errors="replace")
    violations += [f"the API key appears in {where}" for where in secret_leaks(cluster.state.api_key, {"the operator's log": log, "Events": repr(events)})]
    if stats["total"] > len(entries):
        violations.append(f"the request log lost {stats['total'] - len(entries)} requests")
    return {
        "seed": seed,
        "indexes": profile.indexes,
        "faultRate": profile.rate,
        "faultRules": rules,
        "requestsWithFaults": len(storm_entries),
        "faultedShare": faulted_share(storm_entries),
        "faultsInjected": sum(stats["injected"].values()),
        "slowed": sum(v for k, v in stats["injected"].items() if "delay" in k),
        "throttled": retry_after["throttled"],
        "retryAfter": retry_after,
        "callsWithoutFaults": calm,
        "callsWithFaults": storm,
        "ratio": {op: round(storm.get(op, 0) / calm[op], 2) for op in calm if calm[op]},
        "extraCalls": sum(storm.values()) - sum(calm.values()),
        "retryBound": RETRY_BOUND,
        "seconds": {"withoutFaults": round(calm_seconds, 1), "withFaults": round(storm_seconds, 1)},
        "violations": violations,
    }
