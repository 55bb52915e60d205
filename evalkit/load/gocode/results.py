"""go-code comparison-harness outputs: results.jsonl and baseline.json (rollouts-gates-qc.md §1.9-1.11).

* ``results.jsonl``: either concatenated pretty-printed JSON objects (the comparison
  harness does ``cat result.json >> results.jsonl``) or strict JSON Lines (the
  Terminal-Bench post-processor). Both load; unparsable stretches become LoadErrors.
* ``baseline.json``: ``{"tasks": {task_id: {...}}}`` with or without the 2026 ``provenance``
  block; one row per task.
* :func:`join_results`: task_id and is_resolved onto rollout trials by run_id, with the
  outcome re-derived (goose rule: a reward beats a failure).
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import polars as pl

from evalkit.load.errors import LoadError
from evalkit.load.shared import io
from evalkit.load.steps.derive import parse_timestamps

#: Typed columns of read_results_jsonl (other keys are kept as String / JSON text).
RESULTS_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String, "task_id": pl.String, "tool_id": pl.String, "status": pl.String,
    "is_resolved": pl.Boolean, "failure_classification": pl.String, "steps_taken": pl.Int64,
    "total_prompt_tokens": pl.Int64, "total_completion_tokens": pl.Int64,
    "total_cost_usd": pl.Float64, "cost_status": pl.String, "cache_hit_rate": pl.Float64,
    "model": pl.String, "provider_name": pl.String, "created_at": pl.String,
    "updated_at": pl.String, "duration_ms": pl.Int64, "error_message": pl.String,
    "git_sha": pl.String, "prompt": pl.String, "output": pl.String,
    "tool_calls": pl.String, "parser_results": pl.String,
}  # fmt: skip
_NUM = {pl.Int64, pl.Float64}


def _objects(data: bytes, path: str, errors: list[LoadError]) -> list[dict]:
    lines = [ln for ln in data.split(b"\n") if ln.strip()]
    try:  # strict JSONL: every line one object
        objs = orjson.loads(b"[" + b",".join(lines) + b"]")
        if all(isinstance(o, dict) for o in objs):
            return objs
    except orjson.JSONDecodeError:
        pass
    text = data.decode("utf-8", errors="replace")
    dec = json.JSONDecoder()
    out: list[dict] = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] in " \t\r\n,":
            i += 1
        if i >= n:
            break
        try:
            obj, j = dec.raw_decode(text, i)
        except json.JSONDecodeError as e:
            nxt = text.find("\n{", i + 1)
            errors.append(
                LoadError(
                    path,
                    "file",
                    "json_decode",
                    f"unparsable record at char {i}: {e.msg}; skipped to the next object",
                )
            )
            if nxt < 0:
                break
            i = nxt + 1
            continue
        if isinstance(obj, dict):
            out.append(obj)
        else:
            errors.append(
                LoadError(
                    path,
                    "file",
                    "wrong_type",
                    f"record at char {i} is a {type(obj).__name__}, not an object",
                )
            )
        i = j
    return out


def _cell(v: Any, dt: pl.DataType) -> Any:
    if dt == pl.String:
        return v if isinstance(v, str) or v is None else orjson.dumps(v).decode()
    if dt == pl.Boolean:
        return v if isinstance(v, bool) else None
    if dt == pl.Int64:
        return io.as_int(v)
    if dt == pl.Float64:
        return io.finite_float(v)
    return v


def read_results_jsonl(path: str, *, errors: list[LoadError] | None = None) -> pl.DataFrame:
    """One row per result record; known fields typed (RESULTS_SCHEMA), others as text.

    created_at / updated_at are also parsed into ``created_at_utc`` / ``updated_at_utc``.
    Problems go to ``errors`` when a list is given (never raised).
    """
    errs: list[LoadError] = [] if errors is None else errors
    data, e = io.read_bytes(path, "file")
    objs: list[dict] = []
    if e is not None:
        errs.append(e)
    elif data.strip():
        objs = _objects(data, path, errs)
    keys = list(RESULTS_SCHEMA)
    for o in objs:
        keys.extend(k for k in o if k not in RESULTS_SCHEMA and k not in keys)
    schema = {k: RESULTS_SCHEMA.get(k, pl.String) for k in keys}
    cols = {k: [_cell(o.get(k), dt) for o in objs] for k, dt in schema.items()}
    df = pl.DataFrame(cols, schema=schema)
    return df.with_columns(
        parse_timestamps("created_at").alias("created_at_utc"),
        parse_timestamps("updated_at").alias("updated_at_utc"),
    )


def read_baseline(path: str, *, errors: list[LoadError] | None = None) -> pl.DataFrame:
    """Per-task baseline frame from a go-code ``baseline.json`` (both formats).

    Columns: task_id, expected_pass, difficulty, category, avg_steps, avg_tokens,
    avg_prompt_tokens, avg_completion_tokens, avg_cost_usd (null when the cost is an
    unpriced 0: cost_status not 'available'), avg_cost_usd_recorded (as written),
    cost_status, avg_wall_time_sec, and the provenance fields baseline_model,
    baseline_provider, git_sha, terminal_bench_version, dataset_hash, baseline_started_at
    (null for the 2026-03-08 format), format ('provenance' or 'legacy').
    """
    errs: list[LoadError] = [] if errors is None else errors
    doc, e = io.read_json(path, "file")
    if e is not None:
        errs.append(e)
        doc = {}
    if not isinstance(doc, dict):
        errs.append(LoadError(path, "file", "wrong_type", "baseline.json is not a JSON object"))
        doc = {}
    prov = doc.get("provenance") if isinstance(doc.get("provenance"), dict) else None
    tasks = doc.get("tasks") if isinstance(doc.get("tasks"), dict) else {}
    if not tasks and doc:
        errs.append(LoadError(path, "file", "missing_tasks", "baseline.json has no 'tasks' object"))
    p = prov or {}
    pstat = p.get("cost_status") if isinstance(p.get("cost_status"), str) else None
    rows = []
    for tid, t in tasks.items():
        t = t if isinstance(t, dict) else {}
        stat = t.get("cost_status") if isinstance(t.get("cost_status"), str) else pstat
        raw = io.finite_float(t.get("avg_cost_usd"))
        known = None if (raw == 0 and stat not in (None, "available")) else raw
        rows.append({
            "task_id": str(tid), "expected_pass": t.get("expected_pass") if isinstance(t.get("expected_pass"), bool) else None,
            "difficulty": _cell(t.get("difficulty"), pl.String), "category": _cell(t.get("category"), pl.String),
            "avg_steps": io.finite_float(t.get("avg_steps")), "avg_tokens": io.finite_float(t.get("avg_tokens")),
            "avg_prompt_tokens": io.finite_float(t.get("avg_prompt_tokens")),
            "avg_completion_tokens": io.finite_float(t.get("avg_completion_tokens")),
            "avg_cost_usd": known, "avg_cost_usd_recorded": raw, "cost_status": stat,
            "avg_wall_time_sec": io.finite_float(t.get("avg_wall_time_sec")),
            "baseline_model": _cell(p.get("model"), pl.String), "baseline_provider": _cell(p.get("provider"), pl.String),
            "git_sha": _cell(p.get("git_sha"), pl.String),
            "terminal_bench_version": _cell(p.get("terminal_bench_version"), pl.String),
            "dataset_hash": _cell(p.get("dataset_hash"), pl.String), "baseline_started_at": _cell(p.get("started_at"), pl.String),
            "format": "provenance" if prov is not None else "legacy",
        })  # fmt: skip
    schema = {
        "task_id": pl.String, "expected_pass": pl.Boolean, "difficulty": pl.String, "category": pl.String,
        "avg_steps": pl.Float64, "avg_tokens": pl.Float64, "avg_prompt_tokens": pl.Float64,
        "avg_completion_tokens": pl.Float64, "avg_cost_usd": pl.Float64, "avg_cost_usd_recorded": pl.Float64,
        "cost_status": pl.String, "avg_wall_time_sec": pl.Float64, "baseline_model": pl.String,
        "baseline_provider": pl.String, "git_sha": pl.String, "terminal_bench_version": pl.String,
        "dataset_hash": pl.String, "baseline_started_at": pl.String, "format": pl.String,
    }  # fmt: skip
    df = pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)
    return df.with_columns(parse_timestamps("baseline_started_at").alias("baseline_started_at"))


def outcome_exprs() -> list[pl.Expr]:
    """outcome / error_kind of rollout trials from run_status, reward and the failure text.

    Order (goose rule, reward beats failure): reward >= 1 pass, 0 < reward < 1 partial;
    no terminal event -> incomplete; failed/cancelled with 'timeout'/'deadline' in the
    message -> timeout; other failed/cancelled -> error; completed without reward ->
    no-reward; else fail.
    """
    st, rw = pl.col("run_status"), pl.col("reward")
    msg = pl.col("exception_message").fill_null("").str.to_lowercase()
    timeout = msg.str.contains("timeout|timed out|deadline exceeded")
    failed = st.is_in(["failed", "cancelled"])
    outcome = (
        pl.when(rw >= 1).then(pl.lit("pass"))
        .when(rw > 0).then(pl.lit("partial"))
        .when(st == "unknown").then(pl.lit("incomplete"))
        .when(failed & timeout).then(pl.lit("timeout"))
        .when(failed).then(pl.lit("error"))
        .when(rw.is_null()).then(pl.lit("no-reward"))
        .otherwise(pl.lit("fail"))
    )  # fmt: skip
    reason = pl.col("failure_reason").fill_null("")
    kind = (
        pl.when(st == "completed").then(pl.lit("none"))
        .when(st == "cancelled").then(pl.lit("cancelled"))
        .when((st == "failed") & (reason.str.contains("max_steps|max_turns") | timeout)).then(pl.lit("agent"))
        .when((st == "failed") & msg.str.contains("rate limit|429|provider|request failed|overloaded")).then(pl.lit("provider"))
        .otherwise(pl.lit("unknown"))
    )  # fmt: skip
    return [outcome.alias("outcome"), kind.alias("error_kind")]


def join_results(trials: pl.DataFrame, results: pl.DataFrame) -> pl.DataFrame:
    """Join task_id (-> task_name) and is_resolved (-> reward 1.0 / 0.0) onto rollout
    trials by run_id (= trial_id), then re-derive outcome / error_kind."""
    if results.height == 0 or "run_id" not in results.columns:
        return trials
    r = results.select(
        pl.col("run_id").alias("trial_id"),
        pl.col("task_id").alias("__task")
        if "task_id" in results.columns
        else pl.lit(None, pl.String).alias("__task"),
        pl.col("is_resolved").alias("__res")
        if "is_resolved" in results.columns
        else pl.lit(None, pl.Boolean).alias("__res"),
    ).unique("trial_id", keep="last")
    out = trials.join(r, on="trial_id", how="left")
    out = out.with_columns(
        pl.coalesce(pl.col("task_name"), pl.col("__task")).alias("task_name"),
        pl.coalesce(pl.col("reward"), pl.col("__res").cast(pl.Float64)).alias("reward"),
        pl.col("__res").alias("is_resolved"),
    ).drop("__task", "__res")
    return out.with_columns(
        *outcome_exprs(),
        pl.col("reward").is_not_null().alias("has_reward_file"),
        pl.when(pl.col("reward").is_not_null())
        .then(pl.lit("results.jsonl"))
        .alias("reward_source"),
    )
