"""Harbor trial field helpers (load/trials/fields.py): task ids, phase spans and the
reward-file precedence of harbor-format.md §1 (<= 0.6 reward.txt first, >= 0.7 reward.json
first; reward.txt is {"reward": float(text)}; reward.json a flat dict of numbers)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from evalkit.load.trials.fields import (
    _json_first,
    _reward_files,
    _safe_list,
    _span,
    _task_ref,
    primary_reward,
)


@pytest.mark.parametrize(
    ("task_id", "expected"),
    [
        ({"path": "tasks/hello"}, ("tasks/hello", "local")),
        ({"org": "harbor", "name": "x", "ref": "v2"}, ("harbor/x@v2", "package")),
        ({"org": "harbor", "name": "x", "ref": None}, ("harbor/x", "package")),
        (
            {"git_url": "https://g/r.git", "git_commit_id": "abc", "path": "t/1"},
            ("https://g/r.git@abc:t/1", "git"),
        ),
        (
            {"git_url": "https://g/r.git", "git_commit_id": None, "path": None},
            ("https://g/r.git:", "git"),
        ),
        ({"name": "org/task", "ref": "1.0"}, ("org/task@1.0", "package")),  # trial config shape
        ({"name": "plain"}, (None, None)),
        ({"path": None}, (None, None)),
        (None, (None, None)),
        ("tasks/x", (None, None)),
    ],
)
def test_task_ref_shapes(task_id, expected) -> None:
    assert _task_ref(task_id) == expected


def test_span() -> None:
    assert _span({"started_at": "a", "finished_at": "b"}) == ("a", "b")
    assert _span({"started_at": "", "finished_at": 5}) == (None, None)
    assert _span({"started_at": "a"}) == ("a", None)
    assert _span(None) == (None, None)
    assert _span(["a", "b"]) == (None, None)


def test_primary_reward_prefers_the_reward_key() -> None:
    items = [{"name": "acc", "value": 0.2}, {"name": "reward", "value": 0.9}]
    assert primary_reward(items) == 0.9
    assert primary_reward(items[:1]) == 0.2
    assert primary_reward([]) is None


def test_json_first_guesses_the_harbor_version() -> None:
    assert _json_first("/t", {"environment": {"mounts_json": "[]"}}, {"lock.json"}) is True
    assert _json_first("/t", {"environment": {"mounts_json": "[]"}}, set()) is False
    assert _json_first("/t", {"environment": {"mounts": []}}, set()) is True
    assert _json_first("/t", {"environment": "docker"}, set()) is True


def _verifier(tmp_path: Path, txt: str | None = None, js=None) -> Path:
    v = tmp_path / "verifier"
    v.mkdir()
    if txt is not None:
        (v / "reward.txt").write_text(txt)
    if js is not None:
        (v / "reward.json").write_text(js if isinstance(js, str) else json.dumps(js))
    return tmp_path


def test_reward_file_precedence_by_version(tmp_path: Path) -> None:
    trial = _verifier(tmp_path, txt="0.25\n", js={"reward": 1, "speed": 0.5})
    errors: list = []
    assert _reward_files(str(trial), True, "t", errors) == (
        [{"name": "reward", "value": 1.0}, {"name": "speed", "value": 0.5}],
        "reward.json",
    )
    assert _reward_files(str(trial), False, "t", errors) == (
        [{"name": "reward", "value": 0.25}],
        "reward.txt",
    )
    assert errors == []


def test_non_numeric_reward_json_keys_are_dropped_with_an_error(tmp_path: Path) -> None:
    trial = _verifier(tmp_path, js={"headline": "great", "reward": 0.5, "flag": True})
    errors: list = []
    items, src = _reward_files(str(trial), True, "t1", errors)
    assert (items, src) == ([{"name": "reward", "value": 0.5}], "reward.json")
    assert [(e.error_type, e.level, e.trial_id) for e in errors] == [
        ("non_numeric_reward", "file", "t1"),
        ("non_numeric_reward", "file", "t1"),
    ]
    assert "'headline'" in errors[0].message and "'flag'" in errors[1].message


def test_unusable_first_file_falls_through_to_the_other(tmp_path: Path) -> None:
    trial = _verifier(tmp_path, txt="passed", js={"headline": "x"})
    errors: list = []
    # reward.txt first: not a number; reward.json: no numeric key -> nothing
    assert _reward_files(str(trial), False, None, errors) == ([], None)
    assert [e.error_type for e in errors] == ["non_numeric_reward", "non_numeric_reward"]
    (tmp_path / "verifier" / "reward.json").write_text('{"reward": 0}')
    errors = []
    assert _reward_files(str(trial), False, None, errors) == (
        [{"name": "reward", "value": 0.0}],
        "reward.json",
    )
    assert "not a number: 'passed'" in errors[0].message


def test_non_finite_reward_txt_and_bad_json(tmp_path: Path) -> None:
    trial = _verifier(tmp_path, txt=" inf ", js="{not json")
    errors: list = []
    assert _reward_files(str(trial), True, "t", errors) == ([], None)
    types = [e.error_type for e in errors]
    assert types[0] == "json_decode" and types[1] == "non_numeric_reward"
    assert "not finite" in errors[1].message
    assert all(e.trial_id == "t" for e in errors)


def test_reward_json_not_an_object(tmp_path: Path) -> None:
    trial = _verifier(tmp_path, js=[1, 2])
    errors: list = []
    assert _reward_files(str(trial), True, "t", errors) == ([], None)
    assert [(e.error_type, e.message) for e in errors] == [
        ("wrong_type", "rewards is list, expected an object")
    ]


def test_no_verifier_files(tmp_path: Path) -> None:
    errors: list = []
    assert _reward_files(str(tmp_path), True, None, errors) == ([], None)
    assert errors == []


def test_reward_txt_folder_is_a_load_error(tmp_path: Path) -> None:
    trial = _verifier(tmp_path)
    (trial / "verifier" / "reward.txt").mkdir()
    errors: list = []
    assert _reward_files(str(trial), False, "t", errors) == ([], None)
    assert [(e.error_type, e.trial_id) for e in errors] == [("not_a_file", "t")]


def test_safe_list(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("")
    assert _safe_list(str(tmp_path)) == ["a"]
    assert _safe_list(os.path.join(str(tmp_path), "missing")) == []
