"""evalkit.compare.config_diff: flattening rules, the key -> variable table, display of
differing values, the one-variable verdict, and the recorded facts of runs made of several
jobs (built here as small frames, so every expected string is known)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import polars as pl
import pytest

from evalkit.compare.config_diff import VARIABLES, config_diff, flatten, variable_of

# --------------------------------------------------------------------------------------------
# flatten
# --------------------------------------------------------------------------------------------


def test_flatten_dotted_keys_and_indexed_lists_of_objects() -> None:
    cfg = {
        "agents": [{"name": "cc", "kwargs": {"version": "1.2", "max_turns": 30}}, {"name": "x"}],
        "timeout_multiplier": 1.5,
        "quiet": False,
    }
    assert flatten(cfg) == {
        "agents[0].name": "cc",
        "agents[0].kwargs.version": "1.2",
        "agents[0].kwargs.max_turns": 30,
        "agents[1].name": "x",
        "timeout_multiplier": 1.5,
        "quiet": False,
    }


def test_flatten_lists_of_values_are_order_free_sets() -> None:
    a = flatten({"retry": {"exclude_exceptions": ["B", "A", "C"]}})
    b = flatten({"retry": {"exclude_exceptions": ["C", "A", "B"]}})
    assert a == b == {"retry.exclude_exceptions": '["A", "B", "C"]'}
    # mixed scalars sort by repr: "'x'" < "1" < "2"
    assert flatten({"v": [2, "x", 1]}) == {"v": '["x", 1, 2]'}


def test_flatten_drops_absent_values_and_aligns_old_layouts() -> None:
    assert flatten({"a": None, "b": {}, "c": [], "d": {"e": None}}) == {}
    old = {"orchestrator": {"retry": {"max_retries": 2}, "n_concurrent_trials": 8, "quiet": True,
                            "type": "local"}}  # fmt: skip
    assert flatten(old) == {
        "retry.max_retries": 2,
        "n_concurrent_trials": 8,
        "quiet": True,
        "orchestrator.type": "local",
    }


# --------------------------------------------------------------------------------------------
# variable_of
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "variable"),
    [
        ("agents[0].model_name", "model"),
        ("Agents[0].Model_Name", "model"),  # case-insensitive
        ("agent_model", "model"),
        ("model_name", "model"),
        ("model (recorded)", "model"),
        ("agents[0].name", "agent"),
        ("agent_version (recorded)", "agent"),
        ("agents[0].kwargs.version", "agent kwargs"),
        ("agents[0].env.OPENAI_BASE_URL", "env"),
        ("agents[0].env.MAX_TIMEOUT", "env"),  # env wins over a timeout-looking name
        ("agents[0].override_timeout_sec", "timeouts"),
        ("timeout_multiplier", "timeouts"),
        ("verifier.override_timeout_sec", "timeouts"),
        ("verifier.disable", "verifier"),
        ("environment.env.FOO", "env"),
        ("environment.type", "environment"),
        ("datasets[0].path", "dataset"),
        ("datasets[0].task_names", "task list"),
        ("datasets[0].n_tasks", "task list"),
        ("tasks[0].path", "task list"),
        ("task list (run)", "task list"),
        ("n_attempts", "attempts"),
        ("retry.max_retries", "retry"),
        ("harbor version (lock.json)", "harbor version"),
        ("task checksums", "task checksums"),
        ("job_name", "execution"),
        ("jobs_dir", "execution"),
        ("debug", "execution"),
        ("n_concurrent_trials", "execution"),
        ("orchestrator.type", "execution"),
        ("metrics[0].type", "execution"),
        ("artifacts[0]", "execution"),
        ("seed", "other"),
    ],
)
def test_variable_of(key: str, variable: str) -> None:
    assert variable_of(key) == variable
    assert variable in VARIABLES


# --------------------------------------------------------------------------------------------
# config_diff on configs
# --------------------------------------------------------------------------------------------

BASE = {
    "job_name": "base",
    "n_attempts": 3,
    "agents": [{"name": "claude-code", "model_name": "m1", "kwargs": {"version": "1"}}],
    "retry": {"exclude_exceptions": ["A", "B"]},
}


def edited(**changes) -> dict:
    cfg = json.loads(json.dumps(BASE))
    cfg.update(changes)
    return cfg


def test_only_scope_changes_is_no_variable_changed() -> None:
    b = edited(job_name="other", n_attempts=5, n_concurrent_trials=4,
               retry={"exclude_exceptions": ["B", "A"]})  # fmt: skip
    d = config_diff(BASE, b)
    assert d.verdict == "no variable changed" and str(d) == d.verdict
    assert d.variables == [] and d.scope == ["attempts", "execution"]
    assert not d.one_variable_changed
    rows = {r["key"]: r for r in d.rows.iter_rows(named=True)}
    assert set(rows) == {"job_name", "n_attempts", "n_concurrent_trials"}
    assert (rows["n_attempts"]["a"], rows["n_attempts"]["b"]) == ("3", "5")
    assert (rows["n_concurrent_trials"]["a"], rows["n_concurrent_trials"]["b"]) == ("-", "4")
    assert not any(r["counts"] for r in rows.values())
    assert (d.a, d.b) == ("base", "other")


def test_one_variable_and_the_display_of_values() -> None:
    b = edited()
    b["agents"][0]["model_name"] = "m2"
    b["verifier"] = {}  # absent == {}
    b["agents"][0]["kwargs"]["tools"] = []  # absent == []
    d = config_diff(BASE, b)
    assert d.verdict == "one variable changed: model" and d.one_variable_changed
    assert d.rows.rows() == [("agents[0].model_name", "model", True, "m1", "m2")]
    c = edited(debug=True, timeout_multiplier=2.5)
    d = config_diff(BASE, c)
    rows = {r["key"]: (r["a"], r["b"]) for r in d.rows.iter_rows(named=True)}
    assert rows == {"debug": ("-", "true"), "timeout_multiplier": ("-", "2.5")}
    assert d.verdict == "one variable changed: timeouts" and d.scope == ["execution"]


def test_several_variables_in_display_order() -> None:
    b = edited(seed=1, environment={"type": "docker"})
    b["agents"][0]["kwargs"]["version"] = "2"
    b["agents"][0]["model_name"] = "m2"
    d = config_diff(b, BASE)
    assert d.variables == ["model", "agent kwargs", "environment", "other"]
    assert d.verdict == "several variables changed: model, agent kwargs, environment, other"
    out = d.to_dict()
    assert set(out) == {"a", "b", "verdict", "variables", "scope", "differences", "notes"}
    assert len(out["differences"]) == d.rows.height == 4
    assert d.notes == ["configs only: recorded versions, task lists and checksums not compared"]


def test_inputs_as_json_text_and_folders(tmp_path: Path) -> None:
    job = tmp_path / "job"
    job.mkdir()
    (job / "config.json").write_text(json.dumps(edited(n_attempts=9)))
    d = config_diff(json.dumps(BASE), job)
    assert [r["key"] for r in d.rows.iter_rows(named=True)] == ["n_attempts"]
    d = config_diff(job / "config.json", str(job))
    assert d.rows.height == 0
    # no job_name: the label is "config"
    assert config_diff({"a": 1}, {"a": 2}).a == "config"
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="not a JSON object"):
        config_diff(tmp_path / "list.json", BASE)


# --------------------------------------------------------------------------------------------
# config_diff on runs (several jobs per run, recorded facts)
# --------------------------------------------------------------------------------------------


def cfg(job_name: str, model: str, version: str, attempts: int) -> str:
    return json.dumps({"job_name": job_name, "n_attempts": attempts,
                       "agents": [{"name": "cc", "model_name": model, "kwargs": {"version": version}}]})  # fmt: skip


def fake_runs() -> SimpleNamespace:
    jobs = pl.DataFrame(
        {
            "job_id": ["ja1", "ja2", "jb1", "jc1"],
            "config_json": [cfg("nightly-1", "m1", "1", 3), cfg("nightly-2", "m1", "2", 3),
                            cfg("cand", "m2", "1", 5), None],
            "harbor_version": ["0.26.0", "0.25.0", "0.26.0", "0.26.0"],
        }
    )  # fmt: skip
    trials = pl.DataFrame(
        {
            "run": ["A", "A", "A", "B", "B", "B", "B", "C"],
            "job_name": [
                "nightly-1",
                "nightly-1",
                "nightly-2",
                "cand",
                "cand",
                "cand",
                "cand",
                "c",
            ],
            "job_id": ["ja1", "ja1", "ja2", "jb1", "jb1", "jb1", "jb1", "jc1"],
            "trial_id": [f"t{i}" for i in range(8)],
            "task_name": ["x", "y", "x", "x", "y", "z", None, "x"],
            "task_checksum": ["c1", "c2", "c1", "c1", "c3", "c4", None, "c1"],
            "agent_version": ["1.0", "1.0", "1.0", "1.1", "1.1", "1.1", None, "1.0"],
            "model_name": ["m1", "m1", "m1", "m2", "m2", "m2", None, "m1"],
            "reward": [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, None, 0.0],
        }
    )
    return SimpleNamespace(jobs=jobs, trials=trials)


def test_runs_of_several_jobs_and_recorded_facts() -> None:
    d = config_diff("A", "B", runs=fake_runs())
    assert (d.a, d.b) == ("A", "B")
    rows = {r["key"]: (r["variable"], r["a"], r["b"]) for r in d.rows.iter_rows(named=True)}
    assert rows == {
        "agents[0].kwargs.version": ("agent kwargs", "varies: 1, 2", "1"),
        "agents[0].model_name": ("model", "m1", "m2"),
        "job_name": ("execution", "varies: nightly-1, nightly-2", "cand"),
        "n_attempts": ("attempts", "3", "5"),
        "harbor version (lock.json)": ("harbor version", "0.25.0, 0.26.0", "0.26.0"),
        "agent_version (recorded)": ("agent", "1.0", "1.1"),
        "model (recorded)": ("model", "m1", "m2"),
        # the unnamed trial (no result.json yet) is not a task of B's list
        "task list (run)": ("task list", "2 tasks", "3 tasks; only here: z"),
        "task checksums": ("task checksums", "2 shared task(s)", "1 changed: y"),
    }
    assert d.variables == ["model", "agent", "agent kwargs", "harbor version", "task checksums"]
    assert d.scope == ["task list", "attempts", "execution"]
    assert d.notes == []


def test_runs_same_config_but_different_checksums_is_one_variable() -> None:
    runs = fake_runs()
    t = runs.trials.with_columns(
        run=pl.Series(["A", "A", "A", "B", "B", "B", "B", "A2"]),
        job_id=pl.Series(["ja1", "ja1", "ja1", "jb1", "jb1", "jb1", "jb1", "ja1"]),
    )
    # A2 is a second run on the same job config; its checksum of task x differs
    t = t.with_columns(
        pl.when(pl.col("run") == "A2").then(pl.lit("zz")).otherwise(pl.col("task_checksum"))
        .alias("task_checksum"))  # fmt: skip
    d = config_diff("A", "A2", runs=SimpleNamespace(jobs=runs.jobs, trials=t))
    assert d.verdict == "one variable changed: task checksums"
    rows = {r["key"]: (r["a"], r["b"]) for r in d.rows.iter_rows(named=True)}
    assert rows["task checksums"] == ("1 shared task(s)", "1 changed: x")
    assert rows["task list (run)"] == ("2 tasks; only here: y", "1 tasks")


def test_run_without_a_config_is_unknown_and_mixed_sides_compare_configs_only() -> None:
    runs = fake_runs()
    d = config_diff("A", "C", runs=runs)
    assert d.verdict == "unknown: no job config recorded for B"
    assert "no job config.json recorded for B" in d.notes
    d = config_diff("B", json.loads(cfg("cand", "m2", "1", 5)), runs=runs)
    assert d.verdict == "no variable changed" and d.rows.height == 0
    assert d.notes == ["configs only: recorded versions, task lists and checksums not compared"]
