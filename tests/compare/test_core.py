"""compare() and config_diff() on real Harbor fixture jobs; expected values read off the
trial result.json files by hand (tests/fixtures/harbor)."""

from __future__ import annotations

import json

import polars as pl
import pytest

import evalkit
from evalkit.compare import compare, config_diff
from tests.conftest import HARBOR, OPENCLAW, SKILLSBENCH_JOB

# openclaw jobs (one trial each) split into a baseline and a candidate run:
# task                                   A jobs (outcome, reward)              B jobs
# openclaw-telegram-link-fetch-silent-.. 02-40-34 error -, 03-00-17 error -    11-35-44 fail 0, 11-47-08 fail 0
# openclaw-telegram-media-failure        01-55-27 error -, 02-16-43 error -    02-18-08 fail 0
# harbor/buffered-log-course-correct     15-34-24 fail 0                       17-27-40 fail 0
# harbor/heartbeat-status-watcher        11-16-57 fail 0, 11-41-23 pass 1      17-02-55 fail 0 (other checksum)
# harbor/long-running-refresh-token-c..  11-50-11 error -, 12-15-50 fail 0     12-25-13 partial 0.625
# hermes-telegram-media-failure          2026-04-28__22-19-15__... partial 0.5 -
# qwenpaw-telegram-chunk-partial-deliv.. -                                     10-40-59 fail 0
A_JOBS = [
    "2026-05-26__02-40-34",
    "2026-05-26__03-00-17",
    "2026-05-26__01-55-27",
    "2026-05-26__02-16-43",
    "2026-05-26__15-34-24",
    "2026-05-26__11-16-57",
    "2026-05-26__11-41-23",
    "2026-05-26__11-50-11",
    "2026-05-26__12-15-50",
    "2026-04-28__22-19-15__hermes-telegram-media-failure",
]
B_JOBS = [
    "2026-05-26__11-35-44",
    "2026-05-26__11-47-08",
    "2026-05-26__02-18-08",
    "2026-05-26__17-27-40",
    "2026-05-26__17-02-55",
    "2026-05-26__12-25-13",
    "2026-05-26__10-40-59",
]


@pytest.fixture(scope="module")
def openclaw_ab():
    runs = evalkit.load(
        {"base": [OPENCLAW / j for j in A_JOBS], "cand": [OPENCLAW / j for j in B_JOBS]},
        progress=False,
    )
    return runs, compare(runs, "base", "cand")


@pytest.fixture(scope="module")
def harbor_runs():
    return evalkit.load(HARBOR, progress=False)


def test_openclaw_split_tasks(openclaw_ab):
    _, c = openclaw_ab
    t = {r["task_name"]: r for r in c.tasks.iter_rows(named=True)}
    assert len(t) == 7
    assert c.only_in_a == ["hermes-telegram-media-failure"]
    assert c.only_in_b == ["qwenpaw-telegram-chunk-partial-delivery"]
    assert c.not_comparable == {
        "harbor/heartbeat-status-watcher": "task changed (checksum differs)"
    }
    assert c.paired_tasks == [
        "harbor/buffered-log-course-correct",
        "harbor/long-running-refresh-token-cache",
        "openclaw-telegram-link-fetch-silent-failure",
        "openclaw-telegram-media-failure",
    ]
    lf = t["openclaw-telegram-link-fetch-silent-failure"]
    assert (lf["attempts_a"], lf["attempts_b"], lf["outcome_a"], lf["outcome_b"]) == (
        2,
        2,
        "error",
        "fail",
    )
    lr = t["harbor/long-running-refresh-token-cache"]
    assert lr["outcomes_a"] == "fail 1, error 1" and lr["outcome_a"] == "error"  # tie -> worse
    assert lr["mean_reward_a"] == 0.0 and lr["d_reward"] == pytest.approx(0.625)
    assert lr["checksum_status"] == "same"
    hb = t["harbor/heartbeat-status-watcher"]
    assert (hb["n_pass_a"], hb["attempts_a"], hb["pass_majority_a"]) == (1, 2, False)
    # every paired task is not-passed on both sides
    assert c.buckets["both_not_pass"] == c.paired_tasks
    tr = {(r["outcome_a"], r["outcome_b"]): r["n"] for r in c.transitions.iter_rows(named=True)}
    assert tr == {("fail", "fail"): 1, ("error", "fail"): 2, ("error", "partial"): 1}
    # cost is unknown in every trial (never 0), tokens are not recorded by these agents
    assert all(r["d_cost_usd"] is None for r in t.values())
    assert t["harbor/buffered-log-course-correct"]["d_duration_s"] == pytest.approx(
        665.478304 - 693.929507, abs=1e-3
    )


