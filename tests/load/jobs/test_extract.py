"""One Harbor job folder's own files -> a raw job record (load/jobs/extract.py).

harbor-format.md §2.3-2.5: the job result.json (legacy <= 0.6.1 ``stats.n_trials /
n_errors``, 0.6.2+ ``n_completed_trials / n_errored_trials`` and ``updated_at``, 0.26
``schema_version``), the job config.json (agents, datasets, ``orchestrator`` concurrency
<= 0.1.45, top level since 0.2.0) and lock.json (``created_at``, ``harbor.version``).
Checked here: every field of the record read off small job folders built in tmp_path, the
format detection, files that are absent / broken / not objects, the dataset labels, the
redacted and always-writable config text, and the default-folder-name start time.
"""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from evalkit.load.jobs.extract import (
    _config_json,
    _dataset_label,
    _join_distinct,
    _plain,
    _result_format,
    extract_job,
)


def _files(d: Path, **named) -> Path:
    """Write ``named`` as JSON files of ``d`` (``config`` -> config.json, ...)."""
    d.mkdir(parents=True, exist_ok=True)
    for stem, content in named.items():
        text = content if isinstance(content, str) else json.dumps(content)
        (d / f"{stem.replace('__', '-')}.json").write_text(text)
    return d


def test_a_current_job_folder(tmp_path: Path) -> None:
    d = _files(
        tmp_path / "my-job",
        result={
            "id": "0b7c-uuid", "started_at": "2026-01-05T10:00:00.5", "updated_at": "2026-01-05T10:30:00",
            "finished_at": "2026-01-05T10:31:00", "n_total_trials": 8,
            "stats": {"n_completed_trials": 6, "n_errored_trials": 2, "n_running_trials": 0},
        },
        config={
            "job_name": "my-job", "n_attempts": 2, "n_concurrent_trials": 4, "timeout_multiplier": 1.5,
            "environment": {"type": "docker"},
            "agents": [
                {"name": "claude-code", "model_name": "anthropic/claude-sonnet-4"},
                {"name": None, "import_path": "my_agents:Agent", "model_name": "anthropic/claude-sonnet-4"},
                {"name": "claude-code", "model_name": "openai/gpt-5"},
            ],
            "datasets": [{"name": "terminal-bench", "version": "2.0"}, {"path": "/data/my-tasks/"}],
        },
        lock={"created_at": "2026-01-05T09:59:58Z", "harbor": {"version": "0.6.4"}},
    )  # fmt: skip
    rec, errors = extract_job(str(d), "J")
    assert errors == []
    assert rec["harbor_job_id"] == "0b7c-uuid"
    assert (rec["ts_started"], rec["ts_updated"], rec["ts_finished"]) == (
        "2026-01-05T10:00:00.5",
        "2026-01-05T10:30:00",
        "2026-01-05T10:31:00",
    )
    assert (rec["result_present"], rec["finished_key"], rec["format"]) == (True, True, "counters")
    assert (rec["n_trials_declared"], rec["stats_completed"], rec["stats_errored"]) == (8, 6, 2)
    # distinct values in first-seen order; a custom agent by its import_path
    assert rec["agent_name"] == "claude-code, my_agents:Agent"
    assert rec["model_name"] == "anthropic/claude-sonnet-4, openai/gpt-5"
    assert rec["dataset"] == "terminal-bench@2.0, my-tasks"
    assert (rec["n_attempts"], rec["n_concurrent"], rec["timeout_multiplier"]) == (2, 4, 1.5)
    assert (rec["environment_type"], rec["job_name_cfg"]) == ("docker", "my-job")
    assert (rec["harbor_version"], rec["ts_lock"]) == ("0.6.4", "2026-01-05T09:59:58Z")
    assert (rec["ts_named"], rec["launch_state"]) == (None, None)
    assert (rec["analysis_checks"], rec["analysis_summary"]) == (None, None)  # not analysed
    assert json.loads(rec["config_json"])["n_attempts"] == 2


def test_a_legacy_job_folder(tmp_path: Path) -> None:
    d = _files(
        tmp_path / "2025-11-04__10-22-31",
        result={"started_at": "2025-11-04T10:22:31", "finished_at": None,
                "stats": {"n_trials": 5, "n_errors": 1}},
        config={"orchestrator": {"type": "local", "n_concurrent_trials": 8}, "timeout_multiplier": 2},
    )  # fmt: skip
    rec, errors = extract_job(str(d), "J")
    assert errors == []
    assert (rec["format"], rec["stats_completed"], rec["stats_errored"]) == ("legacy-stats", 5, 1)
    assert (rec["n_concurrent"], rec["timeout_multiplier"]) == (8, 2.0)
    # finished_at written as null: the key is there, the value is not
    assert (rec["ts_finished"], rec["finished_key"]) == (None, True)
    assert rec["ts_named"] == "2025-11-04T10:22:31"  # Harbor's default folder name
    assert (rec["agent_name"], rec["model_name"], rec["dataset"]) == (None, None, None)
    assert rec["harbor_version"] is None


def test_the_top_level_concurrency_beats_the_orchestrator_block(tmp_path: Path) -> None:
    d = _files(
        tmp_path / "j",
        config={"n_concurrent_trials": 2, "orchestrator": {"n_concurrent_trials": 8}},
    )
    assert extract_job(str(d), "J")[0]["n_concurrent"] == 2


