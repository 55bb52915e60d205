"""One go-code rollout's events -> a trials row, steps rows, tool_calls rows, findings rows.

Rules (rollouts-gates-qc.md §1.3-1.7, 1.13; documented in docs/trajectories.md):

* trial_id = run id = ``run.started.data.conversation_id``, else the file stem.
* Steps: a 'user' step (step_id 0) with the run.started prompt (a 'system' step first when
  a system_prompt is recorded), then one 'agent' step per go-code step number that has any
  of run.step.*, llm.turn.*, usage.delta, assistant.*, reasoning.complete or tool.call.*
  events. Its message is assistant.message, else the joined assistant.message.delta
  chunks, else llm.turn.completed.content; tokens/cost from that step's usage.delta
  turn_usage / turn_cost_usd.
* Tool calls: tool.call.started + tool.call.completed paired by call_id (arguments are the
  JSON string as recorded); failure = the completed event has an ``error`` key with a
  non-empty value (go-code's own Success rule); no completed event = unknown (null).
  ``llm.turn.completed.tool_calls`` lists are used only for steps without tool.call events.
* Cost: cost_totals.cost_usd_total, then total_cost_usd (cost_totals or top level), then the
  last usage.delta cumulative_cost_usd; cost_status kept. A 0 cost whose status is not
  'available' (unpriced_model, provider_unreported, pending) is unknown: cost_usd null.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import orjson

from evalkit.load.errors import LoadError
from evalkit.load.gocode.events import TERMINAL, RolloutFile, is_date_folder
from evalkit.load.shared.io import as_int, finite_float
from evalkit.load.steps.columns import call_row, step_row
from evalkit.load.steps.commands import shell_command

_STEP_TYPES = frozenset(
    {
        "run.step.started", "run.step.completed", "llm.turn.requested", "llm.turn.completed",
        "usage.delta", "assistant.message", "assistant.message.delta", "assistant.thinking.delta",
        "reasoning.complete", "tool.call.started", "tool.call.completed", "llm.empty_response.retry",
    }
)  # fmt: skip
#: trainerd's anti-pattern weights -> severity (<=0.5 low, 1.0 medium, >1 high).
_SEVERITY = {"retry_loop": "low", "premature_completion": "high"}


@dataclass
class Converted:
    trial: dict[str, Any]
    steps: list[tuple] = field(default_factory=list)  # steps.columns.step_row
    calls: list[tuple] = field(default_factory=list)  # steps.columns.call_row
    findings: list[dict] = field(default_factory=list)
    errors: list[LoadError] = field(default_factory=list)


def _d(ev: dict) -> dict:
    d = ev.get("data")
    return d if isinstance(d, dict) else {}


def _text(v: Any) -> str | None:
    if v is None or isinstance(v, str):
        return v
    try:
        return orjson.dumps(v).decode()
    except TypeError:  # e.g. integers over 64 bits from the stdlib fallback parser
        return str(v)


def _cost_known(cost: float | None, status: str | None) -> float | None:
    if cost is not None and cost == 0 and status not in (None, "available"):
        return None
    return cost


def _parse_args(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            return raw
    return raw


def _exit_from_output(out: Any) -> int | None:
    if isinstance(out, str) and out[:1] == "{":
        try:
            d = orjson.loads(out)
        except orjson.JSONDecodeError:
            return None
        if isinstance(d, dict):
            for k in ("exit_code", "exitCode", "returncode", "return_code"):
                v = as_int(d.get(k))
                if v is not None:
                    return v
    return None


@dataclass
class _Events:
    """A rollout's events indexed once: first / last event and count per type."""

    events: list[dict]
    first: dict[str, dict] = field(default_factory=dict)
    last: dict[str, dict] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for ev in self.events:
            t = ev["type"]
            self.first.setdefault(t, ev)
            self.last[t] = ev
            self.counts[t] = self.counts.get(t, 0) + 1

    def last_data(self, type_: str) -> dict:
        return _d(self.last[type_]) if type_ in self.last else {}


def _str(d: dict, key: str) -> str | None:
    v = d.get(key)
    return v if isinstance(v, str) else None


def _dict(d: dict, key: str) -> dict:
    v = d.get(key)
    return v if isinstance(v, dict) else {}