def test_openclaw_split_json_and_decision(openclaw_ab):
    _, c = openclaw_ab
    j = c.to_json()
    json.dumps(j, allow_nan=False)  # strict JSON
    assert j["pairedTasks"] == 4
    assert j["meanRewardDelta"] == pytest.approx(0.625 / 4)
    assert j["passRateDelta"]["value"] == 0.0
    assert j["timeoutRateDelta"] == 0.0
    assert j["costPerPassDelta"] is None
    assert j["p0QcGateRegressionCount"] == 0
    assert j["gates"]["ship"]["verdict"] == "Hold: not enough evidence"
    assert j["gates"]["regressionGuard"]["decision"] == "merge"
    # reward rose 15.6 points, above the noise floor, but no trial has complete evidence
    assert j["noise"]["needsMoreTrials"] is False
    # 4 comparable tasks are fewer than min_shared_tasks (5): no meaningful comparison
    assert j["evidence"]["meaningful"] is False
    assert j["decision"] == "hold"
    assert j["decisionReasons"][0].startswith("no meaningful comparison: only 4 comparable")
    assert any("lack complete evidence" in r for r in j["decisionReasons"])
    # without the evidence rule (4 tasks allowed, no interval is too wide), Lime's rules decide
    assert c.to_json(min_shared_tasks=4, large_effect=2)["decision"] == "needs-review"
    assert (j["fixed"], j["broken"]) == ([], [])
    assert j["onlyInA"] == ["hermes-telegram-media-failure"]
    assert j["configDiff"]["verdict"].startswith("several variables changed")
    # the gate holds
    assert (
        c.to_json(require_evidence=False, min_shared_tasks=4, large_effect=2)["decision"] == "hold"
    )


def test_skillsbench_k5_split_by_attempt():
    """One real 5-attempt job split into attempts 1-2 (A) and 3-5 (B), as a trials frame."""
    t = evalkit.load(SKILLSBENCH_JOB, progress=False).trials
    t = t.with_columns(
        pl.when(pl.col("attempt") <= 2).then(pl.lit("A")).otherwise(pl.lit("B")).alias("run")
    )
    c = compare(t, "A", "B")
    r = {x["task_name"]: x for x in c.tasks.iter_rows(named=True)}
    # 3d-scan-calc: A [1, 1] -> 2/2; B [1, 0, 1] -> 2/3: both pass by majority
    assert r["3d-scan-calc"]["bucket"] == "both_pass"
    assert r["3d-scan-calc"]["d_reward"] == pytest.approx(2 / 3 - 1)
    # dialogue-parser: A [.833, .833], B [1, .5, .833]
    assert r["dialogue-parser"]["bucket"] == "both_not_pass"
    assert r["dialogue-parser"]["d_reward"] == pytest.approx((1 + 0.5 + 0.833) / 3 - 0.833)
    # earthquake: A [1.0 with AgentTimeoutError, 0] -> 1 of 2 is not a majority; B [0, 0t, 0]
    eq = r["earthquake-phase-association"]
    assert (eq["n_pass_a"], eq["pass_majority_a"], eq["outcome_a"]) == (1, False, "fail")
    assert eq["timeout_rate_a"] == 0.5 and eq["timeout_rate_b"] == pytest.approx(1 / 3)
    assert c.only_in_a == ["pg-essay-to-audiobook", "spring-boot-jakarta-migration"]
    s = c.side_summary()
    assert s["a"]["pass_rate"] == pytest.approx((1 + 0 + 0.5) / 3)
    assert s["b"]["pass_rate"] == pytest.approx((2 / 3 + 1 / 3 + 0) / 3)
    j = c.to_json()
    assert j["meanRewardDelta"] == pytest.approx(((2 / 3 - 1) + ((2.333 / 3) - 0.833) - 0.5) / 3)
    assert j["timeoutRateDelta"] == pytest.approx((1 / 3 - 1 / 2) / 3)
    assert j["passRateDelta"]["value"] == pytest.approx(-1 / 6)
    g = c.gate()
    assert (g.wins, g.losses, g.a_solved) == (0, 0, 1)
    # pass rate -16.7 points: trainerd reverts; but 3 tasks are too few to mean anything
    assert j["gates"]["regressionGuard"]["decision"] == "revert"
    assert j["decision"] == "hold" and not j["evidence"]["meaningful"]
    assert "only 3 comparable task(s)" in j["decisionReasons"][0]
    assert c.to_json(min_shared_tasks=3, large_effect=2)["decision"] == "revert"  # Lime follows
    assert j["noise"]["minAttemptsPerTask"] == 2


