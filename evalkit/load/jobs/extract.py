"""Extract one Harbor job folder's own files (config.json, result.json, lock.json).

Job state rule (``state`` column), applied in ``load/api.py`` once trials are known:

* ``complete``: result.json has a ``finished_at``;
* ``running``: no ``finished_at``, and Harbor's own records agree with recent writes: the
  newest time Harbor wrote (job start / update, job lock.json ``created_at``, trial start /
  end, and the start a default job folder name carries, ``2025-11-04__10-22-31`` in the
  job's naive zone) is within a day, and the job folder saw activity (its result.json or a
  trial folder changed) within ``running_window_s`` seconds (default 15 minutes). Fresh
  file times alone (a ``cp -r`` of an old folder) never make a job running;
* ``interrupted``: result.json exists without ``finished_at`` and no recent activity
  (Ctrl-C, crash: Harbor leaves exactly this state);
* ``unknown``: no readable result.json and no recent activity.

A trial folder without result.json in a job that is not ``running`` is also a load error
of type 'missing_result' (``jobs/table.missing_results``); its row stays, ``incomplete``.

A job launched by ``evalkit run`` also has ``evalkit-launch.json``; when it says
``interrupted`` (Ctrl-C) and the job has no ``finished_at``, the job is ``interrupted`` at
once, without waiting for the activity window to pass.

Legacy (<= 0.6.1) ``stats.n_trials / n_errors`` and 0.6.2+ ``n_completed_trials /
n_errored_trials`` are read into the same columns; ``orchestrator.n_concurrent_trials``
(<= 0.1.45) and top-level ``n_concurrent_trials`` likewise.
"""

from __future__ import annotations

import os
import re
from datetime import datetime
from typing import Any

import orjson

from evalkit.load.errors import LoadError
from evalkit.load.shared.io import as_dict, as_int, as_str, finite_float, read_json
from evalkit.load.shared.redact import learn_config_secrets, redact_obj
from evalkit.load.trials.analysis import read_analysis


def _dataset_label(ds: dict) -> str | None:
    name = as_str(ds.get("name"))
    if name:
        ver = as_str(ds.get("version")) or as_str(ds.get("ref"))
        return f"{name}@{ver}" if ver else name
    path = as_str(ds.get("path"))
    if path:
        return os.path.basename(path.rstrip("/")) or path
    return None


def _as_list(v: Any) -> list:
    return v if isinstance(v, list) else []


def _plain(v: Any, depth: int = 0) -> Any:
    """A copy orjson can always write: integers beyond 64 bits as floats, lone surrogates
    replaced, nesting cut at 64 levels (redaction and orjson both recurse)."""
    if depth > 64:
        return "[nested too deep]"
    if isinstance(v, dict):
        return {_plain(str(k), depth): _plain(x, depth + 1) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x, depth + 1) for x in v]
    if isinstance(v, str):
        return v.encode("utf-8", "replace").decode("utf-8")
    if isinstance(v, int) and not isinstance(v, bool) and not -(2**63) <= v < 2**64:
        return float(v) if abs(v) < 1e308 else str(v)
    return v


def _config_json(cfg: dict) -> str:
    """The redacted config as sorted JSON text; odd content (huge integers, lone
    surrogates, deep nesting) is made writable first instead of failing the load."""
    try:
        return orjson.dumps(redact_obj(cfg), option=orjson.OPT_SORT_KEYS).decode()
    except (TypeError, RecursionError):
        return orjson.dumps(redact_obj(_plain(cfg)), option=orjson.OPT_SORT_KEYS).decode()


#: Harbor's default job folder name: the job's start in the writer's naive local time.
_DEFAULT_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})__(\d{2})-(\d{2})-(\d{2})$")


def named_start(name: str) -> str | None:
    """The naive ISO start time a default-named job folder (``2025-11-04__10-22-31``)
    carries, else None (custom names, impossible dates)."""
    m = _DEFAULT_NAME.match(name)
    if not m:
        return None
    iso = f"{m.group(1)}T{m.group(2)}:{m.group(3)}:{m.group(4)}"
    try:
        datetime.fromisoformat(iso)
    except ValueError:
        return None
    return iso


