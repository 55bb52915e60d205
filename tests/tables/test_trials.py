"""evalkit.tables.trials: finding a job by name / id / folder / prefix, the per-trial listing
(order, status filter, turns, the one-line error), and task_detail's redacted errors,
verifier tail and agent log tails read from trial folders made in tmp_path."""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import pytest

from evalkit.tables.trials import find_job, task_detail, trials_table

KEY = "sk-ant-abcdefghijklmnop"  # matches the provider-key pattern


def jobs(tmp_path: Path) -> pl.DataFrame:
    for d in ("nightly", "nightly-2"):
        (tmp_path / d).mkdir(exist_ok=True)
    return pl.DataFrame(
        {
            "job_id": ["id1", "id2", "id3"],
            "job_name": ["nightly", "nightly-2", "other"],
            "harbor_job_id": ["h-1", "h-2", "h-3"],
            "job_dir": [os.path.realpath(tmp_path / "nightly"),
                        os.path.realpath(tmp_path / "nightly-2"), "/nowhere/other"],
        }
    )  # fmt: skip


def test_find_job_by_name_id_harbor_id_and_folder(tmp_path: Path) -> None:
    j = jobs(tmp_path)
    assert find_job(j, "other")["job_id"].to_list() == ["id3"]
    assert find_job(j, "id2")["job_name"].to_list() == ["nightly-2"]
    assert find_job(j, "h-3")["job_id"].to_list() == ["id3"]
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "nightly-2")
    assert find_job(j, str(link))["job_id"].to_list() == ["id2"]  # resolved to the real folder


def test_find_job_prefix_only_without_an_exact_match(tmp_path: Path) -> None:
    j = jobs(tmp_path)
    # "nightly" is a name and the prefix of "nightly-2": the exact name wins
    assert find_job(j, "nightly")["job_id"].to_list() == ["id1"]
    assert find_job(j, "night")["job_id"].to_list() == ["id1", "id2"]
    assert find_job(j, "oth")["job_id"].to_list() == ["id3"]
    assert find_job(j, "zzz").height == 0


def trials_frame(tmp_path: Path | None = None) -> pl.DataFrame:
    d = (lambda n: str(tmp_path / n)) if tmp_path else (lambda n: None)
    long = "E" * 60
    return pl.DataFrame(
        {
            "job_id": ["id1", "id1", "id1", "id1", "id2"],
            "trial_name": ["b__2", "a__1", "b__1", "harbor-a__3", "a__x"],
            "task_name": ["b", "a", "b", "harbor/a", "a"],
            "attempt": [2, 1, 1, 3, 1],
            "outcome": ["error", "pass", "timeout", "fail", "pass"],
            "reward": [None, 1.0, 0.0, 0.0, 1.0],
            "duration_s": [1.0, 2.0, 3.0, 4.0, 5.0],
            "n_input_tokens": [1, 2, 3, 4, 5],
            "n_cache_tokens": [0, 0, 0, 0, 0],
            "n_output_tokens": [1, 1, 1, 1, 1],
            "n_turns": [None, 7, None, None, 1],
            "n_steps": [None, 9, 4, None, 1],
            "cost_usd": [None, 0.1, 0.2, 0.3, 0.4],
            "error_kind": ["verifier", "none", "agent", "none", "none"],
            "exception_type": ["RuntimeError", None, "AgentTimeoutError", None, None],
            "exception_message": [f"{long}\nsecond line", None, None, f"stray {KEY}", None],
            "trial_dir": [d("b__2"), d("a__1"), None, d("harbor-a__3"), d("a__x")],
        }
    )


def test_trials_table_rows_order_and_columns() -> None:
    out = trials_table(trials_frame(), ["id1"])
    assert out.columns == ["trial_name", "task_name", "attempt", "outcome", "reward",
                           "duration_s", "n_input_tokens", "n_cache_tokens", "n_output_tokens",
                           "turns", "cost_usd", "error_kind", "error"]  # fmt: skip
    assert out["trial_name"].to_list() == ["a__1", "b__1", "b__2", "harbor-a__3"]
    assert out["turns"].to_list() == [7, 4, None, None]  # n_turns, else n_steps


def test_trials_table_error_text() -> None:
    out = {r["trial_name"]: r["error"] for r in trials_table(trials_frame(), ["id1"]).to_dicts()}
    # "RuntimeError: " + first line of the message, cut to 50 characters
    assert out["b__2"] == ("RuntimeError: " + "E" * 60)[:50]
    assert out["b__1"] == "AgentTimeoutError"  # no message: the type alone
    assert out["harbor-a__3"] == "stray [REDACTED]"  # a message without a type, redacted
    assert out["a__1"] is None  # no error at all: unknown stays null


def test_trials_table_redacts_before_it_cuts() -> None:
    # a key straddling the 50-character cut must not leave its first half behind
    msg = "x" * 30 + " " + KEY  # after "RuntimeError: " the key starts at character 45
    t = trials_frame().with_columns(pl.lit(msg).alias("exception_message"))
    errors = dict(trials_table(t, ["id1"]).select("trial_name", "error").iter_rows())
    assert all("sk-" not in e and "abc" not in e for e in errors.values())
    assert errors["b__2"] == ("RuntimeError: " + msg.replace(KEY, "[REDACTED]"))[:50]


def test_trials_table_status_and_jobs_filter() -> None:
    t = trials_frame()
    assert trials_table(t, ["id1"], "pass")["trial_name"].to_list() == ["a__1"]
    assert trials_table(t, ["id1", "id2"], "pass")["trial_name"].to_list() == ["a__1", "a__x"]
    assert trials_table(t, ["id9"]).height == 0


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_task_detail_reads_and_redacts_trial_folders(tmp_path: Path) -> None:
    write(tmp_path / "a__1" / "verifier" / "test-stdout.txt",
          "\n".join(f"line {i}" for i in range(1, 21)) + f"\nFAILED {KEY}\n")  # fmt: skip
    write(tmp_path / "a__1" / "agent" / "run.log", "x\ny\nz\n")
    write(tmp_path / "a__1" / "agent" / "events.jsonl", '{"e": 1}\n')
    write(tmp_path / "a__1" / "agent" / "notes.md", "not a log")
    write(tmp_path / "a__1" / "agent" / "a.txt", f"key={KEY}\n")
    (tmp_path / "a__1" / "agent" / "sub.log").mkdir()  # a folder, not a log file
    (tmp_path / "harbor-a__3").mkdir()  # no verifier output, no agent folder
    det = task_detail(trials_frame(tmp_path), ["id1"], "nightly", "a", tail=3)
    assert (det.job_name, det.task_name) == ("nightly", "a")
    # "harbor/a" ends with "/a": the same task; job id2's trial is not included
    assert det.trials["trial_name"].to_list() == ["a__1", "harbor-a__3"]
    assert det.verifier_tail == {"a__1": "line 19\nline 20\nFAILED [REDACTED]"}
    logs = det.agent_logs["a__1"]
    assert [(name, size) for name, size, _ in logs] == [
        ("a.txt", len(f"key={KEY}\n")),
        ("events.jsonl", 9),
        ("run.log", 6),
    ]
    assert dict((n, tail) for n, _, tail in logs) == {
        "a.txt": "key=[REDACTED]",
        "events.jsonl": '{"e": 1}',
        "run.log": "x\ny\nz",
    }
    assert det.agent_logs["harbor-a__3"] == []
    assert "harbor-a__3" not in det.verifier_tail
    assert det.errors == {}  # the stray message has no exception type: not an error


def test_task_detail_errors_are_first_ten_lines_redacted(tmp_path: Path) -> None:
    msg = "\n".join([f"frame {i}" for i in range(1, 13)] + [KEY])
    t = trials_frame(tmp_path).with_columns(
        pl.when(pl.col("trial_name") == "b__2").then(pl.lit(msg + f"\n{KEY}"))
        .when(pl.col("trial_name") == "b__1").then(pl.lit(f"token {KEY}"))
        .otherwise(pl.col("exception_message")).alias("exception_message"))  # fmt: skip
    det = task_detail(t, ["id1"], "nightly", "b")
    assert det.trials["attempt"].to_list() == [1, 2]
    expected = "RuntimeError: " + "\n".join(f"frame {i}" for i in range(1, 11))
    assert det.errors["b__2"] == expected
    # b__1 has no trial folder: its error is kept, nothing is read from disk for it
    assert det.errors["b__1"] == "AgentTimeoutError: token [REDACTED]"
    assert "b__1" not in det.agent_logs and "b__1" not in det.verifier_tail
    assert det.agent_logs["b__2"] == []  # folder missing on disk


def test_task_detail_does_not_match_a_suffix_inside_a_name(tmp_path: Path) -> None:
    t = trials_frame(tmp_path).with_columns(
        pl.Series("task_name", ["xb", "a", "b", "harbor/a", "a"]))  # fmt: skip
    det = task_detail(t, ["id1"], "nightly", "b")
    assert det.trials["trial_name"].to_list() == ["b__1"]  # "xb" is another task


@pytest.mark.parametrize("tail", [1, 2])
def test_task_detail_tail_length(tmp_path: Path, tail: int) -> None:
    write(tmp_path / "a__1" / "verifier" / "test-stdout.txt", "one\ntwo\nthree\n")
    det = task_detail(trials_frame(tmp_path), ["id1"], "nightly", "a", tail=tail)
    assert det.verifier_tail["a__1"] == "\n".join(["one", "two", "three"][-tail:])
