"""build_trajectories over Harbor-like trial folders: layout, summary, mismatch, cache, pools."""

from __future__ import annotations

import os
import time

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from evalkit.load.steps import table
from evalkit.load.steps.derive import trial_summary
from evalkit.load.steps.table import build_trajectories
from tests.load.steps.steps_helpers import ATIF, GOLDEN, HERMES, NATIVE, atif_doc, trials_frame

CC_PASS = ATIF / "claude-code-real/trajectory_pass.json"
T2 = GOLDEN / "terminus_2"
SUMM = "hello-world-context-summarization.trajectory"


def _build(trials, **kw):
    kw.setdefault("progress", False)
    kw.setdefault("cache", False)
    return build_trajectories(trials, **kw)


def test_trial_layouts_summary_and_mismatch(make_trial):
    t_cc = make_trial("cc", {"agent/trajectory.json": CC_PASS})
    t_sum = make_trial(
        "summ",
        {
            "agent/trajectory.json": T2 / f"{SUMM}.json",
            **{f"agent/trajectory.summarization-1-{k}.json": T2 / f"{SUMM}.summarization-1-{k}.json" for k in ("summary", "questions", "answers")},
        },
    )  # fmt: skip
    t_goose = make_trial(
        "goose", {"agent/goose.txt": NATIVE / "goose/harbor-test-sample.stream-json.jsonl"}
    )
    t_none = make_trial("nothing", {"verifier/reward.txt": b"1"})
    t_bad = make_trial(
        "notatif", {"agent/trajectory.json": b'[{"episode": 0, "prompt": "p", "response": "r"}]'}
    )
    trials = trials_frame(
        [t_cc, t_sum, t_goose, t_none, t_bad],
        # cc: tokens agree, cost disagrees; summ: prompt disagrees
        n_input_tokens=[485630, 7000, None, None, None],
        n_cache_tokens=[461807, 0, None, None, None],
        n_output_tokens=[3304, 1030, None, None, None],
        cost_usd=[0.5, 0.029805, None, None, None],
    )
    tf = _build(trials)
    s = {r["trial_id"]: r for r in tf.trial_summary.iter_rows(named=True)}
    assert set(s) == {"cc", "summ", "goose"}  # one row per trial with a trajectory or goose log
    assert (s["cc"]["n_steps"], s["cc"]["n_tool_calls"], s["cc"]["n_turns"]) == (11, 12, 11)
    assert s["cc"]["metrics_mismatch"] == "cost_usd: atif 0.462381 vs result 0.5"
    assert s["summ"]["metrics_mismatch"] == "prompt_tokens: atif 7802 vs result 7000"
    assert (s["goose"]["n_steps"], s["goose"]["n_turns"]) == (None, 2)  # msg-asst-1, msg-asst-2
    assert tf.steps.filter(pl.col("trial_id") == "summ")["trajectory"].n_unique() == 4
    assert tf.steps.group_by("trial_id").len().sort("trial_id").rows() == [("cc", 12), ("summ", 24)]
    assert [(e.trial_id, e.job_id, e.level, e.error_type) for e in tf.errors] == [
        ("notatif", "job", "trajectory", "not_atif")
    ]
    assert tf.trial_summary.schema == {
        "trial_id": pl.String, "n_steps": pl.Int64, "n_tool_calls": pl.Int64, "n_turns": pl.Int64, "metrics_mismatch": pl.String,
        "tokens_not_recorded": pl.Boolean,
    }  # fmt: skip
    # tokens recorded in result.json; the goose log has no steps parsed: the load's flag stands
    assert [s[k]["tokens_not_recorded"] for k in ("cc", "summ", "goose")] == [False, False, None]