def test_stats_are_evalkit_stats_paired():
    t = evalkit.load(SKILLSBENCH_JOB, progress=False).trials
    t = t.with_columns(
        pl.when(pl.col("attempt") <= 2).then(pl.lit("A")).otherwise(pl.lit("B")).alias("run")
    )
    c = compare(t, "A", "B")
    s = c.stats
    assert s.n_tasks == 3
    assert s.mean_a == pytest.approx((1 + 0.833 + 0.5) / 3)
    assert s.diff == pytest.approx(c.to_json()["meanRewardDelta"])
    assert s.ci_low <= s.diff <= s.ci_high
    p = c.pass_stats
    assert p.diff == pytest.approx(-1 / 6)
    j = c.to_json()
    assert j["passRateDelta"]["ciLow"] == pytest.approx(p.ci_low)
    assert j["meanRewardDeltaStats"]["pValue"] == pytest.approx(s.p_value)
    assert "statsUnavailable" not in j


def test_stats_wiring(monkeypatch):
    import evalkit.compare.core as core

    calls = []

    def fake(df, a, b, **kw):
        calls.append((df, a, b, kw))
        return {"n_tasks": 1, "diff": 0.5, "ci_low": 0.1, "ci_high": 0.9, "p_value": float("nan")}

    monkeypatch.setattr(core, "paired", fake)
    df = pl.DataFrame({"run": ["x", "y"], "task_name": ["t", "t"], "reward": [0.0, 1.0]})
    c = compare(df, "x", "y", confidence=0.9, seed=7)
    j = c.to_json()
    df0, a, b, kw = calls[0]
    assert (a, b, kw["by"], kw["task"], kw["reward"]) == ("A", "B", "side", "task_name", "reward")
    assert (kw["confidence"], kw["seed"], kw["metric"]) == (0.9, 7, "reward")
    assert calls[1][3]["metric"] == "pass"
    assert sorted(df0["side"].to_list()) == ["A", "B"]
    assert j["passRateDelta"]["ciLow"] == 0.1 and j["passRateDelta"]["pValue"] is None


