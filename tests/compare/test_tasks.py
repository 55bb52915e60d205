"""compare() on hand-built trial frames: the per-task table, K > 1 rules, unknown cost,
checksums, incomplete trials, transitions, buckets and gate inputs, plus properties."""

from __future__ import annotations

from itertools import chain

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.compare import compare
from evalkit.compare.tasks import modal_outcome, outcome_mix


def frame(rows: list[tuple]) -> pl.DataFrame:
    """rows: (run, task, attempt, reward, outcome, cost, checksum)."""
    return pl.DataFrame(
        rows,
        schema={
            "run": pl.String,
            "task_name": pl.String,
            "attempt": pl.Int64,
            "reward": pl.Float64,
            "outcome": pl.String,
            "cost_usd": pl.Float64,
            "task_checksum": pl.String,
        },
        orient="row",
    ).with_columns(
        (pl.col("run") + "/" + pl.col("task_name") + "/" + pl.col("attempt").cast(pl.String)).alias(
            "trial_id"
        ),
        pl.col("run").alias("job_name"),
    )


K1 = frame(
    [
        ("A", "t1", 1, 1.0, "pass", 0.10, "c1"),
        ("B", "t1", 1, 1.0, "pass", 0.20, "c1"),  # both pass
        ("A", "t2", 1, 0.0, "fail", 0.10, "c2"),
        ("B", "t2", 1, 1.0, "pass", None, "c2"),  # fixed; B cost unknown
        ("A", "t3", 1, 1.0, "pass", 0.10, "c3"),
        ("B", "t3", 1, None, "timeout", 0.30, "c3"),  # broken
        ("A", "t4", 1, 0.5, "partial", 0.10, "c4"),
        ("B", "t4", 1, 0.0, "fail", 0.10, "c4"),  # both not pass
        ("A", "t5", 1, 1.0, "pass", 0.10, "old"),
        ("B", "t5", 1, 0.0, "fail", 0.10, "new"),  # task changed: not comparable
        ("A", "t6", 1, 1.0, "pass", 0.10, "c6"),  # only in A
        ("B", "t7", 1, 0.0, "fail", 0.10, "c7"),  # only in B
    ]
)


def row(cmp, task: str) -> dict:
    return cmp.tasks.filter(pl.col("task_name") == task).row(0, named=True)


def test_one_attempt_table_buckets_and_deltas():
    c = compare(K1, "A", "B")
    assert c.tasks.height == 7
    assert {r["task_name"]: r["side"] for r in c.tasks.iter_rows(named=True)} == {
        "t1": "both",
        "t2": "both",
        "t3": "both",
        "t4": "both",
        "t5": "both",
        "t6": "a_only",
        "t7": "b_only",
    }
    assert c.buckets == {
        "both_pass": ["t1"],
        "both_not_pass": ["t4"],
        "only_a": ["t3"],
        "only_b": ["t2"],
    }
    assert (c.fixed, c.broken, c.only_in_a, c.only_in_b) == (["t2"], ["t3"], ["t6"], ["t7"])
    assert c.not_comparable == {"t5": "task changed (checksum differs)"}
    assert c.paired_tasks == ["t1", "t2", "t3", "t4"]
    t1, t2, t3, t4 = (row(c, t) for t in ("t1", "t2", "t3", "t4"))
    assert t1["d_cost_usd"] == pytest.approx(0.10)
    assert t2["d_cost_usd"] is None and t2["cost_usd_b"] is None  # never 0-filled
    assert t3["d_reward"] == pytest.approx(-1.0)  # null reward counts as 0
    assert t4["d_reward"] == pytest.approx(-0.5)
    assert row(c, "t5")["d_reward"] is None and row(c, "t6")["d_reward"] is None
    assert row(c, "t5")["checksum_status"] == "changed"
    # transitions over comparable tasks
    tr = {(r["outcome_a"], r["outcome_b"]): r["tasks"] for r in c.transitions.iter_rows(named=True)}
    assert tr == {
        ("pass", "pass"): ["t1"],
        ("pass", "timeout"): ["t3"],
        ("partial", "fail"): ["t4"],
        ("fail", "pass"): ["t2"],
    }
    m = c.transition_matrix()
    assert m.columns == ["A \\ B", "pass", "partial", "fail", "timeout"]  # square: A ∪ B outcomes
    assert m.filter(pl.col("A \\ B") == "pass").row(0) == ("pass", 1, 0, 0, 1)
    # gate inputs: wins 1 (t2), losses 1 (t3), A solved t1 + t3 = 2 of 4 paired tasks
    g = c.gate()
    assert (g.wins, g.losses, g.a_solved, g.n_tasks) == (1, 1, 2, 4)
    assert g.verdict == "Don't ship"  # rho = 1/2 > 0.10 and net = 1 - 2 < 0


