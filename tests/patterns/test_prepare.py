"""evalkit.patterns.prepare: the tool-call frame every detector shares (enrich_calls) and
the expression helpers the detectors build on.

Checked: enrich_calls' sort and per-trajectory position, normalised names and commands,
written / read paths and the write / modify / verify / finish / shell flags for shell
commands, file tools, editor tools and patches, the error flag (recorded first, the ERR
regex only where none was recorded), call and output hashes (per trajectory too), and a
custom common config; then norm_fn, clean_path, basename, any_of, the JSON field regex,
grouped, group_start / run_id / within_group_index / flagged_spans and finding_columns.
The shell lexer is tested in test_shell.py, the Context frames built on this in
test_context.py. Expected values are read off the rules in patterns/rules.py by hand.
"""

from __future__ import annotations

import random

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalkit.patterns.config import DEFAULTS
from evalkit.patterns.prepare import (
    _json_str_field,
    _unescape,
    any_of,
    basename,
    clean_path,
    enrich_calls,
    finding_columns,
    flagged_spans,
    group_start,
    grouped,
    norm_fn,
    run_id,
    within_group_index,
)
from tests.patterns.build import call, combine, frames, sh

COMMON = DEFAULTS["common"]


def enrich(events: list[tuple], **kw) -> pl.DataFrame:
    return enrich_calls(frames(events, **kw)["tool_calls"], COMMON)


def one(c: dict, **kw) -> dict:
    """The enriched row of a single call."""
    return enrich([("user", "x"), ("agent", "", [c])], **kw).row(0, named=True)


# -- enrich_calls: frame shape and order ----------------------------------------------------------


def test_enrich_calls_adds_the_documented_columns_and_drops_its_scratch_ones() -> None:
    out = enrich([("user", "x"), ("agent", "", [sh("ls")])])
    derived = {"traj", "gkey", "fn", "cmd", "seq", "err", "sig", "obs_hash", "sig_g", "obs_g",
               "w_paths", "r_paths", "is_write", "is_modify", "is_verify", "is_finish", "is_shell"}  # fmt: skip
    assert derived <= set(out.columns)
    assert not {"_path", "_ecmd", "_patch", "_shw", "_shr"} & set(out.columns)


def test_enrich_calls_sorts_each_trajectory_by_step_and_call() -> None:
    ev = [("user", "x"), ("agent", "", [sh("a"), sh("b")]), ("agent", "", [sh("c")])]
    a = frames(ev, trial_id="t1")["tool_calls"]
    b = frames([("user", "x"), ("agent", "", [sh("d"), sh("e")])], trial_id="t2")["tool_calls"]
    rows = pl.concat([a, b]).to_dicts()
    random.Random(3).shuffle(rows)
    out = enrich_calls(pl.DataFrame(rows, schema=a.schema), COMMON)
    by_trial = {t: out.filter(pl.col("trial_id") == t) for t in ("t1", "t2")}
    # within a trial: step 1 calls 0, 1, then step 2; seq counts 0.. per trial
    assert by_trial["t1"].select("cmd", "seq").rows() == [("a", 0), ("b", 1), ("c", 2)]
    assert by_trial["t2"].select("cmd", "seq").rows() == [("d", 0), ("e", 1)]
    # each trajectory's rows are together
    assert out["trial_id"].rle().len() == 2


def test_a_missing_trajectory_name_is_main() -> None:
    tc = frames([("user", "x"), ("agent", "", [sh("ls")])])["tool_calls"]
    out = enrich_calls(tc.with_columns(pl.lit(None, pl.String).alias("trajectory")), COMMON)
    assert out["traj"].to_list() == ["main"]


def test_function_names_are_normalised_and_heredocs_collapsed() -> None:
    r = one(call("mcp__srv__Run_Shell-Command", cmd="  cat > out.py <<'EOF'\nprint(1)\nEOF\n "))
    assert r["fn"] == "runshellcommand"
    assert r["cmd"] == "cat > out.py <<HEREDOC"  # the body is gone, the ends stripped
    assert one(call("Read", args={"file_path": "a"}))["cmd"] is None


# -- enrich_calls: shell commands ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("cmd", "w_paths", "is_modify"),
    [
        ("cat > out.py <<'EOF'\nprint(1)\nEOF", ["out.py"], False),  # creates
        ("echo hi >> log.txt", ["log.txt"], True),  # appends to an existing file
        ("sed -i 's/a/b/' src/app.py", ["src/app.py"], True),
        ("touch new.txt", ["new.txt"], False),
        ("ls -la", [], False),
        ("pytest -q", [], False),
    ],
)
def test_shell_writes_and_modifications(cmd: str, w_paths: list[str], is_modify: bool) -> None:
    r = one(sh(cmd))
    assert r["w_paths"] == w_paths
    assert r["is_write"] is bool(w_paths) and r["is_modify"] is is_modify
    assert r["is_shell"] is True


