"""Every structural detector on small hand-made trajectories: a positive and a negative case
(or more, for the branches of a rule)."""

from __future__ import annotations

import polars as pl
import pytest

import evalkit.patterns as ep
from tests.patterns.build import call, combine, frames, sh

TB = "Traceback (most recent call last):\n  File \"app.py\", line 3\nNameError: name 'x' is not defined"


def run(f: dict, detector: str, **kw) -> pl.DataFrame:
    return ep.detect(f, detectors=[detector], **kw)


# -- retry_loop ---------------------------------------------------------------------------


def test_retry_loop_identical_failing_calls():
    ev = [("user", "fix it")] + [("agent", "", [sh("pytest -q", TB, err=True)]) for _ in range(3)]
    f = run(frames(ev), "retry_loop")
    assert f.height == 1
    r = f.row(0, named=True)
    assert (r["severity"], r["step_start"], r["step_end"]) == ("high", 1, 3)
    assert "3x identical failing call: pytest -q" in r["evidence"]
    assert r["rule_version"] == "structural-1" and r["source"] == "detected"


def test_retry_loop_needs_three_failures_and_identity():
    two = [("user", "x")] + [("agent", "", [sh("pytest -q", TB, err=True)]) for _ in range(2)]
    assert run(frames(two), "retry_loop").height == 0
    varied = [("user", "x")] + [
        ("agent", "", [sh(f"pytest -q -k t{i}", TB, err=True)]) for i in range(4)
    ]
    assert run(frames(varied), "retry_loop").height == 0


def test_retry_loop_same_output_and_ping_pong():
    same = [("user", "x")] + [("agent", "", [sh("cat a.txt", "hello")]) for _ in range(4)]
    f = run(frames(same), "retry_loop")
    assert f["severity"].to_list() == ["medium"] and "identical output" in f["evidence"][0]
    pp = [("user", "x")] + [
        ("agent", "", [sh("cat a.txt" if i % 2 == 0 else "cat b.txt", "A" if i % 2 == 0 else "B")])
        for i in range(6)
    ]
    f = run(frames(pp), "retry_loop")
    assert "period-2 cycle over 6 calls" in f["evidence"][0]
    assert (f["step_start"][0], f["step_end"][0]) == (1, 6)
    short = pp[:5]  # 4 calls: no cycle, no 4 identical in a row
    assert run(frames(short), "retry_loop").height == 0


def test_retry_loop_window_and_polling_exemption():
    ev = [("user", "x")]
    for i in range(5):
        ev.append(("agent", "", [sh("python run.py", f"run {i}")]))
        ev.append(("agent", "", [sh(f"echo step{i}", f"step{i}")]))
    f = run(frames(ev), "retry_loop")
    assert f["severity"].to_list() == ["low"] and ">= 5 repeats within 20 calls" in f["evidence"][0]
    poll = [("user", "x")]
    for i in range(6):
        poll.append(("agent", "", [sh("tail -5 log.txt", f"line {i}")]))
        poll.append(("agent", "", [sh(f"echo {i}", str(i))]))
    assert run(frames(poll), "retry_loop").height == 0


# -- repeated_failed_command ---------------------------------------------------------------


def test_repeated_failed_command():
    err = "npm ERR! missing script: test"
    ev = [("user", "x"), ("agent", "", [sh("npm test", err, err=True)]), ("agent", "", [sh("ls")]),
          ("agent", "", [sh("npm test", err, err=True)])]  # fmt: skip
    f = run(frames(ev), "repeated_failed_command")
    assert f.height == 1 and f["severity"][0] == "low"
    assert (f["step_start"][0], f["step_end"][0]) == (1, 3)
    other = [("user", "x"), ("agent", "", [sh("npm test", err, err=True)]),
             ("agent", "", [sh("npm test", "Error: cannot find module x", err=True)])]  # fmt: skip
    assert run(frames(other), "repeated_failed_command").height == 0
    once = ev[:2]
    assert run(frames(once), "repeated_failed_command").height == 0


# -- skipped_diagnostic --------------------------------------------------------------------