def test_metrics_agree_gives_null(make_trial):
    t = make_trial("cc", {"agent/trajectory.json": CC_PASS})
    tf = _build(
        trials_frame(
            [t],
            n_input_tokens=[485630],
            n_cache_tokens=[461807],
            n_output_tokens=[3304],
            cost_usd=[0.462381],
        )
    )
    assert tf.trial_summary["metrics_mismatch"].to_list() == [None]
    # hermes: final_metrics has only total_steps; result.json says 0 tokens -> nothing to compare
    h = next(HERMES.rglob("trajectory.json"))
    t2 = make_trial("hermes", {"agent/trajectory.json": h})
    tf = _build(trials_frame([t2], n_input_tokens=[0], n_output_tokens=[0]))
    assert tf.trial_summary["metrics_mismatch"].to_list() == [None]


def test_multi_step_task(make_trial):
    a = atif_doc(
        [
            {
                "step_id": 1,
                "source": "agent",
                "message": "second",
                "timestamp": "2026-01-01T00:00:10Z",
            }
        ]
    )
    b = atif_doc(
        [{"step_id": 1, "source": "agent", "message": "first", "timestamp": "2026-01-01T00:00:01Z"}]
    )
    t = make_trial(
        "ms", {"steps/a-step/agent/trajectory.json": a, "steps/b-step/agent/trajectory.json": b}
    )
    tf = _build(trials_frame([t]))
    assert tf.steps.select("task_step", "message", "trajectory", "step_index").rows() == [
        ("b-step", "first", "main", 0),
        ("a-step", "second", "main", 1),
    ]
    assert tf.trial_summary["n_steps"].to_list() == [2]


def test_non_harbor_rows_and_missing_dirs_skipped(make_trial):
    t = make_trial("cc", {"agent/trajectory.json": CC_PASS})
    trials = pl.concat(
        [
            trials_frame([t]),
            trials_frame([t]).with_columns(
                pl.lit("run_x").alias("trial_id"), pl.lit("go-code").alias("source_format")
            ),
            trials_frame([t]).with_columns(
                pl.lit("gone").alias("trial_id"), pl.lit("/nonexistent/t").alias("trial_dir")
            ),
            trials_frame([t]).with_columns(
                pl.lit(None, pl.String).alias("trial_dir"), pl.lit("nodir").alias("trial_id")
            ),
        ]
    )
    tf = _build(trials)
    assert tf.trial_summary["trial_id"].to_list() == ["cc"]
    assert tf.errors == []


def test_minimal_trials_frame(make_trial):
    t = make_trial("cc", {"agent/trajectory.json": CC_PASS})
    tf = _build(pl.DataFrame({"trial_id": ["cc"], "trial_dir": [str(t)]}))
    assert tf.trial_summary.select("n_steps", "metrics_mismatch").rows() == [(11, None)]


def test_cache_reuse_incremental_and_invalidation(make_trial, tmp_path, monkeypatch):
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    parsed: list[str] = []
    real = table.parse_trial

    def spy(trial_id, *a, **k):
        parsed.append(trial_id)
        return real(trial_id, *a, **k)

    monkeypatch.setattr(table, "parse_trial", spy)
    t1 = make_trial("t1", {"agent/trajectory.json": CC_PASS})
    t2 = make_trial("t2", {"agent/trajectory.json": T2 / "hello-world.trajectory.json"})
    first = _build(trials_frame([t1, t2]), cache=True)
    assert sorted(parsed) == ["t1", "t2"]
    parsed.clear()
    again = _build(trials_frame([t1, t2]), cache=True)
    assert parsed == []  # everything from the cache
    for a, b in (
        (first.steps, again.steps),
        (first.tool_calls, again.tool_calls),
        (first.trial_summary, again.trial_summary),
    ):
        assert_frame_equal(
            a.sort("trial_id", maintain_order=True), b.sort("trial_id", maintain_order=True)
        )
    # a new trial in the job: only it is parsed
    t3 = make_trial("t3", {"agent/trajectory.json": b"[1, 2]"})
    third = _build(trials_frame([t1, t2, t3]), cache=True)
    assert parsed == ["t3"]
    assert [e.error_type for e in third.errors] == ["not_atif"]
    parsed.clear()
    # errors come back from the cache too
    assert [e.trial_id for e in _build(trials_frame([t1, t2, t3]), cache=True).errors] == ["t3"]
    # a changed file is re-parsed (size + mtime signature)
    p = t2 / "agent" / "trajectory.json"
    p.write_bytes(p.read_bytes() + b"\n")
    os.utime(p, (time.time() + 5, time.time() + 5))
    parsed.clear()
    fourth = _build(trials_frame([t1, t2, t3]), cache=True)
    assert parsed == ["t2"]
    assert_frame_equal(
        fourth.steps.sort("trial_id", "step_index"),
        _build(trials_frame([t1, t2, t3])).steps.sort("trial_id", "step_index"),
    )
    # asking for a subset returns only that subset (the cache keeps the rest)
    parsed.clear()
    sub = _build(trials_frame([t1]), cache=True)
    assert parsed == [] and sub.steps["trial_id"].unique().to_list() == ["t1"]