def test_shell_reads_are_the_reading_commands_operands() -> None:
    assert one(sh("cat README.md | head"))["r_paths"] == ["README.md"]
    assert one(sh("grep -n foo src/main.py"))["r_paths"] == ["src/main.py"]
    assert one(sh("cd src; head -5 ./notes/todo.md"))["r_paths"] == ["notes/todo.md"]
    assert one(sh("ls -la"))["r_paths"] == []


def test_shell_verification_follows_the_verify_regex() -> None:
    assert one(sh("python -m pytest tests/"))["is_verify"] is True
    assert one(sh("cargo test --release"))["is_verify"] is True
    assert one(sh("make lint"))["is_verify"] is True
    assert one(sh("make build"))["is_verify"] is False
    assert one(sh("echo done"))["is_verify"] is False


# -- enrich_calls: file and editor tools -----------------------------------------------------------


def test_write_tool_writes_its_path_argument_cleaned() -> None:
    r = one(call("Write", args={"file_path": "./src/new.py", "content": "x"}))
    assert (r["w_paths"], r["r_paths"]) == (["src/new.py"], [])
    assert (r["is_write"], r["is_modify"], r["is_shell"]) == (True, False, False)


def test_edit_tool_modifies_its_path() -> None:
    r = one(call("Edit", args={"file_path": "/app/b.py", "old_string": "x", "new_string": "y"}))
    assert (r["w_paths"], r["is_write"], r["is_modify"]) == (["/app/b.py"], True, True)


def test_read_tool_reads_its_path_with_json_escapes_undone() -> None:
    r = one(call("Read", args={"file_path": '"/q/r.txt"'}))  # quoted inside the JSON string
    assert (r["r_paths"], r["w_paths"], r["is_write"]) == (["/q/r.txt"], [], False)
    r = one(call("read_file", args={"path": "C:\\w\\a.py"}))  # JSON "\\\\" is one backslash
    assert r["r_paths"] == ["C:\\w\\a.py"]


@pytest.mark.parametrize(
    ("command", "w_paths", "r_paths", "is_modify"),
    [
        ("view", [], ["/a/c.py"], False),
        ("create", ["/a/c.py"], [], False),
        ("str_replace", ["/a/c.py"], [], True),
        ("insert", ["/a/c.py"], [], True),
    ],
)
def test_editor_tool_follows_its_command_argument(command, w_paths, r_paths, is_modify) -> None:
    r = one(call("str_replace_editor", args={"command": command, "path": "/a/c.py"}))
    assert (r["w_paths"], r["r_paths"], r["is_modify"]) == (w_paths, r_paths, is_modify)


def test_patch_tools_write_every_file_their_headers_name() -> None:
    text = (
        "*** Begin Patch\n*** Update File: src/x.py\n@@\n*** Delete File: src/old.py\n*** End Patch"
    )
    r = one(call("apply_patch", args={"input": text}))
    assert r["w_paths"] == ["src/x.py", "src/old.py"]
    assert (r["is_write"], r["is_modify"]) == (True, True)  # it updates an existing file
    diff = one(call("patch", args={"patch": "--- a/f.py\n+++ b/f.py\n@@ -1 +1 @@\n-a\n+b"}))
    assert (diff["w_paths"], diff["is_modify"]) == (["f.py"], True)


def test_a_patch_that_only_adds_files_modifies_nothing() -> None:
    added = "*** Begin Patch\n*** Add File: src/new.py\n+x\n*** End Patch"
    r = one(call("apply_patch", args={"input": added}))
    assert (r["w_paths"], r["m_paths"], r["is_write"], r["is_modify"]) == (
        ["src/new.py"],
        [],
        True,
        False,
    )
    # a unified diff from /dev/null creates its file; the other file in it is modified
    diff = "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x\n--- a/f.py\n+++ b/f.py\n@@ -1 +1 @@"
    d = one(call("patch", args={"patch": diff}))
    assert (sorted(d["w_paths"]), d["m_paths"], d["is_modify"]) == (
        ["f.py", "new.py"],
        ["f.py"],
        True,
    )
    # other modifying writes modify every path they write
    e = one(call("Edit", args={"file_path": "/a/c.py", "old_string": "a", "new_string": "b"}))
    assert (e["m_paths"], e["is_modify"]) == (["/a/c.py"], True)
    w = one(call("Write", args={"file_path": "/a/d.py", "content": "x"}))
    assert (w["m_paths"], w["is_modify"]) == ([], False)