def test_a_folder_without_job_files_gives_an_empty_record(tmp_path: Path) -> None:
    d = tmp_path / "empty-job"
    d.mkdir()
    rec, errors = extract_job(str(d), "J")
    assert errors == []
    assert (rec["result_present"], rec["finished_key"], rec["format"]) == (False, False, "missing")
    assert rec["config_json"] is None and rec["harbor_job_id"] is None
    assert rec["n_trials_declared"] is None and rec["stats_completed"] is None


def test_broken_and_non_object_job_files_are_load_errors(tmp_path: Path) -> None:
    d = _files(tmp_path / "j", result="{not json", config="[1, 2]", lock='"a string"')
    rec, errors = extract_job(str(d), "J")
    got = sorted((Path(e.path).name, e.error_type, e.level, e.job_id) for e in errors)
    assert got == [
        ("config.json", "wrong_type", "job", "J"),
        ("lock.json", "wrong_type", "job", "J"),
        ("result.json", "json_decode", "job", "J"),
    ]
    wrong = next(e for e in errors if e.path.endswith("config.json"))
    assert wrong.message == "config.json holds a list, expected an object"
    # each unreadable file reads as absent
    assert (rec["result_present"], rec["format"], rec["config_json"]) == (False, "missing", None)


def test_the_launch_record_state_is_read(tmp_path: Path) -> None:
    d = _files(tmp_path / "j", evalkit__launch={"state": "interrupted", "pid": 1})
    assert extract_job(str(d), "J")[0]["launch_state"] == "interrupted"


def test_odd_config_values_read_as_null(tmp_path: Path) -> None:
    d = _files(
        tmp_path / "j",
        config={
            "n_attempts": "3", "timeout_multiplier": True, "environment": "docker",
            "agents": {"name": "not a list"}, "datasets": [1.5, {"name": ""}],
            "n_concurrent_trials": 2.0,
        },
    )  # fmt: skip
    rec, errors = extract_job(str(d), "J")
    assert errors == []
    assert (rec["n_attempts"], rec["timeout_multiplier"], rec["environment_type"]) == (
        None,
        None,
        None,
    )
    assert (rec["agent_name"], rec["dataset"], rec["n_concurrent"]) == (None, None, 2)


def test_secrets_in_the_config_are_redacted_in_its_text(tmp_path: Path) -> None:
    secret = "zz-extract-test-value-8f3a91c2"
    d = _files(
        tmp_path / "j",
        config={"zeta": 1, "agents": [{"name": "a", "env": {"MY_SERVICE_API_KEY": secret}}], "alpha": 2},
    )  # fmt: skip
    text = extract_job(str(d), "J")[0]["config_json"]
    assert secret not in text and "[REDACTED]" in text
    assert list(json.loads(text)) == ["agents", "alpha", "zeta"]  # keys sorted


# --- helpers -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "res,expected",
    [
        ({}, "missing"),
        ({"id": "x"}, "unknown"),
        ({"stats": {"n_trials": 1}}, "legacy-stats"),
        ({"stats": {"n_completed_trials": 0}}, "counters"),
        ({"updated_at": None, "stats": {"n_trials": 1}}, "counters"),  # updated_at is 0.6.2+
        ({"schema_version": 1, "stats": {"n_completed_trials": 0}}, "v1"),
        ({"stats": "x"}, "unknown"),
    ],
)
def test_result_format(res, expected) -> None:
    assert _result_format(res) == expected


@pytest.mark.parametrize(
    "ds,expected",
    [
        ({"name": "terminal-bench", "version": "2.0"}, "terminal-bench@2.0"),
        ({"name": "org/pkg", "ref": "main"}, "org/pkg@main"),
        ({"name": "org/pkg", "version": "", "ref": "v1"}, "org/pkg@v1"),
        ({"name": "adhoc"}, "adhoc"),
        ({"name": "", "path": "/data/tasks/"}, "tasks"),  # an empty name says nothing
        ({"path": "tasks"}, "tasks"),
        ({"path": "/"}, "/"),
        ({"registry": "x"}, None),
        ({"name": 5, "path": 7}, None),
    ],
)
def test_dataset_label(ds, expected) -> None:
    assert _dataset_label(ds) == expected


def test_join_distinct_keeps_first_seen_order_and_drops_empties() -> None:
    assert _join_distinct(["b", None, "a", "b", ""]) == "b, a"
    assert _join_distinct([None, ""]) is None
    assert _join_distinct([]) is None


def test_plain_makes_any_value_writable() -> None:
    assert _plain(2**70) == float(2**70)
    assert _plain(2**64 - 1) == 2**64 - 1  # orjson writes unsigned 64-bit integers
    assert _plain(-(2**63)) == -(2**63)
    assert _plain(10**400) == str(10**400)  # too large even for a float
    assert _plain("a\ud800b") == "a?b"  # a lone surrogate
    assert _plain({1: [True, None]}) == {"1": [True, None]}
    deep: object = "leaf"
    for _ in range(70):
        deep = [deep]
    cut = _plain(deep)
    depth = 0
    while isinstance(cut, list):
        cut, depth = cut[0], depth + 1
    # levels 0..64 are copied; the list at depth 65 is cut
    assert (depth, cut) == (65, "[nested too deep]")


def test_config_json_survives_values_orjson_cannot_write() -> None:
    text = _config_json({"b": 2**70, "a": "x\ud800"})
    assert orjson.loads(text) == {"a": "x?", "b": float(2**70)}
    assert text.index('"a"') < text.index('"b"')
