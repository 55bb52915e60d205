"""evalkit.patterns.context: coerce_frames and the prepared frames of Context (calls
main-only filter, writes / reads, turns and closing messages, finish messages, snippet)."""

from __future__ import annotations

from types import SimpleNamespace

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.load.steps.columns import STEP_COLUMNS, TOOL_CALL_COLUMNS
from evalkit.load.trials.columns import COLUMNS as TRIAL_COLUMNS
from evalkit.patterns.config import merge_config
from evalkit.patterns.context import Context, coerce_frames
from tests.patterns.build import call, combine, frames, sh


def ctx_of(f: dict, **common) -> Context:
    cfg = merge_config({"common": common} if common else None)
    return Context(*coerce_frames(f), cfg, "structural")


def names(cols) -> list[str]:
    return [c.name for c in cols]


# -- coerce_frames ------------------------------------------------------------------------------


def test_coerce_frames_accepts_frame_mapping_object_and_keywords():
    f = frames([("user", "x"), ("agent", "", [sh("ls", "a")])])
    st_, tc, tr = coerce_frames(f["tool_calls"])  # a bare tool_calls frame
    assert (st_.height, tc.height, tr.height) == (0, 1, 0)
    assert st_.columns == names(STEP_COLUMNS) and tr.columns == names(TRIAL_COLUMNS)
    st_, tc, tr = coerce_frames(f)  # a mapping
    assert (st_.height, tc.height, tr.height) == (2, 1, 1)
    runs = SimpleNamespace(steps=f["steps"], tool_calls=f["tool_calls"], trials=f["trials"])
    assert [x.height for x in coerce_frames(runs)] == [2, 1, 1]  # a Runs-like object
    # explicit keyword frames win over the data's, LazyFrames are collected
    other = f["tool_calls"].head(0).lazy()
    st_, tc, tr = coerce_frames(f, tool_calls=other)
    assert (st_.height, tc.height) == (2, 0) and tc.columns == names(TOOL_CALL_COLUMNS)


def test_coerce_frames_fills_missing_columns_with_nulls():
    tc = pl.DataFrame({"trial_id": ["t"], "step_index": [0], "function_name": ["bash"]})
    _, out, _ = coerce_frames(tool_calls=tc)
    assert out.columns == names(TOOL_CALL_COLUMNS)
    assert out["arguments"].to_list() == [None] and out["function_name"].to_list() == ["bash"]
    # a frame with no columns counts as missing
    s, _, _ = coerce_frames(steps=pl.DataFrame())
    assert s.height == 0 and s.columns == names(STEP_COLUMNS)


# -- calls / all_calls ---------------------------------------------------------------------------


def test_calls_keep_main_only_unless_configured():
    main = frames([("user", "x"), ("agent", "", [sh("ls", "a")])])
    sub = frames(
        [("user", "s"), ("agent", "", [sh("pwd", "/"), sh("id", "u")])], trajectory="sub-1"
    )
    f = combine(main, {**sub, "trials": sub["trials"].head(0)})
    c = ctx_of(f)
    assert c.all_calls.height == 3  # every trajectory
    assert c.calls["cmd"].to_list() == ["ls"]  # main only by default
    assert ctx_of(f, main_only=False).calls.height == 3
    # seq restarts per trajectory: main 0; sub 0, 1
    seqs = dict(zip(c.all_calls["cmd"], c.all_calls["seq"], strict=True))
    assert seqs == {"ls": 0, "pwd": 0, "id": 1}


def test_calls_when_every_call_is_main_are_unfiltered():
    f = frames([("user", "x"), ("agent", "", [sh("ls"), sh("pwd")])])
    c = ctx_of(f)
    assert c.calls.height == c.all_calls.height == 2


# -- writes / reads ------------------------------------------------------------------------------


def test_writes_and_reads_are_one_row_per_path_with_basename():
    w = call("Write", args={"file_path": "/app/src/out.py", "content": "x"})
    e = call("Edit", args={"file_path": "/app/src/util.py", "old_string": "a", "new_string": "b"})
    r = call("Read", args={"file_path": "/app/README.md"})
    f = frames([("user", "x"), ("agent", "", [w, e]), ("agent", "", [r, sh("cat a.txt b.txt")])])
    c = ctx_of(f)
    wr = c.writes.select("step_index", "path", "base", "is_modify").rows()
    # Write creates (not a modification), Edit modifies
    assert wr == [(1, "/app/src/out.py", "out.py", False), (1, "/app/src/util.py", "util.py", True)]
    rd = c.reads.select("step_index", "seq", "base").rows()
    assert (2, 2, "README.md") in rd and (2, 3, "a.txt") in rd