def test_skipped_diagnostic_blind_repeat_and_unrelated_edit():
    rep = [("user", "x"), ("agent", "", [sh("python app.py", TB, err=True)]),
           ("agent", "", [sh("python app.py", TB, err=True)])]  # fmt: skip
    f = run(frames(rep), "skipped_diagnostic")
    assert f.height >= 1 and "repeated the same call" in f["evidence"][0]
    edit = [("user", "x"), ("agent", "", [sh("python app.py", TB, err=True)]),
            ("agent", "", [call("Edit", args={"file_path": "/r/utils.py", "old_string": "a", "new_string": "b"})])]  # fmt: skip
    f = run(frames(edit), "skipped_diagnostic")
    assert "edited utils.py (not named in the error)" in f["evidence"][0]


def test_skipped_diagnostic_negative_when_agent_looks():
    look = [("user", "x"), ("agent", "", [sh("python app.py", TB, err=True)]),
            ("agent", "", [sh("cat app.py", "x = 1")]), ("agent", "", [sh("python app.py", TB, err=True)])]  # fmt: skip
    assert run(frames(look), "skipped_diagnostic").filter(pl.col("step_start") == 1).height == 0
    named = [("user", "x"), ("agent", "", [sh("python app.py", TB, err=True)]),
             ("agent", "", [call("Edit", args={"file_path": "/r/app.py", "old_string": "x", "new_string": "y"})])]  # fmt: skip
    assert run(frames(named), "skipped_diagnostic").height == 0


# -- ignored_error_output --------------------------------------------------------------------


def test_ignored_error_output():
    ev = [("user", "x"), ("agent", "Running tests", [sh("pytest", "FAILED t.py::a - AssertionError", err=True)]),
          ("agent", "Great, everything passed and the feature works.")]  # fmt: skip
    f = run(frames(ev), "ignored_error_output")
    assert f.height == 1 and (f["step_start"][0], f["step_end"][0]) == (1, 2)
    ack = [ev[0], ev[1], ("agent", "The test failed with an AssertionError; let me fix it.")]
    assert run(frames(ack), "ignored_error_output").height == 0
    ok = [ev[0], ("agent", "", [sh("pytest", "3 passed")]), ev[2]]
    assert run(frames(ok), "ignored_error_output").height == 0


# -- no_progress -------------------------------------------------------------------------------


def test_no_progress():
    ev = [("user", "x")] + [
        ("agent", "", [sh("cat a.txt" if i % 3 else "git diff", "same")]) for i in range(14)
    ]
    f = run(frames(ev), "no_progress")
    assert f.height == 1 and "calls without progress" in f["evidence"][0]
    distinct = [("user", "x")] + [
        ("agent", "", [sh(f"echo {i} > f{i}.txt", "")]) for i in range(14)
    ]
    assert run(frames(distinct), "no_progress").height == 0


def test_no_progress_long_tail():
    parts = []
    for i in range(6):  # six passing trials of 3 steps, one failing trial of 9
        parts.append(
            frames(
                [("user", "x"), ("agent", "ok")],
                trial_id=f"p{i}",
                reward=1.0,
                task_name="T",
                n_steps=3,
            )
        )
    parts.append(
        frames([("user", "x"), ("agent", "ok")], trial_id="f", reward=0.0, task_name="T", n_steps=9)
    )
    f = run(combine(*parts), "no_progress")
    assert f["trial_id"].to_list() == ["f"] and "long tail" in f["evidence"][0]


# -- context_exhaustion ------------------------------------------------------------------------


def test_context_exhaustion_rules():
    exc = frames([("user", "x"), ("agent", "hi")], exception_type="ContextWindowExceededError")
    assert run(exc, "context_exhaustion")["severity"].to_list() == ["high"]
    sysmsg = frames(
        [("user", "x"), ("agent", "a"), ("system", "Context limit exceeded. Summarizing.")]
    )
    assert run(sysmsg, "context_exhaustion")["severity"].to_list() == ["high"]
    summ = frames(
        [("user", "x"), ("agent", "a"), ("system", "Performed context summarization and handoff")]
    )
    assert run(summ, "context_exhaustion")["severity"].to_list() == ["low"]
    big = frames([("user", "x"), ("agent", "a")])
    big["steps"] = big["steps"].with_columns(pl.lit(95_000, pl.Int64).alias("prompt_tokens"))
    cfg = {"context_exhaustion": {"context_limit": 100_000}}
    assert run(big, "context_exhaustion", config=cfg)["severity"].to_list() == ["medium"]
    assert run(big, "context_exhaustion").height == 0  # no limit configured