def test_finish_tools_and_tool_named_checks() -> None:
    assert one(call("mcp__srv__Submit", args={}))["is_finish"] is True
    assert one(call("mark_task_complete", args={}))["is_finish"] is True
    assert one(call("Read", args={"file_path": "a.py"}))["is_finish"] is False
    # a tool whose name says test / verify / check / lint verifies
    assert one(call("run_tests", args={}))["is_verify"] is True
    assert one(call("Read", args={"file_path": "test.py"}))["is_verify"] is False


def test_a_custom_common_config_changes_tools_and_path_keys() -> None:
    common = {**COMMON, "write_tools": ("mywriter",), "path_keys": ("target",),
              "verify_regex": r"\bcheckit\b"}  # fmt: skip
    tc = frames([("user", "x"), ("agent", "", [
        call("my_writer", args={"target": "a.txt", "file_path": "ignored.txt"}),
        call("Write", args={"file_path": "b.txt"}),
        sh("checkit now"),
        sh("pytest"),
    ])])["tool_calls"]  # fmt: skip
    out = enrich_calls(tc, common)
    assert out["w_paths"].to_list() == [["a.txt"], [], [], []]
    assert out["is_verify"].to_list() == [False, False, True, False]


# -- enrich_calls: error flag and hashes -------------------------------------------------------------


def test_the_recorded_error_flag_wins_over_the_output_text() -> None:
    out = enrich([("user", "x"), ("agent", "", [
        sh("ls", obs="Traceback (most recent call last):", err=False),
        sh("ls", obs="all good", err=True),
    ])])  # fmt: skip
    assert out["err"].to_list() == [False, True]


def test_without_a_recorded_flag_the_output_is_matched() -> None:
    out = enrich([("user", "x"), ("agent", "", [
        sh("pytest", obs="=== 2 failed, 3 passed ===", err=None),
        sh("ls", obs="bash: foo: command not found", err=None),
        sh("ls", obs="0 failed", err=None),  # "[1-9]\d* failed" only
        sh("ls", obs="all good", err=None),
        sh("ls", obs=None, err=None),
    ])])  # fmt: skip
    assert out["err"].to_list() == [True, True, False, False, False]


def test_shell_call_signature_is_the_command_not_the_arguments() -> None:
    out = enrich([("user", "x"), ("agent", "", [
        sh("make", args={"timeout": 10}),
        sh("make", args={"timeout": 99}),
        call("Bash", cmd="make"),  # "bash" once normalised
        sh("make all"),
        call("Read", args={"file_path": "a"}),
        call("Read", args={"file_path": "a"}),
        call("Read", args={"file_path": "b"}),
    ])])  # fmt: skip
    s = out["sig"].to_list()
    assert s[0] == s[1] == s[2] and s[3] != s[0]
    assert s[4] == s[5] and s[6] != s[4] and s[4] != s[0]


def test_per_trajectory_hashes_differ_between_trials() -> None:
    ev = [("user", "x"), ("agent", "", [sh("ls", obs="a.txt")])]
    tc = combine(frames(ev, trial_id="t1"), frames(ev, trial_id="t2"))["tool_calls"]
    out = enrich_calls(tc, COMMON)
    assert out["sig"].n_unique() == 1 and out["obs_hash"].n_unique() == 1
    assert out["sig_g"].n_unique() == 2 and out["obs_g"].n_unique() == 2
    # the per-trajectory hashes are the plain ones keyed by gkey
    assert (out["sig_g"] ^ out["gkey"]).to_list() == out["sig"].to_list()


# -- helpers -----------------------------------------------------------------------------------


def test_norm_fn_strips_namespaces_case_and_separators() -> None:
    df = pl.DataFrame(
        {"f": ["mcp__srv__Run_Shell-Command", "functions.bash", "a:b/Str_Replace Editor", None]}
    )
    assert df.select(norm_fn("f"))["f"].to_list() == [
        "runshellcommand",
        "bash",
        "strreplaceeditor",
        "",
    ]


def test_clean_path_strips_quotes_punctuation_and_a_leading_dot_slash() -> None:
    df = pl.DataFrame({"p": ["'./src/a.py',", "(a/b.c)", "file.txt...", '"x.json";', "./"]})
    assert df.select(clean_path(pl.col("p")))["p"].to_list() == [
        "src/a.py", "a/b.c", "file.txt", "x.json", "",
    ]  # fmt: skip


