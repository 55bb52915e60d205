"""The public surface: detect(), the decorator, configuration, the findings schema, redaction
and the runs.findings provider."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import evalkit.patterns as ep
from evalkit.load._columns import schema
from evalkit.load.findings.columns import COLUMNS as FINDING_COLUMNS
from tests.patterns.build import call, combine, frames, sh

OPENCLAW = Path(__file__).resolve().parents[1] / "fixtures" / "harbor" / "openclaw-dev-jobs"
LOOP = [("user", "x")] + [("agent", "", [sh("pytest -q", "FAILED", err=True)]) for _ in range(3)]


def test_empty_input_gives_an_empty_typed_frame():
    f = ep.detect()
    assert f.height == 0 and dict(f.schema) == schema(FINDING_COLUMNS)
    assert ep.detect(mode="trainerd").height == 0


def test_findings_schema_and_sorting():
    f = ep.detect(combine(frames(LOOP, trial_id="b"), frames(LOOP, trial_id="a")))
    assert list(f.columns) == [c.name for c in FINDING_COLUMNS]
    assert f["trial_id"].to_list() == sorted(f["trial_id"].to_list())
    assert set(f["source"]) == {"detected"} and set(f["mode"]) == {"structural"}
    assert (f["step_start"] <= f["step_end"]).all()


def test_tool_calls_frame_alone_and_mapping_input():
    fr = frames(LOOP)
    assert ep.detect(fr["tool_calls"], detectors=["retry_loop"]).height == 1
    assert ep.detect(fr, detectors=["retry_loop"]).height == 1
    assert ep.detect(tool_calls=fr["tool_calls"].lazy(), detectors=["retry_loop"]).height == 1


def test_modes_and_selection():
    fr = frames(LOOP)
    both = ep.detect(fr, mode=("structural", "trainerd"), detectors=["retry_loop"])
    assert sorted(both["mode"].to_list()) == ["structural", "trainerd"]
    assert sorted(both["rule_version"].to_list()) == ["structural-1", "trainerd-1"]
    with pytest.raises(ValueError, match="mode"):
        ep.detect(fr, mode="strict")
    with pytest.raises(ValueError, match="unknown detector"):
        ep.detect(fr, detectors=["retry_loops"])
    with pytest.raises(ValueError, match="unknown detector"):
        ep.detect(fr, mode="trainerd", detectors=["giving_up"])


def test_config_overrides_and_typos():
    fr = frames(LOOP)
    assert (
        ep.detect(
            fr, detectors=["retry_loop"], config={"retry_loop": {"min_failing_repeats": 4}}
        ).height
        == 0
    )
    with pytest.raises(ValueError, match="unknown parameter"):
        ep.detect(fr, config={"retry_loop": {"min_failing_repeat": 4}})
    with pytest.raises(ValueError, match="unknown config section"):
        ep.detect(fr, config={"retry": {}})
    # the defaults are not mutated by an override
    assert ep.DEFAULTS["retry_loop"]["min_failing_repeats"] == 3


def test_user_detector_via_decorator():
    @ep.detector("many_calls", params={"min_calls": 2})
    def many_calls(ctx: ep.Context) -> pl.DataFrame:
        """Trials with at least min_calls tool calls."""
        n = ctx.params("many_calls")["min_calls"]
        return (
            ctx.calls.group_by("trial_id")
            .agg(pl.len().alias("n"), pl.col("step_index").min().alias("step_start"))
            .filter(pl.col("n") >= n)
            .with_columns(pl.format("{} calls", "n").alias("evidence"))
        )

    try:
        fr = frames(LOOP)
        f = ep.detect(fr, detectors=["many_calls"])
        r = f.row(0, named=True)
        assert (r["evidence"], r["severity"], r["confidence"], r["step_end"]) == (
            "3 calls",
            "medium",
            0.5,
            1,
        )
        assert r["rule_version"] == "structural-1"
        assert (
            ep.detect(fr, detectors=["many_calls"], config={"many_calls": {"min_calls": 4}}).height
            == 0
        )
        assert "many_calls" in {d["name"] for d in ep.list_detectors("structural")}
        assert any(
            d["description"] == "Trials with at least min_calls tool calls."
            for d in ep.list_detectors()
        )
    finally:
        ep.unregister("many_calls")
    assert "many_calls" not in {d["name"] for d in ep.list_detectors()}


def test_bad_detector_output_is_rejected():
    @ep.detector("bad_sev")
    def bad(ctx: ep.Context) -> pl.DataFrame:
        return pl.DataFrame({"trial_id": ["t1"], "step_start": [0], "severity": ["critical"]})

    try:
        with pytest.raises(ValueError, match="severities"):
            ep.detect(frames(LOOP), detectors=["bad_sev"])
    finally:
        ep.unregister("bad_sev")
    with pytest.raises(ValueError, match="mode"):
        ep.detector("x", modes=("fast",))


def test_evidence_is_redacted_and_short():
    key = "sk-ant-api03-" + "A" * 40
    ev = [("user", "x")] + [
        ("agent", "", [sh(f"curl -H 'x-api-key: {key}' https://api.x/v1", "Error: 401", err=True)])
        for _ in range(3)
    ]
    f = ep.detect(frames(ev), detectors=["retry_loop"])
    assert key not in f["evidence"][0] and "[REDACTED]" in f["evidence"][0]
    long = [("user", "x")] + [
        ("agent", "", [sh("python -c '" + "x=1;" * 200 + "'", "E", err=True)]) for _ in range(3)
    ]
    assert len(ep.detect(frames(long), detectors=["retry_loop"])["evidence"][0]) < 220


def test_main_only_and_subagents():
    sub = frames(LOOP, trajectory="subagent-1")
    main = frames([("user", "x"), ("agent", "ok")])
    f = combine(main, {**sub, "trials": sub["trials"].head(0)})
    assert ep.detect(f, detectors=["retry_loop"]).height == 0
    assert (
        ep.detect(f, detectors=["retry_loop"], config={"common": {"main_only": False}}).height == 1
    )


def test_runs_findings_provider_on_real_harbor_jobs():
    import evalkit

    runs = evalkit.load(OPENCLAW, cache=False, progress=False)
    f = runs.findings
    names = runs.trials.select("trial_id", "trial_name")
    flagged = f.filter(pl.col("detector") == "false_success_claim").join(names, on="trial_id")
    assert sorted(n[-7:] for n in flagged["trial_name"]) == ["GUTierP", "ey2rnib"]
    assert set(f["source"]) <= {"detected", "recorded"}


def test_finish_message_is_a_closing_message():
    ev = [
        ("user", "x"),
        ("agent", "", [call("finish", args={"message": "I think it should work now."})]),
    ]
    assert ep.detect(frames(ev), detectors=["hedge_assertion"]).height == 1
