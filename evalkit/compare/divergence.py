"""``first_divergence(trial_a, trial_b)``: where two trajectories stop doing the same thing.

Each trial's tool calls (``runs.tool_calls``, main trajectory only by default) are put in
order (step_index, call_index) and reduced to a signature: the function name plus the
*normalised* arguments: JSON parsed, keys sorted, string values stripped with runs of
whitespace collapsed to one space, and volatile keys dropped (``duration``, ``timeout``,
``timeout_ms``, ``description``: a wait time or a human label does not change what the
call does). Arguments that are not JSON are compared as whitespace-collapsed text.

The first position where the signatures differ is the divergence; if one sequence is a
prefix of the other, the divergence is where the shorter one ended. Both calls are shown
with their step (the agent message that issued them, when steps are available).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from evalkit.compare.markdown import cell, code_block

DEFAULT_IGNORE_KEYS = ("duration", "timeout", "timeout_ms", "description")
_WS = re.compile(r"\s+")


def _norm(v: Any, ignore: frozenset[str]) -> Any:
    if isinstance(v, dict):
        return {k: _norm(x, ignore) for k, x in sorted(v.items()) if k not in ignore}
    if isinstance(v, list):
        return [_norm(x, ignore) for x in v]
    if isinstance(v, str):
        return _WS.sub(" ", v).strip()
    return v


def normalise_arguments(
    arguments: str | None, ignore_keys: Iterable[str] = DEFAULT_IGNORE_KEYS
) -> str:
    """Canonical text of a call's arguments (module docstring)."""
    if arguments is None:
        return ""
    try:
        parsed = json.loads(arguments)
    except (TypeError, ValueError):
        return _WS.sub(" ", str(arguments)).strip()
    return json.dumps(_norm(parsed, frozenset(ignore_keys)), sort_keys=True, separators=(",", ":"))


@dataclass
class Divergence:
    """Where two trials' tool-call sequences first differ.

    ``kind``: "identical" (same sequence), "differ" (calls at ``index`` differ),
    "a_ended" / "b_ended" (one sequence is a strict prefix of the other; ``index`` is where
    the shorter ended), "no_calls" (neither trial has tool calls). ``index`` is 0-based in
    the call sequence, ``common_prefix`` the number of identical calls before it. ``a`` /
    ``b``: the call at the divergence (None past the end): step_index, call_index,
    function_name, arguments (normalised), command, is_error, observation (first 500
    characters), message (the step's text, first 500 characters, when steps were given).
    """

    trial_a: str | None
    trial_b: str | None
    kind: str
    index: int | None
    common_prefix: int
    n_calls_a: int
    n_calls_b: int
    a: dict[str, Any] | None = None
    b: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        if self.kind == "identical":
            return f"identical tool-call sequences ({self.n_calls_a} calls)"
        if self.kind == "no_calls":
            return "neither trajectory has tool calls"
        where = f"call {self.index} (after {self.common_prefix} identical call(s))"
        if self.kind == "a_ended":
            return f"A stopped at {where}; B went on for {self.n_calls_b - self.common_prefix} more"
        if self.kind == "b_ended":
            return f"B stopped at {where}; A went on for {self.n_calls_a - self.common_prefix} more"
        return f"diverge at {where}"

    def to_markdown(self) -> str:
        """Both sides' calls at the divergence, for evidence bundles."""
        lines = [f"**{self.summary()}**", ""]
        for name, c in (("A", self.a), ("B", self.b)):
            if c is None:
                lines += [f"- {name}: (no call: the trajectory ended)", ""]
                continue
            lines.append(
                f"- {name}: step {c['step_index']}, call {c['call_index']}: {cell(c['function_name'])}"
                + (" (error)" if c.get("is_error") else "")
            )
            if c.get("message"):
                lines.append("  step message:")
                lines.append(code_block(c["message"], "text", indent="  "))
            lines.append("  command:" if c.get("command") else "  arguments (normalised):")
            lines.append(code_block(c.get("command") or c["arguments"], "text", indent="  "))
            if c.get("observation"):
                lines.append("  observation:")
                lines.append(code_block(c["observation"], "text", indent="  "))
            lines.append("")
        return "\n".join(lines)


