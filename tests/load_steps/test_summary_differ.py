"""trial_summary's query-free checks against the Polars rule (frames.metrics_differ_expr)
they stand for: frames._totals_differ (numpy) and the compiled extractor's comparison after it
parses (native.Result.compare with result totals)."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.load.steps import native
from evalkit.load.steps.frames import (
    _totals_differ,
    metrics_differ_expr,
    result_totals,
    trial_summary,
)

TOKENS = [None, 0, 7, 100, 2**40, 10**12, 10**12 + 1, 2**53, 2**53 + 1, 10**30]
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


# -- the compiled extractor's comparison (native/atif/src/trial.rs totals_differ) ----------

#: final_metrics of the trial folders: (prompt, completion, cached, cost); None = key absent
FOLDER_FM = [
    (7, 100, None, 0.25),
    (2**53, 10**12 + 1, 7, 1e-12),
    (10**30, 2**40, 0, 0.2500001),
    (None, None, None, None),
    (100, 7, 2**53 + 1, 1.5),
    (0, None, 10**12, 0.0),
    (2**40, 2**53 + 1, 10**30, 1e30),
    (None, 7, None, 0.25 + 1e-7),
]


@pytest.fixture(scope="module")
def fm_folders(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    root = tmp_path_factory.mktemp("fm")
    out = []
    keys = ("total_prompt_tokens", "total_completion_tokens", "total_cached_tokens")
    for i, fm in enumerate(FOLDER_FM):
        td = root / f"t{i}"
        (td / "agent").mkdir(parents=True)
        doc = {
            "schema_version": "ATIF-v1.6",
            "session_id": f"s{i}",
            "agent": {"name": "a", "version": "1"},
            "steps": [{"step_id": 1, "source": "user", "message": "hi"}],
            "final_metrics": {
                k: v for k, v in zip((*keys, "total_cost_usd"), fm, strict=True) if v is not None
            },
        }
        (td / "agent" / "trajectory.json").write_text(json.dumps(doc))  # ints over 2**64 too
        out.append(str(td))
    return out


result_row = st.fixed_dictionaries({k: st.sampled_from(v) for k, v in RESULT.items()})


@pytest.mark.skipif(not native.available(), reason="compiled extractor not built")
@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(result_row, min_size=8, max_size=8), drop=st.sets(st.sampled_from(sorted(RESULT)))
)
def test_extractor_compares_totals_as_the_polars_rule(
    fm_folders: list[str], rows: list[dict], drop: set
) -> None:
    trials = pl.DataFrame(
        [pl.Series("trial_id", [f"t{i}" for i in range(8)])]
        + [_col(c, [r[c] for r in rows]) for c in RESULT if c not in drop]
    )
    res = native.parse(fm_folders, 1 << 30, totals=result_totals(trials))
    assert res.ok(4, native.TRIALS, 8)
    got = res.frame(native.TRIALS, native.raw_layout(native.TRIAL_COLS))
    assert got["status"].to_list() == [0] * 8
    tok = trials.with_columns(pl.lit(None, pl.Float64).alias(c) for c in drop)  # unknown
    want = got.hstack(tok).select(metrics_differ_expr())
    assert got["differ"].to_list() == want.to_series().to_list()


@pytest.mark.skipif(not native.available(), reason="compiled extractor not built")
def test_extractor_without_totals_reports_no_difference(fm_folders: list[str]) -> None:
    got = native.parse(fm_folders, 1 << 30).frame(
        native.TRIALS, native.raw_layout(native.TRIAL_COLS)
    )
    assert got["differ"].to_list() == [False] * 8
    with pytest.raises(ValueError, match="shape"):
        native.parse(fm_folders, 1 << 30, totals=np.zeros((4, 3)))
