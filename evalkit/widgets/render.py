"""HTML for one trial: header, verifier output and its trajectory as steps.

Pure functions over small per-trial frames (the widgets index them once). Every piece of
trajectory / verifier text is untrusted: it goes through ``html.escape`` and nothing else.
"""

from __future__ import annotations

import os
from html import escape
from typing import Any

import polars as pl

from evalkit.load.shared.io import read_tail

#: Observations / messages longer than this are collapsed (a <details> showing the start).
COLLAPSE_AT = 600
#: Hard cap on the text kept from one field (the rest is cut with a note).
MAX_TEXT = 20_000

CSS = """<style>
.ekw { font-family: system-ui, -apple-system, 'Segoe UI', Roboto, Arial, sans-serif; font-size: 13px; }
.ekw .step { border: 1px solid #ddd; border-left: 5px solid #bbb; border-radius: 3px; margin: 6px 0; padding: 6px 8px; }
.ekw .step.agent { border-left-color: #0072B2; } .ekw .step.user { border-left-color: #009E73; }
.ekw .step.system { border-left-color: #999; }
.ekw .step.err { background: #fdf0e8; } .ekw .step.finding { box-shadow: 0 0 0 2px #E69F00 inset; }
.ekw .step.current { outline: 2px solid #0072B2; }
.ekw .src { font-weight: 700; text-transform: uppercase; font-size: 11px; color: #333; }
.ekw .call { margin: 4px 0 4px 10px; padding: 4px 6px; background: #f6f6f6; border-radius: 3px; }
.ekw .call.err { background: #f9d9c7; }
.ekw .badge { display: inline-block; font-size: 11px; padding: 0 5px; border-radius: 3px; margin-left: 6px; color: #fff; }
.ekw .badge.err { background: #D55E00; } .ekw .badge.find { background: #B07700; } .ekw .badge.ok { background: #009E73; }
.ekw pre { white-space: pre-wrap; word-break: break-word; margin: 3px 0; font-size: 12px; max-height: 28em; overflow: auto; }
.ekw .finding-box { border-left: 4px solid #E69F00; background: #fff8e6; padding: 3px 8px; margin: 4px 0; }
.ekw .muted { color: #666; } .ekw table td { padding: 1px 8px 1px 0; vertical-align: top; text-align: left; }
.ekw table th { padding: 2px 10px 2px 0; text-align: left; font-size: 13px; }
.ekw .diverge { box-shadow: 0 0 0 3px #CC79A7 inset; }
</style>"""


def clip(text: Any, limit: int = MAX_TEXT) -> str:
    s = "" if text is None else str(text)
    return (
        s if len(s) <= limit else s[:limit] + f"\n… [{len(s) - limit:,} more characters not shown]"
    )


