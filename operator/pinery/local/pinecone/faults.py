"""Fault injection and request counters.

Rules say, per operation (the spec's operationId, or "*" for all), what to do to a share of
requests: answer an error status (429 carries Retry-After), delay the answer, or drop the
connection without an answer. A rule may be limited to its next `times` matches, which makes
"fail twice, then succeed" deterministic. Draws come from one seeded generator, so a run with
the same seed and the same request order injects the same faults.

Beside the counters, a bounded log keeps each request's operation, index, arrival and answer
times, status and Retry-After, so that a test can check when a client came back after a 429.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict, deque
from dataclasses import asdict, dataclass, field
from typing import Any

KINDS = ("status", "delay", "drop")
# Requests kept in the log (the oldest go first); a few MB at most.
LOG_SIZE = 20_000


@dataclass
class FaultRule:
    kind: str = "status"
    operation: str = "*"
    rate: float = 1.0
    status: int = 503
    retry_after: float | None = None
    seconds: float = 0.0
    times: int | None = None
    message: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"fault kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if not 0.0 <= float(self.rate) <= 1.0:
            raise ValueError(f"fault rate must be between 0 and 1, got {self.rate!r}")
        if self.kind == "status" and not 400 <= int(self.status) <= 599:
            raise ValueError(f"fault status must be a 4xx or 5xx code, got {self.status!r}")
        if self.kind == "status" and int(self.status) == 429 and self.retry_after is None:
            self.retry_after = 1.0
        if self.times is not None and int(self.times) < 0:
            raise ValueError(f"fault times must be >= 0, got {self.times!r}")

    @classmethod
    def parse(cls, raw: Any) -> FaultRule:
        if not isinstance(raw, dict):
            raise ValueError(f"a fault rule must be an object, got {raw!r}")
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(raw) - known)
        if unknown:
            raise ValueError(f"unknown fault rule field(s): {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        return cls(**raw)


@dataclass
class Decision:
    """What to do to one request: wait `delay` seconds, then answer `status`, drop, or go on."""

    delay: float = 0.0
    status: int | None = None
    retry_after: float | None = None
    message: str | None = None
    drop: bool = False
    rules: list[str] = field(default_factory=list)


class Faults:
    def __init__(self, seed: int = 0, rules: list[FaultRule] | None = None) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.rules: list[FaultRule] = list(rules or [])
        self.requests: Counter[str] = Counter()
        self.responses: dict[str, Counter[str]] = defaultdict(Counter)
        self.injected: Counter[str] = Counter()
        self.log: deque[dict[str, Any]] = deque(maxlen=LOG_SIZE)
        self.logged = 0  # requests logged since the last reset (the log keeps the last LOG_SIZE)

    def configure(self, doc: dict[str, Any]) -> None:
        """Replace the rules (and reseed when a seed is given)."""
        rules = [FaultRule.parse(r) for r in doc.get("rules", [])]
        if "seed" in doc:
            self.seed = int(doc["seed"])
            self.rng = random.Random(self.seed)
        self.rules = rules

    def add(self, rule: FaultRule) -> None:
        self.rules.append(rule)

    def describe(self) -> dict[str, Any]:
        return {"seed": self.seed, "rules": [asdict(r) for r in self.rules]}

    def decide(self, operation: str) -> Decision:
        decision = Decision()
        for rule in self.rules:
            if rule.operation not in ("*", operation) or rule.times == 0:
                continue
            if rule.rate < 1.0 and self.rng.random() >= rule.rate:
                continue
            if rule.times is not None:
                rule.times -= 1
            label = f"{rule.kind}:{rule.status if rule.kind == 'status' else rule.seconds if rule.kind == 'delay' else 'drop'}"
            decision.rules.append(label)
            self.injected[f"{operation} {label}"] += 1
            if rule.kind == "delay":
                decision.delay += float(rule.seconds)
                continue
            if rule.kind == "drop":
                decision.drop = True
            else:
                decision.status = int(rule.status)
                decision.retry_after = rule.retry_after
                decision.message = rule.message
            break  # the first terminal rule wins
        return decision

    def count_request(self, operation: str) -> None:
        self.requests[operation] += 1

    def count_response(self, operation: str, status: int) -> None:
        self.responses[operation][str(status)] += 1

    def record(self, operation: str, index: str | None, arrived: float, answered: float, status: int,
               retry_after: str | None = None, api_version: str | None = None) -> None:
        """Log one answered (or dropped: status 0) request; times are the emulator's wall clock;
        `api_version` is the version header as the client sent it."""
        self.logged += 1
        self.log.append({
            "seq": self.logged, "operation": operation, "index": index, "arrived": arrived,
            "answered": answered, "status": status, "retryAfter": _seconds(retry_after),
            "apiVersion": api_version,
        })

    def requests_since(self, seq: int = 0) -> dict[str, Any]:
        """Logged requests with a sequence number above `seq`, oldest first."""
        entries = [entry for entry in self.log if entry["seq"] > seq]
        return {"requests": entries, "logged": self.logged, "lost": max(0, self.logged - len(self.log) - seq)}

    def stats(self) -> dict[str, Any]:
        return {
            "requests": dict(self.requests),
            "responses": {op: dict(c) for op, c in self.responses.items()},
            "injected": dict(self.injected),
            "total": sum(self.requests.values()),
        }

    def reset_stats(self) -> None:
        self.requests.clear()
        self.responses.clear()
        self.injected.clear()
        self.log.clear()
        self.logged = 0


def _seconds(value: str | None) -> float | None:
    try:
        return float(value) if value else None
    except ValueError:  # an HTTP date: the emulator never sends one
        return None
