"""``evidence_bundle(runs, a, b, task)``: one task's evidence from both runs, as Markdown.

goose's failure-analysis recipe done mechanically, for a human or an LLM to read:

1. the task: name, checksums, and its instruction.md when the task folder can be found
   (the trial config's task path, tried as recorded and relative to the job folder's
   parents);
2. every attempt on both sides: outcome, reward(s), error, duration, cost, steps;
3. per attempt, the failing assertions: failed tests of verifier/ctrf.json, the failure
   lines of verifier/test-stdout.txt (pytest ``FAILED`` / ``E   `` lines, assertion
   errors), and the checks reward.json marks false;
4. for one representative attempt per side (an attempt whose pass agrees with the side's
   per-task majority, preferring attempts with a trajectory and verifier output, then the
   earliest; K = 1: the attempt), the verifier tail (last ``tail`` lines of
   test-stdout.txt) and the condensed trajectory (steps, commands, errors);
5. the first divergence of the two representatives' tool-call sequences;
6. the anti-pattern findings of every attempt (runs.findings), when available.

Everything copied from the job folders is passed through ``evalkit.load.shared.redact.redact_text``
(key patterns and the values of this machine's secret environment variables)
and put in fenced blocks whose fence is longer than any backtick run inside, so content
cannot break out of its block; table cells have ``|`` and newlines escaped.
"""

from __future__ import annotations

import contextlib
import os
import re
from typing import Any

import orjson
import polars as pl

from evalkit.compare.divergence import first_divergence
from evalkit.compare.markdown import cell, code_block
from evalkit.compare.select import complete_columns, select_side, trials_of
from evalkit.load.shared.io import read_tail

_FAIL_LINE = re.compile(
    r"^(FAILED\b|ERROR\b|E\s{2,}\S|.*\bAssertionError\b|.*\bassert\b.*(?:==|!=|<|>|\bin\b)|"
    r".*\b(?:FAIL|FAILURE|Failed)\b[:\s])"
)
MAX_FILE = 512 * 1024


def _read(path: str) -> str | None:
    return read_tail(path, MAX_FILE)[0]


def failing_assertions(trial_dir: str | None, limit: int = 30) -> list[str]:
    """Failure lines of one trial's verifier output: ctrf.json failed tests (name: first
    line of the message), test-stdout.txt failure lines, reward.json checks that are false."""
    if not trial_dir:
        return []
    v = os.path.join(trial_dir, "verifier")
    out: list[str] = []
    raw = _read(os.path.join(v, "ctrf.json"))
    if raw:
        try:
            tests = orjson.loads(raw).get("results", {}).get("tests", [])
        except (orjson.JSONDecodeError, AttributeError):
            tests = []
        for t in tests if isinstance(tests, list) else []:
            if isinstance(t, dict) and str(t.get("status", "")).lower() in ("failed", "error"):
                msg = str(t.get("message") or t.get("trace") or "").strip().splitlines()
                out.append(f"ctrf: {t.get('name')}" + (f": {msg[0]}" if msg else ""))
    text = _read(os.path.join(v, "test-stdout.txt"))
    if text:
        seen = set()
        for ln in text.splitlines():
            s = ln.rstrip()
            if s and _FAIL_LINE.match(s) and s not in seen:
                seen.add(s)
                out.append(f"stdout: {s[:300]}")
    raw = _read(os.path.join(v, "reward.json"))
    if raw:
        try:
            checks = orjson.loads(raw).get("checks")
        except (orjson.JSONDecodeError, AttributeError):
            checks = None
        if isinstance(checks, dict):
            out += [f"reward.json check false: {k}" for k, x in checks.items() if x is False]
    return out[:limit] + ([f"... {len(out) - limit} more"] if len(out) > limit else [])


def verifier_tail(trial_dir: str | None, n: int = 80) -> str | None:
    if not trial_dir:
        return None
    text = _read(os.path.join(trial_dir, "verifier", "test-stdout.txt"))
    return None if text is None else "\n".join(text.splitlines()[-n:])


def find_instruction(
    trial_dir: str | None, task_ref: str | None = None
) -> tuple[str | None, str | None]:
    """(instruction text, where it was found or the path tried) for a trial's task."""
    cands: list[str] = []
    paths = []
    if trial_dir:
        raw = _read(os.path.join(trial_dir, "config.json"))
        try:
            task = orjson.loads(raw).get("task", {}) if raw else {}
            if isinstance(task, dict) and task.get("path"):
                paths.append(str(task["path"]))
        except (orjson.JSONDecodeError, AttributeError):
            pass
    if task_ref and "@" not in task_ref:
        paths.append(task_ref)
    for p in paths:
        if os.path.isabs(p):
            cands.append(p)
        elif trial_dir:
            up = os.path.dirname(os.path.dirname(trial_dir))  # parent of the job folder
            for _ in range(4):
                cands.append(os.path.join(up, p))
                up = os.path.dirname(up)
    for c in cands:
        f = os.path.join(c, "instruction.md")
        if os.path.isfile(f):
            return _read(f), f
    return None, (paths[0] if paths else None)


