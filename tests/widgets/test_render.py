"""evalkit.widgets.render: the HTML of one trial (header, verifier output, steps with their
tool calls and findings), built from small per-trial frames.

Checked: text clipping and collapsing, the tail of verifier files (which file wins, the cut
marker), the `harbor analyze` summary, every header line (rewards, error, cost, duration),
one step's classes, badges, calls and finding boxes, and which steps a trajectory shows
(window, findings by step range, call order, divergence mark); all untrusted text escaped.
The browser / stepper / explorer use of this HTML is in test_widgets.py and test_stepper.py.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from evalkit.widgets.render import (
    COLLAPSE_AT,
    MAX_TEXT,
    _analysis_text,
    block,
    clip,
    marked_tail,
    step_html,
    trajectory_html,
    trial_header,
    verifier_text,
)

EVIL = '<script>alert("x")</script>'
SAFE = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"

# -- clip / block -----------------------------------------------------------------------------


def test_clip_keeps_short_text_and_notes_what_it_cut() -> None:
    assert clip(None) == "" and clip(12) == "12"
    assert clip("x" * 20, limit=20) == "x" * 20
    assert clip("x" * 25, limit=20) == "x" * 20 + "\n… [5 more characters not shown]"
    # the default limit: 21,500 - 20,000 = 1,500 (thousands separated)
    assert clip("y" * (MAX_TEXT + 1500)).endswith("[1,500 more characters not shown]")


def test_block_is_escaped_preformatted_text() -> None:
    assert block("") == "" and block(None) == ""
    assert block(EVIL) == f"<pre>{SAFE}</pre>"
    assert block("hi", "ran <me>") == '<span class="muted">ran &lt;me&gt;</span><pre>hi</pre>'


def test_block_collapses_long_text_behind_its_start() -> None:
    text = "<" + "a" * 20 + "b" * 20  # 41 characters, collapse at 40: head = first 20
    out = block(text, collapse_at=40)
    assert out.startswith("<details><summary><pre>&lt;" + "a" * 19 + " …</pre>")
    assert "show all 41 characters" in out
    assert out.endswith(f"<pre>&lt;{'a' * 20}{'b' * 20}</pre></details>")
    assert "<details>" not in block("z" * COLLAPSE_AT)  # exactly at the limit: shown whole


# -- marked_tail / verifier_text ----------------------------------------------------------------


def test_marked_tail_marks_a_cut_start(tmp_path: Path) -> None:
    f = tmp_path / "log.txt"
    f.write_text("0123456789")
    assert marked_tail(str(f)) == "0123456789"
    assert marked_tail(str(f), max_bytes=4) == "… [start cut]\n6789"
    assert marked_tail(str(tmp_path / "missing.txt")) is None
    assert marked_tail(None) is None


def test_verifier_text_prefers_test_stdout(tmp_path: Path) -> None:
    v = tmp_path / "verifier"
    v.mkdir()
    (v / "output.txt").write_text("generic output")
    assert verifier_text(str(tmp_path)) == "generic output"
    (v / "test_stdout.txt").write_text("underscore name")
    assert verifier_text(str(tmp_path)) == "underscore name"
    (v / "test-stdout.txt").write_text("3 passed")
    assert verifier_text(str(tmp_path)) == "3 passed"


def test_verifier_text_without_files_or_folder_is_none(tmp_path: Path) -> None:
    assert verifier_text(str(tmp_path)) is None
    assert verifier_text(None) is None and verifier_text("") is None


# -- header -----------------------------------------------------------------------------------


def test_analysis_text_lists_verdicts_and_explains_failures() -> None:
    assert _analysis_text(None) == "not analysed"
    assert _analysis_text([]) == "no checks"
    checks = [
        {"name": "hacking", "verdict": "fail", "explanation": "e" * 400},
        {"name": "spec", "verdict": "pass", "explanation": "fine"},
    ]
    assert _analysis_text(checks) == f"hacking: fail ({'e' * 300}); spec: pass"


def _row(**kw) -> dict:
    row = {
        "task_name": "fix-bug", "run": "cand", "job_name": "job-1", "trial_name": "fix-bug__a1",
        "attempt": 2, "outcome": "fail", "error_kind": "agent", "reward": 0.5,
        "rewards": [{"name": "reward", "value": 0.5}, {"name": "style", "value": None},
                    {"name": "tests", "value": 0.25}],
        "exception_type": "AgentTimeoutError", "exception_message": "took too long",
        "cost_usd": 0.123456, "n_input_tokens": 1000, "n_output_tokens": 50,
        "duration_s": 61.6, "analysis_checks": None,
    }  # fmt: skip
    return {**row, **kw}


def _cells(html: str) -> dict[str, str]:
    """Header table as {label: value} (values still escaped)."""
    out = {}
    for tr in html.removeprefix("<table>").removesuffix("</table>").split("<tr>")[1:]:
        k, v = tr.split("</td><td>")
        out[k.removeprefix("<td class='muted'>")] = v.removesuffix("</td></tr>")
    return out


def test_trial_header_lines() -> None:
    c = _cells(trial_header(_row()))
    assert c == {
        "task": "fix-bug",
        "run": "cand",
        "job / trial": "job-1 / fix-bug__a1",
        "attempt": "2",
        "outcome": "fail (error kind: agent)",
        "reward": "0.5  [reward=0.5, tests=0.25]",  # the null-valued reward is left out
        "error": "AgentTimeoutError: took too long",
        "cost": "$0.1235",
        "tokens in / out": "1000 / 50",
        "duration": "62 s",
        "harbor analyze": "not analysed",
    }


def test_trial_header_without_error_cost_or_duration() -> None:
    row = _row(
        exception_type=None, exception_message=None, cost_usd=None, duration_s=None, rewards=None
    )
    c = _cells(trial_header(row))
    assert c["error"] == "none" and c["cost"] == "unknown" and c["duration"] == "None"
    assert c["reward"] == "0.5"


def test_trial_header_cuts_the_error_message_and_escapes_it() -> None:
    c = _cells(trial_header(_row(exception_type=None, exception_message=EVIL + "m" * 500)))
    assert c["error"].startswith(SAFE)
    # 400 characters kept: the 27-character payload and 373 m's
    assert c["error"].count("m") == 373
    c = _cells(trial_header(_row(task_name=EVIL)))
    assert c["task"] == SAFE


# -- step_html --------------------------------------------------------------------------------


def _call(**kw) -> dict:
    return {"function_name": "bash", "command": "ls", "arguments": '{"cmd": "ls"}',
            "observation": "a.txt", "is_error": False, "exit_code": None, **kw}  # fmt: skip


def test_step_html_of_a_plain_agent_step() -> None:
    out = step_html({"step_index": 3, "source": "agent", "message": "hello"}, [], [])
    assert out == '<div class="step agent"><span class="src">#3 agent</span><pre>hello</pre></div>'


def test_step_html_marks_errors_findings_current_and_divergence() -> None:
    f = {"detector": "retry<loop>", "severity": "high", "step_start": 2, "step_end": 4,
         "evidence": EVIL}  # fmt: skip
    out = step_html(
        {"step_index": 3, "source": "agent", "message": "m"},
        [_call(is_error=True, exit_code=2)],
        [f],
        current=True,
        diverge=True,
    )
    assert out.startswith('<div class="step agent err finding current diverge">')
    assert '<span class="badge err">error</span>' in out
    assert '<span class="badge find">retry&lt;loop&gt;</span>' in out
    assert '<div class="call err"><b>bash</b><span class="muted"> exit 2</span><pre>ls</pre>' in out
    assert '<span class="muted">(high, steps 2–4)</span>' in out
    assert SAFE in out and EVIL not in out


def test_step_html_shows_calls_observations_and_reasoning() -> None:
    step = {"step_index": 0, "source": "agent", "message": None, "reasoning_content": "think",
            "observation": "step output"}  # fmt: skip
    calls = [
        _call(),
        _call(function_name=None, command=None, arguments='{"path": "<x>"}', observation=None),
    ]
    out = step_html(step, calls, [])
    assert '<span class="muted">reasoning</span><pre>think</pre>' in out
    # a shell call shows its command, a tool call its arguments; a missing name is "?"
    assert '<div class="call"><b>bash</b><span class="muted"></span><pre>ls</pre>' in out
    assert '<span class="muted">observation</span><pre>a.txt</pre></div>' in out
    assert (
        '<b>?</b><span class="muted"></span><pre>{&quot;path&quot;: &quot;&lt;x&gt;&quot;}</pre></div>'
        in out
    )
    assert out.endswith('<span class="muted">observation</span><pre>step output</pre></div>')


def test_step_html_escapes_the_source() -> None:
    out = step_html({"step_index": 0, "source": '"><b>x', "message": ""}, [], [])
    assert '<div class="step &quot;&gt;&lt;b&gt;x">' in out and "<b>x" not in out
    assert step_html({"step_index": 1}, [], []).startswith('<div class="step ?">')


def test_step_html_collapses_long_reasoning_sooner_than_messages() -> None:
    text = "r" * 350  # over the reasoning limit (300), under the message limit (600)
    out = step_html({"step_index": 0, "source": "agent", "message": text,
                     "reasoning_content": text}, [], [])  # fmt: skip
    assert out.count("<details>") == 1


# -- trajectory_html --------------------------------------------------------------------------


def _steps(n: int) -> pl.DataFrame:
    return pl.DataFrame({
        "step_index": list(reversed(range(n))),
        "source": ["agent"] * n,
        "message": [f"msg-{i}" for i in reversed(range(n))],
    })  # fmt: skip


NO_CALLS = pl.DataFrame(schema={"step_index": pl.Int64, "call_index": pl.Int64})
NO_FINDINGS = pl.DataFrame(schema={"detector": pl.String})


def test_trajectory_html_without_steps_says_so() -> None:
    out = trajectory_html(_steps(0), NO_CALLS, NO_FINDINGS)
    assert out == '<p class="muted">No trajectory was recorded or parsed for this trial.</p>'


def test_trajectory_html_shows_every_step_in_order() -> None:
    out = trajectory_html(_steps(4), NO_CALLS, NO_FINDINGS)
    assert [out.index(f"msg-{i}") for i in range(4)] == sorted(
        out.index(f"msg-{i}") for i in range(4)
    )
    assert out.count('<div class="step') == 4


def test_trajectory_html_window_around_the_current_step() -> None:
    out = trajectory_html(_steps(10), NO_CALLS, NO_FINDINGS, current=5, window=2)
    shown = [i for i in range(10) if f"msg-{i}<" in out]
    assert shown == [3, 4, 5, 6, 7]  # 5 - 2 .. 5 + 2
    assert out.count(" current") == 1 and "#5 agent" in out.split(" current")[1][:40]
    # current without a window: every step, one marked current
    assert trajectory_html(_steps(10), NO_CALLS, NO_FINDINGS, current=5).count("msg-") == 10


def test_trajectory_html_attaches_calls_to_their_step_in_call_order() -> None:
    calls = pl.DataFrame({
        "step_index": [1, 1, 0], "call_index": [1, 0, 0],
        "function_name": ["second", "first", "zero"], "command": ["b", "a", "z"],
        "arguments": [None] * 3, "observation": [None] * 3, "is_error": [False, True, False],
        "exit_code": [None] * 3,
    })  # fmt: skip
    out = trajectory_html(_steps(2), calls, NO_FINDINGS)
    step0, step1 = out.split("#1 agent")
    assert "<b>zero</b>" in step0 and "<b>first</b>" not in step0
    assert step1.index("<b>first</b>") < step1.index("<b>second</b>")
    assert out.count("badge err") == 1 and '<div class="step agent err">' in out  # only step 1


def test_trajectory_html_marks_the_steps_a_finding_covers() -> None:
    findings = pl.DataFrame({
        "detector": ["span", "single"], "severity": ["low", "low"],
        "step_start": [1, 4], "step_end": [2, None], "evidence": ["e1", "e2"],
    })  # fmt: skip
    out = trajectory_html(_steps(6), NO_CALLS, findings)
    marked = [
        i for i, part in enumerate(out.split('<div class="step')[1:]) if "finding" in part[:30]
    ]
    assert marked == [1, 2, 4]  # span covers 1..2; no end: only its start
    assert out.count("badge find") == 3


def test_trajectory_html_marks_the_divergence_step() -> None:
    out = trajectory_html(_steps(3), NO_CALLS, NO_FINDINGS, diverge_step=1)
    assert out.count(" diverge") == 1
    assert '<div class="step agent diverge"><span class="src">#1 agent' in out


@pytest.mark.parametrize("field", ["message", "observation", "reasoning_content"])
def test_trajectory_text_is_escaped(field: str) -> None:
    steps = pl.DataFrame({"step_index": [0], "source": ["agent"], field: [EVIL]})
    out = trajectory_html(steps, NO_CALLS, NO_FINDINGS)
    assert SAFE in out and "<script>" not in out