def block(text: Any, label: str = "", collapse_at: int = COLLAPSE_AT) -> str:
    """Escaped pre-formatted text; long text is collapsed behind its first lines."""
    s = clip(text)
    if not s:
        return ""
    lab = f'<span class="muted">{escape(label)}</span>' if label else ""
    if len(s) <= collapse_at:
        return f"{lab}<pre>{escape(s)}</pre>"
    head = escape(s[: collapse_at // 2].rstrip())
    return (
        f"{lab}<details><summary><pre>{head} …</pre><span class='muted'>"
        f"show all {len(s):,} characters</span></summary><pre>{escape(s)}</pre></details>"
    )


def marked_tail(path: str | None, max_bytes: int = 64 * 1024) -> str | None:
    """The end of a text file (None when missing), marked when its start was cut."""
    text, cut = read_tail(path, max_bytes)
    if text is None:
        return None
    return ("… [start cut]\n" + text) if cut else text


def verifier_text(trial_dir: str | None) -> str | None:
    if not trial_dir:
        return None
    for name in ("test-stdout.txt", "test_stdout.txt", "output.txt"):
        t = marked_tail(os.path.join(trial_dir, "verifier", name))
        if t is not None:
            return t
    return None


def _analysis_text(checks: list[dict[str, Any]] | None) -> str:
    """The analysis checks of a trial: 'name: verdict' each, the explanation of a failed one."""
    if checks is None:
        return "not analysed"
    parts = []
    for c in checks:
        text = f"{c.get('name')}: {c.get('verdict')}"
        if c.get("verdict") == "fail" and c.get("explanation"):
            text += f" ({str(c['explanation'])[:300]})"
        parts.append(text)
    return "; ".join(parts) or "no checks"


def trial_header(row: dict[str, Any]) -> str:
    """Task, run, job, attempt, outcome, reward(s), error, cost and evidence of one trial."""
    rewards = ", ".join(
        f"{r['name']}={r['value']:g}"
        for r in (row.get("rewards") or [])
        if r.get("value") is not None
    )
    err = ": ".join(
        x for x in (row.get("exception_type"), (row.get("exception_message") or "")[:400]) if x
    )
    cost = row.get("cost_usd")
    pairs = [
        ("task", row.get("task_name")),
        ("run", row.get("run")),
        ("job / trial", f"{row.get('job_name')} / {row.get('trial_name')}"),
        ("attempt", row.get("attempt")),
        ("outcome", f"{row.get('outcome')} (error kind: {row.get('error_kind')})"),
        ("reward", f"{row.get('reward')}" + (f"  [{rewards}]" if rewards else "")),
        ("error", err or "none"),
        ("cost", "unknown" if cost is None else f"${cost:.4f}"),
        ("tokens in / out", f"{row.get('n_input_tokens')} / {row.get('n_output_tokens')}"),
        ("duration", None if row.get("duration_s") is None else f"{row['duration_s']:.0f} s"),
        ("harbor analyze", _analysis_text(row.get("analysis_checks"))),
    ]
    body = "".join(
        f"<tr><td class='muted'>{escape(k)}</td><td>{escape(str(v))}</td></tr>" for k, v in pairs
    )
    return f"<table>{body}</table>"


def step_html(
    step: dict[str, Any],
    calls: list[dict[str, Any]],
    findings: list[dict[str, Any]],
    *,
    current: bool = False,
    diverge: bool = False,
) -> str:
    """One step: who spoke, the message, each tool call with its observation, and the
    findings whose evidence covers the step. Errors and findings are highlighted."""
    src = str(step.get("source") or "?")
    has_err = any(c.get("is_error") for c in calls)
    cls = ["step", escape(src)]
    cls += ["err"] if has_err else []
    cls += ["finding"] if findings else []
    cls += ["current"] if current else []
    cls += ["diverge"] if diverge else []
    badges = ('<span class="badge err">error</span>' if has_err else "") + "".join(
        f'<span class="badge find">{escape(str(f.get("detector")))}</span>' for f in findings
    )
    parts = [
        f'<div class="{" ".join(cls)}"><span class="src">#{step.get("step_index")} {escape(src)}</span>{badges}'
    ]
    if step.get("reasoning_content"):
        parts.append(block(step["reasoning_content"], "reasoning", collapse_at=300))
    parts.append(block(step.get("message")))
    for c in calls:
        what = c.get("command") or c.get("arguments") or ""
        ccls = "call err" if c.get("is_error") else "call"
        exit_code = f" exit {c['exit_code']}" if c.get("exit_code") is not None else ""
        parts.append(
            f'<div class="{ccls}"><b>{escape(str(c.get("function_name") or "?"))}</b>'
            f'<span class="muted">{escape(exit_code)}</span>{block(what, collapse_at=400)}'
            f"{block(c.get('observation'), 'observation')}</div>"
        )
    if step.get("observation"):
        parts.append(block(step["observation"], "observation"))
    for f in findings:
        parts.append(
            f'<div class="finding-box"><b>{escape(str(f.get("detector")))}</b> '
            f'<span class="muted">({escape(str(f.get("severity")))}, steps {f.get("step_start")}–{f.get("step_end")})</span>'
            f"{block(f.get('evidence'), collapse_at=300)}</div>"
        )
    parts.append("</div>")
    return "".join(parts)


def trajectory_html(
    steps: pl.DataFrame,
    calls: pl.DataFrame,
    findings: pl.DataFrame,
    *,
    current: int | None = None,
    window: int | None = None,
    diverge_step: int | None = None,
) -> str:
    """Steps of one trial. With ``current`` and ``window``: only steps current-window ..
    current+window (the stepper view); else every step."""
    if steps.height == 0:
        return '<p class="muted">No trajectory was recorded or parsed for this trial.</p>'
    by_step: dict[int, list[dict[str, Any]]] = {}
    for c in calls.sort("step_index", "call_index").iter_rows(named=True) if calls.height else []:
        by_step.setdefault(c["step_index"], []).append(c)
    fl = findings.to_dicts() if findings.height else []
    rows = steps.sort("step_index")
    if current is not None and window is not None:
        rows = rows.filter(pl.col("step_index").is_between(current - window, current + window))
    out = []
    for s in rows.iter_rows(named=True):
        i = s["step_index"]
        hits = [
            f
            for f in fl
            if (f.get("step_start") or 0)
            <= i
            <= (f.get("step_end") if f.get("step_end") is not None else f.get("step_start") or 0)
        ]
        out.append(
            step_html(s, by_step.get(i, []), hits, current=i == current, diverge=i == diverge_step)
        )
    return "".join(out)
