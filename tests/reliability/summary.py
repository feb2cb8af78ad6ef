"""Totals over a folder of reliability results (the JSON files the suites write):

    python -m tests.reliability.summary benchmarks/results/reliability

prints them and writes them to summary.json in that folder; exits 1 when any run had a violation,
or a chaos run a stall. Runs under load (a result named `...-one-core-busy`) are also totalled
apart, under `underLoad`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def summarise(results: list[dict[str, Any]]) -> dict[str, Any]:
    chaos = [r for r in results if r["suite"].startswith("chaos-")]
    pinecone = [r for r in results if r["suite"].startswith("pinecone-faults-")]
    training = [r for r in results if r["suite"].startswith("training-faults-")]
    out: dict[str, Any] = {}
    if chaos:
        out["operatorChaos"] = _chaos_totals(chaos)
        loaded = [r for r in chaos if r["suite"].endswith("-busy")]
        if loaded:
            out["operatorChaos"]["underLoad"] = _chaos_totals(loaded)
    if pinecone:
        out["pineconeFaults"] = {
            "runs": len(pinecone),
            "indexes": sum(r["indexes"] for r in pinecone),
            "requestsWithFaults": sum(r["requestsWithFaults"] for r in pinecone),
            "faultsInjected": sum(r["faultsInjected"] for r in pinecone),
            "throttled": sum(r["retryAfter"]["throttled"] for r in pinecone),
            "retriedAfterThrottle": sum(r["retryAfter"]["retriedAfterThrottle"] for r in pinecone),
            "retryAfterHonoured": all(r["retryAfter"]["honoured"] for r in pinecone),
            "extraCalls": sum(r["extraCalls"] for r in pinecone),
            "violations": sum(len(r["violations"]) for r in pinecone),
        }
    if training:
        runs = [run for r in training for run in r["runs"]]
        out["trainingFaults"] = {
            "runs": len(runs),
            "kills": sum(r["kills"] for r in training),
            "restarts": [run["restarts"] for run in runs],
            "resumedFrom": [run["resumedFrom"] for run in runs],
            "violations": sum(len(r["violations"]) for r in training),
        }
    return out


def _chaos_totals(chaos: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "runs": len(chaos),
        "seeds": sorted(r["seed"] for r in chaos),
        "kills": sum(r["kills"] for r in chaos),
        "lifecycles": sum(r["lifecycles"] for r in chaos),
        "violations": sum(len(r["violations"]) for r in chaos),
        "stalls": sum(len(r["stalls"]) for r in chaos),
        "chaosSeconds": round(sum(r["seconds"]["chaos"] for r in chaos), 1),
        # Results written before the backup lifecycles came have none.
        "backups": sum(r.get("backups", {}).get("objects", 0) + r.get("backups", {}).get("scheduled", 0) for r in chaos),
        "restores": sum(r.get("restores", {}).get("indexes", 0) for r in chaos),
    }


def main(argv: list[str]) -> int:
    folder = Path(argv[1] if len(argv) > 1 else "benchmarks/results/reliability")
    results = [json.loads(p.read_text()) for p in sorted(folder.glob("*.json")) if p.name != "summary.json"]
    summary = summarise(results)
    (folder / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    failed = any(part["violations"] for part in summary.values())
    return 1 if failed or summary.get("operatorChaos", {}).get("stalls") else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