def test_paired_summary_is_over_comparable_tasks_only():
    c = compare(K1, "A", "B")
    s = c.side_summary(paired=True)
    assert s["a"]["n_tasks"] == s["b"]["n_tasks"] == 4
    assert s["a"]["mean_reward"] == pytest.approx((1 + 0 + 1 + 0.5) / 4)
    assert s["b"]["mean_reward"] == pytest.approx((1 + 1 + 0 + 0) / 4)
    assert s["a"]["pass_rate"] == pytest.approx(0.5) and s["b"]["pass_rate"] == pytest.approx(0.5)
    assert s["b"]["timeout_rate"] == pytest.approx(0.25)
    assert s["a"]["cost_per_pass"] == pytest.approx(0.40 / 2)
    assert s["b"]["cost_per_pass"] is None  # one B cost unknown: no invented partial cost
    own = c.side_summary(paired=False)
    assert own["a"]["n_tasks"] == 6 and own["b"]["n_tasks"] == 6


def test_checksums_ignore_compares_changed_tasks():
    c = compare(K1, "A", "B", checksums="ignore")
    assert "t5" in c.paired_tasks and c.buckets["only_a"] == ["t3", "t5"]
    assert row(c, "t5")["checksum_status"] == "changed"
    with pytest.raises(ValueError):
        compare(K1, "A", "B", checksums="nope")


KN = frame(
    [
        # t1: A 1 of 2 (tie: not a majority pass), B 2 of 3 -> fixed
        ("A", "t1", 1, 1.0, "pass", 1.0, "c"),
        ("A", "t1", 2, 0.0, "fail", 1.0, "c"),
        ("B", "t1", 1, 1.0, "pass", 1.0, "c"),
        ("B", "t1", 2, 0.0, "fail", 1.0, "c"),
        ("B", "t1", 3, 1.0, "pass", 1.0, "c"),
        # t2: A 3 of 3, B 1 of 3 -> broken; B has an incomplete 4th trial (not an attempt)
        ("A", "t2", 1, 1.0, "pass", 1.0, "d"),
        ("A", "t2", 2, 1.0, "pass", 1.0, "d"),
        ("A", "t2", 3, 1.0, "pass", 1.0, "d"),
        ("B", "t2", 1, 1.0, "pass", 2.0, "d"),
        ("B", "t2", 2, 0.0, "error", 2.0, "d"),
        ("B", "t2", 3, 0.0, "timeout", 2.0, "d"),
        ("B", "t2", 4, None, "incomplete", None, None),
        # t3: only incomplete trials on B -> not comparable
        ("A", "t3", 1, 0.0, "fail", 1.0, "e"),
        ("B", "t3", 1, None, "incomplete", None, None),
    ]
)


def test_many_attempts_majority_and_modal_tie_rules():
    c = compare(KN, "A", "B")
    t1, t2, t3 = (row(c, t) for t in ("t1", "t2", "t3"))
    assert (t1["attempts_a"], t1["n_pass_a"], t1["pass_majority_a"]) == (2, 1, False)
    assert t1["outcome_a"] == "fail"  # 1 pass, 1 fail: the tie goes to the worse outcome
    assert t1["outcomes_a"] == "pass 1, fail 1"
    assert (t1["attempts_b"], t1["n_pass_b"], t1["pass_majority_b"]) == (3, 2, True)
    assert t1["bucket"] == "only_b"
    assert (t2["n_trials_b"], t2["attempts_b"], t2["n_incomplete_b"]) == (4, 3, 1)
    assert t2["pass_rate_b"] == pytest.approx(1 / 3)
    assert t2["outcome_b"] == "error"  # pass, error, timeout: 3-way tie -> the last in the order
    assert t2["timeout_rate_b"] == pytest.approx(1 / 3)
    assert t2["cost_usd_b"] == pytest.approx(2.0)  # the incomplete trial is not an attempt
    assert t2["bucket"] == "only_a"
    assert t3["comparable"] is False and t3["reason"] == "no finished attempt in B"
    g = c.gate()
    assert (g.wins, g.losses, g.a_solved) == (1, 1, 1)
    s = c.side_summary()
    assert (s["a"]["attempts_min"], s["a"]["attempts_max"]) == (2, 3)
    assert s["b"]["pass_rate"] == pytest.approx((2 / 3 + 1 / 3) / 2)  # task-weighted
    assert s["b"]["cost_per_pass"] == pytest.approx((3.0 + 6.0) / 3)


def test_outcome_counts_use_all_trials():
    oc = {
        r["outcome"]: (r["a"], r["b"], r["diff"])
        for r in compare(KN, "A", "B").outcome_counts().iter_rows(named=True)
    }
    assert oc["pass"] == (4, 3, -1)
    assert oc["incomplete"] == (0, 2, 2)