def condensed_trajectory(
    steps: pl.DataFrame, calls: pl.DataFrame, trial_id: str, max_steps: int = 60
) -> str | None:
    """One line per step (source: message start) and per tool call (function: command or
    arguments, [error]); the middle is elided past ``max_steps`` steps."""
    st = steps.filter(pl.col("trial_id") == trial_id).sort("step_index")
    if st.height == 0:
        return None
    tc = calls.filter(pl.col("trial_id") == trial_id).sort("step_index", "call_index")
    by_step: dict[int, list[dict[str, Any]]] = {}
    for r in tc.iter_rows(named=True):
        by_step.setdefault(r["step_index"], []).append(r)
    rows = st.iter_rows(named=True)
    keep = list(rows)
    skipped = 0
    if len(keep) > max_steps:
        half = max_steps // 2
        skipped = len(keep) - 2 * half
        keep = [*keep[:half], None, *keep[-half:]]
    lines = []
    for r in keep:
        if r is None:
            lines.append(f"... {skipped} steps elided ...")
            continue
        msg = " ".join((r.get("message") or "").split())[:160]
        lines.append(f"[{r['step_index']}] {r.get('source')}: {msg}")
        for c in by_step.get(r["step_index"], []):
            what = c.get("command") or c.get("arguments") or ""
            what = " ".join(str(what).split())[:200]
            err = "  [error]" if c.get("is_error") else ""
            lines.append(f"    -> {c.get('function_name')}: {what}{err}")
    return "\n".join(lines)


def _representative(t: pl.DataFrame) -> dict[str, Any] | None:
    fin = t.filter(pl.col("outcome") != "incomplete").sort("attempt")
    if fin.height == 0:
        return t.sort("attempt").row(0, named=True) if t.height else None
    passes = fin.filter(pl.col("passed"))
    majority = passes.height * 2 > fin.height
    pick = (passes if majority else fin.filter(~pl.col("passed"))).to_dicts()

    def evidence(r: dict[str, Any]) -> int:
        d = r.get("trial_dir") or ""
        return -sum(
            os.path.isfile(os.path.join(d, *p))
            for p in (("agent", "trajectory.json"), ("verifier", "test-stdout.txt"))
        )

    return min(pick, key=lambda r: (evidence(r), r.get("attempt") or 0))


def evidence_bundle(
    runs: Any,
    a: str | list[str],
    b: str | list[str],
    task: str,
    *,
    tail: int = 80,
    max_steps: int = 60,
) -> str:
    """Markdown evidence for ``task`` in runs A and B (module docstring for the sections)."""
    trials = complete_columns(trials_of(runs))
    ta, la, _ = select_side(trials, a)
    tb, lb, _ = select_side(trials, b)
    match = (pl.col("task_name") == task) | pl.col("task_name").str.ends_with("/" + task)
    sides = {"A": ta.filter(match), "B": tb.filter(match)}
    if sides["A"].height + sides["B"].height == 0:
        raise KeyError(f"no trial of task {task!r} in {la!r} or {lb!r}")
    passed = (pl.col("reward") >= 1).fill_null(False).alias("passed")
    sides = {k: t.with_columns(passed) for k, t in sides.items()}
    steps = calls = None
    with contextlib.suppress(AttributeError):
        steps, calls = runs.steps, runs.tool_calls
    reps = {k: _representative(t) for k, t in sides.items()}
    ids = [*sides["A"]["trial_id"].to_list(), *sides["B"]["trial_id"].to_list()]
    out = [
        *_title(sides, la, lb),
        *_task_section(sides),
        *_attempts_section(sides),
        *_assertions_section(sides),
        *_representatives_section(reps, steps, calls, tail, max_steps),
        *_divergence_section(reps, steps, calls),
        "",
        "## Anti-pattern findings",
        "",
        _findings(runs, ids, sides),
    ]
    return "\n".join(out).rstrip() + "\n"


def _title(sides: dict[str, pl.DataFrame], la: str, lb: str) -> list[str]:
    name = (sides["A"]["task_name"].to_list() + sides["B"]["task_name"].to_list())[0]
    out = [
        f"# Evidence bundle: {cell(name, 200)}",
        "",
        f"- A (baseline): {cell(la, 200)}",
        f"- B (candidate): {cell(lb, 200)}",
    ]
    for k, t in sides.items():
        jobs = ", ".join(sorted(set(t["job_name"].drop_nulls())))
        out.append(f"- {k}: {t.height} attempt(s); jobs: {cell(jobs, 300)}")
    return out


