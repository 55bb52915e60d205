"""Reading one go-code rollout file (load/gocode/events.py): rollouts-gates-qc.md §1.2 says
lines are ``{ts, seq, type, data}``, may be written out of seq order (sort by seq), blank and
unparsable lines are skipped."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.load.gocode.events import TERMINAL, looks_like_rollout_file, read_rollout_file


def _write(path: Path, lines: list) -> str:
    raw = [ln if isinstance(ln, bytes) else orjson.dumps(ln) for ln in lines]
    path.write_bytes(b"\n".join(raw) + b"\n")
    return str(path)


def test_terminal_event_names() -> None:
    assert TERMINAL == ("run.completed", "run.failed", "run.cancelled")


def test_sorted_by_seq_missing_seq_last_in_file_order(tmp_path: Path) -> None:
    p = _write(
        tmp_path / "r.jsonl",
        [
            {"seq": 2, "type": "b"},
            {"type": "no-seq-1"},
            {"seq": 0, "type": "a"},
            {"seq": True, "type": "bool-seq"},  # a bool is not a seq number
            {"seq": 1.5, "type": "float"},
            {"seq": "1", "type": "str-seq"},
            {"seq": 2, "type": "b-tie"},  # tie: file order
        ],
    )
    rf = read_rollout_file(p)
    assert [e["type"] for e in rf.events] == [
        "a",
        "float",
        "b",
        "b-tie",
        "no-seq-1",
        "bool-seq",
        "str-seq",
    ]
    assert (rf.n_lines, rf.n_malformed, rf.errors) == (7, 0, [])


def test_blank_malformed_and_non_event_lines(tmp_path: Path) -> None:
    p = _write(
        tmp_path / "r.jsonl",
        [
            {"seq": 1, "type": "x"},
            b"",
            b"   ",
            b'{"seq": 2, "type": ',  # cut line
            b"[1, 2]",  # JSON, not an object
            {"seq": 3, "type": 7},  # type not a string
            b"not json",
            {"seq": 0, "type": "y"},
        ],
    )
    rf = read_rollout_file(p, job_id="job-1")
    assert [e["type"] for e in rf.events] == ["y", "x"]
    assert rf.n_lines == 6  # blank lines are not counted
    assert rf.n_malformed == 4
    assert [(e.level, e.error_type, e.job_id) for e in rf.errors] == [
        ("rollout", "malformed_line", "job-1"),
        ("rollout", "not_an_event", "job-1"),
    ]
    assert rf.errors[0].message.startswith("2 unparsable line(s) skipped (first: non-blank line 2:")
    assert rf.errors[1].message == "2 line(s) are JSON but not rollout events (skipped)"


def test_unreadable_file_is_one_error(tmp_path: Path) -> None:
    rf = read_rollout_file(str(tmp_path / "missing.jsonl"), job_id="j")
    assert rf.events == [] and rf.n_lines == 0
    assert [(e.level, e.error_type, e.job_id) for e in rf.errors] == [("rollout", "missing", "j")]
    d = tmp_path / "dir.jsonl"
    d.mkdir()
    assert [e.error_type for e in read_rollout_file(str(d)).errors] == ["not_a_file"]


def test_empty_file(tmp_path: Path) -> None:
    p = tmp_path / "e.jsonl"
    p.write_bytes(b"\n\n")
    rf = read_rollout_file(str(p))
    assert (rf.events, rf.n_lines, rf.n_malformed, rf.errors) == ([], 0, 0, [])


_EVENT = st.fixed_dictionaries(
    {"seq": st.integers(0, 50), "type": st.sampled_from(["a", "b", "run.completed"])},
    optional={
        "data": st.dictionaries(st.text("xy", max_size=2), st.integers(-1000, 1000), max_size=2)
    },
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_EVENT, max_size=25), st.randoms(use_true_random=False))
def test_events_come_back_in_stable_seq_order(tmp_path_factory, events, rnd) -> None:
    path = tmp_path_factory.mktemp("r") / "r.jsonl"
    lines: list = [orjson.dumps(e) for e in events]
    for _ in range(rnd.randint(0, 3)):
        lines.insert(rnd.randint(0, len(lines)), b"")
    path.write_bytes(b"\n".join(lines))
    rf = read_rollout_file(str(path))
    assert rf.events == sorted(events, key=lambda e: e["seq"])  # sorted() is stable
    assert rf.n_lines == len(events) and rf.errors == []


def test_looks_like_rollout_file(tmp_path: Path) -> None:
    good = _write(tmp_path / "run.jsonl", [b"", {"seq": 0, "type": "run.started", "data": {}}])
    assert looks_like_rollout_file(good) is True
    no_seq = _write(tmp_path / "a.jsonl", [{"type": "run.started"}])
    assert looks_like_rollout_file(no_seq) is False
    bad_type = _write(tmp_path / "b.jsonl", [{"seq": 0, "type": 1}])
    assert looks_like_rollout_file(bad_type) is False
    # only the first non-blank line decides
    first_bad = _write(tmp_path / "c.jsonl", [b"garbage", {"seq": 0, "type": "x"}])
    assert looks_like_rollout_file(first_bad) is False
    audit = _write(tmp_path / "audit.jsonl", [{"seq": 0, "type": "run.started"}])
    assert looks_like_rollout_file(audit) is False
    other_ext = _write(tmp_path / "run.json", [{"seq": 0, "type": "run.started"}])
    assert looks_like_rollout_file(other_ext) is False
    blank = tmp_path / "blank.jsonl"
    blank.write_bytes(b"\n  \n")
    assert looks_like_rollout_file(str(blank)) is False
    (tmp_path / "d.jsonl").mkdir()
    assert looks_like_rollout_file(str(tmp_path / "d.jsonl")) is False
    assert looks_like_rollout_file(os.path.join(str(tmp_path), "nope.jsonl")) is False


def test_each_line_is_one_event_whatever_its_neighbours(tmp_path: Path) -> None:
    # joined into one JSON array these lines would parse (as 3 events and as 1 list);
    # read as JSON Lines, line 1 holds two values and lines 2-3 are halves of one array
    p = tmp_path / "r.jsonl"
    p.write_bytes(
        b'{"seq": 1, "type": "a"}, {"seq": 2, "type": "b"}\n'
        b'[{"seq": 3, "type": "c"}\n'
        b'{"seq": 4, "type": "d"}]\n'
        b'{"seq": 5, "type": "e"}\n'
    )
    rf = read_rollout_file(str(p))
    assert [e["type"] for e in rf.events] == ["e"]
    assert (rf.n_lines, rf.n_malformed) == (4, 3)
    assert [e.error_type for e in rf.errors] == ["malformed_line"]
    assert rf.errors[0].message.startswith("3 unparsable line(s) skipped (first: non-blank line 1:")
