"""Mode 'trainerd': go-code's runner retry rule and conclusion-watcher heuristics, verbatim
(rollouts-gates-qc.md §1.7), including their quirks."""

from __future__ import annotations

import polars as pl

import evalkit.patterns as ep
from tests.patterns.build import call, frames


def run(f: dict, detector: str, **kw) -> pl.DataFrame:
    return ep.detect(f, mode="trainerd", detectors=[detector], **kw)


def test_retry_loop_third_identical_raw_call_once_per_key():
    c = call("read_file", args={"path": "a.go"}, obs="package a")
    ev = [("user", "x")] + [("agent", "", [c]) for _ in range(5)]
    f = run(frames(ev), "retry_loop")
    assert f.height == 1  # once per key, at the 3rd call, successful or not
    r = f.row(0, named=True)
    assert (r["step_start"], r["step_end"], r["confidence"]) == (3, 3, 1.0)
    assert r["severity"] == "low" and r["evidence"] == "retry_loop: read_file (call_count 3)"
    assert r["rule_version"] == "trainerd-1" and r["mode"] == "trainerd"


def test_retry_loop_raw_arguments_are_not_canonicalised():
    a = frames(
        [("user", "x")] + [("agent", "", [call("grep", args={"q": 1, "p": 2})]) for _ in range(2)]
    )
    b = frames([("user", "x"), ("agent", "", [call("grep", args={"p": 2, "q": 1})])])
    tc = pl.concat(
        [a["tool_calls"], b["tool_calls"].with_columns(pl.lit(3, pl.Int64).alias("step_index"))]
    )
    assert run({**a, "tool_calls": tc}, "retry_loop").height == 0  # key order differs: no retry


def test_hedge_assertion_first_phrase_in_list_order():
    f = run(frames([("user", "x"), ("agent", "It should be fine, clearly.")]), "hedge_assertion")
    assert f["evidence"].to_list() == ["clearly"]  # 'clearly' comes before 'should be'
    assert f["confidence"][0] == 1.0 and f["severity"][0] == "medium"
    assert run(frames([("user", "x"), ("agent", "Tests pass.")]), "hedge_assertion").height == 0


def test_premature_completion_needs_a_verification_tool_in_the_last_three_calls():
    ev = [
        ("user", "x"),
        ("agent", "", [call("write_file", args={"path": "a.go"})]),
        ("agent", "All done."),
    ]
    f = run(frames(ev), "premature_completion")
    assert (
        f["evidence"].to_list() == ["done"]
        and f["severity"][0] == "high"
        and f["confidence"][0] == 0.9
    )
    ver = [
        ("user", "x"),
        ("agent", "", [call("bash", args={"command": "go test ./..."})]),
        ("agent", "All done."),
    ]
    assert run(frames(ver), "premature_completion").height == 0
    old = (
        [("user", "x"), ("agent", "", [call("run_tests")])]
        + [("agent", "", [call("read_file", args={"path": f"f{i}"})]) for i in range(3)]
        + [("agent", "fixed")]
    )
    assert run(frames(old), "premature_completion").height == 1  # the test run is 4 calls back


def test_premature_completion_quirks_are_kept():
    # plain substring: 'undone' contains 'done'; fires even with no tool call at all
    f = run(frames([("user", "x"), ("agent", "Nothing is undone.")]), "premature_completion")
    assert f.height == 1


def test_architecture_assumption_needs_recent_exploration():
    ev = [("user", "x"), ("agent", "The flow is A then B.")]
    f = run(frames(ev), "architecture_assumption")
    assert f["evidence"].to_list() == ["the flow is"] and f["confidence"][0] == 0.75
    explored = [
        ("user", "x"),
        ("agent", "", [call("grep", args={"pattern": "A"})]),
        ("agent", "The flow is A then B."),
    ]
    assert run(frames(explored), "architecture_assumption").height == 0


def test_unverified_file_claim_hedge_plus_unseen_path():
    ev = [("user", "x"), ("agent", "", [call("read_file", args={"path": "./pkg/a.go"})]),
          ("agent", "It should be fixed in pkg/a.go and pkg/b.go.")]  # fmt: skip
    f = run(frames(ev), "unverified_file_claim")
    assert f["evidence"].to_list() == ["pkg/b.go"] and f["confidence"][0] == 0.8
    seen = [("user", "x"), ("agent", "", [call("bash", args={"command": "ls"}, obs="pkg/b.go\npkg/a.go")]),
            ("agent", "", [call("read_file", args={"path": "pkg/a.go"})]),
            ("agent", "It should be fixed in pkg/a.go and b.go.")]  # fmt: skip
    assert run(frames(seen), "unverified_file_claim").height == 0  # output lines + basenames count
    unhedged = [("user", "x"), ("agent", "I fixed pkg/c.go.")]
    assert run(frames(unhedged), "unverified_file_claim").height == 0  # the watcher needs a hedge


def test_skipped_diagnostic_write_without_recent_diagnostic():
    ev = [("user", "x"), ("agent", "", [call("write_file", args={"path": "a.go"})])]
    f = run(frames(ev), "skipped_diagnostic")
    assert (
        f["evidence"].to_list() == ["write_file without prior diagnostic"]
        and f["confidence"][0] == 1.0
    )
    prev = [
        ("user", "x"),
        ("agent", "", [call("grep", args={"pattern": "x"})]),
        ("agent", "", [call("write_file", args={"path": "a.go"})]),
    ]
    assert run(frames(prev), "skipped_diagnostic").height == 0
    same = [
        ("user", "x"),
        (
            "agent",
            "",
            [call("read_file", args={"path": "a.go"}), call("edit_file", args={"path": "a.go"})],
        ),
    ]
    assert run(frames(same), "skipped_diagnostic").height == 0
    after = [
        ("user", "x"),
        (
            "agent",
            "",
            [call("edit_file", args={"path": "a.go"}), call("read_file", args={"path": "a.go"})],
        ),
    ]
    assert run(frames(after), "skipped_diagnostic").height == 1  # the read came after the write
    old = [
        ("user", "x"),
        ("agent", "", [call("grep")]),
        ("agent", "thinking"),
        ("agent", "", [call("write_file")]),
    ]
    assert run(frames(old), "skipped_diagnostic").height == 1  # two turns back does not count


def test_skipped_diagnostic_bash_never_fires():
    # the current call is in the ledger before the check and bash is a diagnostic tool
    ev = [("user", "x"), ("agent", "", [call("bash", args={"command": "rm -rf build"})])]
    assert run(frames(ev), "skipped_diagnostic").height == 0


def test_tool_aliases_map_recorded_names_to_go_code_names():
    ev = [("user", "x"), ("agent", "", [call("Write", args={"file_path": "a.go"})])]
    assert run(frames(ev), "skipped_diagnostic").height == 0
    cfg = {"trainerd": {"tool_aliases": {"Write": "write_file"}}}
    assert run(frames(ev), "skipped_diagnostic", config=cfg).height == 1


def test_mode_runs_exactly_the_six_types():
    names = sorted(d["name"] for d in ep.list_detectors("trainerd"))
    assert names == sorted(
        ["retry_loop", "hedge_assertion", "unverified_file_claim", "premature_completion",
         "skipped_diagnostic", "architecture_assumption"]
    )  # fmt: skip