def test_threaded_equals_serial(make_trial):
    srcs = [
        CC_PASS,
        T2 / "hello-world.trajectory.json",
        GOLDEN / "oracle/exit_code_trajectory.json",
    ]
    dirs = [make_trial(f"t{i:02d}", {"agent/trajectory.json": srcs[i % 3]}) for i in range(40)]
    trials = trials_frame(dirs)
    a, b = _build(trials, workers=1), _build(trials, workers=3)
    key = ("trial_id", "step_index")
    assert_frame_equal(a.steps.sort(key), b.steps.sort(key))
    assert_frame_equal(a.tool_calls.sort(*key, "call_index"), b.tool_calls.sort(*key, "call_index"))
    assert a.steps.height == sum((12, 5, 3)[i % 3] for i in range(40))


@pytest.mark.slow
def test_process_pool_equals_serial(make_trial, monkeypatch):
    dirs = [make_trial(f"t{i:03d}", {"agent/trajectory.json": CC_PASS}) for i in range(70)]
    trials = trials_frame(dirs)
    monkeypatch.setattr(table, "PROCESS_POOL_BYTES", 0)
    a, b = _build(trials, workers=1), _build(trials, workers=2)
    assert_frame_equal(
        a.steps.sort("trial_id", "step_index"), b.steps.sort("trial_id", "step_index")
    )


def test_broken_symlink_reported_missing_file_not(make_trial):
    t = make_trial("link", {"verifier/reward.txt": b"1"})
    (t / "agent").mkdir()
    (t / "agent" / "trajectory.json").symlink_to(t / "nowhere.json")
    t2 = make_trial("plain", {"verifier/reward.txt": b"1"})
    tf = _build(trials_frame([t, t2]))
    assert [(e.trial_id, e.error_type) for e in tf.errors] == [("link", "broken_link")]
    assert tf.trial_summary.height == 0


def test_summary_rows_in_another_order_than_the_trials_are_joined() -> None:
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
    s = trial_summary(index, trials)
    assert s["trial_id"].to_list() == ["b", "a"]
    assert s["metrics_mismatch"].to_list() == [None, "prompt_tokens: atif 4 vs result 5"]


def test_in_place_edit_with_mtime_restored_is_not_served_stale(make_trial, tmp_path, monkeypatch):
    """`touch -r`-style edit (same size, mtime set back): the inode change time tells."""
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    t = make_trial("t1", {"agent/trajectory.json": CC_PASS})
    trials = trials_frame([t])
    _build(trials, cache=True)
    p = t / "agent" / "trajectory.json"
    st, raw = p.stat(), p.read_bytes()
    first = _build(trials).steps["message"].drop_nulls()[0]
    edited = raw.replace(first[:8].encode(), first[:8].upper().encode(), 1)
    assert edited != raw and len(edited) == len(raw)
    time.sleep(0.01)  # a ctime the kernel can tell from the first write's
    with open(p, "r+b") as fh:  # in place, same size
        fh.write(edited)
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert p.stat().st_mtime_ns == st.st_mtime_ns and p.stat().st_size == st.st_size
    again = _build(trials, cache=True)
    assert_frame_equal(again.steps, _build(trials).steps)
    assert first[:8].upper() in again.steps["message"].drop_nulls()[0]