def test_frame_without_outcome_or_optional_columns():
    df = pl.DataFrame(
        {
            "run": ["x", "y", "x", "y"],
            "task_name": ["a", "a", "b", "b"],
            "reward": [1.0, 0.5, None, 1.0],
        }
    )
    c = compare(df, "x", "y")
    assert row(c, "a")["outcome_a"] == "pass" and row(c, "a")["outcome_b"] == "partial"
    assert row(c, "b")["outcome_a"] == "no-reward"
    assert c.fixed == ["b"] and c.broken == ["a"]
    assert row(c, "a")["checksum_status"] == "unknown" and row(c, "a")["comparable"]


def test_side_resolution_errors():
    with pytest.raises(KeyError, match="no run or job"):
        compare(K1, "A", "nope")
    with pytest.raises(ValueError, match="share"):
        compare(K1, "A", "A")
    with pytest.raises(TypeError):
        compare(42, "A", "B")
    with pytest.raises(ValueError, match="task_name"):
        compare(pl.DataFrame({"run": ["A"], "reward": [1.0]}), "A", "A")


def test_side_by_list_of_jobs():
    df = K1.with_columns(pl.col("run").alias("job_name"))
    c = compare(df.with_columns(pl.lit("r").alias("run")), ["A"], ["B"])
    assert c.a == "A" and c.b == "B" and c.a_kind == "job"


def test_modal_and_mix_helpers():
    assert modal_outcome([]) == "incomplete"
    assert modal_outcome(["pass", "pass", "fail"]) == "pass"
    assert modal_outcome(["pass", "partial"]) == "partial"
    assert outcome_mix(["fail", "pass", "fail"]) == "fail 2, pass 1"


# --- properties ---------------------------------------------------------------------------

trial = st.tuples(
    st.sampled_from(["A", "B"]),
    st.sampled_from(["t1", "t2", "t3", "t4", "t5"]),
    st.sampled_from([None, 0.0, 0.5, 1.0]),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(trial, min_size=2, max_size=40))
def test_properties_of_the_table(rows):
    if {r[0] for r in rows} != {"A", "B"}:
        return
    recs = []
    count: dict[tuple[str, str], int] = {}
    for run, task, reward in rows:
        count[(run, task)] = count.get((run, task), 0) + 1
        recs.append((run, task, count[(run, task)], reward, None, None, None))
    df = frame(recs).drop("outcome")
    c = compare(df, "A", "B")
    t = c.tasks
    # one row per task of A ∪ B; attempts add up to the trials of each side
    assert t.height == len({r[1] for r in rows})
    assert int(t["n_trials_a"].sum()) == sum(1 for r in rows if r[0] == "A")
    assert int(t["n_trials_b"].sum()) == sum(1 for r in rows if r[0] == "B")
    # the four buckets partition the comparable tasks; wins / losses are the only_* buckets
    b = c.buckets
    assert sorted(chain.from_iterable(b.values())) == c.paired_tasks
    g = c.gate()
    assert (g.wins, g.losses) == (len(b["only_b"]), len(b["only_a"]))
    assert g.a_solved == len(b["both_pass"]) + len(b["only_a"])
    # transitions count every comparable task once
    assert int(c.transitions["n"].sum()) == len(c.paired_tasks)
    # paired mean reward delta = mean of per-task deltas
    s = c.side_summary()
    if c.paired_tasks:
        d = t.filter(pl.col("comparable"))["d_reward"].mean()
        assert s["b"]["mean_reward"] - s["a"]["mean_reward"] == pytest.approx(d)


def test_trials_without_a_task_name_are_never_paired():
    df = pl.DataFrame(
        {
            "run": ["x", "y", "x", "y"],
            "task_name": [None, None, "t", "t"],
            "reward": [1.0, 0.0, 1.0, 1.0],
        },
        schema_overrides={"task_name": pl.String},
    )
    c = compare(df, "x", "y")
    assert c.paired_tasks == ["t"] and c.only_in_a == [] and c.only_in_b == []
    assert c.not_comparable == {
        "(unknown task)": "task name unknown (trials without a task id are never paired)"
    }
    assert c.tasks.height == 3 and c.to_json()["pairedTasks"] == 1


def test_loosely_typed_frames():
    df = pl.DataFrame(
        {
            "run": ["x", "y"],
            "task_name": ["t", "t"],
            "reward": [0, 1],
            "exception_type": [None, None],
            "cost_usd": [None, None],
        }
    )
    c = compare(df, "x", "y")
    assert c.fixed == ["t"] and row(c, "t")["d_cost_usd"] is None
