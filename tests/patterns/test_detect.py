"""evalkit.patterns.detect: ``detect()`` picks the registered detectors of the chosen mode(s)
(or the named ones), merges ``config`` over the defaults (user detectors' own params
included), runs each with the context's ``mode`` set to the detector's, and returns the
findings frame: defaults filled by ``_finish`` (step_end = step_start, severity 'medium',
confidence 0.5, evidence ''), bookkeeping columns added, sorted by trial, step and detector,
evidence redacted by ``_redact``. test_api.py covers the public surface on the built-in
detectors; this module drives ``detect`` with probe detectors and calls ``_finish`` /
``_redact`` directly."""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl
import pytest

import evalkit.patterns as ep
from evalkit.load._columns import schema
from evalkit.load.findings.columns import COLUMNS as FINDING_COLUMNS
from evalkit.patterns.detect import _finish, _redact
from tests.patterns.build import frames, sh

NAMES = [c.name for c in FINDING_COLUMNS]
LOOP = [("user", "x")] + [("agent", "", [sh("pytest -q", "FAILED", err=True)]) for _ in range(3)]
P = "_probe_detect"


@pytest.fixture(autouse=True)
def _cleanup() -> Iterator[None]:
    yield
    for suffix in ("", "_a", "_b", "_tr", "_empty"):
        ep.unregister(P + suffix)


def _rows(**cols) -> pl.DataFrame:
    return pl.DataFrame(cols)


# -- _finish ------------------------------------------------------------------------------------
def test_finish_fills_the_documented_defaults_and_bookkeeping_columns() -> None:
    out = _finish(_rows(trial_id=["t1"], step_start=[4]), "d", "structural-2", "structural")
    assert out.columns == NAMES
    r = out.row(0, named=True)
    assert (r["step_start"], r["step_end"]) == (4, 4)  # step_end defaults to step_start
    assert (r["severity"], r["confidence"], r["evidence"]) == ("medium", 0.5, "")
    assert (r["detector"], r["rule_version"], r["source"], r["mode"]) == (
        "d",
        "structural-2",
        "detected",
        "structural",
    )


def test_finish_keeps_given_values_casts_types_and_drops_extra_columns() -> None:
    df = pl.DataFrame(
        {
            "trial_id": ["t1", "t2"],
            "step_start": pl.Series([1, 2], dtype=pl.Int32),
            "step_end": pl.Series([3, 2], dtype=pl.Int16),
            "severity": ["high", "low"],
            "confidence": [1, 0],  # integers become floats
            "evidence": ["e", None],  # a null evidence becomes ''
            "scratch": [9, 9],
        }
    )
    out = _finish(df, "d", "trainerd-1", "trainerd")
    assert out.columns == NAMES and "scratch" not in out.columns
    assert out.schema["step_start"] == pl.Int64 and out.schema["step_end"] == pl.Int64
    assert out.schema["confidence"] == pl.Float64
    assert out["step_end"].to_list() == [3, 2]
    assert out["severity"].to_list() == ["high", "low"]
    assert out["confidence"].to_list() == [1.0, 0.0]
    assert out["evidence"].to_list() == ["e", ""]


@pytest.mark.parametrize("cols", [{"trial_id": ["t"]}, {"step_start": [0]}])
def test_finish_rejects_output_without_trial_id_or_step_start(cols: dict) -> None:
    with pytest.raises(ValueError, match="must return trial_id and step_start"):
        _finish(pl.DataFrame(cols), "d", "structural-1", "structural")


@pytest.mark.parametrize("sev", ["critical", "Medium", "info"])
def test_finish_rejects_severities_outside_low_medium_high(sev: str) -> None:
    with pytest.raises(ValueError, match="severities"):
        _finish(_rows(trial_id=["t"], step_start=[0], severity=[sev]), "d", "s-1", "structural")


