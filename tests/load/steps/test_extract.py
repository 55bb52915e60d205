"""steps/extract.py: find and stitch a trial's trajectory files.

Checked at the level of the module's functions, on folders built in tmp_path: reference
resolution (``_resolve``: inside the referring folder only, container paths by base name,
the ``<prefix>`` fallback of Harbor's golden files), labels (``_prefix``, ``_sub_label``,
``_Ctx.unique_label``), JSON Lines detection, what ``_Ctx.load`` hands on (Structs, a
generic dict, or an error row), unlinked continuations in cont-N number order, the
final_metrics of the last file of the chain, multi-step task order when a timestamp is
missing, and ``parse_trial`` / ``parse_file`` (the caller's listing, a shared
accumulator, goose turns when there is no trajectory).
"""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from evalkit.load.steps.atif import Acc
from evalkit.load.steps.atif_schema import Trajectory
from evalkit.load.steps.extract import (
    Listing,
    TrialParse,
    _Ctx,
    _looks_jsonl,
    _prefix,
    _resolve,
    _sub_label,
    parse_file,
    parse_main,
    parse_trial,
    task_step_files,
)
from tests.load.steps.steps_helpers import NATIVE, atif_doc, write_json


def _steps(*msgs: str, source: str = "agent", ts: str | None = None) -> list[dict]:
    out = []
    for i, m in enumerate(msgs):
        s = {"step_id": i + 1, "source": source, "message": m}
        if ts is not None:
            s["timestamp"] = ts
        out.append(s)
    return out


def _messages(tp: TrialParse) -> list[tuple]:
    S = tp.acc.step_columns()
    return list(zip(S["trajectory"], S["message"], strict=True))


# --- _resolve -------------------------------------------------------------------------


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    d = tmp_path / "agent"
    d.mkdir()
    (d / "sub.json").write_text("{}")
    (d / "g.only.json").write_text("{}")
    (d / "nested").mkdir()
    (d / "nested" / "deep.json").write_text("{}")
    (tmp_path / "outside.json").write_text("{}")
    return d


@pytest.mark.parametrize(
    ("prefix", "ref", "found"),
    [
        ("", "sub.json", "sub.json"),
        ("", "nested/deep.json", "nested/deep.json"),
        ("", "nested/../sub.json", "sub.json"),  # normalised, still inside
        ("", "/logs/agent/sub.json", "sub.json"),  # a container path: by base name
        ("", "/logs/agent/nested/deep.json", None),  # base name only: deep.json is not here
        ("g.", "only.json", "g.only.json"),  # <prefix><ref> when <ref> is absent
        ("", "only.json", None),
        ("", "../outside.json", None),  # escapes the folder
        ("", "nested", None),  # a folder, not a file
        ("", "", None),
        ("", "a\x00b", None),
        ("", 5, None),
    ],
)
def test_resolve_finds_references_inside_the_referring_folder(folder, prefix, ref, found):
    got = _resolve(str(folder), prefix, ref)
    assert got == (os.path.normpath(folder / found) if found else None)


def test_resolve_prefers_the_reference_itself_to_the_prefixed_name(folder):
    (folder / "g.sub.json").write_text("{}")
    assert _resolve(str(folder), "g.", "sub.json") == str(folder / "sub.json")


# --- names and labels -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "prefix"),
    [
        ("/a/trajectory.json", ""),
        ("/a/hello-world.trajectory.json", "hello-world."),
        ("/a/other.json", ""),
        ("/a/trajectory.json.bak", ""),
    ],
)
def test_prefix_is_what_comes_before_trajectory_json(path, prefix):
    assert _prefix(path) == prefix


@pytest.mark.parametrize(
    ("path", "prefix", "label"),
    [
        ("/a/trajectory.summarization-1-summary.json", "", "summarization-1-summary"),
        ("/a/hw.trajectory.summarization-2-answers.json", "hw.", "summarization-2-answers"),
        ("/a/hw.trajectory.x.json", "", "hw.trajectory.x"),  # another prefix: kept whole
        ("/a/worker.json", "", "worker"),
        ("/a/notes.txt", "", "notes.txt"),
    ],
)
def test_sub_label_is_the_file_name_without_trajectory_and_json(path, prefix, label):
    assert _sub_label(path, prefix) == label


