"""summary.json: JSON-safe values, the null decision with its note when nothing is compared,
the ``report`` block, redaction of every string (keys too), and the atomic write."""

from __future__ import annotations

import dataclasses
import json
import math
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from evalkit import report
from evalkit.report import summary_json
from evalkit.report.summary_json import _jsonable, summary, write_summary
from tests.factories import BASELINE_JOB

WHEN = datetime(2026, 6, 5, 7, 30, tzinfo=UTC)
KEY = "sk-ant-abcdefghijkl1234"  # matches the sk-ant- key pattern (8+ characters after it)


@pytest.fixture(scope="module")
def one_run() -> report.Context:
    """The bundled scripted-baseline job alone: 12 tasks x 5 attempts = 60 trial folders."""
    return report.load_context(BASELINE_JOB)


def _ctx(base: report.Context, **kw) -> report.Context:
    return dataclasses.replace(base, generated_at=WHEN, cache={}, **kw)


class _HasToDict:
    def to_dict(self) -> dict:
        return {"inf": -math.inf, 2: "two"}


def test_jsonable_makes_every_value_json_safe() -> None:
    got = _jsonable(
        {
            1: math.nan,
            "when": datetime(2026, 6, 5, 1, 2, 3, tzinfo=UTC),
            "day": date(2026, 6, 5),
            "set": {7},
            "tuple": (1, math.inf, "x"),
            "obj": _HasToDict(),
            "path": Path("/a/b"),
            "ok": [True, None, 0.5],
        }
    )
    # keys become strings; NaN / inf become null; times ISO; sets and tuples lists; an
    # object with to_dict() is its dict (itself made safe); anything else its str()
    assert got == {
        "1": None,
        "when": "2026-06-05T01:02:03+00:00",
        "day": "2026-06-05",
        "set": [7],
        "tuple": [1, None, "x"],
        "obj": {"inf": None, "2": "two"},
        "path": "/a/b",
        "ok": [True, None, 0.5],
    }
    json.dumps(got, allow_nan=False)


def test_one_run_has_a_null_decision_and_says_why(one_run: report.Context) -> None:
    ctx = _ctx(one_run)
    s = summary(ctx, name="smoke")
    assert s["decision"] is None and s["note"] == "no comparison: only one run"
    r = s["report"]
    assert r["name"] == "smoke"
    assert r["generatedAt"] == "2026-06-05T07:30:00+00:00"
    assert r["runsDir"] == str(BASELINE_JOB)
    assert r["candidate"] == "evalkit-scripted__baseline__smoke-tasks" and r["baseline"] is None
    assert r["loadErrors"] == 0 and r["runsNotDetailed"] == [] and r["redacted"] is True
    # one row per run: the 60 trial folders over 12 tasks of scripted-baseline
    assert len(r["runs"]) == 1
    row = r["runs"][0]
    assert (row["run"], row["trials"], row["tasks"]) == (ctx.candidate, 60, 12)


def test_a_pair_without_a_comparison_says_compare_is_missing(
    one_run: report.Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = _ctx(one_run, baseline="some-older-run")  # a pair, so not "only one run"
    assert ctx.pair == ("some-older-run", ctx.candidate)
    monkeypatch.setattr(summary_json, "comparison", lambda c: None)
    s = summary(ctx)
    assert s["decision"] is None
    assert s["note"] == "no comparison: evalkit.compare is not available in this build"
    assert s["report"]["name"] == "nightly"  # the default name
    assert s["report"]["baseline"] == "some-older-run"


def test_redaction_covers_keys_and_values_and_can_be_off(one_run: report.Context) -> None:
    params = {KEY: f"Bearer abcdefghijklmnopqrstu and {KEY}", "n": 3, "nested": [{"k": KEY}]}
    s = summary(_ctx(one_run, params=params))
    # both the key and the values: "Bearer <16+ chars>" and the sk-ant- key each become
    # [REDACTED]; numbers are left alone
    assert s["report"]["params"] == {
        "[REDACTED]": "[REDACTED] and [REDACTED]",
        "n": 3,
        "nested": [{"k": "[REDACTED]"}],
    }
    assert KEY not in json.dumps(s)
    plain = summary(_ctx(one_run, params=params, redact=False))
    assert plain["report"]["params"] == params and plain["report"]["redacted"] is False


def test_write_summary_writes_the_same_dict_atomically(
    one_run: report.Context, tmp_path: Path
) -> None:
    ctx = _ctx(one_run)
    p = tmp_path / "deep" / "er" / "summary.json"  # parent folders are made
    s = write_summary(ctx, p, name="nächtlich")
    text = p.read_text()
    assert json.loads(text) == s
    assert '"name": "nächtlich"' in text  # not \u-escaped (ensure_ascii=False)
    assert text.endswith("}\n") and text.startswith('{\n  "decision": null')  # indent 2
    assert sorted(x.name for x in p.parent.iterdir()) == ["summary.json"]  # no .tmp left
    # no path: computed and returned, nothing written
    again = write_summary(ctx, None)
    assert again["note"] == "no comparison: only one run"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["deep"]
