"""evalkit.load.trials.extract: one Harbor trial folder -> one flat raw record.

``extract_trial`` reads a trial folder once (:class:`TrialFolder`) and fills the fields of
``RAW`` from result.json, the trial config and the folder's files. Checked here, with
expected values read off the JSON written in each test (harbor-format.md §1, §2.1): the
record of a real fixture trial, the fallbacks of each identity field (result.json, then the
trial config, then the folder), the model as provider/name, token sums over steps, reward
and exception precedence between result.json, steps and files, the evidence flags, format
hints, regrades, and the load errors (tagged with the trial id, in reading order).
(``tests/load/test_speed_paths.py`` compares the record with a frozen reference copy;
``tests/load/trials/test_fields.py`` covers the field helpers of ``trials/fields.py``.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evalkit.load.trials.extract import RAW_FIELDS, RAW_SCHEMA, TrialFolder, extract_trial
from tests.conftest import SKILLSBENCH_JOB
from tests.load.factory import trial_result, write


def _record(trial_dir: Path | str, tid: str = "tid") -> tuple[dict[str, Any], list]:
    rec, errs, _sig = extract_trial(str(trial_dir), tid)
    return dict(zip(RAW_FIELDS, rec, strict=True)), errs


def _trial(tmp_path: Path, result: Any = None, name: str = "t__abcdefg") -> Path:
    td = tmp_path / "job" / name
    td.mkdir(parents=True)
    if result is not None:
        write(td / "result.json", result)
    return td


def _bare(**fields: Any) -> dict:
    """A minimal result.json: only the given keys (plus a trial name)."""
    return {"trial_name": "bare", **fields}


# -- a real trial -------------------------------------------------------------------------


def test_a_real_skillsbench_trial_gives_the_values_its_result_json_records() -> None:
    td = SKILLSBENCH_JOB / "3d-scan-calc__cfGcT9F"
    r, errs = _record(td)
    assert errs == []
    assert r["trial_dir"] == str(td) and r["result_present"] is True
    assert r["result_id"] == "6d9f28c3-147f-4e32-ab50-d29706bc6c0d"
    assert (r["trial_name"], r["task_name"]) == ("3d-scan-calc__cfGcT9F", "3d-scan-calc")
    assert r["task_source"] == "tasks-no-skills"
    assert r["task_ref"] == "/home/user/skillsbench/tasks-no-skills/3d-scan-calc"
    assert r["task_ref_kind"] == "local"  # task_id holds only a path
    assert (r["agent_name"], r["agent_version"]) == ("claude-code", "2.1.19")
    # model_info {name: MiniMax-M2.1, provider: minimax} -> provider/name
    assert (r["model_name"], r["model_provider"]) == ("minimax/MiniMax-M2.1", "minimax")
    assert r["rewards"] == [{"name": "reward", "value": 0.0}]
    assert (r["reward"], r["reward_source"]) == (0.0, "result")
    # agent_result: 466409 in, 450006 cached, 0 out, cost null
    assert (r["n_input_tokens"], r["n_cache_tokens"], r["n_output_tokens"]) == (466409, 450006, 0)
    assert r["cost_usd"] is None
    assert r["ts_started"] == "2026-01-29T04:49:08.871595Z"
    assert r["ts_verifier_end"] == "2026-01-29T04:51:44.109358Z"
    assert r["exception_type"] is None and r["exception_message"] is None
    # only result.json in the folder: no trajectory, no verifier output; rewards recorded
    assert (r["has_trajectory"], r["has_verifier_output"]) == (False, False)
    assert r["has_reward_file"] is True
    assert r["harbor_schema"] is None and r["regrade_of"] is None


def test_the_record_has_one_value_per_raw_field_of_the_declared_dtype_kind(
    tmp_path: Path,
) -> None:
    rec, _, _ = extract_trial(str(_trial(tmp_path, trial_result("t", "t__abcdefg"))), "x")
    assert len(rec) == len(RAW_SCHEMA)
    r = dict(zip(RAW_FIELDS, rec, strict=True))
    assert isinstance(r["n_input_tokens"], int) and isinstance(r["reward"], type(None))
    assert isinstance(r["has_trajectory"], bool) and isinstance(r["task_name"], str)


# -- identity fields: result.json, then config, then the folder ----------------------------


def test_trial_name_falls_back_from_result_to_config_to_folder_name(tmp_path: Path) -> None:
    a = _trial(tmp_path, {"trial_name": "from-result", "config": {"trial_name": "cfg"}}, "a__1")
    b = _trial(tmp_path, {"trial_name": "", "config": {"trial_name": "from-config"}}, "b__1")
    c = _trial(tmp_path, {"trial_name": "", "config": {"trial_name": ""}}, "folder__xyz")
    assert _record(a)[0]["trial_name"] == "from-result"
    assert _record(b)[0]["trial_name"] == "from-config"  # an empty name is no name
    assert _record(c)[0]["trial_name"] == "folder__xyz"


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        ({"task_name": "recorded", "config": {"task": {"name": "cfg"}}}, "recorded"),
        ({"task_name": "", "config": {"task": {"name": "org/pkg"}}}, "org/pkg"),
        ({"config": {"task": {"path": "/abs/tasks/my-task/"}}}, "my-task"),  # trailing '/'
        ({"config": {"task": {"path": ""}}}, None),
        ({"config": {"task": {}}}, None),
    ],
)
def test_task_name_is_the_recorded_one_else_the_configs_name_else_its_path_tail(
    tmp_path: Path, result: dict, expected: str | None
) -> None:
    assert _record(_trial(tmp_path, result))[0]["task_name"] == expected


def test_task_source_prefers_result_then_task_config_and_only_takes_text(tmp_path: Path) -> None:
    a = _trial(tmp_path, {"source": "ds-a", "config": {"task": {"source": "ds-b"}}}, "a__1")
    b = _trial(tmp_path, {"source": "", "config": {"task": {"source": "ds-b"}}}, "b__1")
    c = _trial(tmp_path, {"source": None, "config": {"task": {"source": 7}}}, "c__1")
    assert [_record(d)[0]["task_source"] for d in (a, b, c)] == ["ds-a", "ds-b", None]


def test_task_ref_prefers_result_task_id_over_the_task_config(tmp_path: Path) -> None:
    td = _trial(
        tmp_path,
        {"task_id": {"org": "o", "name": "n", "ref": "v1"}, "config": {"task": {"path": "p"}}},
    )
    r = _record(td)[0]
    assert (r["task_ref"], r["task_ref_kind"]) == ("o/n@v1", "package")
    # without a task_id, the config's task (a local path) is the reference
    r = _record(_trial(tmp_path, {"config": {"task": {"path": "tasks/x"}}}, "b__1"))[0]
    assert (r["task_ref"], r["task_ref_kind"]) == ("tasks/x", "local")


def test_agent_name_falls_back_to_config_name_then_import_path(tmp_path: Path) -> None:
    a = _trial(tmp_path, {"agent_info": {"name": "info"}, "config": {"agent": {"name": "c"}}}, "a__1")  # fmt: skip
    b = _trial(tmp_path, {"agent_info": {"name": ""}, "config": {"agent": {"name": "cfg"}}}, "b__1")  # fmt: skip
    c = _trial(tmp_path, {"config": {"agent": {"import_path": "pkg.mod:Agent"}}}, "c__1")
    assert [_record(d)[0]["agent_name"] for d in (a, b, c)] == ["info", "cfg", "pkg.mod:Agent"]
    assert _record(c)[0]["agent_import_path"] == "pkg.mod:Agent"


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("1.2.3", "1.2.3"),
        ("  hermes 0.9  \nbanner line\nmore", "hermes 0.9"),  # first line, stripped
        ("   ", "   "),  # only blanks: kept as recorded
        (3, None),  # not text
    ],
)
def test_agent_version_is_the_first_line_of_the_recorded_text(
    tmp_path: Path, version: object, expected: str | None
) -> None:
    td = _trial(tmp_path, {"agent_info": {"version": version}})
    assert _record(td)[0]["agent_version"] == expected


@pytest.mark.parametrize(
    ("model_info", "cfg_model", "expected"),
    [
        ({"name": "claude-x", "provider": "anthropic"}, None, ("anthropic/claude-x", "anthropic")),
        # a name that already has a '/' is not prefixed again
        ({"name": "openai/gpt-x", "provider": "openrouter"}, None, ("openai/gpt-x", "openrouter")),
        # provider null (allowed since 0.6.0): the name alone
        ({"name": "m", "provider": None}, None, ("m", None)),
        # no model_info: the config's model_name; its provider is the part before '/'
        (None, "minimax/MiniMax-M2.1", ("minimax/MiniMax-M2.1", "minimax")),
        ({"name": "", "provider": None}, "plain-model", ("plain-model", None)),
        # a recorded name wins over the config, the provider still comes from the config
        ({"name": "m2", "provider": None}, "prov/m1", ("m2", "prov")),
    ],
)
def test_model_is_provider_slash_name_when_the_provider_is_known(
    tmp_path: Path, model_info: dict | None, cfg_model: str | None, expected: tuple
) -> None:
    res = {"agent_info": {"model_info": model_info}, "config": {"agent": {"model_name": cfg_model}}}
    r = _record(_trial(tmp_path, res))[0]
    assert (r["model_name"], r["model_provider"]) == expected


# -- tokens -----------------------------------------------------------------------------


def test_tokens_of_a_multi_step_trial_are_the_sums_of_its_steps(tmp_path: Path) -> None:
    steps = [
        {
            "agent_result": {
                "n_input_tokens": 10,
                "n_cache_tokens": 4,
                "n_output_tokens": 3,
                "cost_usd": 0.25,
            }
        },
        {
            "agent_result": {
                "n_input_tokens": 5,
                "n_cache_tokens": 1,
                "n_output_tokens": None,
                "cost_usd": 0.5,
            }
        },
    ]
    r = _record(_trial(tmp_path, _bare(step_results=steps)))[0]
    # 10 + 5 = 15 input, 4 + 1 = 5 cached, one step has no output count -> unknown,
    # 0.25 + 0.5 = 0.75 cost
    assert (r["n_input_tokens"], r["n_cache_tokens"], r["n_output_tokens"]) == (15, 5, None)
    assert r["cost_usd"] == 0.75


def test_a_top_level_agent_result_wins_over_the_steps(tmp_path: Path) -> None:
    steps = [{"agent_result": {"n_input_tokens": 99}}]
    res = _bare(agent_result={"n_input_tokens": 7, "cost_usd": float("inf")}, step_results=steps)
    r = _record(_trial(tmp_path, res))[0]
    assert r["n_input_tokens"] == 7 and r["n_cache_tokens"] is None
    assert r["cost_usd"] is None  # a non-finite cost is no cost


def test_a_step_that_is_not_an_object_makes_the_sums_unknown(tmp_path: Path) -> None:
    steps = [{"agent_result": {"n_input_tokens": 3}}, "garbage"]
    r = _record(_trial(tmp_path, _bare(step_results=steps)))[0]
    assert r["n_input_tokens"] is None


# -- rewards ----------------------------------------------------------------------------


def test_result_rewards_keep_every_key_and_the_reward_key_is_primary(tmp_path: Path) -> None:
    res = _bare(verifier_result={"rewards": {"accuracy": 0.5, "reward": 1.0}})
    r = _record(_trial(tmp_path, res))[0]
    assert r["rewards"] == [{"name": "accuracy", "value": 0.5}, {"name": "reward", "value": 1.0}]
    assert (r["reward"], r["reward_source"]) == (1.0, "result")


def test_a_multi_step_trial_takes_the_last_step_that_recorded_rewards(tmp_path: Path) -> None:
    steps = [
        {"verifier_result": {"rewards": {"reward": 0.25}}},
        {"verifier_result": {"rewards": {"reward": 0.75}}},
        {"verifier_result": None},  # the last step did not verify
    ]
    r = _record(_trial(tmp_path, _bare(step_results=steps)))[0]
    assert (r["reward"], r["reward_source"]) == (0.75, "result")


def test_integer_rewards_become_floats_and_text_rewards_are_dropped_with_an_error(
    tmp_path: Path,
) -> None:
    res = _bare(verifier_result={"rewards": {"reward": 1, "headline": "good"}})
    r, errs = _record(_trial(tmp_path, res), "T1")
    assert r["rewards"] == [{"name": "reward", "value": 1.0}]
    assert type(r["rewards"][0]["value"]) is float
    assert [(e.error_type, e.trial_id) for e in errs] == [("non_numeric_reward", "T1")]


def test_reward_files_are_read_only_when_result_json_has_no_rewards(tmp_path: Path) -> None:
    with_rewards = _trial(tmp_path, _bare(verifier_result={"rewards": {"reward": 0.0}}), "a__1")
    without = _trial(tmp_path, _bare(verifier_result=None), "b__1")
    for td in (with_rewards, without):
        (td / "verifier").mkdir()
        (td / "verifier" / "reward.txt").write_text("0.5\n")
    a, b = _record(with_rewards)[0], _record(without)[0]
    assert (a["reward"], a["reward_source"]) == (0.0, "result")
    assert (b["reward"], b["reward_source"]) == (0.5, "reward.txt")
    assert a["has_reward_file"] is b["has_reward_file"] is True


def test_no_rewards_anywhere_is_a_null_reward_and_no_reward_file(tmp_path: Path) -> None:
    r = _record(_trial(tmp_path, _bare(verifier_result={"rewards": None})))[0]
    assert (r["rewards"], r["reward"], r["reward_source"]) == ([], None, None)
    assert r["has_reward_file"] is False


def test_reward_valid_is_kept_only_when_recorded_as_a_boolean(tmp_path: Path) -> None:
    a = _trial(tmp_path, _bare(reward_valid=False), "a__1")
    b = _trial(tmp_path, _bare(reward_valid=1), "b__1")
    assert _record(a)[0]["reward_valid_recorded"] is False
    assert _record(b)[0]["reward_valid_recorded"] is None


# -- exception ---------------------------------------------------------------------------


def test_the_exception_is_result_jsons_else_the_first_steps(tmp_path: Path) -> None:
    top = {"exception_type": "AgentTimeoutError", "exception_message": "slow", "occurred_at": "2026-05-01T10:00:00Z"}  # fmt: skip
    steps = [
        {"exception_info": None},
        {"exception_info": {"exception_type": "StepOne", "exception_message": "m1"}},
        {"exception_info": {"exception_type": "StepTwo", "exception_message": "m2"}},
    ]
    a = _record(_trial(tmp_path, _bare(exception_info=top, step_results=steps), "a__1"))[0]
    b = _record(_trial(tmp_path, _bare(exception_info=None, step_results=steps), "b__1"))[0]
    assert (a["exception_type"], a["exception_message"]) == ("AgentTimeoutError", "slow")
    assert a["ts_exception"] == "2026-05-01T10:00:00Z"
    assert (b["exception_type"], b["exception_message"]) == ("StepOne", "m1")
    assert b["ts_exception"] is None


def test_a_non_text_exception_message_is_its_text_and_an_empty_time_is_none(
    tmp_path: Path,
) -> None:
    exc = {"exception_type": 3, "exception_message": 404, "occurred_at": ""}
    r = _record(_trial(tmp_path, _bare(exception_info=exc)))[0]
    assert (r["exception_type"], r["exception_message"], r["ts_exception"]) == (None, "404", None)


def test_without_result_json_the_exception_comes_from_exception_txt(tmp_path: Path) -> None:
    td = _trial(tmp_path)
    (td / "exception.txt").write_text(
        "Traceback (most recent call last):\n"
        '  File "x.py", line 1, in <module>\n'
        "asyncio.exceptions.CancelledError: stopped\n"
    )
    r, errs = _record(td)
    assert r["result_present"] is False and errs == []
    # the last dotted part is the name result.json would record (tracebacks.py)
    assert (r["exception_type"], r["exception_message"]) == ("CancelledError", "stopped")
    assert r["reward"] is None and r["trial_name"] == "t__abcdefg"


# -- evidence and hints ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (["agent/trajectory.json"], True),
        (["agent/claude-code.trajectory.json"], True),
        (["steps/step-1/agent/trajectory.json"], True),
        (["agent/claude-code.txt"], False),
        (["steps/step-1/agent/other.json"], False),
        ([], False),
    ],
)
def test_has_trajectory_looks_for_atif_files_in_agent_and_steps(
    tmp_path: Path, files: list[str], expected: bool
) -> None:
    td = _trial(tmp_path, _bare())
    for f in files:
        (td / f).parent.mkdir(parents=True, exist_ok=True)
        (td / f).write_text("{}")
    assert _record(td)[0]["has_trajectory"] is expected


def test_verifier_output_and_artifacts_manifest_flags(tmp_path: Path) -> None:
    td = _trial(tmp_path, _bare())
    (td / "verifier").mkdir()
    (td / "verifier" / "test-stderr.txt").write_text("")
    (td / "artifacts").mkdir()
    (td / "artifacts" / "manifest.json").write_text("[]")
    r = _record(td)[0]
    assert r["has_verifier_output"] is True and r["has_artifacts_manifest"] is True
    assert r["has_reward_file"] is False  # output is not a reward file
    other = _trial(tmp_path, _bare(), "b__1")
    (other / "verifier").mkdir()
    (other / "verifier" / "judge_reasoning.txt").write_text("x")
    (other / "artifacts").mkdir()  # a folder without manifest.json
    r = _record(other)[0]
    assert r["has_verifier_output"] is False and r["has_artifacts_manifest"] is False


def test_harbor_schema_lists_the_format_hints_in_order(tmp_path: Path) -> None:
    td = _trial(tmp_path, _bare(schema_version=1, step_results=[{}]))
    (td / "lock.json").write_text("{}")
    assert _record(td)[0]["harbor_schema"] == "v1,trial-lock,multi-step"
    plain = _trial(tmp_path, _bare(step_results=[]), "b__1")  # no steps: not multi-step
    assert _record(plain)[0]["harbor_schema"] is None


@pytest.mark.parametrize(
    ("source_trial", "expected"),
    [
        ({"action": "regrade", "trial_id": "src-id", "path": "/jobs/a/t__1"}, "src-id"),
        ({"action": "regrade", "path": "/jobs/a/t__1"}, "/jobs/a/t__1"),
        ({"action": "rerun", "trial_id": "src-id"}, None),
        ("regrade", None),
    ],
)
def test_regrade_of_names_the_source_trial_of_a_regrade_only(
    tmp_path: Path, source_trial: object, expected: str | None
) -> None:
    td = _trial(tmp_path, _bare(config={"source_trial": source_trial}))
    assert _record(td)[0]["regrade_of"] == expected


# -- config and load errors --------------------------------------------------------------


def test_config_json_is_read_when_result_json_has_no_config(tmp_path: Path) -> None:
    td = _trial(tmp_path, _bare(config={}))
    write(td / "config.json", {"job_id": "J", "agent": {"model_name": "p/m"}})
    r = _record(td)[0]
    assert r["recorded_job_id"] == "J" and r["model_name"] == "p/m"
    # result.json's own config wins: config.json is then not read at all
    td2 = _trial(tmp_path, _bare(config={"job_id": "inner"}), "b__1")
    (td2 / "config.json").write_bytes(b"{broken")
    r2, errs = _record(td2)
    assert r2["recorded_job_id"] == "inner" and errs == []


def test_a_result_json_that_is_not_an_object_is_a_wrong_type_error(tmp_path: Path) -> None:
    td = _trial(tmp_path)
    (td / "result.json").write_text("[1, 2]")
    r, errs = _record(td, "T9")
    assert r["result_present"] is False and r["reward"] is None
    assert [(e.path, e.level, e.error_type, e.trial_id) for e in errs] == [
        (str(td / "result.json"), "trial", "wrong_type", "T9")
    ]
    assert "list" in errs[0].message


def test_errors_are_collected_in_reading_order_with_the_trial_id(tmp_path: Path) -> None:
    td = _trial(tmp_path)
    (td / "result.json").write_text("{oops")
    (td / "config.json").write_text("{also broken")
    _, errs = _record(td, "T2")
    # result.json is read first, then config.json (result.json gave no config)
    assert [Path(e.path).name for e in errs] == ["result.json", "config.json"]
    assert {e.trial_id for e in errs} == {"T2"}
    assert all(e.error_type == "json_decode" for e in errs)


def test_an_unlistable_verifier_folder_is_an_unreadable_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    td = _trial(tmp_path, _bare(verifier_result=None))
    (td / "verifier").mkdir()
    real = os.listdir

    def listdir(p: str) -> list[str]:
        if str(p).endswith("verifier"):
            raise PermissionError(13, "Permission denied", p)
        return real(p)

    monkeypatch.setattr(os, "listdir", listdir)
    r, errs = _record(td, "T3")
    assert [(e.error_type, e.path, e.trial_id) for e in errs] == [
        ("unreadable", str(td / "verifier"), "T3")
    ]
    assert r["has_reward_file"] is False and r["has_verifier_output"] is False


def test_trial_folder_reads_values_once_and_joins_paths_without_a_double_slash(
    tmp_path: Path,
) -> None:
    td = _trial(tmp_path, _bare(verifier_result={"rewards": {"reward": 1.0}}))
    folder = TrialFolder(str(td) + "/", "x")
    assert folder.res_path == str(td) + "/result.json"
    assert folder.rewards is folder.rewards  # computed on first use, then kept
    assert folder.result["trial_name"] == "bare"


def test_a_missing_trial_folder_is_an_unreadable_error_and_a_record_of_the_path(
    tmp_path: Path,
) -> None:
    gone = tmp_path / "job" / "gone__1234567"
    r, errs = _record(gone)
    assert [e.error_type for e in errs] == ["unreadable"]
    assert r["trial_dir"] == str(gone) and r["trial_name"] == "gone__1234567"
    assert r["result_present"] is False