def test_unique_label_numbers_repeats():
    ctx = _Ctx(TrialParse("t"), None)
    got = [ctx.unique_label(x) for x in ("main", "sub", "main", "main", "sub")]
    assert got == ["main", "sub", "main#2", "main#3", "sub#2"]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b'{"a": 1}\n{"b": 2}\n', True),
        (b'\n\n{"a": 1}\n{"b": 2}', True),  # leading blank lines
        (b'{"a": 1}\n', False),  # one object: not lines
        (b'[1]\n{"b": 2}', False),  # the first line is no object
        (b'{"a": \n1}\n{"b": 2}', False),  # the first line is no JSON
        (b"", False),
        (None, False),
    ],
)
def test_looks_jsonl_wants_a_first_line_object_and_more_lines(data, expected):
    assert _looks_jsonl(data) is expected


# --- _Ctx.load ------------------------------------------------------------------------


def test_load_decodes_strict_files_and_parses_the_others_generically(tmp_path):
    ctx = _Ctx(TrialParse("t"), "job")
    strict = write_json(tmp_path / "a.json", atif_doc(_steps("m")))
    loose = write_json(
        tmp_path / "b.json", atif_doc([{"source": "agent", "metrics": {"prompt_tokens": "3"}}])
    )
    assert isinstance(ctx.load(str(strict)), Trajectory)
    got = ctx.load(str(loose))
    assert isinstance(got, dict) and got["steps"][0]["metrics"] == {"prompt_tokens": "3"}
    nan = tmp_path / "c.json"
    nan.write_bytes(b'{"schema_version": "ATIF-v1.2", "steps": [{"metrics": {"cost_usd": NaN}}]}')
    assert isinstance(ctx.load(str(nan)), dict)
    assert ctx.tp.errors == []


def test_load_gives_none_and_one_error_row_for_what_is_not_atif(tmp_path):
    ctx = _Ctx(TrialParse("t"), "job")
    unknown = write_json(tmp_path / "x.json", {"schema_version": "2.0", "steps": []})
    lines = tmp_path / "y.json"
    lines.write_bytes(b'{"type": "a"}\n{"type": "b"}\n')
    assert ctx.load(str(unknown)) is None and ctx.load(str(lines)) is None
    assert ctx.load(str(tmp_path / "gone.json"), missing_ok=True) is None
    assert ctx.load(str(tmp_path / "gone.json")) is None
    got = [(e.error_type, e.level, e.job_id, e.trial_id) for e in ctx.tp.errors]
    assert got == [
        ("not_atif", "trajectory", "job", "t"),
        ("not_atif", "trajectory", "job", "t"),
        ("missing", "trajectory", "job", "t"),  # missing_ok: only the second is reported
    ]
    assert "schema_version '2.0'" in ctx.tp.errors[0].message
    assert ctx.tp.errors[1].message == "JSON Lines (one object per line), not an ATIF trajectory"


# --- parse_main: continuations and final metrics --------------------------------------


def test_unlinked_continuations_follow_in_cont_number_order(tmp_path):
    agent = tmp_path / "agent"
    write_json(agent / "trajectory.json", atif_doc(_steps("main")))
    for n in (10, 2, 1):
        write_json(agent / f"trajectory.cont-{n}.json", atif_doc(_steps(f"c{n}")))
    write_json(agent / "trajectory.cont-x.json", atif_doc(_steps("not a cont")))
    write_json(agent / "trajectory.cont-3.json.bak", atif_doc(_steps("backup")))
    tp = parse_file(str(agent / "trajectory.json"), "t")
    # 2 before 10: by number, not text; cont-x / .bak are no continuation files
    assert [m for _, m in _messages(tp)] == ["main", "c1", "c2", "c10"]
    assert [e.error_type for e in tp.errors] == ["unlinked_continuation"] * 3
    assert tp.n_steps == 4 and tp.n_turns == 4


