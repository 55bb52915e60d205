"""tables.leaderboard: runs of another benchmark in the same folder are left out, named."""

from __future__ import annotations

import polars as pl

from evalkit.tables.leaderboard import runs_sharing_tasks


def test_runs_without_shared_tasks_are_left_out_least_overlap_first() -> None:
    rows = [("a", t) for t in "wxyz"] + [("b", t) for t in "wxy"] + [("c", t) for t in "xy"]
    rows += [("other", t) for t in "pq"]
    df = pl.DataFrame(rows, schema=["run", "task_name"], orient="row")
    assert runs_sharing_tasks(df, "run") == (["a", "b", "c"], ["other"])
    assert runs_sharing_tasks(df.filter(pl.col("run") != "other"), "run") == (["a", "b", "c"], [])
