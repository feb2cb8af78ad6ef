"""The reliability summary: totals, runs under load apart, and a failing exit for stalls too."""

import json

from tests.reliability.summary import main, summarise


def chaos(seed, label="", stalls=(), violations=()):
    suite = f"chaos-full-seed{seed}" + (f"-{label}" if label else "")
    return {"suite": suite, "seed": seed, "kills": 10, "lifecycles": 225, "violations": list(violations),
            "stalls": list(stalls), "seconds": {"chaos": 300.0, "convergence": 0.2}}


def test_runs_under_load_are_totalled_apart_too():
    out = summarise([chaos(1), chaos(1, "one-core-busy"), chaos(42, "one-core-busy")])["operatorChaos"]
    assert (out["runs"], out["seeds"], out["kills"]) == (3, [1, 1, 42], 30)
    assert (out["underLoad"]["runs"], out["underLoad"]["seeds"]) == (2, [1, 42])


def test_a_stall_or_a_violation_fails_the_summary(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps(chaos(1)))
    assert main(["summary", str(tmp_path)]) == 0
    (tmp_path / "b.json").write_text(json.dumps(chaos(2, stalls=[{"step": "x"}])))
    assert main(["summary", str(tmp_path)]) == 1
    (tmp_path / "b.json").write_text(json.dumps(chaos(2, violations=["y"])))
    assert main(["summary", str(tmp_path)]) == 1
    assert json.loads((tmp_path / "summary.json").read_text())["operatorChaos"]["violations"] == 1


def test_backups_and_restores_are_totalled_and_older_results_count_none():
    newer = {**chaos(2), "backups": {"objects": 75, "scheduled": 3}, "restores": {"indexes": 15}}
    out = summarise([chaos(1), newer])["operatorChaos"]
    assert (out["backups"], out["restores"]) == (78, 15)