def test_final_metrics_come_from_the_last_file_of_the_chain_that_has_them(tmp_path):
    agent = tmp_path / "agent"
    write_json(
        agent / "trajectory.json",
        atif_doc(
            _steps("a"),
            version="ATIF-v1.6",
            final_metrics={"total_prompt_tokens": 1},
            continued_trajectory_ref="trajectory.cont-1.json",
        ),
    )
    write_json(
        agent / "trajectory.cont-1.json",
        atif_doc(
            _steps("b"),
            version="ATIF-v1.1",
            final_metrics={"total_prompt_tokens": 9},
            continued_trajectory_ref="trajectory.cont-2.json",
        ),
    )
    write_json(agent / "trajectory.cont-2.json", atif_doc(_steps("c")))  # no final_metrics
    tp = parse_file(str(agent / "trajectory.json"), "t")
    assert [m for _, m in _messages(tp)] == ["a", "b", "c"]
    # cont-1 is the last file with final_metrics; its version goes with them
    assert tp.final_metrics == [({"total_prompt_tokens": 9}, (1, 1))]
    assert tp.errors == []


def test_a_referenced_continuation_that_fails_is_reported_once(tmp_path):
    # referenced, so not "unlinked"; unreadable, so one not_atif (read once)
    agent = tmp_path / "agent"
    write_json(
        agent / "trajectory.json",
        atif_doc(_steps("a"), continued_trajectory_ref="trajectory.cont-1.json"),
    )
    (agent / "trajectory.cont-1.json").write_bytes(b"[1, 2]")
    tp = parse_trial("t", str(tmp_path))
    assert [(Path(e.path).name, e.error_type) for e in tp.errors] == [
        ("trajectory.cont-1.json", "not_atif")
    ]


def test_a_continuation_that_is_not_atif_adds_no_steps_and_is_reported(tmp_path):
    agent = tmp_path / "agent"
    write_json(
        agent / "trajectory.json",
        atif_doc(_steps("a"), continued_trajectory_ref="trajectory.cont-1.json"),
    )
    (agent / "trajectory.cont-1.json").write_bytes(b"[1, 2]")
    tp = parse_file(str(agent / "trajectory.json"), "t")
    assert [m for _, m in _messages(tp)] == ["a"]
    assert ("trajectory.cont-1.json", "not_atif") in [
        (Path(e.path).name, e.error_type) for e in tp.errors
    ]


def test_unreferenced_summarization_siblings_are_subagents_after_main(tmp_path):
    agent = tmp_path / "agent"
    write_json(agent / "trajectory.json", atif_doc(_steps("m1", "m2")))
    write_json(agent / "trajectory.summarization-1-summary.json", atif_doc(_steps("s")))
    write_json(agent / "other.summarization-1-summary.json", atif_doc(_steps("no")))
    tp = parse_file(str(agent / "trajectory.json"), "t")
    assert _messages(tp) == [("main", "m1"), ("main", "m2"), ("summarization-1-summary", "s")]
    assert tp.acc.step_columns()["is_main"] == [True, True, False]
    assert tp.n_steps == 2  # subagent steps are not the main agent's


def test_a_subagent_referenced_twice_is_read_once(tmp_path):
    ref = {"trajectory_path": "sub.json"}
    step = {
        "source": "agent",
        "observation": {"results": [{"subagent_trajectory_ref": [ref, ref]}]},
    }
    write_json(tmp_path / "trajectory.json", atif_doc([step, step]))
    write_json(tmp_path / "sub.json", atif_doc(_steps("s")))
    tp = parse_file(str(tmp_path / "trajectory.json"), "t")
    assert [t for t, _ in _messages(tp)] == ["main", "main", "sub"]


def test_subagent_labels_are_unique_per_task_step(tmp_path):
    refs = [
        {"trajectory_path": "a.json", "trajectory_id": "main"},
        {"trajectory_path": "b.json", "trajectory_id": "w"},
    ]
    step = {"source": "agent", "observation": {"results": [{"subagent_trajectory_ref": refs}]}}
    write_json(tmp_path / "trajectory.json", atif_doc([step]))
    write_json(tmp_path / "a.json", atif_doc(_steps("a")))
    write_json(tmp_path / "b.json", atif_doc(_steps("b")))
    tp = parse_file(str(tmp_path / "trajectory.json"), "t")
    # the id 'main' is taken by the main trajectory
    assert [t for t, _ in _messages(tp)] == ["main", "main#2", "w"]