def _calls(
    x: Any, tool_calls: pl.DataFrame | None, main_only: bool
) -> tuple[str | None, pl.DataFrame]:
    if isinstance(x, pl.DataFrame):
        df, tid = x, (x["trial_id"][0] if "trial_id" in x.columns and x.height else None)
    else:
        if tool_calls is None:
            raise ValueError("a trial id needs runs= or tool_calls=")
        tid, df = str(x), tool_calls.filter(pl.col("trial_id") == str(x))
    if main_only and "is_main" in df.columns:
        df = df.filter(pl.col("is_main").fill_null(True))
    sort = [c for c in ("step_index", "call_index") if c in df.columns]
    return tid, df.sort(sort) if sort else df


def _call(
    row: dict[str, Any], sig: str, steps: pl.DataFrame | None, tid: str | None
) -> dict[str, Any]:
    def cut(s: Any, n: int = 500) -> str | None:
        return None if s is None else (str(s) if len(str(s)) <= n else str(s)[:n] + " …")

    msg = None
    if steps is not None and tid is not None and row.get("step_index") is not None:
        hit = steps.filter(
            (pl.col("trial_id") == tid) & (pl.col("step_index") == row["step_index"])
        )
        if hit.height and "message" in hit.columns:
            msg = cut(hit["message"][0])
    return {
        "step_index": row.get("step_index"),
        "call_index": row.get("call_index"),
        "function_name": row.get("function_name"),
        "arguments": sig,
        "command": row.get("command"),
        "is_error": row.get("is_error"),
        "observation": cut(row.get("observation")),
        "message": msg,
    }


def first_divergence(
    trial_a: str | pl.DataFrame,
    trial_b: str | pl.DataFrame,
    *,
    runs: Any = None,
    tool_calls: pl.DataFrame | None = None,
    steps: pl.DataFrame | None = None,
    ignore_keys: Iterable[str] = DEFAULT_IGNORE_KEYS,
    main_only: bool = True,
) -> Divergence:
    """First step where two trajectories' tool-call sequences differ.

    Args:
        trial_a, trial_b: trial ids (looked up in ``tool_calls`` or ``runs.tool_calls``) or
            frames holding one trial's tool calls (columns of runs.tool_calls; at least
            function_name and arguments).
        runs: a Runs, for tool_calls and steps.
        ignore_keys: argument keys left out of the comparison.
        main_only: only calls of the main agent trajectory (is_main).
    """
    if runs is not None:
        tool_calls = runs.tool_calls if tool_calls is None else tool_calls
        steps = runs.steps if steps is None else steps
    ta, ca = _calls(trial_a, tool_calls, main_only)
    tb, cb = _calls(trial_b, tool_calls, main_only)
    ig = tuple(ignore_keys)

    def sigs(df: pl.DataFrame) -> list[tuple[str, str]]:
        fn = df["function_name"].to_list() if "function_name" in df.columns else [None] * df.height
        args = df["arguments"].to_list() if "arguments" in df.columns else [None] * df.height
        return [(f or "", normalise_arguments(x, ig)) for f, x in zip(fn, args, strict=True)]

    sa, sb = sigs(ca), sigs(cb)
    n = 0
    while n < min(len(sa), len(sb)) and sa[n] == sb[n]:
        n += 1
    if not sa and not sb:
        return Divergence(ta, tb, "no_calls", None, 0, 0, 0)
    if n == len(sa) == len(sb):
        return Divergence(ta, tb, "identical", None, n, len(sa), len(sb))
    kind = "a_ended" if n == len(sa) else "b_ended" if n == len(sb) else "differ"
    ra = ca.row(n, named=True) if n < len(sa) else None
    rb = cb.row(n, named=True) if n < len(sb) else None
    return Divergence(
        ta,
        tb,
        kind,
        n,
        n,
        len(sa),
        len(sb),
        _call(ra, sa[n][1], steps, ta) if ra else None,
        _call(rb, sb[n][1], steps, tb) if rb else None,
    )