def convert(rf: RolloutFile, *, job_id: str, job_name: str) -> Converted:
    """Map one rollout to rows (see the module docstring for the rules)."""
    ix = _Events(rf.events)
    started = ix.first.get("run.started")
    sd = _d(started) if started else {}
    stem = os.path.splitext(os.path.basename(rf.path))[0]
    run_id = _str(sd, "conversation_id") or stem
    term = next((ev for ev in reversed(rf.events) if ev["type"] in TERMINAL), None)
    td = _d(term) if term else {}
    prov = ix.last_data("provider.resolved")
    model, provider = _str(prov, "model"), _str(prov, "provider")
    model_name = f"{provider}/{model}" if model and provider and provider != "default" else model

    out = Converted(trial={})
    by_step = _events_by_step(rf.events)
    step_index_of, n_calls, n_retried = _steps_and_calls(
        out, run_id, sd, started, by_step, model_name
    )
    out.findings = _recorded_findings(rf.events, run_id, step_index_of)
    out.trial = {
        "job_id": job_id, "job_name": job_name, "trial_id": run_id, "trial_name": run_id,
        "trial_dir": rf.path, "source_format": "go-code", "task_name": _str(sd, "task_id"),
        "agent_name": "go-code", "model_name": model_name, "model_provider": provider,
        **_outcome(term, td),
        "_started": started.get("ts") if started else None,
        "_finished": term.get("ts") if term else None,
        **_usage_and_cost(ix, td),
        "n_steps": len(by_step), "n_tool_calls": n_calls, "n_turns": len(by_step),
        "n_retried_tool_calls": n_retried, "n_llm_retries": ix.counts.get("llm.empty_response.retry", 0),
        "recorder_drops": ix.counts.get("recorder.drop_detected", 0), "result_present": term is not None,
        "has_trajectory": True, "previous_run_id": _str(sd, "previous_run_id"),
        "rollout_date": _rollout_date(rf.path),
        "harness_steps": as_int(td.get("step")), "n_events": len(rf.events), "n_malformed_lines": rf.n_malformed,
    }  # fmt: skip
    out.errors = _integrity_errors(rf.path, job_id, run_id, ix, started, term)
    return out


def _integrity_errors(
    path: str, job_id: str, run_id: str, ix: _Events, started: dict | None, term: dict | None
) -> list[LoadError]:
    """Load errors for a rollout that is missing its start or end, or lost events."""
    errs: list[LoadError] = []

    def err(kind: str, msg: str) -> None:
        errs.append(LoadError(path, "rollout", kind, msg, job_id, run_id))

    if started is None:
        err("missing_run_started", "no run.started event")
    if term is None:
        err(
            "missing_terminal_event",
            "no run.completed / run.failed / run.cancelled event (crashed or still running)",
        )
    if ix.counts.get("recorder.drop_detected"):
        err(
            "recorder_drop",
            f"{ix.counts['recorder.drop_detected']} recorder.drop_detected gap marker(s): events were lost",
        )
    return errs


def _outcome(term: dict | None, td: dict) -> dict[str, Any]:
    """run_status, exception and failure reason from the terminal event."""
    run_status = {
        "run.completed": "completed",
        "run.failed": "failed",
        "run.cancelled": "cancelled",
    }.get(term["type"] if term else "", "unknown")
    failed = run_status in ("failed", "cancelled")
    reason = _str(td, "reason")
    return {
        "run_status": run_status,
        "exception_type": term["type"] if failed and term else None,
        "exception_message": (_str(td, "error") or reason or "") if failed else None,
        "failure_reason": reason,
    }


def _usage_and_cost(ix: _Events, td: dict) -> dict[str, Any]:
    """Token totals and cost of the run: the terminal event's totals, else the last
    usage.delta's cumulative figures (module docstring for the cost rule)."""
    ud = ix.last_data("usage.delta")
    cum, ut, ct = _dict(ud, "cumulative_usage"), _dict(td, "usage_totals"), _dict(td, "cost_totals")
    n_in = as_int(ut.get("prompt_tokens_total"))
    n_out = as_int(ut.get("completion_tokens_total"))
    cost = next(
        (v for v in (finite_float(ct.get("cost_usd_total")), finite_float(ct.get("total_cost_usd")),
                     finite_float(td.get("total_cost_usd")), finite_float(ud.get("cumulative_cost_usd")))
         if v is not None),
        None,
    )  # fmt: skip
    status = _str(ct, "cost_status") or _str(ud, "cost_status")
    return {
        "n_input_tokens": n_in if n_in is not None else as_int(cum.get("prompt_tokens")),
        "n_cache_tokens": as_int(cum.get("cached_prompt_tokens")),
        "n_output_tokens": n_out if n_out is not None else as_int(cum.get("completion_tokens")),
        "cost_usd": _cost_known(cost, status),
        "cost_status": status or ("recorded" if cost is not None else "unknown"),
    }


def _rollout_date(path: str) -> str | None:
    """The date folder (YYYY-MM-DD) a rollout file sits in, if any."""
    parent = os.path.basename(os.path.dirname(path))
    return parent if is_date_folder(parent) else None