def test_parse_main_of_a_missing_file_with_missing_ok_reads_nothing(tmp_path):
    tp = TrialParse("t")
    parse_main(_Ctx(tp, None), str(tmp_path / "trajectory.json"), None, missing_ok=True)
    assert (tp.has_trajectory, tp.errors, tp.acc.n_steps) == (False, [], 0)


def test_parse_main_uses_the_siblings_it_is_given_instead_of_listing(tmp_path):
    agent = tmp_path / "agent"
    write_json(agent / "trajectory.json", atif_doc(_steps("m")))
    write_json(agent / "trajectory.cont-1.json", atif_doc(_steps("c")))
    tp = TrialParse("t")
    parse_main(
        _Ctx(tp, None),
        str(agent / "trajectory.json"),
        None,
        siblings=frozenset({"trajectory.json"}),
    )
    assert [m for _, m in _messages(tp)] == ["m"]  # the listing shows no continuation


# --- task_step_files ------------------------------------------------------------------


def _task(trial: Path, name: str, ts: str | None) -> None:
    write_json(trial / "steps" / name / "agent" / "trajectory.json", atif_doc(_steps(name, ts=ts)))


def test_task_steps_are_ordered_by_name_when_a_timestamp_is_missing(tmp_path):
    _task(tmp_path, "b", "2026-01-01T00:00:01Z")
    _task(tmp_path, "a", None)
    _task(tmp_path, "c", "2026-01-01T00:00:00Z")
    assert [n for n, _ in task_step_files(str(tmp_path))] == ["a", "b", "c"]


def test_task_steps_are_ordered_by_their_first_timestamp(tmp_path):
    _task(tmp_path, "a", "2026-01-01T00:00:09Z")
    _task(tmp_path, "b", "2026-01-01T00:00:01Z")
    _task(tmp_path, "c", "2026-01-01T00:00:05Z")
    got = task_step_files(str(tmp_path))
    assert [n for n, _ in got] == ["b", "c", "a"]
    assert got[0][1] == os.path.join(str(tmp_path), "steps", "b", "agent", "trajectory.json")


@pytest.mark.parametrize(
    ("a_ts", "b_ts", "want"),
    [
        # a at 05:00 UTC (10:00+05:00) is before b at 06:00 UTC, though "10" sorts after "06"
        ("2026-01-01T10:00:00+05:00", "2026-01-01T06:00:00Z", ["a", "b"]),
        # b at 00:00:00 is before a at 00:00:00.5, though "." sorts before "Z"
        ("2026-01-01T00:00:00.5Z", "2026-01-01T00:00:00Z", ["b", "a"]),
        # an unparsable timestamp: name order
        ("soon", "2026-01-01T00:00:00Z", ["a", "b"]),
    ],
)
def test_task_steps_are_ordered_by_time_not_by_text(tmp_path, a_ts, b_ts, want):
    _task(tmp_path, "a", a_ts)
    _task(tmp_path, "b", b_ts)
    assert [n for n, _ in task_step_files(str(tmp_path))] == want


def test_task_step_folders_without_a_trajectory_are_not_task_steps(tmp_path):
    _task(tmp_path, "a", None)
    (tmp_path / "steps" / "empty" / "agent").mkdir(parents=True)
    (tmp_path / "steps" / "note.txt").write_text("x")
    assert [n for n, _ in task_step_files(str(tmp_path))] == ["a"]
    assert task_step_files(str(tmp_path / "nowhere")) == []


# --- parse_trial / parse_file ---------------------------------------------------------