def extract_job(job_dir: str, job_id: str) -> tuple[dict[str, Any], list[LoadError]]:
    """Raw job record (timestamps still strings) and the load errors met."""
    errors: list[LoadError] = []
    cfg = _read_job_file(job_dir, "config.json", job_id, errors)
    res = _read_job_file(job_dir, "result.json", job_id, errors)
    lock = _read_job_file(job_dir, "lock.json", job_id, errors)
    if cfg:
        learn_config_secrets(cfg)  # echoed values are hidden in every output
    launch = _read_job_file(job_dir, "evalkit-launch.json", job_id, errors)
    rec = {
        **_result_fields(res),
        **_config_fields(cfg),
        "harbor_version": as_str(as_dict(lock.get("harbor")).get("version")),
        "ts_lock": as_str(lock.get("created_at")),
        "ts_named": named_start(os.path.basename(os.path.normpath(job_dir))),
        "format": _result_format(res),
        "config_json": _config_json(cfg) if cfg else None,
        "job_name_cfg": as_str(cfg.get("job_name")),
        "launch_state": as_str(launch.get("state")),
    }
    rec["analysis_checks"], rec["analysis_summary"] = _job_analysis(job_dir, job_id, errors)
    return rec, errors


def _read_job_file(job_dir: str, name: str, job_id: str, errors: list[LoadError]) -> dict:
    """The object in a job's own JSON file; {} when absent, and {} plus a load error when
    unreadable or not an object."""
    p = os.path.join(job_dir, name)
    if not os.path.lexists(p):
        return {}
    val, err = read_json(p, "job")
    if err is not None:
        errors.append(LoadError(err.path, "job", err.error_type, err.message, job_id=job_id))
        return {}
    if not isinstance(val, dict):
        errors.append(
            LoadError(
                p,
                "job",
                "wrong_type",
                f"{name} holds a {type(val).__name__}, expected an object",
                job_id=job_id,
            )
        )
        return {}
    return val


def _result_format(res: dict) -> str:
    """Which result.json layout a job has: its schema version, 'counters' (0.6.2+),
    'legacy-stats', 'missing' (no result.json) or 'unknown'."""
    if res.get("schema_version") is not None:
        return f"v{res.get('schema_version')}"
    stats = as_dict(res.get("stats"))
    if "n_completed_trials" in stats or "updated_at" in res:
        return "counters"
    if "n_trials" in stats:
        return "legacy-stats"
    return "missing" if not res else "unknown"


def _result_fields(res: dict) -> dict[str, Any]:
    """The job record's fields from result.json (legacy and current counter names)."""
    stats = as_dict(res.get("stats"))
    return {
        "harbor_job_id": as_str(res.get("id")),
        "ts_started": as_str(res.get("started_at")),
        "ts_updated": as_str(res.get("updated_at")),
        "ts_finished": as_str(res.get("finished_at")),
        "result_present": bool(res),
        "finished_key": "finished_at" in res,
        "n_trials_declared": as_int(res.get("n_total_trials")),
        "stats_completed": as_int(stats.get("n_completed_trials", stats.get("n_trials"))),
        "stats_errored": as_int(stats.get("n_errored_trials", stats.get("n_errors"))),
    }


def _config_fields(cfg: dict) -> dict[str, Any]:
    """The job record's fields from config.json: agents, models and datasets (distinct
    values joined by ', '), attempts, concurrency, timeout multiplier, environment."""
    orch = as_dict(cfg.get("orchestrator"))
    agents = [a for a in _as_list(cfg.get("agents")) if isinstance(a, dict)]
    datasets = [d for d in _as_list(cfg.get("datasets")) if isinstance(d, dict)]
    return {
        "agent_name": _join_distinct(
            [as_str(a.get("name")) or as_str(a.get("import_path")) for a in agents]
        ),
        "model_name": _join_distinct([as_str(a.get("model_name")) for a in agents]),
        "dataset": _join_distinct([_dataset_label(d) for d in datasets]),
        "n_attempts": as_int(cfg.get("n_attempts")),
        "n_concurrent": as_int(cfg.get("n_concurrent_trials", orch.get("n_concurrent_trials"))),
        "timeout_multiplier": finite_float(cfg.get("timeout_multiplier")),
        "environment_type": as_str(as_dict(cfg.get("environment")).get("type")),
    }


def _join_distinct(vals: list[str | None]) -> str | None:
    seen = [v for v in dict.fromkeys(vals) if v]
    return ", ".join(seen) if seen else None


def _job_analysis(job_dir: str, job_id: str, errors: list[LoadError]) -> tuple[Any, str | None]:
    """(checks, summary) of the job-level analysis.json ``harbor analyze <job>`` writes;
    (None, None) when the job was not analysed (unknown, never a pass)."""
    path = os.path.join(job_dir, "analysis.json")
    if not os.path.lexists(path):
        return None, None
    return read_analysis(path, None, errors, job_id=job_id)