# -- _redact ------------------------------------------------------------------------------------
def test_redact_replaces_an_environment_secret_in_evidence(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secret = "zq9-custom-value-1234567"  # not key-shaped: found only via the environment
    monkeypatch.setenv("MY_SERVICE_TOKEN", secret)
    df = _finish(
        _rows(trial_id=["a", "b"], step_start=[0, 0], evidence=[f"used {secret} here", "plain"]),
        "d",
        "structural-1",
        "structural",
    )
    out = _redact(df)
    assert out["evidence"].to_list() == ["used [REDACTED] here", "plain"]


def test_redact_returns_the_frame_untouched_when_nothing_is_secret() -> None:
    df = _finish(_rows(trial_id=["a"], step_start=[0], evidence=["ok"]), "d", "s-1", "structural")
    assert _redact(df) is df


# -- detect() with probe detectors ----------------------------------------------------------------
def test_each_detector_sees_its_own_mode_when_both_modes_run() -> None:
    seen: list[str] = []

    @ep.detector(P, modes=("structural", "trainerd"))
    def probe(ctx: ep.Context) -> pl.DataFrame:
        seen.append(ctx.mode)
        return _rows(trial_id=["t1"], step_start=[0])

    f = ep.detect(frames(LOOP), mode=("trainerd", "structural"), detectors=[P])
    assert seen == ["trainerd", "structural"]  # modes run in the order given
    assert sorted(zip(f["mode"], f["rule_version"], strict=True)) == [
        ("structural", "structural-1"),
        ("trainerd", "trainerd-1"),
    ]


def test_findings_are_sorted_by_trial_then_step_then_detector() -> None:
    @ep.detector(P + "_b")
    def b(ctx: ep.Context) -> pl.DataFrame:
        return _rows(trial_id=["t2", "t1", "t1"], step_start=[0, 5, 1])

    @ep.detector(P + "_a")
    def a(ctx: ep.Context) -> pl.DataFrame:
        return _rows(trial_id=["t1"], step_start=[5])

    f = ep.detect(frames(LOOP), detectors=[P + "_b", P + "_a"])
    assert f.select("trial_id", "step_start", "detector").rows() == [
        ("t1", 1, P + "_b"),
        ("t1", 5, P + "_a"),
        ("t1", 5, P + "_b"),
        ("t2", 0, P + "_b"),
    ]


def test_an_empty_detectors_list_runs_nothing_and_gives_the_typed_empty_frame() -> None:
    ran = []

    @ep.detector(P)
    def probe(ctx: ep.Context) -> pl.DataFrame:  # pragma: no cover - must not run
        ran.append(1)
        return _rows(trial_id=["t1"], step_start=[0])

    f = ep.detect(frames(LOOP), detectors=[])
    assert ran == [] and f.height == 0 and dict(f.schema) == schema(FINDING_COLUMNS)


def test_only_empty_results_give_the_typed_empty_frame() -> None:
    @ep.detector(P + "_empty")
    def none(ctx: ep.Context) -> pl.DataFrame:
        return pl.DataFrame(
            {"trial_id": [], "step_start": []},
            schema={"trial_id": pl.String, "step_start": pl.Int64},
        )

    f = ep.detect(frames(LOOP), detectors=[P + "_empty"])
    assert f.height == 0 and dict(f.schema) == schema(FINDING_COLUMNS)


def test_unknown_detector_error_names_the_unknown_and_lists_the_known_sorted() -> None:
    @ep.detector(P + "_tr", modes=("trainerd",))
    def tr(ctx: ep.Context) -> pl.DataFrame:  # pragma: no cover
        return _rows(trial_id=["t1"], step_start=[0])

    with pytest.raises(ValueError) as e:
        ep.detect(frames(LOOP), mode="structural", detectors=["retry_loop", P + "_tr"])
    msg = str(e.value)
    assert f"['{P}_tr']" in msg  # only the unknown one is named as unknown
    known = sorted(d["name"] for d in ep.list_detectors("structural"))
    assert f"known: {known}" in msg


def test_user_params_are_defaults_and_config_overrides_them() -> None:
    got: list[dict] = []

    @ep.detector(P, params={"k": 2, "word": "x"})
    def probe(ctx: ep.Context) -> pl.DataFrame:
        got.append(dict(ctx.params(P)))
        return _rows(trial_id=["t1"], step_start=[0])

    ep.detect(frames(LOOP), detectors=[P])
    ep.detect(frames(LOOP), detectors=[P], config={P: {"k": 7}})
    assert got == [{"k": 2, "word": "x"}, {"k": 7, "word": "x"}]
    with pytest.raises(ValueError, match="unknown parameter"):
        ep.detect(frames(LOOP), detectors=[P], config={P: {"kk": 1}})


def test_config_for_a_detector_of_the_other_mode_is_accepted() -> None:
    @ep.detector(P + "_tr", modes=("trainerd",), params={"k": 1})
    def tr(ctx: ep.Context) -> pl.DataFrame:  # pragma: no cover - not in structural mode
        return _rows(trial_id=["t1"], step_start=[0])

    @ep.detector(P)
    def probe(ctx: ep.Context) -> pl.DataFrame:
        return _rows(trial_id=["t1"], step_start=[0])

    f = ep.detect(frames(LOOP), detectors=[P], config={P + "_tr": {"k": 5}})
    assert f["detector"].to_list() == [P]


def test_keyword_frames_override_the_mapping() -> None:
    @ep.detector(P)
    def probe(ctx: ep.Context) -> pl.DataFrame:
        return ctx.trials.select("trial_id", pl.lit(0).alias("step_start"))

    fr = frames(LOOP, trial_id="from-mapping")
    other = frames(LOOP, trial_id="from-keyword")["trials"]
    assert ep.detect(fr, detectors=[P])["trial_id"].to_list() == ["from-mapping"]
    assert ep.detect(fr, trials=other, detectors=[P])["trial_id"].to_list() == ["from-keyword"]