def test_run_labels_and_job_names_on_the_bundled_fixtures(harbor_runs):
    c = compare(
        harbor_runs,
        "openclaw-gateway__claude-opus-4-6__persistence",
        "openclaw-gateway__claude-sonnet-4-6__persistence",
    )
    assert c.a_kind == c.b_kind == "run"
    assert c.only_in_a == ["harbor/long-running-refresh-token-cache"]
    assert list(c.not_comparable) == ["harbor/heartbeat-status-watcher"]
    # two jobs by name (unique prefix for the second)
    c2 = compare(harbor_runs, "2026-05-26__15-34-24", "2026-05-26__17-27")
    assert c2.a_kind == "job" and c2.b == "2026-05-26__17-27-40"
    assert c2.paired_tasks == ["harbor/buffered-log-course-correct"]
    with pytest.raises(KeyError, match="matches"):
        compare(harbor_runs, "2026-05-26__15-34-24", "2026-05-26__1")


def test_no_shared_task_is_blocked(harbor_runs):
    c = compare(harbor_runs, "no_skills", "gemini-cli__gemini-3-flash-preview__adhoc")
    assert c.paired_tasks == [] and len(c.only_in_a) == 5 and len(c.only_in_b) == 2
    assert c.stats is None
    j = c.to_json()
    assert j["decision"] == "blocked" and j["meanRewardDelta"] is None
    assert j["gates"]["ship"]["verdict"] == "Hold: not enough evidence"


def test_config_diff_one_variable_on_real_configs(harbor_runs):
    d = config_diff("2026-05-26__15-34-24", "2026-05-26__17-27-40", runs=harbor_runs)
    assert d.verdict == "one variable changed: model"
    assert d.one_variable_changed
    rows = {r["key"]: r for r in d.rows.iter_rows(named=True)}
    assert rows["agents[0].model_name"]["a"] == "anthropic/claude-opus-4-6"
    assert rows["agents[0].model_name"]["b"] == "anthropic/claude-sonnet-4-6"
    assert rows["job_name"]["counts"] is False
    # retry.exclude_exceptions lists the same names in another order: not a difference
    assert not any(k.startswith("retry.") for k in rows)


def test_config_diff_across_formats_and_runs(harbor_runs):
    d = config_diff("no_skills", "gemini-cli__gemini-3-flash-preview__adhoc", runs=harbor_runs)
    assert d.verdict.startswith("several variables changed: model, agent, agent kwargs, timeouts")
    rows = {r["key"]: r for r in d.rows.iter_rows(named=True)}
    # orchestrator.n_concurrent_trials (old layout) is aligned with n_concurrent_trials
    assert (rows["n_concurrent_trials"]["a"], rows["n_concurrent_trials"]["b"]) == ("20", "4")
    assert rows["n_concurrent_trials"]["variable"] == "execution"
    assert rows["timeout_multiplier"]["variable"] == "timeouts"
    assert rows["n_attempts"]["variable"] == "attempts" and "attempts" in d.scope
    assert "task list" in d.scope
    d2 = compare(
        harbor_runs,
        "openclaw-gateway__claude-opus-4-6__persistence",
        "openclaw-gateway__claude-sonnet-4-6__persistence",
    ).config_diff()
    assert "task checksums" in d2.variables
    assert d2.to_dict()["verdict"] == d2.verdict


def test_config_diff_from_paths_and_mappings():
    a = OPENCLAW / "2026-05-26__15-34-24"
    d = config_diff(a, a / "config.json")
    assert d.verdict == "no variable changed" and d.rows.height == 0
    cfg = json.loads((a / "config.json").read_text())
    cfg2 = json.loads(json.dumps(cfg))
    cfg2["agents"][0]["kwargs"]["version"] = "2026.5.1"
    cfg2["agents"][0]["env"] = {"OPENAI_API_KEY": "[REDACTED]"}
    d = config_diff(cfg, cfg2)
    assert d.verdict == "several variables changed: agent kwargs, env"
    assert d.notes  # no runs: recorded facts not compared


def test_config_diff_without_configs_is_unknown():
    runs = evalkit.load(HARBOR.parent / "rollouts", progress=False)
    d = config_diff("go-code__fake-model", "go-code__no-model", runs=runs)
    assert d.verdict == "unknown: no job config recorded for A and B"
    assert d.variables == [] and d.notes