def test_context_exhaustion_ignores_the_system_prompt_and_agent_talk():
    f = frames([("system", "You manage your context window and condensation."), ("user", "x"),
                ("agent", "I will keep the context window small.")])  # fmt: skip
    assert run(f, "context_exhaustion").height == 0


# -- timeout_burn -------------------------------------------------------------------------------


def test_timeout_burn():
    ev = [("user", "x"), ("agent", "", [sh("sleep 60")]), ("agent", "", [sh("make")])]
    f = run(frames(ev, exception_type="AgentTimeoutError"), "timeout_burn")
    assert f["severity"].to_list() == ["high"] and "AgentTimeoutError" in f["evidence"][0]
    assert run(frames(ev), "timeout_burn").height == 0  # no timeout
    busy = [("user", "x"), ("agent", "", [sh("make")]), ("agent", "", [sh("make test")])]
    assert run(frames(busy, exception_type="AgentTimeoutError"), "timeout_burn").height == 0
    long_call = [("user", "x"), ("agent", "", [sh("make", duration_ms=700_000.0)])]
    f = run(frames(long_call, exception_type="AgentTimeoutError", agent_s=900.0), "timeout_burn")
    assert f.height == 1


# -- hedge_assertion ------------------------------------------------------------------------------


def test_hedge_assertion():
    f = run(
        frames(
            [("user", "x"), ("agent", "I changed the parser. This should work now.")], reward=0.0
        ),
        "hedge_assertion",
    )
    assert f["severity"].to_list() == ["high"] and "should work" in f["evidence"][0]
    excuse = [
        ("user", "x"),
        ("agent", "The tests fail with an import error; it should work once numpy is installed."),
    ]
    assert run(frames(excuse), "hedge_assertion").height == 0
    middle = [
        ("user", "x"),
        ("agent", "This should work.", [sh("pytest", "1 passed")]),
        ("agent", "Verified: 1 passed."),
    ]
    assert run(frames(middle), "hedge_assertion").height == 0


# -- premature_completion ---------------------------------------------------------------------


W = call("Write", args={"file_path": "/app/out.py", "content": "print(1)"}, obs="File created")


def test_premature_completion_unverified_write():
    f = run(
        frames([("user", "x"), ("agent", "", [W]), ("agent", "Done! The task is complete.")]),
        "premature_completion",
    )
    assert (
        f["severity"].to_list() == ["high"]
        and "no verification after writing out.py" in f["evidence"][0]
    )
    quiet = run(
        frames([("user", "x"), ("agent", "", [W]), ("agent", "Wrote it.")]), "premature_completion"
    )
    assert quiet["severity"].to_list() == ["medium"]


def test_premature_completion_negatives():
    tested = [
        ("user", "x"),
        ("agent", "", [W]),
        ("agent", "", [sh("pytest -q", "3 passed")]),
        ("agent", "Done."),
    ]
    assert run(frames(tested), "premature_completion").height == 0
    ran = [
        ("user", "x"),
        ("agent", "", [W]),
        ("agent", "", [sh("python3 /app/out.py", "1")]),
        ("agent", "Done."),
    ]
    assert run(frames(ran), "premature_completion").height == 0
    cut = [("user", "x"), ("agent", "", [W])]  # ended on a tool call: did not stop by choice
    assert run(frames(cut), "premature_completion").height == 0
    timeout = [("user", "x"), ("agent", "", [W]), ("agent", "Done.")]
    assert (
        run(frames(timeout, exception_type="AgentTimeoutError"), "premature_completion").height == 0
    )


