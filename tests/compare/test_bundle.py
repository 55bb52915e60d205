"""evidence_bundle: sections, failing assertions (ctrf.json, test-stdout.txt, reward.json
checks), instruction lookup, escaping and redaction; and on real hermes jobs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import polars as pl
import pytest

import evalkit
from evalkit.compare import evidence_bundle
from evalkit.compare.bundle import failing_assertions, find_instruction
from evalkit.compare.markdown import cell, code_block
from tests.conftest import OPENCLAW, SKILLSBENCH_JOB

SECRET = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"


def write(p: Path, text: str) -> None:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


@pytest.fixture
def fake_runs(tmp_path: Path) -> SimpleNamespace:
    write(
        tmp_path / "tasks" / "demo-task" / "instruction.md",
        f"# Sum two numbers\n\nWrite `sum.py`.\n\n```\nnot a real fence end\n```\nkey: {SECRET}\n",
    )
    ta = tmp_path / "jobs" / "job-a" / "demo-task__aaa"
    tb = tmp_path / "jobs" / "job-b" / "demo-task__bbb"
    for t in (ta, tb):
        write(t / "config.json", json.dumps({"task": {"path": "tasks/demo-task"}}))
    write(
        ta / "verifier" / "ctrf.json",
        json.dumps(
            {
                "results": {
                    "tests": [
                        {
                            "name": "test_sum",
                            "status": "failed",
                            "message": "AssertionError: 2 != 3\nmore",
                        },
                        {"name": "test_file", "status": "passed"},
                    ]
                }
            }
        ),
    )
    noise = "\n".join(f"line {i}" for i in range(200))
    write(
        ta / "verifier" / "test-stdout.txt",
        f"{noise}\nFAILED tests/test_x.py::test_sum - AssertionError\nE       assert 2 == 3\n"
        f"token={SECRET}\n===== 1 failed =====\n",
    )
    write(
        ta / "verifier" / "reward.json",
        json.dumps({"reward": 0, "checks": {"sum_ok": False, "file": True}}),
    )
    write(tb / "verifier" / "test-stdout.txt", "1 passed\n")
    trials = pl.DataFrame(
        {
            "run": ["A", "B"],
            "job_name": ["job-a", "job-b"],
            "trial_id": ["ta", "tb"],
            "trial_name": ["demo-task__aaa", "demo|task__bbb"],
            "trial_dir": [str(ta), str(tb)],
            "task_name": ["org/demo-task", "org/demo-task"],
            "attempt": [1, 1],
            "reward": [0.0, 1.0],
            "outcome": ["fail", "pass"],
            "exception_type": ["RuntimeError", None],
            "exception_message": ["boom\nsecond line", None],
            "task_checksum": ["abc123", "abc123"],
        }
    )
    steps = pl.DataFrame(
        {
            "trial_id": ["ta", "ta", "tb", "tb"],
            "step_index": [0, 1, 0, 1],
            "source": ["user", "agent", "user", "agent"],
            "message": ["sum two numbers", "I'll write it", "sum two numbers", "writing sum.py"],
        }
    )
    calls = pl.DataFrame(
        {
            "trial_id": ["ta", "tb"],
            "step_index": [1, 1],
            "call_index": [0, 0],
            "function_name": ["bash", "write_file"],
            "arguments": ['{"cmd": "echo 1 > sum.py"}', '{"path": "sum.py"}'],
            "command": ["echo 1 > sum.py", None],
            "is_error": [True, False],
            "observation": ["permission denied", "ok"],
        }
    )
    findings = pl.DataFrame(
        {
            "trial_id": ["ta"],
            "detector": ["premature_completion"],
            "step_start": [1],
            "step_end": [1],
            "severity": ["medium"],
            "evidence": ["done | fixed"],
        }
    )
    return SimpleNamespace(trials=trials, steps=steps, tool_calls=calls, findings=findings)


def test_bundle_sections_and_content(fake_runs):
    md = evidence_bundle(fake_runs, "A", "B", "demo-task")
    for h in (
        "# Evidence bundle: org/demo-task",
        "## Task",
        "## Attempts",
        "## Failing assertions",
        "## A: representative attempt 1",
        "## B: representative attempt 1",
        "## First divergence",
        "## Anti-pattern findings",
    ):
        assert h in md
    assert "Sum two numbers" in md  # instruction found via the relative task path
    assert "ctrf: test_sum: AssertionError: 2 != 3" in md
    assert "stdout: FAILED tests/test_x.py::test_sum - AssertionError" in md
    assert "stdout: E       assert 2 == 3" in md
    assert "reward.json check false: sum_ok" in md and "check false: file" not in md
    assert "| A | 1 | demo-task__aaa | fail | 0.0 |" in md
    assert "demo\\|task__bbb" in md  # pipe escaped in the table
    assert "RuntimeError: boom" in md and "second line" not in md.split("## Failing")[0]
    assert "-> bash: echo 1 > sum.py  [error]" in md
    assert "diverge at call 0" in md
    assert "| A | 1 | premature_completion | medium | 1-1 | done \\| fixed |" in md
    assert "line 100" not in md and "line 150" in md  # last 80 lines of the verifier output


def test_bundle_redacts_and_fences_hold(fake_runs):
    md = evidence_bundle(fake_runs, "A", "B", "org/demo-task")
    assert SECRET not in md and "[REDACTED]" in md
    # the instruction's own ``` cannot close the block: it sits inside a longer fence
    m = re.search(r"^(`{4,})markdown$", md, flags=re.M)
    assert m is not None
    body = md[m.end() :].split("\n" + m.group(1) + "\n", 1)[0]
    assert "not a real fence end" in body and "key: [REDACTED]" in body


def test_bundle_unknown_task_and_missing_trajectories(fake_runs):
    with pytest.raises(KeyError):
        evidence_bundle(fake_runs, "A", "B", "nope")
    bare = SimpleNamespace(trials=fake_runs.trials)
    md = evidence_bundle(bare, "A", "B", "demo-task")
    assert "(no trajectory parsed for this trial)" in md
    assert "(needs a trajectory on both sides)" in md
    assert "(findings not available for this input)" in md


def test_helpers(tmp_path):
    assert code_block("a ``` b").startswith("````\n")
    assert code_block("x", indent="  ") == "  ```\n  x\n  ```"
    assert cell("a|b\nc") == "a\\|b c" and cell(None) == "-"
    assert failing_assertions(None) == [] and failing_assertions(str(tmp_path)) == []
    assert find_instruction(None) == (None, None)


def test_bundle_real_skillsbench_ctrf():
    runs = evalkit.load(SKILLSBENCH_JOB, progress=False)
    t = runs.trials.with_columns(
        pl.when(pl.col("attempt") <= 2).then(pl.lit("A")).otherwise(pl.lit("B")).alias("run")
    )
    md = evidence_bundle(SimpleNamespace(trials=t), "A", "B", "3d-scan-calc")
    # F8Fc7fn (attempt 5, B) has a ctrf.json with 2 passed tests: nothing failing to list
    assert "### B attempt 5 (pass)" in md
    assert "2 passed in 0.02s" in md  # its verifier tail (representative of B: first pass)
    assert "/home/user/skillsbench/tasks-no-skills/3d-scan-calc" in md  # instruction path tried


def test_bundle_real_hermes_jobs():
    runs = evalkit.load(OPENCLAW, progress=False)
    md = evidence_bundle(
        runs,
        "2026-05-14__12-27-32__hermes-telegram-mirror-drop",
        "2026-05-26__01-59-53",
        "hermes-telegram-mirror-drop",
    )
    assert "| A | 1 | hermes-telegram-mirror-drop__zk5N5fF | partial | 0.65 |" in md
    assert "faithful_communication=0.3" in md
    assert "-> session_search:" in md and "-> send_message:" in md
    assert "**diverge at call 0 (after 0 identical call(s))**" in md
    assert "faithful_communication = 0.3" in md  # verifier tail


def test_bundle_real_findings_when_detectors_exist():
    runs = evalkit.load(OPENCLAW, progress=False)
    md = evidence_bundle(
        runs, "2026-05-15__02-35-26", "2026-05-26__01-59-53", "hermes-telegram-mirror-drop"
    )
    section = md[md.index("## Anti-pattern findings") :]
    # attempt 2 told the user "Done!" and got reward 0 (detector name is evalkit.patterns')
    assert "| A | 2 |" in section and "| high |" in section


def _outside_fences(md: str) -> list[str]:
    out, fence = [], None
    for ln in md.splitlines():
        m = re.match(r"\s*(`{3,})", ln)
        if m and fence is None:
            fence = m.group(1)
        elif m and fence is not None and ln.strip() == fence:
            fence = None
        elif fence is None:
            out.append(ln)
    return out


def _text(html: str) -> str:
    from html.parser import HTMLParser

    parts: list[str] = []
    p = HTMLParser(convert_charrefs=True)
    p.handle_data = parts.append  # type: ignore[method-assign]
    p.feed(html)
    return "".join(parts)


def test_cells_headings_and_labels_are_text_in_any_markdown_viewer() -> None:
    import mistune

    from tests.security.hostile import GLOB

    evil = "<img src=x onerror=alert(1)> [x](javascript:y) *a* _b_ ~~c~~ a|b `d` & \\"
    viewer = mistune.create_markdown(escape=False, plugins=["table", "strikethrough"])
    for text in (evil, GLOB):
        md = f"# Evidence bundle: {cell(text, 200)}\n\n| a |\n|---|\n| {cell(text, 200)} |\n"
        html = viewer(md)  # a viewer that lets raw HTML through
        assert "<img" not in html and "<a " not in html and "<em>" not in html, html
        assert "<del>" not in html and "<code>" not in html, html
        assert _text(html).count(text.replace("`", "'")) == 2, html


def test_bundle_of_hostile_runs_carries_no_markup_outside_code_fences(tmp_path: Path) -> None:
    import mistune

    from tests.security.hostile import EVIL_TASK, GLOB, build

    runs = evalkit.load(build(tmp_path / "runs"), progress=False)
    md = evidence_bundle(runs, "base-night", "cand-night", EVIL_TASK)
    plain = "\n".join(_outside_fences(md))
    assert "<" not in plain and ">" not in plain.replace("->", ""), plain
    html = mistune.create_markdown(escape=False, plugins=["table"])(md)
    assert "<img" not in html and "<script" not in html
    assert "<em>" not in html
    text = _text(html)
    assert GLOB in text and EVIL_TASK in text