def test_basename_of_unix_and_windows_paths() -> None:
    df = pl.DataFrame({"p": ["/a/b/c.py", "C:\\x\\y.txt", "plain.md", "dir/"]})
    assert df.select(basename(pl.col("p")))["p"].to_list() == ["c.py", "y.txt", "plain.md", None]


def test_any_of_matches_the_phrases_literally() -> None:
    s = pl.Series(["a.b", "axb", "c|d", "C|D", "other"])
    assert s.str.contains(any_of(["a.b", "c|d"])).to_list() == [True, False, True, False, False]
    assert s.str.contains(any_of(["c|d"], ignore_case=True)).to_list() == [
        False,
        False,
        True,
        True,
        False,
    ]
    assert pl.Series(["x", "abc"]).str.contains(any_of([])).to_list() == [False, False]


def test_json_str_field_reads_a_string_value_with_escapes() -> None:
    rx = _json_str_field(("file_path", "path"))
    s = pl.Series([
        '{"content": "x", "file_path": "C:\\\\dir\\\\a \\"b\\".py"}',
        '{"path" : "src\\/x.py"}',
        '{"path": 3}',
        '{"other": "a.py"}',
    ])  # fmt: skip
    got = s.str.extract(rx, 1).to_frame().select(_unescape(pl.first())).to_series().to_list()
    assert got == ['C:\\dir\\a "b".py', "src/x.py", None, None]


def _g(keys: list[int], **cols) -> pl.DataFrame:
    return pl.DataFrame({"gkey": keys, **cols})


def test_grouped_leaves_an_already_grouped_frame_alone() -> None:
    df = _g([5, 5, 1, 1], step_index=[0, 1, 0, 0], call_index=[0, 0, 0, 1])
    assert grouped(df, "step_index", "call_index") is df  # not even copied


def test_grouped_sorts_out_of_order_or_split_trajectories() -> None:
    df = _g([5, 5, 1], step_index=[1, 0, 0])  # 5's steps backwards
    assert grouped(df, "step_index").rows() == [(1, 0), (5, 0), (5, 1)]
    split = _g([5, 1, 5], step_index=[0, 0, 1])  # 5 comes back after 1
    assert grouped(split, "step_index")["gkey"].to_list() == [1, 5, 5]


def test_group_start_run_id_and_position_within_group() -> None:
    df = _g([1, 1, 2, 2, 2, 1], flag=[True, True, True, False, True, True])
    out = df.with_columns(
        group_start().alias("start"),
        run_id("flag").alias("run"),
        within_group_index().alias("pos"),
    )
    assert out["start"].to_list() == [True, False, True, False, False, True]
    # a new run at each new gkey and each change of flag
    assert out["run"].to_list() == [1, 1, 2, 3, 4, 5]
    assert out["pos"].to_list() == [0, 1, 0, 1, 2, 0]


def test_flagged_spans_one_row_per_consecutive_flagged_run() -> None:
    df = _g([1, 1, 1, 1, 2], trial_id=["a", "a", "a", "a", "b"], flag=[True, True, False, True, True],
            step_index=[0, 1, 2, 3, 0])  # fmt: skip
    spans = flagged_spans(df, "flag", pl.col("step_index").min().alias("s"), pl.len().alias("n"))
    assert spans.select("trial_id", "s", "n").rows() == [("a", 0, 2), ("a", 3, 1), ("b", 0, 1)]


@given(st.lists(st.integers(0, 3), min_size=1, max_size=40))
def test_within_group_index_counts_from_zero_in_each_run(keys: list[int]) -> None:
    got = _g(keys).select(within_group_index().alias("p"))["p"].to_list()
    for i, p in enumerate(got):
        # position = how many equal keys directly precede row i
        run = 0
        while i - run - 1 >= 0 and keys[i - run - 1] == keys[i]:
            run += 1
        assert p == run


def test_finding_columns_with_literals_and_columns() -> None:
    df = pl.DataFrame(
        {"trial_id": ["t"], "step_index": [4], "last": [7], "ev": ["boom"], "sev": ["high"]}
    )
    plain = df.select(finding_columns("medium", 0.9, "ev"))
    assert plain.row(0, named=True) == {
        "trial_id": "t", "step_start": 4, "step_end": 4, "severity": "medium",
        "confidence": 0.9, "evidence": "boom",
    }  # fmt: skip
    exprs = df.select(finding_columns(pl.col("sev"), pl.lit(0.5), pl.lit("x"), end="last"))
    assert exprs.row(0) == ("t", 4, 7, "high", 0.5, "x")
    shifted = df.select(finding_columns("low", 1.0, "ev", start="last", end=pl.col("last") + 1))
    assert shifted.select("step_start", "step_end").row(0) == (7, 8)