def test_premature_completion_last_check_failed():
    ev = [("user", "x"), ("agent", "", [sh("pytest -q", "FAILED a - assert 1 == 2", err=True)]),
          ("agent", "All tests pass.")]  # fmt: skip
    f = run(frames(ev), "premature_completion")
    assert f.height == 1 and "last check failed: pytest -q" in f["evidence"][0]


# -- false_success_claim -------------------------------------------------------------------------


def test_false_success_claim():
    ev = [("user", "x"), ("agent", "", [sh("ls")]), ("agent", "The task is complete.")]
    assert run(frames(ev, reward=0.0), "false_success_claim").height == 1
    assert run(frames(ev, reward=1.0), "false_success_claim").height == 0
    assert run(frames(ev), "false_success_claim").height == 0  # no reward: not judged
    honest = [("user", "x"), ("agent", "I could not get the build to work.")]
    assert run(frames(honest, reward=0.0), "false_success_claim").height == 0
    finish = [("user", "x"), ("agent", "", [call("finish", args={"message": "ok"})])]
    assert run(frames(finish, reward=0.0), "false_success_claim").height == 1


def test_false_success_claim_uses_the_last_turn():
    ev = [("user", "a"), ("agent", "Done!"), ("user", "b"), ("agent", "I can't reach the server.")]
    assert run(frames(ev, reward=0.0), "false_success_claim").height == 0


# -- giving_up ----------------------------------------------------------------------------------


def test_giving_up():
    f = run(
        frames([("user", "x"), ("agent", "I cannot complete this task without network access.")]),
        "giving_up",
    )
    assert f["severity"].to_list() == ["medium"]
    soft = [("user", "x"), ("agent", "I'm not sure which format you want. Could you clarify?")]
    assert run(frames(soft), "giving_up")["severity"].to_list() == ["low"]
    assert run(frames([("user", "x"), ("agent", "Done, all tests pass.")]), "giving_up").height == 0


# -- unverified_file_claim --------------------------------------------------------------------


def test_unverified_file_claim():
    ev = [
        ("user", "x"),
        ("agent", "", [sh("ls", "a.txt")]),
        ("agent", "I created utils.py with the helper."),
    ]
    f = run(frames(ev), "unverified_file_claim")
    assert f["severity"].to_list() == ["high"] and "utils.py" in f["evidence"][0]
    wrote = [("user", "x"), ("agent", "", [call("Write", args={"file_path": "/app/utils.py", "content": ""})]),
             ("agent", "I created `utils.py` with the helper.")]  # fmt: skip
    assert run(frames(wrote), "unverified_file_claim").height == 0
    heredoc = [("user", "x"), ("agent", "", [sh("cat > src/utils.py << 'EOF'\ndef f() -> int:\n    return 1\nEOF")]),
               ("agent", "Updated src/utils.py.")]  # fmt: skip
    assert run(frames(heredoc), "unverified_file_claim").height == 0


def test_unverified_file_claim_seen_in_output_and_text_actions():
    ev = [
        ("user", "x"),
        ("agent", "", [sh("python gen.py", "wrote report.csv")]),
        ("agent", "I generated report.csv."),
    ]
    assert run(frames(ev), "unverified_file_claim")["severity"].to_list() == ["low"]
    text_actions = [("user", "x"), ("agent", "<function=bash>echo hi > a.txt</function>", [], "exit code 0"),
                    ("agent", "Created a.txt.")]  # fmt: skip
    assert run(frames(text_actions), "unverified_file_claim").height == 0


def test_unverified_file_claim_counts_subagent_writes():
    main = frames([("user", "x"), ("agent", "Implemented parser.py.")])
    sub = frames([("user", "sub"), ("agent", "", [call("Write", args={"file_path": "parser.py", "content": ""})])],
                 trajectory="subagent-1")  # fmt: skip
    sub["trials"] = sub["trials"].head(0)
    assert run(combine(main, sub), "unverified_file_claim").height == 0


# -- edit_without_read ----------------------------------------------------------------------