def _task_section(sides: dict[str, pl.DataFrame]) -> list[str]:
    """Checksums per side and the task's instruction.md when the task folder is found."""
    out = ["", "## Task", ""]
    for k, t in sides.items():
        cs = sorted(set(t["task_checksum"].drop_nulls().to_list()))
        out.append(f"- {k} task checksum(s): {', '.join(c[:12] for c in cs) or 'unknown'}")
    first = next((t.row(0, named=True) for t in sides.values() if t.height), {})
    text, where = find_instruction(first.get("trial_dir"), first.get("task_ref"))
    if not text:
        return [
            *out,
            "",
            f"Instruction: not available (task folder not found; recorded path: {cell(where, 200)}).",
        ]
    folder = cell(os.path.basename(os.path.dirname(where or "")), 100)
    return [
        *out,
        "",
        f"Instruction ({folder}/instruction.md):",
        "",
        code_block(text[:6000], "markdown"),
    ]


def _attempt_row(side: str, r: dict[str, Any]) -> str:
    rewards = ", ".join(
        f"{x['name']}={x['value']:g}"
        for x in (r.get("rewards") or [])
        if x.get("value") is not None
    )
    first_line = (r.get("exception_message") or "").split("\n")[0]
    err = ": ".join(x for x in (r.get("exception_type"), first_line) if x)
    dur = f"{r['duration_s']:.0f}s" if r.get("duration_s") is not None else "-"
    cost = f"${r['cost_usd']:.4f}" if r.get("cost_usd") is not None else "unknown"
    return (
        f"| {side} | {r.get('attempt')} | {cell(r.get('trial_name'), 60)} | {r.get('outcome')} | "
        f"{cell(r.get('reward'))} | {cell(rewards or None)} | {cell(err or None, 100)} | {dur} | {cost} | {cell(r.get('n_steps'))} |"
    )


def _attempts_section(sides: dict[str, pl.DataFrame]) -> list[str]:
    out = [
        "",
        "## Attempts",
        "",
        "| side | attempt | trial | outcome | reward | rewards | error | duration | cost | steps |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for k, t in sides.items():
        out += [_attempt_row(k, r) for r in t.sort("attempt").iter_rows(named=True)]
    return out


def _assertions_section(sides: dict[str, pl.DataFrame]) -> list[str]:
    out = ["", "## Failing assertions", ""]
    for k, t in sides.items():
        for r in t.sort("attempt").iter_rows(named=True):
            fa = failing_assertions(r.get("trial_dir"))
            out += [
                f"### {k} attempt {r.get('attempt')} ({r.get('outcome')})",
                "",
                code_block("\n".join(fa), "text") if fa else "(none found in the verifier output)",
                "",
            ]
    return out


def _representatives_section(
    reps: dict[str, dict[str, Any] | None],
    steps: pl.DataFrame | None,
    calls: pl.DataFrame | None,
    tail: int,
    max_steps: int,
) -> list[str]:
    """Per side, the representative attempt's verifier tail and condensed trajectory."""
    out: list[str] = []
    for k, r in reps.items():
        if r is None:
            continue
        vt = verifier_tail(r.get("trial_dir"), tail)
        traj = (
            condensed_trajectory(steps, calls, r["trial_id"], max_steps)
            if steps is not None and calls is not None
            else None
        )
        out += [
            f"## {k}: representative attempt {r.get('attempt')} ({cell(r.get('trial_name'), 80)}, {r.get('outcome')})",
            "",
            f"Verifier output (last {tail} lines of test-stdout.txt):",
            "",
            code_block(vt, "text") if vt else "(no verifier/test-stdout.txt)",
            "",
            "Trajectory (condensed):",
            "",
            code_block(traj, "text") if traj else "(no trajectory parsed for this trial)",
            "",
        ]
    return out


def _divergence_section(
    reps: dict[str, dict[str, Any] | None],
    steps: pl.DataFrame | None,
    calls: pl.DataFrame | None,
) -> list[str]:
    ra, rb = reps["A"], reps["B"]
    if not (ra and rb and calls is not None):
        return ["## First divergence", "", "(needs a trajectory on both sides)"]
    d = first_divergence(ra["trial_id"], rb["trial_id"], tool_calls=calls, steps=steps)
    return ["## First divergence", "", d.to_markdown()]


def _findings(runs: Any, ids: list[str], sides: dict[str, pl.DataFrame]) -> str:
    try:
        f = runs.findings
    except AttributeError:
        return "(findings not available for this input)"
    f = f.filter(pl.col("trial_id").is_in(ids))
    if f.height == 0:
        return "(no findings for these attempts)"
    side_of = {tid: k for k, t in sides.items() for tid in t["trial_id"].to_list()}
    att = {r["trial_id"]: r["attempt"] for t in sides.values() for r in t.iter_rows(named=True)}
    lines = [
        "| side | attempt | detector | severity | steps | evidence |",
        "|---|---|---|---|---|---|",
    ]
    for r in f.sort("trial_id", "step_start").iter_rows(named=True):
        lines.append(
            f"| {side_of.get(r['trial_id'])} | {att.get(r['trial_id'])} | {cell(r['detector'])} | {cell(r['severity'])} | "
            f"{r['step_start']}-{r['step_end']} | {cell(r['evidence'], 160)} |"
        )
    return "\n".join(lines)
