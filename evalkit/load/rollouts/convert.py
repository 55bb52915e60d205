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
from evalkit.load.io import as_int, finite_float
from evalkit.load.rollouts.events import TERMINAL, RolloutFile
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
    steps: list[tuple] = field(default_factory=list)
    step_retries: list[int | None] = field(default_factory=list)
    calls: list[tuple] = field(default_factory=list)
    call_durations: list[float | None] = field(default_factory=list)
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


def convert(rf: RolloutFile, *, job_id: str, job_name: str) -> Converted:
    """Map one rollout to rows (see the module docstring for the rules)."""
    evs = rf.events
    first: dict[str, dict] = {}
    last: dict[str, dict] = {}
    counts: dict[str, int] = {}
    for ev in evs:
        t = ev["type"]
        first.setdefault(t, ev)
        last[t] = ev
        counts[t] = counts.get(t, 0) + 1
    started = first.get("run.started")
    sd = _d(started) if started else {}
    stem = os.path.splitext(os.path.basename(rf.path))[0]
    run_id = (
        sd.get("conversation_id")
        if isinstance(sd.get("conversation_id"), str) and sd.get("conversation_id")
        else stem
    )
    term = next((ev for ev in reversed(evs) if ev["type"] in TERMINAL), None)
    td = _d(term) if term else {}
    errs: list[LoadError] = []

    def err(kind: str, msg: str) -> None:
        errs.append(LoadError(rf.path, "rollout", kind, msg, job_id, run_id))

    if started is None:
        err("missing_run_started", "no run.started event")
    if term is None:
        err(
            "missing_terminal_event",
            "no run.completed / run.failed / run.cancelled event (crashed or still running)",
        )
    if counts.get("recorder.drop_detected"):
        err(
            "recorder_drop",
            f"{counts['recorder.drop_detected']} recorder.drop_detected gap marker(s): events were lost",
        )

    prov = _d(last["provider.resolved"]) if "provider.resolved" in last else {}
    model = prov.get("model") if isinstance(prov.get("model"), str) else None
    provider = prov.get("provider") if isinstance(prov.get("provider"), str) else None
    model_name = f"{provider}/{model}" if model and provider and provider != "default" else model

    # --- usage and cost ------------------------------------------------------------------
    ud = _d(last["usage.delta"]) if "usage.delta" in last else {}
    cum = ud.get("cumulative_usage") if isinstance(ud.get("cumulative_usage"), dict) else {}
    ut = td.get("usage_totals") if isinstance(td.get("usage_totals"), dict) else {}
    ct = td.get("cost_totals") if isinstance(td.get("cost_totals"), dict) else {}
    n_in = as_int(ut.get("prompt_tokens_total"))
    n_in = n_in if n_in is not None else as_int(cum.get("prompt_tokens"))
    n_out = as_int(ut.get("completion_tokens_total"))
    n_out = n_out if n_out is not None else as_int(cum.get("completion_tokens"))
    n_cache = as_int(cum.get("cached_prompt_tokens"))
    cost = next(
        (v for v in (finite_float(ct.get("cost_usd_total")), finite_float(ct.get("total_cost_usd")),
                     finite_float(td.get("total_cost_usd")), finite_float(ud.get("cumulative_cost_usd")))
         if v is not None),
        None,
    )  # fmt: skip
    status = ct.get("cost_status") if isinstance(ct.get("cost_status"), str) else None
    status = status or (ud.get("cost_status") if isinstance(ud.get("cost_status"), str) else None)
    cost_usd = _cost_known(cost, status)
    cost_status = status or ("recorded" if cost is not None else "unknown")

    # --- steps ---------------------------------------------------------------------------
    out = Converted(trial={})
    by_step: dict[int, list[dict]] = {}
    for ev in evs:
        if ev["type"] in _STEP_TYPES:
            n = as_int(_d(ev).get("step"))
            if n is not None and n >= 1:
                by_step.setdefault(n, []).append(ev)
    idx = 0
    if isinstance(sd.get("system_prompt"), str):
        out.steps.append((run_id, idx, 0, "main", True, None, "system", None, sd["system_prompt"], None, started.get("ts"),
                          None, None, None, None, 0, None, None, None, None, None))  # fmt: skip
        out.step_retries.append(None)
        idx += 1
    if started is not None:
        out.steps.append((run_id, idx, 0, "main", True, None, "user", None, _text(sd.get("prompt")), None, started.get("ts"),
                          None, None, None, None, 0, None, None, None, None, None))  # fmt: skip
        out.step_retries.append(None)
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
        msg = next(
            (
                _text(_d(e).get("content"))
                for e in kinds.get("assistant.message", ())
                if _d(e).get("content")
            ),
            None,
        )
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
        reason = next((_text(_d(e).get("text")) for e in kinds.get("reasoning.complete", ())), None)
        if reason is None and "assistant.thinking.delta" in kinds:
            reason = "".join(
                c
                for e in kinds["assistant.thinking.delta"]
                if isinstance(c := _d(e).get("content"), str)
            )
        pt = ctok = cached = None
        scost = None
        sstat = None
        for e in kinds.get("usage.delta", ()):
            d = _d(e)
            tu = d.get("turn_usage") if isinstance(d.get("turn_usage"), dict) else {}
            for key, cur in (
                ("prompt_tokens", "pt"),
                ("completion_tokens", "ct"),
                ("cached_prompt_tokens", "ca"),
            ):
                v = as_int(tu.get(key))
                if v is not None:
                    if cur == "pt":
                        pt = (pt or 0) + v
                    elif cur == "ct":
                        ctok = (ctok or 0) + v
                    else:
                        cached = (cached or 0) + v
            c = finite_float(d.get("turn_cost_usd"))
            if c is not None:
                scost = (scost or 0.0) + c
            sstat = d.get("cost_status") if isinstance(d.get("cost_status"), str) else sstat
        turns = kinds.get("llm.turn.completed", [])
        ltc = _d(turns[-1]) if turns else {}
        extra = {k: ltc[k] for k in ("total_duration_ms", "ttft_ms") if k in ltc}
        if "run.step.completed" in kinds:
            dm = _d(kinds["run.step.completed"][-1]).get("duration_ms")
            if dm is not None:
                extra["step_duration_ms"] = dm
        ts = (turns[0] if turns else es[0]).get("ts")
        # tool calls of this step
        pairs: dict[str, list] = {}
        order: list[list] = []
        for e in es:
            if e["type"] not in ("tool.call.started", "tool.call.completed"):
                continue
            d = _d(e)
            cid = d.get("call_id") if isinstance(d.get("call_id"), str) else None
            slot = pairs.get(cid) if cid is not None else None
            if slot is None or slot[0 if e["type"] == "tool.call.started" else 1] is not None:
                slot = [None, None]
                order.append(slot)
                if cid is not None:
                    pairs[cid] = slot
            slot[0 if e["type"] == "tool.call.started" else 1] = e
        listed = []
        if not order:
            for tc in ltc.get("tool_calls") if isinstance(ltc.get("tool_calls"), list) else ():
                if isinstance(tc, dict):
                    listed.append(tc)
        rows = [(s, c) for s, c in order] + [(None, None, tc) for tc in listed]
        for ci, row in enumerate(rows):
            if len(row) == 3:
                tc = row[2]
                cid, tool, raw_args, comp, cts = (
                    tc.get("id"),
                    tc.get("name"),
                    tc.get("arguments"),
                    None,
                    ts,
                )
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
            cmd = shell_command(tool, args)
            s_err = s_exit = obs = osrc = dur = None
            if comp is not None:
                cdat = _d(comp)
                e_val = cdat.get("error")
                s_err = "error" in cdat and e_val not in (None, "")
                o = cdat.get("output")
                obs = (
                    _text(o)
                    if o is not None
                    else (_text(e_val) if e_val not in (None, "") else None)
                )
                osrc = "call_id"
                s_exit = _exit_from_output(o)
                dur = finite_float(cdat.get("duration_ms"))
            try:
                canon = orjson.dumps(args, option=orjson.OPT_SORT_KEYS).decode()
            except TypeError:
                canon = str(args)
            sig = f"{tool}\x00{canon}"
            sigs[sig] = sigs.get(sig, 0) + 1
            n_retried += sigs[sig] > 1
            n_calls_total += 1
            out.calls.append((run_id, idx, ci, cid, "main", True, None, tool, _text(raw_args), cmd, obs, osrc,
                              s_err, s_exit, cts, sig))  # fmt: skip
            out.call_durations.append(dur)
        out.steps.append((run_id, idx, n, "main", True, None, "agent", model_name, msg, reason, ts, pt, ctok, cached,
                          _cost_known(scost, sstat), len(rows), None, None, len(turns),
                          orjson.dumps(extra).decode() if extra else None, None))  # fmt: skip
        out.step_retries.append(len(kinds.get("llm.empty_response.retry", ())))
        idx += 1

    # --- findings ------------------------------------------------------------------------
    for ev in evs:
        if ev["type"] != "tool.antipattern":
            continue
        d = _d(ev)
        typ = d.get("type") if isinstance(d.get("type"), str) else "unknown"
        step_no = as_int(d.get("step"))
        si = step_index_of.get(step_no) if step_no is not None else None
        tool, cnt = d.get("tool"), d.get("call_count")
        ev_text = (
            d.get("evidence") if isinstance(d.get("evidence"), str) and d.get("evidence") else None
        )
        if ev_text is None:
            ev_text = f"{typ}: {tool}" + (
                f" called {cnt} times with identical arguments" if cnt is not None else ""
            )
        out.findings.append({
            "trial_id": run_id, "detector": typ, "step_start": si, "step_end": si,
            "severity": _SEVERITY.get(typ, "medium"), "confidence": 1.0, "evidence": ev_text,
            "rule_version": "go-code-recorded", "source": "recorded", "mode": None,
        })  # fmt: skip

    # --- trial ---------------------------------------------------------------------------
    run_status = {
        "run.completed": "completed",
        "run.failed": "failed",
        "run.cancelled": "cancelled",
    }.get(term["type"] if term else "", "unknown")
    e_text = td.get("error") if isinstance(td.get("error"), str) else None
    reason = td.get("reason") if isinstance(td.get("reason"), str) else None
    n_agent = len(by_step)
    parent = os.path.basename(os.path.dirname(rf.path))
    out.trial = {
        "job_id": job_id, "job_name": job_name, "trial_id": run_id, "trial_name": run_id,
        "trial_dir": rf.path, "source_format": "go-code",
        "task_name": sd.get("task_id") if isinstance(sd.get("task_id"), str) else None,
        "agent_name": "go-code", "model_name": model_name, "model_provider": provider,
        "run_status": run_status, "exception_type": term["type"] if run_status in ("failed", "cancelled") else None,
        "exception_message": (e_text or reason or "") if run_status in ("failed", "cancelled") else None,
        "failure_reason": reason, "_started": started.get("ts") if started else None,
        "_finished": term.get("ts") if term else None, "n_input_tokens": n_in, "n_cache_tokens": n_cache,
        "n_output_tokens": n_out, "cost_usd": cost_usd, "cost_status": cost_status,
        "n_steps": n_agent, "n_tool_calls": n_calls_total, "n_turns": n_agent,
        "n_retried_tool_calls": n_retried, "n_llm_retries": counts.get("llm.empty_response.retry", 0),
        "recorder_drops": counts.get("recorder.drop_detected", 0), "result_present": term is not None,
        "has_trajectory": True, "previous_run_id": sd.get("previous_run_id") if isinstance(sd.get("previous_run_id"), str) else None,
        "rollout_date": parent if len(parent) == 10 and parent[4] == "-" and parent[7] == "-" else None,
        "harness_steps": as_int(td.get("step")), "n_events": len(evs), "n_malformed_lines": rf.n_malformed,
    }  # fmt: skip
    out.errors = errs
    return out