def test_parse_trial_reads_main_then_task_steps_with_their_final_metrics(tmp_path):
    write_json(
        tmp_path / "agent" / "trajectory.json",
        atif_doc(_steps("root"), final_metrics={"total_cost_usd": 1}),
    )
    write_json(
        tmp_path / "steps" / "s1" / "agent" / "trajectory.json",
        atif_doc(_steps("x", "y"), version="ATIF-v1.0", final_metrics={"total_cost_usd": 2}),
    )
    tp = parse_trial("t", str(tmp_path), job_id="j")
    S = tp.acc.step_columns()
    assert S["message"] == ["root", "x", "y"] and S["task_step"] == [None, "s1", "s1"]
    assert S["step_index"] == [0, 1, 2] and S["trajectory"] == ["main"] * 3
    assert (tp.n_steps, tp.n_turns, tp.has_trajectory) == (3, 3, True)
    assert tp.final_metrics == [({"total_cost_usd": 1}, (1, 7)), ({"total_cost_usd": 2}, (1, 0))]


def test_parse_trial_trusts_the_listing_it_is_given(tmp_path):
    write_json(tmp_path / "agent" / "trajectory.json", atif_doc(_steps("main")))
    _task(tmp_path, "s1", None)
    no_main = parse_trial("t", str(tmp_path), listing=Listing(frozenset({"x.txt"}), True))
    assert [m for _, m in _messages(no_main)] == ["s1"]
    no_steps = parse_trial("t", str(tmp_path), listing=Listing(None, False))
    assert [m for _, m in _messages(no_steps)] == ["main"]
    unknown = parse_trial("t", str(tmp_path), listing=Listing(None, None))
    assert [m for _, m in _messages(unknown)] == ["main", "s1"]


def test_trials_sharing_an_accumulator_each_start_at_step_index_zero(tmp_path):
    acc = Acc()
    for name, n in (("a", 2), ("b", 3)):
        write_json(tmp_path / name / "agent" / "trajectory.json", atif_doc(_steps(*"xyz"[:n])))
        parse_trial(name, str(tmp_path / name), acc=acc)
    S = acc.step_columns()
    assert S["trial_id"] == ["a", "a", "b", "b", "b"]
    assert S["step_index"] == [0, 1, 0, 1, 2]


def test_a_trial_without_a_trajectory_counts_goose_turns(tmp_path):
    (tmp_path / "agent").mkdir()
    log = NATIVE / "goose" / "harbor-test-sample.stream-json.jsonl"
    (tmp_path / "agent" / "goose.txt").write_bytes(log.read_bytes())
    tp = parse_trial("t", str(tmp_path), agent_name="goose")
    # two assistant messages with distinct ids in the sample (msg-asst-1, msg-asst-2)
    assert (tp.has_trajectory, tp.n_steps, tp.n_turns, tp.errors) == (False, 0, 2, [])


def test_a_trial_with_nothing_reads_nothing_and_reports_nothing(tmp_path):
    tp = parse_trial("t", str(tmp_path / "empty"))
    assert (tp.has_trajectory, tp.n_turns, tp.errors, tp.acc.n_steps) == (False, None, [], 0)


def test_parse_file_reports_a_missing_file(tmp_path):
    tp = parse_file(str(tmp_path / "trajectory.json"), "t", job_id="j")
    assert (tp.has_trajectory, tp.n_turns) == (False, None)
    assert [(e.error_type, e.job_id) for e in tp.errors] == [("missing", "j")]


def test_a_dangling_symlink_is_a_broken_link(tmp_path):
    (tmp_path / "trajectory.json").symlink_to(tmp_path / "nowhere.json")
    tp = parse_file(str(tmp_path / "trajectory.json"), "t")
    assert [e.error_type for e in tp.errors] == ["broken_link"]


def test_bad_steps_of_a_file_give_one_error_row_naming_the_file(tmp_path):
    p = tmp_path / "trajectory.json"
    p.write_bytes(orjson.dumps(atif_doc(["x", {"source": "agent", "message": "m"}, 2])))
    tp = parse_file(str(p), "t")
    assert [(e.path, e.error_type, e.message) for e in tp.errors] == [
        (str(p), "bad_step", "2 step(s) are not JSON objects (skipped)")
    ]
    assert tp.n_steps == 1
