"""``harbor analyze`` results (load/trials/analysis.py): analysis.json -> checks + summary
(docs/loading.md "harbor analyze": verdict pass / fail / not_applicable; unreadable -> a
load error and null columns)."""

from __future__ import annotations

import json
from pathlib import Path

from evalkit.load.trials.analysis import CHECK_ITEM, read_analysis


def _write(tmp_path: Path, obj) -> str:
    p = tmp_path / "analysis.json"
    p.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return str(p)


def test_checks_and_summary(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {
            "summary": "Solved by hard-coding the answer.",
            "checks": {
                "reward_hacking": {"outcome": "FAIL", "explanation": "edited the tests"},
                "task_specification": {"outcome": "pass", "explanation": "clear"},
                "custom": {"outcome": "Not_Applicable"},
                "odd": "not an object",
                "typed": {"outcome": 1, "explanation": ["x"]},
            },
        },
    )
    errors: list = []
    checks, summary = read_analysis(path, "t1", errors)
    assert errors == []
    assert summary == "Solved by hard-coding the answer."
    assert checks == [
        {"name": "reward_hacking", "verdict": "fail", "explanation": "edited the tests"},
        {"name": "task_specification", "verdict": "pass", "explanation": "clear"},
        {"name": "custom", "verdict": "not_applicable", "explanation": None},
        {"name": "odd", "verdict": None, "explanation": None},
        {"name": "typed", "verdict": None, "explanation": None},
    ]
    assert set(checks[0]) == set(CHECK_ITEM.to_schema())


def test_no_checks_object_gives_an_empty_list(tmp_path: Path) -> None:
    assert read_analysis(_write(tmp_path, {"checks": ["a"], "summary": 3}), "t", []) == ([], None)
    assert read_analysis(_write(tmp_path, {}), "t", []) == ([], None)


def test_not_an_object_is_a_wrong_type_error(tmp_path: Path) -> None:
    path = _write(tmp_path, [1])
    errors: list = []
    assert read_analysis(path, None, errors, job_id="job-1") == (None, None)
    assert [(e.path, e.level, e.error_type, e.job_id, e.trial_id) for e in errors] == [
        (path, "file", "wrong_type", "job-1", None)
    ]


def test_unreadable_file_is_a_load_error_with_its_ids(tmp_path: Path) -> None:
    errors: list = []
    assert read_analysis(_write(tmp_path, '{"summary": '), "t7", errors) == (None, None)
    missing = str(tmp_path / "nope" / "analysis.json")
    assert read_analysis(missing, "t8", errors) == (None, None)
    assert [(e.error_type, e.trial_id, e.job_id) for e in errors] == [
        ("json_decode", "t7", None),
        ("missing", "t8", None),
    ]