E = call("Edit", args={"file_path": "/r/src/a.py", "old_string": "x", "new_string": "y"})


def test_edit_without_read():
    f = run(frames([("user", "x"), ("agent", "", [E])]), "edit_without_read")
    assert f.height == 1 and "a.py" in f["evidence"][0]
    read = [
        ("user", "x"),
        ("agent", "", [call("Read", args={"file_path": "/r/src/a.py"})]),
        ("agent", "", [E]),
    ]
    assert run(frames(read), "edit_without_read").height == 0
    sed = [
        ("user", "x"),
        ("agent", "", [sh("grep -n x src/a.py")]),
        ("agent", "", [sh("sed -i 's/x/y/' src/a.py")]),
    ]
    assert run(frames(sed), "edit_without_read").height == 0
    blind_sed = [("user", "x"), ("agent", "", [sh("sed -i 's/x/y/' src/a.py")])]
    assert run(frames(blind_sed), "edit_without_read").height == 1
    append = [("user", "x"), ("agent", "", [sh("echo x >> notes.txt")])]
    assert run(frames(append), "edit_without_read").height == 0


# -- test_tampering ----------------------------------------------------------------------------


def test_test_tampering():
    skip = call("Edit", args={"file_path": "tests/test_api.py", "old_string": "def test_a",
                              "new_string": "@pytest.mark.skip\ndef test_a"})  # fmt: skip
    f = run(frames([("user", "x"), ("agent", "", [skip])]), "test_tampering")
    assert f["severity"].to_list() == ["high"] and "disabled / faked a test" in f["evidence"][0]
    rm = run(frames([("user", "x"), ("agent", "", [sh("rm -rf tests/")])]), "test_tampering")
    assert rm["severity"].to_list() == ["high"]
    ver = run(
        frames([("user", "x"), ("agent", "", [sh("echo 1 > /tests/reward.txt")])]), "test_tampering"
    )
    assert ver["severity"].to_list() == ["high"]
    mod = call(
        "Edit", args={"file_path": "tests/test_api.py", "old_string": "2", "new_string": "3"}
    )
    assert run(frames([("user", "x"), ("agent", "", [mod])]), "test_tampering")[
        "severity"
    ].to_list() == ["medium"]


def test_test_tampering_negatives():
    new = call(
        "Write",
        args={"file_path": "tests/test_new.py", "content": "def test_x():\n    assert f() == 1\n"},
    )
    src = call("Edit", args={"file_path": "src/app.py", "old_string": "a", "new_string": "b"})
    ev = [("user", "x"), ("agent", "", [new, src]), ("agent", "", [sh("pytest tests/")])]
    assert run(frames(ev), "test_tampering").height == 0


# -- architecture_assumption -------------------------------------------------------------------


def test_architecture_assumption():
    dl = sh("wget https://x.org/tool-linux-x86_64.tar.gz")
    f = run(frames([("user", "x"), ("agent", "", [dl])]), "architecture_assumption")
    assert f["severity"].to_list() == ["low"]
    bad = [
        ("user", "x"),
        ("agent", "", [dl]),
        (
            "agent",
            "",
            [sh("./tool", "bash: ./tool: cannot execute binary file: Exec format error", err=True)],
        ),
    ]
    f = run(frames(bad), "architecture_assumption")
    assert f["severity"].to_list() == ["high"] and f["step_end"][0] == 2
    probed = [("user", "x"), ("agent", "", [sh("uname -m", "aarch64")]), ("agent", "", [dl])]
    assert run(frames(probed), "architecture_assumption").height == 0


def test_architecture_assumption_message():
    f = run(
        frames([("user", "x"), ("agent", "Assuming this is Ubuntu, I'll use apt.")]),
        "architecture_assumption",
    )
    assert f["severity"].to_list() == ["low"] and f["confidence"][0] == pytest.approx(0.4)
    probed = [("user", "x"), ("agent", "", [sh("cat /etc/os-release", "ID=debian")]),
              ("agent", "Assuming this is Debian, I'll use apt.")]  # fmt: skip
    assert run(frames(probed), "architecture_assumption").height == 0
