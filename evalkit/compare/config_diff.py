"""``config_diff(a, b)``: what differs between two runs' Harbor configurations.

Each side's job config.json (``runs.jobs.config_json``, secrets already redacted) is
flattened to dotted keys (``agents[0].kwargs.version``); lists of plain values are compared
as sets (Harbor does not care about the order of ``exclude_exceptions`` or
``task_names``); an absent key equals null, ``{}`` and ``[]``. Old and new layouts are
aligned (``orchestrator.retry.*`` is ``retry.*``, ``orchestrator.n_concurrent_trials`` is
``n_concurrent_trials``). A run made of several jobs shows a key as ``varies: [...]`` when
its jobs disagree. With a Runs, the recorded facts are added: harbor version, agent
version and model as recorded in the trials, the task list and the task checksums of the
tasks both runs have.

Each differing key belongs to one *variable*: model, agent, agent kwargs, env, timeouts,
environment, verifier, dataset, retry, harbor version, task checksums, other (these count),
or task list, attempts, execution (concurrency, quiet, debug, job name: scope, listed but
not counted). The verdict follows Lime's "exactly one variable changed" rule: "no variable
changed", "one variable changed: <v>", or "several variables changed: <v1>, <v2>, ...".
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import polars as pl

from evalkit.compare.select import complete_columns, select_side, trials_of

SCOPE = ("task list", "attempts", "execution")
#: Display order of the variables.
VARIABLES = (
    "model",
    "agent",
    "agent kwargs",
    "env",
    "timeouts",
    "environment",
    "verifier",
    "dataset",
    "retry",
    "harbor version",
    "task checksums",
    "other",
    *SCOPE,
)
_ABSENT = None


def _norm_key(k: str) -> str:
    for old, new in (
        ("orchestrator.retry.", "retry."),
        ("orchestrator.n_concurrent_trials", "n_concurrent_trials"),
        ("orchestrator.quiet", "quiet"),
    ):
        if k.startswith(old):
            return new + k[len(old) :]
    return k


def _scalar(v: Any) -> Any:
    return (
        v if isinstance(v, str | int | float | bool) or v is None else json.dumps(v, sort_keys=True)
    )


def flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    """Dotted-key view of a config (module docstring for the rules)."""
    out: dict[str, Any] = {}
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(obj, list):
        if not obj:
            return out
        if all(not isinstance(x, Mapping | list) for x in obj):
            out[_norm_key(prefix)] = json.dumps(sorted((_scalar(x) for x in obj), key=repr))
        else:
            for i, x in enumerate(obj):
                out.update(flatten(x, f"{prefix}[{i}]"))
    elif obj is not None:
        out[_norm_key(prefix)] = obj
    return out


def variable_of(key: str) -> str:
    """The variable a flattened config key belongs to."""
    k = key.lower()
    leaf = k.rsplit(".", 1)[-1]
    if leaf in ("job_name", "jobs_dir", "debug", "quiet", "trials_dir") or "n_concurrent" in k:
        return "execution"
    if k.startswith(("orchestrator", "metrics", "artifacts")):
        return "execution"
    if k.startswith(("agents[", "agent.", "agent_")):
        if leaf == "model_name" or k.startswith("agent_model"):
            return "model"
        if ".env." in k:
            return "env"
        if "timeout" in leaf:
            return "timeouts"
        if ".kwargs." in k:
            return "agent kwargs"
        return "agent"
    if k.startswith("model"):
        return "model"
    if "timeout" in leaf:
        return "timeouts"
    if ".env." in k:
        return "env"
    if k.startswith("environment."):
        return "environment"
    if k.startswith("verifier."):
        return "verifier"
    if k.startswith("datasets[") or k.startswith("dataset"):
        if leaf in ("task_names", "exclude_task_names", "n_tasks"):
            return "task list"
        return "dataset"
    if k.startswith(("tasks", "task list")):
        return "task list"
    if k == "n_attempts":
        return "attempts"
    if k.startswith("retry."):
        return "retry"
    if k.startswith("harbor"):
        return "harbor version"
    if k.startswith("task checksums"):
        return "task checksums"
    return "other"


@dataclass
class ConfigDiff:
    """``rows``: key, variable, counts (False for scope), a, b (display text) for every
    differing key; ``variables``: counted variables that changed; ``scope``: scope
    variables that changed; ``verdict``: Lime's one-variable rule in words."""

    a: str
    b: str
    rows: pl.DataFrame
    variables: list[str]
    scope: list[str]
    verdict: str
    notes: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return self.verdict

    @property
    def one_variable_changed(self) -> bool:
        return len(self.variables) == 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "verdict": self.verdict,
            "variables": self.variables,
            "scope": self.scope,
            "differences": self.rows.to_dicts(),
            "notes": self.notes,
        }


def _show(v: Any) -> str:
    if v is _ABSENT:
        return "-"
    if isinstance(v, tuple):
        return "varies: " + ", ".join(_show(x) for x in v)
    return v if isinstance(v, str) else json.dumps(v)


def _merge(flats: list[dict[str, Any]]) -> dict[str, Any]:
    keys = {k for f in flats for k in f}
    out: dict[str, Any] = {}
    for k in keys:
        vals = {json.dumps(f.get(k), sort_keys=True): f.get(k) for f in flats}
        out[k] = (
            next(iter(vals.values())) if len(vals) == 1 else tuple(vals[x] for x in sorted(vals))
        )
    return out


