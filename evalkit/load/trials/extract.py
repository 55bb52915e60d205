"""Extract one Harbor trial folder into a flat raw record (strings and numbers only).

Runs once per trial folder (``trials/table.py``); everything that can be done per column
(timestamp parsing, outcome, error kind, run label, attempt numbering) happens later as
Polars expressions (``trials/derive.py``). ``RAW_SCHEMA`` lists the raw record's fields.

This is the hottest loop of a cold load, so it is written for speed (docs/performance.md):
one listdir, one non-blocking open + fstat + read of result.json (the fstat also gives the
trial signature), type checks inline instead of helper calls. Its output is pinned record
for record to the plain original kept in ``tests/load/reference_extract.py``.

Reward precedence and the field helpers: ``trials/fields.py``.
"""

from __future__ import annotations

import os
from typing import Any

import polars as pl
from orjson import JSONDecodeError
from orjson import loads as _loads

from evalkit.load.cache import file_sig, stat_sig
from evalkit.load.errors import LoadError
from evalkit.load.io import (
    as_dict,
    as_int,
    finite_float,
    max_bytes,
    parse_json,
    read_json,
    read_regular,
)
from evalkit.load.trials.analysis import CHECK_ITEM, read_analysis
from evalkit.load.trials.columns import REWARD_ITEM
from evalkit.load.trials.fields import (
    _json_first,
    _numeric_rewards,
    _reward_files,
    _safe_list,
    _span,
    _str,
    _task_ref,
    _ts,
    primary_reward,
)
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


_EMPTY: dict = {}  # shared read-only default
_OPEN = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_REWARD_FILES = frozenset(("reward.json", "reward.txt"))
_VERIFIER_OUTPUT = frozenset(("test-stdout.txt", "ctrf.json", "test-stderr.txt"))


def _read(path: str, cap: int) -> tuple[bytes | None, LoadError | None, str]:
    """(bytes, error, signature) of a file (io.read_regular; its fstat is the signature)."""
    data, err, st = read_regular(path, "trial", cap)
    return data, err, (stat_sig(st) if st is not None else file_sig(path))


def _parse(data: bytes, path: str) -> tuple[Any, LoadError | None]:
    try:
        return _loads(data), None
    except JSONDecodeError:
        return parse_json(data, path, "trial")  # empty file, NaN literals, bad UTF-8


def extract_trial(trial_dir: str, trial_id: str) -> tuple[tuple, list[LoadError], str]:
    """One raw record (in RAW_FIELDS order), the load errors met in this trial folder, and
    the trial's signature (the same text as ``trials/table.py``'s ``trial_sig``, taken from
    the syscalls the extraction makes anyway: the fstat of result.json is free).
    """
    errors: list[LoadError] = []
    cap = max_bytes()
    # os.path.join(trial_dir, name) for the names joined below, without the call
    base = trial_dir + "/" if trial_dir and not trial_dir.endswith("/") else trial_dir
    sig_dir = file_sig(trial_dir)
    try:
        names = os.listdir(trial_dir)
        listed = True
    except OSError as e:
        errors.append(
            LoadError(
                trial_dir, "trial", "unreadable", f"{type(e).__name__}: {e}", trial_id=trial_id
            )
        )
        names = []
        listed = False
    res: dict = _EMPTY
    res_path = base + "result.json"
    sig_res = "-"
    if "result.json" in names:
        data, err, sig_res = _read(res_path, cap)
        if err is None:
            val, err = _parse(data, res_path)
        if err is not None:
            errors.append(
                LoadError(err.path, err.level, err.error_type, err.message, trial_id=trial_id)
            )
        elif type(val) is not dict:
            errors.append(
                LoadError(
                    res_path,
                    "trial",
                    "wrong_type",
                    f"result.json holds a {type(val).__name__}, expected an object",
                    trial_id=trial_id,
                )
            )
        else:
            res = val
    elif not listed:
        sig_res = file_sig(res_path)
    get = res.get
    config = get("config")
    if type(config) is not dict or not config:
        config = _EMPTY
        if "config.json" in names:
            val, err = read_json(base + "config.json", "trial", cap)
            if err is not None:
                errors.append(
                    LoadError(err.path, err.level, err.error_type, err.message, trial_id=trial_id)
                )
            elif type(val) is dict:
                config = val
    cget = config.get
    agent_cfg = cget("agent")
    agent_cfg = agent_cfg if type(agent_cfg) is dict else _EMPTY
    task_cfg = cget("task")
    task_cfg = task_cfg if type(task_cfg) is dict else _EMPTY

    trial_name = get("trial_name")
    if type(trial_name) is not str or not trial_name:
        trial_name = cget("trial_name")
        if type(trial_name) is not str or not trial_name:
            trial_name = os.path.basename(trial_dir)
    task_name = get("task_name")
    if type(task_name) is not str or not task_name:
        t = task_cfg.get("name")
        task_name = t if type(t) is str else None
        if task_name is None and task_cfg.get("path"):
            task_name = os.path.basename(str(task_cfg.get("path")).rstrip("/"))
    task_source = get("source")
    if type(task_source) is not str or not task_source:
        task_source = task_cfg.get("source")
        task_source = task_source if type(task_source) is str else None
    tid_raw = get("task_id")
    task_ref, task_ref_kind = _task_ref(tid_raw if tid_raw is not None else task_cfg)

    info = get("agent_info")
    info = info if type(info) is dict else _EMPTY
    minfo = info.get("model_info")
    minfo = minfo if type(minfo) is dict else _EMPTY
    version = info.get("version")
    if type(version) is not str:
        version = None
    elif version.strip():
        version = version.splitlines()[0].strip()
    agent_name = info.get("name")
    if type(agent_name) is not str or not agent_name:
        agent_name = agent_cfg.get("name")
        if type(agent_name) is not str or not agent_name:
            agent_name = agent_cfg.get("import_path")
            agent_name = agent_name if type(agent_name) is str else None
    import_path = agent_cfg.get("import_path")
    provider, mname = minfo.get("provider"), minfo.get("name")
    provider = provider if type(provider) is str else None
    cfg_model = agent_cfg.get("model_name")
    cfg_model = cfg_model if type(cfg_model) is str else None
    if type(mname) is str and mname:
        model_name = f"{provider}/{mname}" if provider and "/" not in mname else mname
    else:
        model_name = cfg_model
    if provider is None and cfg_model and "/" in cfg_model:
        provider = cfg_model.split("/", 1)[0]

    # rewards
    steps = get("step_results")
    if type(steps) is not list:
        steps = ()
    vr = get("verifier_result")
    raw_rewards = vr.get("rewards") if type(vr) is dict else None
    if raw_rewards is None and steps:
        for s in reversed(steps):
            r = as_dict(as_dict(s).get("verifier_result")).get("rewards")
            if r is not None:
                raw_rewards = r
                break
    if type(raw_rewards) is dict and all(
        type(v) is float and v - v == 0.0 for v in raw_rewards.values()
    ):  # the usual case, finite floats (inf - inf and nan - nan are nan): no checks left
        items = [{"name": k, "value": v} for k, v in raw_rewards.items()]
    elif raw_rewards is not None:
        items = _numeric_rewards(raw_rewards, res_path, trial_id, errors)
    else:
        items = []
    source = "result" if items else None
    has_reward_file = False
    vnames: frozenset[str] | set[str] = frozenset()
    sig_ver = sig_agent = "-"
    if "verifier" in names:
        vdir = base + "verifier"
        sig_ver = file_sig(vdir)
        try:
            vnames = set(os.listdir(vdir))
        except NotADirectoryError:
            vnames = frozenset()
        except OSError as e:  # reward files and verifier output cannot be seen: say so
            vnames = frozenset()
            errors.append(
                LoadError(
                    vdir, "trial", "unreadable", f"cannot list verifier/: {type(e).__name__}: {e}",
                    trial_id=trial_id,
                )
            )  # fmt: skip
        has_reward_file = not vnames.isdisjoint(_REWARD_FILES)
    elif not listed:
        sig_ver = file_sig(base + "verifier")
    if not items and has_reward_file:
        file_items, fsrc = _reward_files(
            trial_dir, _json_first(trial_dir, config, set(names)), trial_id, errors
        )
        if file_items:
            items, source = file_items, fsrc
    rv = get("reward_valid")

    exc = get("exception_info")
    if type(exc) is not dict or not exc:
        exc = _EMPTY
        for s in steps:
            e = as_dict(as_dict(s).get("exception_info"))
            if e:
                exc = e
                break
    if not res and listed:  # no result.json: the exception Harbor wrote on its own
        exc = exception_from_files(base, names, trial_id, errors) or _EMPTY
    msg = exc.get("exception_message") if exc else None
    ts_exc = exc.get("occurred_at") if exc else None

    tokens: list[Any] = [None, None, None, None]
    ar = get("agent_result")
    if type(ar) is dict:
        tokens = [
            as_int(ar.get("n_input_tokens")),
            as_int(ar.get("n_cache_tokens")),
            as_int(ar.get("n_output_tokens")),
            finite_float(ar.get("cost_usd")),
        ]
    elif steps:  # multi-step: sum the steps' agent results (unknown stays unknown)
        for i, key in enumerate(
            ("n_input_tokens", "n_cache_tokens", "n_output_tokens", "cost_usd")
        ):
            vals = [as_dict(as_dict(s).get("agent_result")).get(key) for s in steps]
            conv = [finite_float(v) if key == "cost_usd" else as_int(v) for v in vals]
            if conv and all(c is not None for c in conv):
                tokens[i] = sum(conv)  # type: ignore[arg-type]

    # evidence
    has_traj = False
    if "agent" in names:
        adir = base + "agent"
        sig_agent = file_sig(adir)
        has_traj = os.path.isfile(adir + "/trajectory.json") or any(
            n.endswith(".trajectory.json") for n in _safe_list(adir)
        )
    elif not listed:
        sig_agent = file_sig(base + "agent")
    if not has_traj and "steps" in names:
        sdir = base + "steps"
        has_traj = any(
            os.path.isfile(os.path.join(sdir, s, "agent", "trajectory.json"))
            for s in _safe_list(sdir)
        )
    hints = []
    if "schema_version" in res:
        hints.append(f"v{get('schema_version')}")
    if "lock.json" in names:
        hints.append("trial-lock")
    if steps:
        hints.append("multi-step")
    checks = summary = None
    if "analysis.json" in names:
        checks, summary = read_analysis(base + "analysis.json", trial_id, errors)
    env_s, env_e = _span(get("environment_setup"))
    as_s, as_e = _span(get("agent_setup"))
    ag_s, ag_e = _span(get("agent_execution"))
    v_s, v_e = _span(get("verifier"))
    src = cget("source_trial")
    regrade_of = None
    if type(src) is dict and src.get("action") == "regrade":
        regrade_of = _str(src.get("trial_id")) or _str(src.get("path"))
    rec = (
        trial_dir,
        bool(res),
        _str(get("id")),
        _str(cget("job_id")),
        trial_name,
        task_name,
        task_source,
        task_ref,
        task_ref_kind,
        _str(get("task_checksum")),
        agent_name,
        version,
        import_path if type(import_path) is str else None,
        model_name,
        provider,
        items,
        primary_reward(items) if res else None,
        source,
        rv if type(rv) is bool else None,
        _str(exc.get("exception_type")) if exc else None,
        msg if type(msg) is str else (None if msg is None else str(msg)),
        ts_exc if type(ts_exc) is str and ts_exc else None,
        _ts(get("started_at")),
        _ts(get("finished_at")),
        env_s,
        env_e,
        as_s,
        as_e,
        ag_s,
        ag_e,
        v_s,
        v_e,
        *tokens,
        has_traj,
        has_reward_file or bool(items and source == "result"),
        not vnames.isdisjoint(_VERIFIER_OUTPUT),
        "artifacts" in names and os.path.isfile(base + "artifacts/manifest.json"),
        ",".join(hints) or None,
        checks,
        summary,
        regrade_of,
    )
    return rec, errors, f"{sig_dir}|{sig_res}|{sig_ver}|{sig_agent}"
