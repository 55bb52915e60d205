"""Frozen copy of the Harbor trial extractor before the speed work (issue 10).

``evalkit/load/trials/extract.py`` was rewritten for speed (one open + fstat per file, the
signature from the same syscalls, no per-field helper calls). This readable original is the
reference the rewrite must match record for record and error for error
(``tests/load/test_speed_paths.py``). Do not edit it to make a test pass: a difference is a
behaviour change of the loader.
"""

from __future__ import annotations

import os
from typing import Any

import polars as pl

from evalkit.load.errors import LoadError
from evalkit.load.shared.io import as_dict, as_int, as_str, finite_float, read_bytes, read_json
from evalkit.load.trials.analysis import CHECK_ITEM, read_analysis
from evalkit.load.trials.columns import REWARD_ITEM
from evalkit.load.trials.tracebacks import exception_from_files

RAW_SCHEMA: dict[str, pl.DataType] = {
    "trial_dir": pl.String,
    "result_present": pl.Boolean,
    "result_id": pl.String,
    "recorded_job_id": pl.String,
    "trial_name": pl.String,
    "task_name": pl.String,
    "task_source": pl.String,
    "task_ref": pl.String,
    "task_ref_kind": pl.String,
    "task_checksum": pl.String,
    "agent_name": pl.String,
    "agent_version": pl.String,
    "agent_import_path": pl.String,
    "model_name": pl.String,
    "model_provider": pl.String,
    "rewards": pl.List(REWARD_ITEM),
    "reward": pl.Float64,
    "reward_source": pl.String,
    "reward_valid_recorded": pl.Boolean,
    "exception_type": pl.String,
    "exception_message": pl.String,
    "ts_exception": pl.String,
    "ts_started": pl.String,
    "ts_finished": pl.String,
    "ts_env_start": pl.String,
    "ts_env_end": pl.String,
    "ts_asetup_start": pl.String,
    "ts_asetup_end": pl.String,
    "ts_agent_start": pl.String,
    "ts_agent_end": pl.String,
    "ts_verifier_start": pl.String,
    "ts_verifier_end": pl.String,
    "n_input_tokens": pl.Int64,
    "n_cache_tokens": pl.Int64,
    "n_output_tokens": pl.Int64,
    "cost_usd": pl.Float64,
    "has_trajectory": pl.Boolean,
    "has_reward_file": pl.Boolean,
    "has_verifier_output": pl.Boolean,
    "has_artifacts_manifest": pl.Boolean,
    "harbor_schema": pl.String,
    "analysis_checks": pl.List(CHECK_ITEM),
    "analysis_summary": pl.String,
    "regrade_of": pl.String,
}
RAW_FIELDS = tuple(RAW_SCHEMA)
_IDX = {k: i for i, k in enumerate(RAW_FIELDS)}


def _task_ref(task_id: Any) -> tuple[str | None, str | None]:
    """Text and kind of the three Harbor task-id shapes (no type tag: told apart by keys)."""
    t = as_dict(task_id)
    if "org" in t and "name" in t:
        ref = t.get("ref")
        return f"{t.get('org')}/{t.get('name')}" + (f"@{ref}" if ref else ""), "package"
    if t.get("git_url"):
        commit = t.get("git_commit_id")
        return f"{t.get('git_url')}" + (
            f"@{commit}" if commit else ""
        ) + f":{t.get('path') or ''}", "git"
    if "path" in t and t.get("path") is not None:
        return str(t.get("path")), "local"
    name = t.get("name")
    if isinstance(name, str) and "/" in name:
        ref = t.get("ref")
        return name + (f"@{ref}" if ref else ""), "package"
    return None, None