def _events_by_step(evs: list[dict]) -> dict[int, list[dict]]:
    """The step events of each go-code step number (>= 1)."""
    by_step: dict[int, list[dict]] = {}
    for ev in evs:
        if ev["type"] in _STEP_TYPES:
            n = as_int(_d(ev).get("step"))
            if n is not None and n >= 1:
                by_step.setdefault(n, []).append(ev)
    return by_step


def _steps_and_calls(
    out: Converted,
    run_id: str,
    sd: dict,
    started: dict | None,
    by_step: dict[int, list[dict]],
    model_name: str | None,
) -> tuple[dict[int, int], int, int]:
    """Append the step and tool-call rows to ``out``; return the step index of each go-code
    step number, the number of calls and of calls repeating an earlier (tool, arguments)."""
    idx = 0
    if isinstance(sd.get("system_prompt"), str):
        out.steps.append(_opening_step(run_id, idx, "system", sd["system_prompt"], started))
        idx += 1
    if started is not None:
        out.steps.append(_opening_step(run_id, idx, "user", _text(sd.get("prompt")), started))
        idx += 1
    sigs: dict[str, int] = {}
    n_retried = n_calls_total = 0
    step_index_of: dict[int, int] = {}
    for n in sorted(by_step):
        es = by_step[n]
        step_index_of[n] = idx
        kinds: dict[str, list[dict]] = {}
        for ev in es:
            kinds.setdefault(ev["type"], []).append(ev)
        turns = kinds.get("llm.turn.completed", [])
        ltc = _d(turns[-1]) if turns else {}
        ts = (turns[0] if turns else es[0]).get("ts")
        rows = _call_events(es, ltc)
        for ci, row in enumerate(rows):
            call, sig = _call_row(run_id, idx, ci, row, ts)
            sigs[sig] = sigs.get(sig, 0) + 1
            n_retried += sigs[sig] > 1
            n_calls_total += 1
            out.calls.append(call)
        pt, ctok, cached, scost, sstat = _step_usage(kinds)
        out.steps.append(step_row(
            trial_id=run_id, step_index=idx, step_id=n, trajectory="main", is_main=True,
            source="agent", model_name=model_name, message=_step_message(kinds),
            reasoning_content=_step_reasoning(kinds), _ts=ts, prompt_tokens=pt,
            completion_tokens=ctok, cached_tokens=cached, cost_usd=_cost_known(scost, sstat),
            n_tool_calls=len(rows), llm_call_count=len(turns), extra=_step_extra(kinds, ltc),
            llm_retries=len(kinds.get("llm.empty_response.retry", ())),
        ))  # fmt: skip
        idx += 1
    return step_index_of, n_calls_total, n_retried


def _opening_step(
    run_id: str, idx: int, source: str, text: str | None, started: dict | None
) -> tuple:
    """The system or user prompt as a step of its own (no calls, timestamped at the start)."""
    return step_row(
        trial_id=run_id, step_index=idx, step_id=0, trajectory="main", is_main=True,
        source=source, message=text, _ts=started.get("ts") if started else None, n_tool_calls=0,
    )  # fmt: skip


def _step_message(kinds: dict[str, list[dict]]) -> str | None:
    """assistant.message, else the joined deltas, else llm.turn.completed content."""
    msg = next(
        (_text(_d(e).get("content")) for e in kinds.get("assistant.message", ()) if _d(e).get("content")),
        None,
    )  # fmt: skip
    if msg is None and "assistant.message.delta" in kinds:
        msg = "".join(
            c
            for e in kinds["assistant.message.delta"]
            if isinstance(c := _d(e).get("content"), str)
        )
    if msg is None:
        msg = next(
            (
                _text(_d(e).get("content"))
                for e in kinds.get("llm.turn.completed", ())
                if _d(e).get("content") is not None
            ),
            None,
        )
    return msg


def _step_reasoning(kinds: dict[str, list[dict]]) -> str | None:
    reason = next((_text(_d(e).get("text")) for e in kinds.get("reasoning.complete", ())), None)
    if reason is None and "assistant.thinking.delta" in kinds:
        reason = "".join(
            c
            for e in kinds["assistant.thinking.delta"]
            if isinstance(c := _d(e).get("content"), str)
        )
    return reason


def _step_usage(
    kinds: dict[str, list[dict]],
) -> tuple[int | None, int | None, int | None, float | None, str | None]:
    """Prompt, completion and cached tokens, cost and cost status summed over the step's
    usage.delta turn_usage / turn_cost_usd (None when no event gives the figure)."""
    totals: dict[str, int | None] = {"prompt_tokens": None, "completion_tokens": None,
                                     "cached_prompt_tokens": None}  # fmt: skip
    scost = sstat = None
    for e in kinds.get("usage.delta", ()):
        d = _d(e)
        tu = _dict(d, "turn_usage")
        for key, total in totals.items():
            v = as_int(tu.get(key))
            if v is not None:
                totals[key] = (total or 0) + v
        c = finite_float(d.get("turn_cost_usd"))
        if c is not None:
            scost = (scost or 0.0) + c
        status = _str(d, "cost_status")
        sstat = status if status is not None else sstat
    return (totals["prompt_tokens"], totals["completion_tokens"], totals["cached_prompt_tokens"],
            scost, sstat)  # fmt: skip


def _step_extra(kinds: dict[str, list[dict]], ltc: dict) -> str | None:
    """The step's timings (turn duration, time to first token, step duration) as JSON."""
    extra = {k: ltc[k] for k in ("total_duration_ms", "ttft_ms") if k in ltc}
    if "run.step.completed" in kinds:
        dm = _d(kinds["run.step.completed"][-1]).get("duration_ms")
        if dm is not None:
            extra["step_duration_ms"] = dm
    return orjson.dumps(extra).decode() if extra else None


def _call_events(es: list[dict], ltc: dict) -> list[tuple]:
    """The step's calls: (started, completed) pairs by call_id in order; for a step without
    tool.call events, the llm.turn.completed tool_calls as (None, None, listed call)."""
    pairs: dict[str, list] = {}
    order: list[list] = []
    for e in es:
        if e["type"] not in ("tool.call.started", "tool.call.completed"):
            continue
        d = _d(e)
        cid = _str(d, "call_id")
        slot = pairs.get(cid) if cid is not None else None
        if slot is None or slot[0 if e["type"] == "tool.call.started" else 1] is not None:
            slot = [None, None]
            order.append(slot)
            if cid is not None:
                pairs[cid] = slot
        slot[0 if e["type"] == "tool.call.started" else 1] = e
    if order:
        return [(s, c) for s, c in order]
    listed = ltc.get("tool_calls") if isinstance(ltc.get("tool_calls"), list) else ()
    return [(None, None, tc) for tc in listed if isinstance(tc, dict)]


def _call_row(run_id: str, idx: int, ci: int, row: tuple, ts: Any) -> tuple[tuple, str]:
    """One tool_calls row and its retry signature (tool and canonical arguments)."""
    if len(row) == 3:
        tc = row[2]
        cid, tool, raw_args, comp, cts = tc.get("id"), tc.get("name"), tc.get("arguments"), None, ts
    else:
        s, comp = row
        src = _d(s) if s else _d(comp)
        cid, tool = src.get("call_id"), src.get("tool")
        if tool is None and comp is not None:
            tool = _d(comp).get("tool")
        raw_args = _d(s).get("arguments") if s else None
        cts = (s or comp).get("ts")
    tool = tool if isinstance(tool, str) else None
    cid = cid if isinstance(cid, str) else None
    args = _parse_args(raw_args)
    s_err = s_exit = obs = osrc = None
    if comp is not None:
        cdat = _d(comp)
        e_val = cdat.get("error")
        s_err = "error" in cdat and e_val not in (None, "")
        o = cdat.get("output")
        obs = _text(o) if o is not None else (_text(e_val) if e_val not in (None, "") else None)
        osrc = "call_id"
        s_exit = _exit_from_output(o)
    try:
        canon = orjson.dumps(args, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:
        canon = str(args)
    sig = f"{tool}\x00{canon}"
    duration = finite_float(_d(comp).get("duration_ms")) if comp is not None else None
    return call_row(
        trial_id=run_id, step_index=idx, call_index=ci, tool_call_id=cid, trajectory="main",
        is_main=True, function_name=tool, arguments=_text(raw_args),
        command=shell_command(tool, args), observation=obs, observation_source=osrc,
        duration_ms=duration, _ts=cts, _s_err=s_err, _s_exit=s_exit, _sig=sig,
    ), sig  # fmt: skip


def _recorded_findings(evs: list[dict], run_id: str, step_index_of: dict[int, int]) -> list[dict]:
    """Findings rows of the tool.antipattern events go-code recorded."""
    out = []
    for ev in evs:
        if ev["type"] != "tool.antipattern":
            continue
        d = _d(ev)
        typ = _str(d, "type")
        typ = "unknown" if typ is None else typ
        step_no = as_int(d.get("step"))
        si = step_index_of.get(step_no) if step_no is not None else None
        tool, cnt = d.get("tool"), d.get("call_count")
        ev_text = _str(d, "evidence") or None
        if ev_text is None:
            ev_text = f"{typ}: {tool}" + (
                f" called {cnt} times with identical arguments" if cnt is not None else ""
            )
        out.append({
            "trial_id": run_id, "detector": typ, "step_start": si, "step_end": si,
            "severity": _SEVERITY.get(typ, "medium"), "confidence": 1.0, "evidence": ev_text,
            "rule_version": "go-code-recorded", "source": "recorded", "mode": None,
        })  # fmt: skip
    return out
