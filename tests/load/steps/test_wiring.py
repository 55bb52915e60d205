"""evalkit.load wiring: trajectories on first access, trial columns filled, rollouts discovered."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import polars as pl

import evalkit

TESTS = Path(__file__).parents[2]
OPENCLAW = TESTS / "fixtures" / "harbor" / "openclaw-dev-jobs"
ROLLOUTS = TESTS / "fixtures" / "rollouts"


def test_harbor_trajectories_through_load():
    runs = evalkit.load(OPENCLAW, progress=False)
    assert runs.trials["n_steps"].null_count() == runs.trials.height  # not parsed yet
    steps, calls = runs.steps, runs.tool_calls
    # the 11 hermes-gateway ATIF files: 46 steps, 12 tool calls, 29 agent steps (read with json)
    assert (steps.height, calls.height) == (46, 12)
    t = runs.trials.filter(pl.col("n_steps").is_not_null())
    assert t.height == 11 and t["n_steps"].sum() == 29 and t["n_tool_calls"].sum() == 12
    assert (t["n_turns"] == t["n_steps"]).all() and t["metrics_mismatch"].null_count() == 11
    assert set(steps["trial_id"].unique()) <= set(runs.trials["trial_id"])
    assert runs.load_errors.filter(pl.col("level") == "trajectory").height == 0


def test_rollout_folder_through_load(tmp_path):
    d = tmp_path / "rollouts" / "2026-07-27"
    d.mkdir(parents=True)
    shutil.copy(
        ROLLOUTS / "run-toolcall-golden.DERIVED-rollout.jsonl",
        d / "run_8cacf024-8246-4c1c-8d53-7764b878d664.jsonl",
    )
    ap = {
        "ts": "2026-07-27T01:40:56Z",
        "seq": 99,
        "type": "tool.antipattern",
        "data": {"type": "retry_loop", "tool": "ls", "call_count": 3, "step": 1},
    }
    with open(d / "run_8cacf024-8246-4c1c-8d53-7764b878d664.jsonl", "ab") as fh:
        fh.write(orjson.dumps(ap) + b"\n")
    runs = evalkit.load(tmp_path / "rollouts", progress=False)
    t = runs.trials.row(0, named=True)
    assert (t["source_format"], t["trial_id"], t["cost_usd"], t["n_steps"], t["attempt"]) == (
        "go-code", "run_8cacf024-8246-4c1c-8d53-7764b878d664", 0.0025, 2, 1,
    )  # fmt: skip
    assert t["run"] is not None
    assert (runs.steps.height, runs.tool_calls.height) == (3, 1)
    rec = runs.findings.filter(pl.col("source") == "recorded")
    assert rec.select("detector", "step_start").rows() == [("retry_loop", 1)]
    assert runs.jobs["source_format"].to_list() == ["go-code"]


def _counting(monkeypatch, module, name: str) -> list:
    calls: list = []
    real = getattr(module, name)

    def spy(*a, **k):
        calls.append(a[0] if a else None)
        return real(*a, **k)

    monkeypatch.setattr(module, name, spy)
    return calls


def test_second_load_reads_the_trajectory_cache(tmp_path, monkeypatch):
    """runs.steps through evalkit.load writes the per-job trajectory tables; a second load
    of the unchanged folders parses nothing, and a finished job is not signed trial by
    trial; a changed trajectory of a job without finished_at is re-parsed alone."""
    from evalkit.load.steps import table

    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "runs"
    shutil.copytree(OPENCLAW, root)
    parsed = _counting(monkeypatch, table, "parse_trial")
    probed = _counting(monkeypatch, table, "probe")
    first = evalkit.load(root, progress=False)
    steps, calls = first.steps, first.tool_calls
    assert len(parsed) >= 11 and any((tmp_path / "cache").rglob("traj_*"))
    parsed.clear(), probed.clear()
    again = evalkit.load(root, progress=False)
    assert again.steps.equals(steps) and again.tool_calls.equals(calls)
    assert parsed == []  # every table from the cache
    finished = again.jobs.filter(pl.col("finished_at").is_not_null())
    assert finished.height > 0
    signed_jobs = {str(Path(d).parent) for d in probed}
    assert not signed_jobs & set(finished["job_dir"].to_list())
    # a trajectory rewritten in a job that has not finished: only that trial is re-parsed
    open_jobs = again.jobs.filter(pl.col("finished_at").is_null())["job_dir"].to_list()
    if open_jobs:
        t = again.trials.filter(
            pl.col("job_id").is_in(
                again.jobs.filter(pl.col("job_dir") == open_jobs[0])["job_id"].implode()
            )
        )
        traj = next(
            Path(d) / "agent" / "trajectory.json"
            for d in t["trial_dir"]
            if (Path(d) / "agent" / "trajectory.json").exists()
        )
        traj.write_bytes(traj.read_bytes() + b"\n")
        parsed.clear()
        _ = evalkit.load(root, progress=False).steps
        assert parsed == [t.filter(pl.col("trial_dir") == str(traj.parents[1]))["trial_id"].item()]


def test_trajectory_counts_agree_in_every_trials_frame_after_steps_are_read():
    """n_steps / n_tool_calls are filled lazily: null in runs.trials before trajectories
    are parsed; after, every read of runs.trials (and of a redacted copy) holds the same
    values, equal to the main agent's steps and calls in runs.steps / runs.tool_calls."""
    runs = evalkit.load(OPENCLAW, cache=False, progress=False)
    before = runs.trials
    assert before["n_steps"].null_count() == before.height
    steps, calls = runs.steps, runs.tool_calls
    first, second = runs.trials, runs.trials
    assert first.equals(second) and runs.redacted().trials["n_steps"].equals(first["n_steps"])
    main = pl.col("is_main") & ~pl.col("is_copied_context").fill_null(False)
    want = (
        steps.filter(main & (pl.col("source") == "agent"))
        .group_by("trial_id")
        .len("want")
        .join(
            calls.filter(pl.col("is_main")).group_by("trial_id").len("want_calls"),
            on="trial_id",
            how="left",
        )
    )
    got = first.join(want, on="trial_id", how="inner")
    assert got.height == 11
    assert (got["n_steps"] == got["want"]).all()
    assert (got["n_tool_calls"] == got["want_calls"].fill_null(0)).all()