def _ts(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def _phase(res: dict, key: str) -> tuple[str | None, str | None]:
    p = as_dict(res.get(key))
    return _ts(p.get("started_at")), _ts(p.get("finished_at"))


def _numeric_rewards(
    raw: Any, path: str, trial_id: str | None, errors: list[LoadError]
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if not isinstance(raw, dict):
        if raw is not None:
            errors.append(
                LoadError(
                    path,
                    "file",
                    "wrong_type",
                    f"rewards is {type(raw).__name__}, expected an object",
                    trial_id=trial_id,
                )
            )
        return out
    for k, v in raw.items():
        f = finite_float(v)
        if f is None:
            errors.append(
                LoadError(
                    path,
                    "file",
                    "non_numeric_reward",
                    f"reward key {k!r} has non-numeric value {str(v)[:60]!r}; key dropped",
                    trial_id=trial_id,
                )
            )
            continue
        out.append({"name": str(k), "value": f})
    return out


def primary_reward(items: list[dict[str, Any]]) -> float | None:
    """The 'reward' key, else the first numeric key."""
    for it in items:
        if it["name"] == "reward":
            return it["value"]
    return items[0]["value"] if items else None


def _reward_files(
    trial_dir: str, json_first: bool, trial_id: str | None, errors: list[LoadError]
) -> tuple[list[dict], str | None]:
    vdir = os.path.join(trial_dir, "verifier")
    order = ("reward.json", "reward.txt") if json_first else ("reward.txt", "reward.json")
    for fname in order:
        p = os.path.join(vdir, fname)
        if not os.path.lexists(p):
            continue
        if fname == "reward.txt":
            data, err = read_bytes(p, "file", limit=1024 * 1024)
            if err is not None:
                errors.append(
                    LoadError(err.path, err.level, err.error_type, err.message, trial_id=trial_id)
                )
                continue
            text = data.decode("utf-8", errors="replace").strip()
            try:
                f = float(text)
            except ValueError:
                errors.append(
                    LoadError(
                        p,
                        "file",
                        "non_numeric_reward",
                        f"reward.txt is not a number: {text[:60]!r}",
                        trial_id=trial_id,
                    )
                )
                continue
            f2 = finite_float(f)
            if f2 is None:
                errors.append(
                    LoadError(
                        p,
                        "file",
                        "non_numeric_reward",
                        f"reward.txt is not finite: {text[:60]!r}",
                        trial_id=trial_id,
                    )
                )
                continue
            return [{"name": "reward", "value": f2}], "reward.txt"
        val, err = read_json(p, "file", limit=16 * 1024 * 1024)
        if err is not None:
            errors.append(
                LoadError(err.path, err.level, err.error_type, err.message, trial_id=trial_id)
            )
            continue
        items = _numeric_rewards(val, p, trial_id, errors)
        if items:
            return items, "reward.json"
    return [], None


def _json_first(trial_dir: str, config: dict, names: set[str]) -> bool:
    """Harbor >= 0.7 reads reward.json first; guess the version from the trial's files."""
    if "lock.json" in names:  # trial lock.json: >= 0.17
        return True
    env = as_dict(config.get("environment"))
    return "mounts_json" not in env


def extract_trial(trial_dir: str, trial_id: str) -> tuple[tuple, list[LoadError]]:
    """One raw record (in RAW_FIELDS order) and the load errors met in this trial folder."""
    errors: list[LoadError] = []
    rec: list[Any] = [None] * len(RAW_FIELDS)
    rec[_IDX["trial_dir"]] = trial_dir
    try:
        names = set(os.listdir(trial_dir))
    except OSError as e:
        errors.append(
            LoadError(
                trial_dir, "trial", "unreadable", f"{type(e).__name__}: {e}", trial_id=trial_id
            )
        )
        names = set()
    res: dict = {}
    if "result.json" in names:
        val, err = read_json(os.path.join(trial_dir, "result.json"), "trial")
        if err is not None:
            errors.append(
                LoadError(err.path, err.level, err.error_type, err.message, trial_id=trial_id)
            )
        elif not isinstance(val, dict):
            errors.append(
                LoadError(
                    os.path.join(trial_dir, "result.json"),
                    "trial",
                    "wrong_type",
                    f"result.json holds a {type(val).__name__}, expected an object",
                    trial_id=trial_id,
                )
            )
        else:
            res = val
    rec[_IDX["result_present"]] = bool(res)
    config = as_dict(res.get("config"))
    if not config and "config.json" in names:
        val, err = read_json(os.path.join(trial_dir, "config.json"), "trial")
        if err is not None:
            errors.append(
                LoadError(err.path, err.level, err.error_type, err.message, trial_id=trial_id)
            )
        elif isinstance(val, dict):
            config = val
    agent_cfg = as_dict(config.get("agent"))
    task_cfg = as_dict(config.get("task"))

    rec[_IDX["result_id"]] = as_str(res.get("id"))
    rec[_IDX["recorded_job_id"]] = as_str(config.get("job_id"))
    rec[_IDX["trial_name"]] = (
        as_str(res.get("trial_name"))
        or as_str(config.get("trial_name"))
        or os.path.basename(trial_dir)
    )
    task_name = as_str(res.get("task_name")) or as_str(task_cfg.get("name"))
    if task_name is None and task_cfg.get("path"):
        task_name = os.path.basename(str(task_cfg.get("path")).rstrip("/"))
    rec[_IDX["task_name"]] = task_name
    rec[_IDX["task_source"]] = as_str(res.get("source")) or as_str(task_cfg.get("source"))
    ref, kind = _task_ref(res.get("task_id") if res.get("task_id") is not None else task_cfg)
    rec[_IDX["task_ref"]], rec[_IDX["task_ref_kind"]] = ref, kind
    rec[_IDX["task_checksum"]] = as_str(res.get("task_checksum"))

    info = as_dict(res.get("agent_info"))
    minfo = as_dict(info.get("model_info"))
    version = as_str(info.get("version"))
    rec[_IDX["agent_name"]] = (
        as_str(info.get("name"))
        or as_str(agent_cfg.get("name"))
        or as_str(agent_cfg.get("import_path"))
    )
    rec[_IDX["agent_version"]] = (
        version.splitlines()[0].strip() if version and version.strip() else version
    )
    rec[_IDX["agent_import_path"]] = as_str(agent_cfg.get("import_path"))
    provider, mname = as_str(minfo.get("provider")), as_str(minfo.get("name"))
    cfg_model = as_str(agent_cfg.get("model_name"))
    if mname:
        rec[_IDX["model_name"]] = f"{provider}/{mname}" if provider and "/" not in mname else mname
    else:
        rec[_IDX["model_name"]] = cfg_model
    if provider is None and cfg_model and "/" in cfg_model:
        provider = cfg_model.split("/", 1)[0]
    rec[_IDX["model_provider"]] = provider

    # rewards
    steps = res.get("step_results") if isinstance(res.get("step_results"), list) else []
    vr = res.get("verifier_result")
    raw_rewards = as_dict(vr).get("rewards") if isinstance(vr, dict) else None
    if raw_rewards is None and steps:
        for s in reversed(steps):
            r = as_dict(as_dict(s).get("verifier_result")).get("rewards")
            if r is not None:
                raw_rewards = r
                break
    items = (
        _numeric_rewards(raw_rewards, os.path.join(trial_dir, "result.json"), trial_id, errors)
        if raw_rewards is not None
        else []
    )
    source = "result" if items else None
    has_reward_file = False
    vnames: set[str] = set()
    if "verifier" in names:
        try:
            vnames = set(os.listdir(os.path.join(trial_dir, "verifier")))
        except OSError:
            vnames = set()
        has_reward_file = bool(vnames & {"reward.json", "reward.txt"})
    if not items and has_reward_file:
        file_items, fsrc = _reward_files(
            trial_dir, _json_first(trial_dir, config, names), trial_id, errors
        )
        if file_items:
            items, source = file_items, fsrc
    rec[_IDX["rewards"]] = items
    rec[_IDX["reward"]] = primary_reward(items) if res else None
    rec[_IDX["reward_source"]] = source
    rv = res.get("reward_valid")
    rec[_IDX["reward_valid_recorded"]] = rv if isinstance(rv, bool) else None

    exc = as_dict(res.get("exception_info"))
    if not exc and steps:
        for s in steps:
            e = as_dict(as_dict(s).get("exception_info"))
            if e:
                exc = e
                break
    if not res and names:
        exc = exception_from_files(trial_dir + "/", sorted(names), trial_id, errors) or {}
    rec[_IDX["exception_type"]] = as_str(exc.get("exception_type"))
    msg = exc.get("exception_message")
    rec[_IDX["exception_message"]] = (
        msg if isinstance(msg, str) else (None if msg is None else str(msg))
    )
    rec[_IDX["ts_exception"]] = _ts(exc.get("occurred_at"))

    rec[_IDX["ts_started"]] = _ts(res.get("started_at"))
    rec[_IDX["ts_finished"]] = _ts(res.get("finished_at"))
    rec[_IDX["ts_env_start"]], rec[_IDX["ts_env_end"]] = _phase(res, "environment_setup")
    rec[_IDX["ts_asetup_start"]], rec[_IDX["ts_asetup_end"]] = _phase(res, "agent_setup")
    rec[_IDX["ts_agent_start"]], rec[_IDX["ts_agent_end"]] = _phase(res, "agent_execution")
    rec[_IDX["ts_verifier_start"]], rec[_IDX["ts_verifier_end"]] = _phase(res, "verifier")

    ar = res.get("agent_result")
    if isinstance(ar, dict):
        rec[_IDX["n_input_tokens"]] = as_int(ar.get("n_input_tokens"))
        rec[_IDX["n_cache_tokens"]] = as_int(ar.get("n_cache_tokens"))
        rec[_IDX["n_output_tokens"]] = as_int(ar.get("n_output_tokens"))
        rec[_IDX["cost_usd"]] = finite_float(ar.get("cost_usd"))
    elif steps:  # multi-step: sum the steps' agent results (unknown stays unknown)
        for key in ("n_input_tokens", "n_cache_tokens", "n_output_tokens", "cost_usd"):
            vals = [as_dict(as_dict(s).get("agent_result")).get(key) for s in steps]
            conv = [finite_float(v) if key == "cost_usd" else as_int(v) for v in vals]
            if conv and all(c is not None for c in conv):
                rec[_IDX[key]] = sum(conv)  # type: ignore[arg-type]

    # evidence
    has_traj = False
    if "agent" in names:
        adir = os.path.join(trial_dir, "agent")
        has_traj = os.path.isfile(os.path.join(adir, "trajectory.json")) or any(
            n.endswith(".trajectory.json") for n in _safe_list(adir)
        )
    if not has_traj and "steps" in names:
        sdir = os.path.join(trial_dir, "steps")
        has_traj = any(
            os.path.isfile(os.path.join(sdir, s, "agent", "trajectory.json"))
            for s in _safe_list(sdir)
        )
    rec[_IDX["has_trajectory"]] = has_traj
    rec[_IDX["has_reward_file"]] = has_reward_file or bool(items and source == "result")
    rec[_IDX["has_verifier_output"]] = bool(
        vnames & {"test-stdout.txt", "ctrf.json", "test-stderr.txt"}
    )
    rec[_IDX["has_artifacts_manifest"]] = "artifacts" in names and os.path.isfile(
        os.path.join(trial_dir, "artifacts", "manifest.json")
    )
    hints = []
    if "schema_version" in res:
        hints.append(f"v{res.get('schema_version')}")
    if "lock.json" in names:
        hints.append("trial-lock")
    if steps:
        hints.append("multi-step")
    rec[_IDX["harbor_schema"]] = ",".join(hints) or None
    if "analysis.json" in names:
        checks, summary = read_analysis(os.path.join(trial_dir, "analysis.json"), trial_id, errors)
        rec[_IDX["analysis_checks"]], rec[_IDX["analysis_summary"]] = checks, summary
    source_trial = as_dict(config.get("source_trial"))
    if source_trial.get("action") == "regrade":
        rec[_IDX["regrade_of"]] = as_str(source_trial.get("trial_id")) or as_str(
            source_trial.get("path")
        )
    return tuple(rec), errors


def _safe_list(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []
