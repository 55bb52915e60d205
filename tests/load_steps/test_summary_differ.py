"""trial_summary's query-free check (frames._totals_differ) against the Polars rule
(frames.metrics_differ_expr) it stands for."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.load.steps.frames import _totals_differ, metrics_differ_expr, trial_summary

TOKENS = [None, 0, 7, 100, 2**40, 2**53, 2**53 + 1, 10**30]
COSTS = [None, 0.0, 1e-12, 0.25, 0.25 + 1e-7, 0.2500001, 1.5, 1e30]
FM = {"fm_prompt": TOKENS, "fm_completion": TOKENS, "fm_cached": TOKENS, "fm_cost": COSTS}
RESULT = {
    "n_input_tokens": TOKENS, "n_output_tokens": TOKENS, "n_cache_tokens": TOKENS,
    "cost_usd": COSTS,
}  # fmt: skip


def _col(name: str, values: list) -> pl.Series:
    if name.startswith("fm_"):
        return pl.Series(name, values, pl.Float64)
    if name == "cost_usd":
        return pl.Series(name, values, pl.Float64)
    return pl.Series(name, [v if v is None or v < 2**63 else None for v in values], pl.Int64)


row = st.fixed_dictionaries({k: st.sampled_from(v) for k, v in {**FM, **RESULT}.items()})


@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(row, min_size=1, max_size=8),
    keep=st.lists(st.booleans(), min_size=8, max_size=8),
    drop=st.sets(st.sampled_from(sorted(RESULT))),
)
def test_query_free_check_is_the_polars_rule(rows: list[dict], keep: list[bool], drop: set) -> None:
    ids = [f"t{i}" for i in range(len(rows))]
    trials = pl.DataFrame(
        [pl.Series("trial_id", ids)]
        + [_col(c, [r[c] for r in rows]) for c in RESULT if c not in drop]
    )
    picked = [i for i in range(len(rows)) if keep[i]] or [0]
    index = pl.DataFrame(
        [pl.Series("trial_id", [ids[i] for i in picked])]
        + [_col(c, [rows[i][c] for i in picked]) for c in FM]
        + [
            pl.Series(c, [1] * len(picked), pl.Int64)
            for c in ("n_steps", "n_tool_calls", "n_turns")
        ]
    )
    got = _totals_differ(index, trials)
    assert got is not None  # the index rows are the trials' rows in order
    tok = trials.with_columns(pl.lit(None, pl.Float64).alias(c) for c in drop)  # unknown
    want = index.join(tok, on="trial_id", how="left").select(metrics_differ_expr().any()).item()
    assert got == want
    summary = trial_summary(index, trials)
    assert (summary["metrics_mismatch"].null_count() < summary.height) == want


def test_rows_in_another_order_are_joined() -> None:
    trials = pl.DataFrame({"trial_id": ["a", "b"], "n_input_tokens": [5, 6]})
    index = pl.DataFrame(
        {
            "trial_id": ["b", "a"],
            "n_steps": [1, 1],
            "n_tool_calls": [0, 0],
            "n_turns": [1, 1],
            "fm_prompt": [6.0, 4.0],
            "fm_completion": [None, None],
            "fm_cached": [None, None],
            "fm_cost": [None, None],
        },
    )
    assert _totals_differ(index, trials) is None
    s = trial_summary(index, trials)
    assert s["metrics_mismatch"].to_list() == [None, "prompt_tokens: atif 4 vs result 5"]
