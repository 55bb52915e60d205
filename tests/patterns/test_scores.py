"""trainerd's per-trial scores, checked against values computed by hand from the Go formulas
(rollouts-gates-qc.md §1.5-1.6)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalkit.patterns as ep
from evalkit.load.gocode import read_rollouts
from evalkit.patterns.scores import go_canonical
from tests.patterns.build import call, combine, frames

ROLLOUTS = Path(__file__).resolve().parents[1] / "fixtures" / "rollouts"


def test_go_canonical_matches_json_marshal():
    assert go_canonical('{"b": 1, "a": "<x&y>"}') == '{"a":"\\u003cx\\u0026y\\u003e","b":1}'
    assert go_canonical('{"n": 5.0}') == go_canonical('{"n":5}') == '{"n":5}'
    assert go_canonical('{"n": 0.5}') == '{"n":0.5}'
    assert (
        go_canonical('{"o": {"z": 1, "y": [2, {"b": 1, "a": 0}]}}')
        == '{"o":{"y":[2,{"a":0,"b":1}],"z":1}}'
    )
    # Unmarshal into map[string]any fails (or gives nil) -> json.Marshal(nil map) = null
    for raw in ("[1, 2]", '"ls"', "not json", "null", None):
        assert go_canonical(raw) == "null"


def test_first_try_rate():
    a = call("read_file", args={"path": "a", "n": 1})
    a_reordered = call("read_file", args={"n": 1.0, "path": "a"})
    b = call("bash", args={"command": "ls"})
    f = frames([("user", "x"), ("agent", "", [a, b]), ("agent", "", [a_reordered])])
    r = ep.first_try_rate(f["tool_calls"]).row(0, named=True)
    assert (r["n_tool_calls"], r["n_retried"]) == (3, 1)
    assert r["first_try_rate"] == pytest.approx(2 / 3)


def test_no_tool_calls_scores_zero_first_try_rate_and_tool_quality():
    s = ep.trial_scores(frames([("user", "x"), ("agent", "4")])).row(0, named=True)
    assert s["first_try_rate"] == 0.0 and s["tool_quality"] == 0.0  # 0, not 1
    assert s["steps"] == 1.0 and s["efficiency"] == pytest.approx(1 / 1.1)


def test_tool_quality_weights_and_efficiency():
    f = frames(
        [("user", "x")] + [("agent", "", [call("ls", args={"i": i})]) for i in range(4)],
        n_steps=10,
        cost_usd=0.5,
    )
    findings = pl.DataFrame(
        {"trial_id": ["t1"] * 3, "detector": ["retry_loop", "premature_completion", "custom"]}
    )
    s = ep.trial_scores(f, findings=findings).row(0, named=True)
    assert s["weighted_sum"] == pytest.approx(0.5 + 1.25 + 1.0)
    assert s["penalty"] == pytest.approx(2.75 / 5)
    assert s["tool_quality"] == pytest.approx(1.0 * (1 - 0.55))
    assert s["efficiency"] == pytest.approx(1 / (1 + 10 * 0.1 + 0.5 * 10))
    assert s["efficiency_db"] == pytest.approx(min(1, 1 / (10 * 0.5)))
    assert s["findings_source"] == "given" and s["anti_pattern_count"] == 3
    many = pl.DataFrame({"trial_id": ["t1"] * 9, "detector": ["hedge_assertion"] * 9})
    assert ep.trial_scores(f, findings=many)["tool_quality"][0] == 0.0  # penalty capped at 1


def test_efficiency_db_edge_rules():
    f = frames([("user", "x"), ("agent", "hi")], n_steps=0)
    s = ep.trial_scores(f).row(0, named=True)
    # steps <= 0 -> 1, unknown cost -> 0 (Scorer) / 0.001 (DB)
    assert s["steps"] == 1.0 and s["cost_known"] is False
    assert s["efficiency_db"] == 1.0


def test_default_findings_are_trainerd_detections():
    ev = [("user", "x")] + [
        ("agent", "", [call("read_file", args={"path": "a"})]) for _ in range(3)
    ]
    s = ep.trial_scores(frames(ev)).row(0, named=True)
    assert s["findings_source"] == "detected:trainerd"
    assert s["anti_pattern_count"] == 1 and s["weighted_sum"] == 0.5  # one retry_loop
    assert s["first_try_rate"] == pytest.approx(1 / 3)


def test_go_code_rollouts_use_recorded_findings_and_harness_steps():
    rf = read_rollouts(ROLLOUTS, progress=False)
    s = {r["trial_id"]: r for r in ep.trial_scores(rf).iter_rows(named=True)}
    golden = s["run_8cacf024-8246-4c1c-8d53-7764b878d664"]
    # run.completed step 2, cost_usd_total 0.0025, one completed tool call
    assert golden["first_try_rate"] == 1.0 and golden["findings_source"] == "recorded"
    assert golden["efficiency"] == pytest.approx(1 / (1 + 2 * 0.1 + 0.0025 * 10))
    assert golden["efficiency_db"] == 1.0  # min(1, 1 / (2 * 0.0025))
    simple = s["simple-no-tool"]
    assert simple["first_try_rate"] == 0.0 and simple["tool_quality"] == 0.0
    assert simple["efficiency"] == pytest.approx(1 / 1.2)  # run.completed step 2
    assert s["tool-with-output-key"]["efficiency"] == pytest.approx(1 / 1.3)


def test_scores_cover_every_trial():
    f = combine(
        frames([("user", "x"), ("agent", "a")], trial_id="a"), frames([("user", "y")], trial_id="b")
    )
    assert sorted(ep.trial_scores(f)["trial_id"].to_list()) == ["a", "b"]


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-1000, 1000)
    | st.floats(-1e6, 1e6, allow_nan=False)
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(st.text(max_size=4), json_values, max_size=4), st.randoms(use_true_random=False)
)
def test_go_canonical_ignores_key_order(d, rnd):
    import json

    items = list(d.items())
    rnd.shuffle(items)
    assert go_canonical(json.dumps(d)) == go_canonical(json.dumps(dict(items)))