# -- messages: turns, closing, finish --------------------------------------------------------------


def test_turns_and_closing_messages():
    f = frames([
        ("user", "first task"),          # 0: turn 1
        ("agent", "Looking.", [sh("ls")]),  # 1
        ("agent", "Done with one."),     # 2: closing of turn 1
        ("agent", ""),                   # 3: no text: never closing
        ("user", "second task"),         # 4: turn 2
        ("agent", "On it."),             # 5
        ("agent", "Finished two."),      # 6: closing of turn 2
    ])  # fmt: skip
    c = ctx_of(f)
    m = c.msgs.select("step_index", "turn", "is_closing", "from_finish").rows()
    assert m == [
        (1, 1, False, False), (2, 1, True, False), (3, 1, False, False),
        (5, 2, False, False), (6, 2, True, False),
    ]  # fmt: skip
    assert c.final_msgs["step_index"].to_list() == [6]  # the closing message of the last turn


def test_turns_restart_per_trajectory():
    a = frames([("user", "u"), ("agent", "a1"), ("user", "u2"), ("agent", "a2")], trial_id="a")
    b = frames([("user", "u"), ("agent", "b1")], trial_id="b")
    m = ctx_of(combine(a, b)).msgs
    assert m.select("trial_id", "step_index", "turn").rows() == [
        ("a", 1, 1), ("a", 3, 2), ("b", 1, 1),
    ]  # fmt: skip


def test_finish_call_message_is_a_closing_message():
    fin = call("submit", args={"answer": 'It says "hi" in C:\\tmp', "other": 1})
    f = frames([("user", "x"), ("agent", "Submitting now.", [fin])])
    m = ctx_of(f).msgs.select("step_index", "message", "is_closing", "from_finish").rows()
    # the agent text and the finish argument (JSON escapes undone) are both closing;
    # the finish message sorts after the step's own text
    assert m == [(1, "Submitting now.", True, False), (1, 'It says "hi" in C:\\tmp', True, True)]


def test_finish_call_without_text_adds_no_message():
    f = frames([("user", "x"), ("agent", "Bye.", [call("finish", args={"message": "  "})])])
    m = ctx_of(f).msgs
    assert m["from_finish"].to_list() == [False] and m["is_closing"].to_list() == [True]


def test_trial_info_is_one_row_per_trial():
    t = frames([("user", "x")], reward=1.0, task_name="T")
    f = {**t, "trials": pl.concat([t["trials"], t["trials"]])}
    ti = ctx_of(f).trial_info
    assert ti.select("trial_id", "reward", "task_name").rows() == [("t1", 1.0, "T")]


# -- params / snippet -----------------------------------------------------------------------------


def test_params_of_unknown_detector_is_empty():
    c = ctx_of(frames([("user", "x")]))
    assert c.params("nope") == {}
    assert c.params("no_progress")["window"] == 10


def snip(text: str | None, n: int = 160) -> str | None:
    c = ctx_of(frames([("user", "x")]), evidence_chars=n)
    return pl.select(c.snippet(pl.lit(text, pl.String))).item()


def test_snippet_collapses_whitespace_and_cuts_with_an_ellipsis():
    assert snip("  a \n\t b  ") == "a b"
    assert snip("x" * 10, n=10) == "x" * 10  # exactly n: kept
    assert snip("x" * 11, n=10) == "x" * 9 + "…"  # one over: n-1 chars + ellipsis
    assert snip(None) is None


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet="ab \n\t", max_size=60), st.integers(2, 30))
def test_snippet_matches_a_plain_python_reference(text, n):
    # reference: str.slice(0, 8n), collapse \s+ to one space, strip, cut to n-1 + "…"
    s = " ".join(text[: 8 * n].split())
    want = s if len(s) <= n else s[: n - 1] + "…"
    assert snip(text, n) == want