def _load_config(x: Any) -> dict[str, Any]:
    if isinstance(x, Mapping):
        return dict(x)
    p = Path(os.fspath(x))
    if p.is_dir():
        p = p / "config.json"
    if p.is_file():
        data = orjson.loads(p.read_bytes())
    else:
        data = json.loads(str(x))
    if not isinstance(data, Mapping):
        raise ValueError(f"{x!r}: config is not a JSON object")
    return dict(data)


def _side(x: Any, runs: Any) -> tuple[str, dict[str, Any], dict[str, Any] | None]:
    """(label, flat config, recorded facts or None)."""
    if runs is not None and isinstance(x, str | list | tuple) and not isinstance(x, Mapping):
        trials = complete_columns(trials_of(runs))
        t, label, _ = select_side(trials, x)
        jobs = runs.jobs.filter(pl.col("job_id").is_in(t["job_id"].unique().to_list()))
        cfgs = [orjson.loads(c) for c in jobs["config_json"].drop_nulls().to_list()]
        flat = _merge([flatten(c) for c in cfgs]) if cfgs else {}
        hv = sorted(v for v in jobs["harbor_version"].drop_nulls().unique().to_list())
        facts = {
            "n_configs": len(cfgs),
            "harbor_version": hv,
            "agent_version": sorted(t["agent_version"].drop_nulls().unique().to_list())
            if "agent_version" in t.columns
            else [],
            "model_recorded": sorted(t["model_name"].drop_nulls().unique().to_list())
            if "model_name" in t.columns
            else [],
            "tasks": t.group_by("task_name").agg(pl.col("task_checksum").drop_nulls().unique()),
        }
        return label, flat, facts
    cfg = _load_config(x)
    return str(cfg.get("job_name") or "config"), flatten(cfg), None


def _facts_rows(fa: dict[str, Any], fb: dict[str, Any]) -> list[tuple[str, str, str]]:
    rows: list[tuple[str, str, str]] = []

    def lst(v: list[str]) -> str:
        return ", ".join(v) if v else "-"

    for key, name in (
        ("harbor_version", "harbor version (lock.json)"),
        ("agent_version", "agent_version (recorded)"),
        ("model_recorded", "model (recorded)"),
    ):
        if fa[key] and fb[key] and fa[key] != fb[key]:
            rows.append((name, lst(fa[key]), lst(fb[key])))
    # a trial whose result.json is not written yet has no task name: not a task of the list
    ta = {r[0]: set(r[1] or ()) for r in fa["tasks"].iter_rows() if r[0] is not None}
    tb = {r[0]: set(r[1] or ()) for r in fb["tasks"].iter_rows() if r[0] is not None}
    if set(ta) != set(tb):
        only_a, only_b = sorted(set(ta) - set(tb)), sorted(set(tb) - set(ta))
        rows.append(
            (
                "task list (run)",
                f"{len(ta)} tasks" + (f"; only here: {', '.join(only_a[:10])}" if only_a else ""),
                f"{len(tb)} tasks" + (f"; only here: {', '.join(only_b[:10])}" if only_b else ""),
            )
        )
    changed = sorted(k for k in set(ta) & set(tb) if ta[k] and tb[k] and ta[k] != tb[k])
    if changed:
        shared = len(set(ta) & set(tb))
        rows.append(
            (
                "task checksums",
                f"{shared} shared task(s)",
                f"{len(changed)} changed: {', '.join(changed[:10])}",
            )
        )
    return rows


def config_diff(a: Any, b: Any, *, runs: Any = None) -> ConfigDiff:
    """Diff two configurations (module docstring).

    ``a`` and ``b`` are run labels / job names (resolved in ``runs``, like compare's
    sides), config mappings, JSON text, or paths to a job folder or its config.json.
    """
    la, fa, xa = _side(a, runs)
    lb, fb, xb = _side(b, runs)
    rows: list[tuple[str, str, str]] = []
    for k in sorted(set(fa) | set(fb)):
        va, vb = fa.get(k), fb.get(k)
        if json.dumps(va, sort_keys=True) != json.dumps(vb, sort_keys=True):
            rows.append((k, _show(va), _show(vb)))
    notes: list[str] = []
    if xa is not None and xb is not None:
        rows.extend(_facts_rows(xa, xb))
    else:
        notes.append("configs only: recorded versions, task lists and checksums not compared")
    frame = pl.DataFrame(
        [(k, variable_of(k), variable_of(k) not in SCOPE, va, vb) for k, va, vb in rows],
        schema={
            "key": pl.String,
            "variable": pl.String,
            "counts": pl.Boolean,
            "a": pl.String,
            "b": pl.String,
        },
        orient="row",
    )
    seen = set(frame["variable"].to_list())
    order = [v for v in VARIABLES if v in seen]
    variables = [v for v in order if v not in SCOPE]
    scope = [v for v in order if v in SCOPE]
    missing = [n for n, x in (("A", xa), ("B", xb)) if x is not None and x["n_configs"] == 0]
    if missing:
        notes.append(f"no job config.json recorded for {' and '.join(missing)}")
        verdict = f"unknown: no job config recorded for {' and '.join(missing)}"
    elif not variables:
        verdict = "no variable changed"
    elif len(variables) == 1:
        verdict = f"one variable changed: {variables[0]}"
    else:
        verdict = f"several variables changed: {', '.join(variables)}"
    return ConfigDiff(la, lb, frame, variables, scope, verdict, notes)
