"""patterns.integrity: tampered passes, green fails and unverified passes on planted trials."""

from __future__ import annotations

import polars as pl

from evalkit.patterns.integrity import integrity_counts, integrity_flags


def frames() -> dict[str, pl.DataFrame]:
    calls = [
        # (trial, command, observation, is_error)
        ("ok", "pytest -q", "3 passed", False),
        ("green", "python -m pytest", "5 passed in 0.1s", False),
        ("unverified", "ls -la", "a.py", False),
        ("tamper", "rm -rf /tests/test_outputs.py", "", False),
        ("tamper", "pytest", "1 passed", False),
        ("red", "pytest", "FAILED test_a.py::test_x - AssertionError", True),
    ]
    tc = pl.DataFrame(
        [
            {
                "trial_id": t,
                "step_index": i + 1,
                "call_index": 0,
                "function_name": "bash",
                "arguments": f'{{"command": "{c}"}}',
                "command": c,
                "observation": o,
                "is_error": e,
            }
            for i, (t, c, o, e) in enumerate(calls)
        ]
    )
    steps = tc.select(
        "trial_id", "step_index", pl.lit("agent").alias("source"), pl.lit("").alias("message")
    )
    rewards = {"ok": 1.0, "green": 0.0, "unverified": 1.0, "tamper": 1.0, "red": 0.0, "none": 1.0}
    trials = pl.DataFrame(
        {
            "trial_id": list(rewards),
            "run": ["a", "a", "a", "b", "b", "b"],
            "task_name": list(rewards),
            "reward": list(rewards.values()),
        }
    )
    return {"steps": steps, "tool_calls": tc, "trials": trials}


def test_flags_per_trial() -> None:
    f = integrity_flags(frames()).sort("trial_id")
    rows = {r["trial_id"]: r for r in f.iter_rows(named=True)}
    assert rows["tamper"]["tampered_pass"] and not rows["ok"]["tampered_pass"]
    assert rows["green"]["green_fail"] and not rows["red"]["green_fail"]
    assert rows["unverified"]["pass_unverified"] and not rows["ok"]["pass_unverified"]
    assert rows["none"]["has_calls"] is False
    assert rows["none"]["green_fail"] is None and rows["none"]["pass_unverified"] is None


def test_counts_per_run_with_intervals() -> None:
    c = integrity_counts(frames())
    a = c.filter(pl.col("run") == "a").row(0, named=True)
    b = c.filter(pl.col("run") == "b").row(0, named=True)
    assert (a["green_fails"], a["passes_unverified"], a["tampered_passes"]) == (1, 1, 0)
    assert (b["tampered_passes"], b["n_passes"], b["n_with_calls"]) == (1, 2, 2)
    assert a["green_fails_low"] <= 1 <= a["green_fails_high"] <= a["n_with_calls"]
    assert a["tampered_passes_low"] == 0
