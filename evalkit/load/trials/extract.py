"""Extract one Harbor trial folder into a flat raw record (strings and numbers only).

Runs once per trial folder (``trials/table.py``). :data:`RAW` declares the record: each
field's name, dtype and where its value comes from, either a path into result.json or the
trial config (:func:`result`, :func:`config`, :func:`phase`) or a small named function of
the :class:`TrialFolder`, which reads the folder's documents once and computes the values
several fields share (rewards, exception, tokens, model) on first use. Everything that can
be done per column (timestamp parsing, outcome, error kind, run label, attempt numbering)
happens later as Polars expressions (``trials/derive.py``).

The record is pinned field for field, and the load errors in order, to the plain original
kept in ``tests/load/reference_extract.py``. Reward precedence and the field helpers:
``trials/fields.py``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import polars as pl
from orjson import JSONDecodeError
from orjson import loads as _loads

from evalkit.load.errors import LoadError
from evalkit.load.shared.cache import file_sig, stat_sig
from evalkit.load.shared.io import (
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

_EMPTY: dict = {}  # shared read-only default
_REWARD_FILES = frozenset(("reward.json", "reward.txt"))
_VERIFIER_OUTPUT = frozenset(("test-stdout.txt", "ctrf.json", "test-stderr.txt"))
_TOKEN_KEYS = ("n_input_tokens", "n_cache_tokens", "n_output_tokens", "cost_usd")


def _dict(v: Any) -> dict:
    return v if type(v) is dict else _EMPTY


def _as_bool(v: Any) -> bool | None:
    return v if type(v) is bool else None


def _text(v: Any) -> str | None:
    """A non-empty string, else None."""
    return v if type(v) is str and v else None


def _read(path: str, cap: int) -> tuple[bytes | None, LoadError | None, str]:
    """(bytes, error, signature) of a file (io.read_regular; its fstat is the signature)."""
    data, err, st = read_regular(path, "trial", cap)
    return data, err, (stat_sig(st) if st is not None else file_sig(path))


def _parse(data: bytes, path: str) -> tuple[Any, LoadError | None]:
    try:
        return _loads(data), None
    except JSONDecodeError:
        return parse_json(data, path, "trial")  # empty file, NaN literals, bad UTF-8


class TrialFolder:
    """The documents of one trial folder, read once (one listdir, one read of result.json,
    config.json only when result.json has no config), and the values several raw fields
    share, computed on first use. Load errors are collected in ``errors`` in the order the
    fields are read.
    """

    def __init__(self, trial_dir: str, trial_id: str) -> None:
        self.dir, self.id = trial_dir, trial_id
        self.errors: list[LoadError] = []
        self.cap = max_bytes()
        # os.path.join(trial_dir, name) for the names joined below, without the call
        self.base = trial_dir + "/" if trial_dir and not trial_dir.endswith("/") else trial_dir
        self.sig_dir = file_sig(trial_dir)
        self.names, self.listed = self._list()
        self.res_path = self.base + "result.json"
        self.result, self.sig_res = self._read_result()
        self.config = self._read_config()
        self.agent_cfg = _dict(self.config.get("agent"))
        self.task_cfg = _dict(self.config.get("task"))
        steps = self.result.get("step_results")
        self.steps: list | tuple = steps if type(steps) is list else ()

    def error(self, err: LoadError) -> None:
        """Record a load error of this trial (tagged with its trial id)."""
        self.errors.append(
            LoadError(err.path, err.level, err.error_type, err.message, trial_id=self.id)
        )

    def _list(self) -> tuple[list[str], bool]:
        try:
            return os.listdir(self.dir), True
        except OSError as e:
            self.error(LoadError(self.dir, "trial", "unreadable", f"{type(e).__name__}: {e}"))
            return [], False

    def _read_result(self) -> tuple[dict, str]:
        """result.json as an object (else empty, with a load error) and its signature."""
        if "result.json" not in self.names:
            return _EMPTY, ("-" if self.listed else file_sig(self.res_path))
        data, err, sig = _read(self.res_path, self.cap)
        if err is None:
            val, err = _parse(data, self.res_path)
        if err is not None:
            self.error(err)
        elif type(val) is not dict:
            kind = type(val).__name__
            self.error(
                LoadError(
                    self.res_path, "trial", "wrong_type",
                    f"result.json holds a {kind}, expected an object",
                )
            )  # fmt: skip
        else:
            return val, sig
        return _EMPTY, sig

    def _read_config(self) -> dict:
        """The trial config: result.json's ``config``, else config.json."""
        config = self.result.get("config")
        if type(config) is dict and config:
            return config
        if "config.json" in self.names:
            val, err = read_json(self.base + "config.json", "trial", self.cap)
            if err is not None:
                self.error(err)
            elif type(val) is dict:
                return val
        return _EMPTY

    def _sub_sig(self, name: str) -> str:
        """Signature of an entry of the trial folder ('-' when the listing shows it absent)."""
        return file_sig(self.base + name) if name in self.names or not self.listed else "-"

    @cached_property
    def verifier_names(self) -> frozenset[str] | set[str]:
        """Names in verifier/ (empty when absent or unreadable; unreadable is a load error)."""
        if "verifier" not in self.names:
            return frozenset()
        vdir = self.base + "verifier"
        try:
            return set(os.listdir(vdir))
        except NotADirectoryError:
            return frozenset()
        except OSError as e:  # reward files and verifier output cannot be seen: say so
            msg = f"cannot list verifier/: {type(e).__name__}: {e}"
            self.error(LoadError(vdir, "trial", "unreadable", msg))
            return frozenset()

    @cached_property
    def has_reward_file(self) -> bool:
        return not self.verifier_names.isdisjoint(_REWARD_FILES)

    @cached_property
    def rewards(self) -> tuple[list[dict[str, Any]], str | None]:
        """(every numeric reward as {name, value}, where they came from)."""
        raw = _dict(self.result.get("verifier_result")).get("rewards")
        if raw is None:
            for s in reversed(self.steps):
                raw = as_dict(as_dict(s).get("verifier_result")).get("rewards")
                if raw is not None:
                    break
        if type(raw) is dict and all(type(v) is float and v - v == 0.0 for v in raw.values()):
            # the usual case, finite floats (inf - inf and nan - nan are nan): no checks left
            items = [{"name": k, "value": v} for k, v in raw.items()]
        elif raw is not None:
            items = _numeric_rewards(raw, self.res_path, self.id, self.errors)
        else:
            items = []
        if items:
            self.verifier_names  # noqa: B018 - listed here so its load error keeps its place
            return items, "result"
        if self.has_reward_file:
            json_first = _json_first(self.dir, self.config, set(self.names))
            file_items, source = _reward_files(self.dir, json_first, self.id, self.errors)
            if file_items:
                return file_items, source
        return items, None

    @cached_property
    def exception(self) -> dict:
        """The first recorded exception (without result.json: the one Harbor wrote on its own)."""
        if not self.result and self.listed:
            return exception_from_files(self.base, self.names, self.id, self.errors) or _EMPTY
        exc = self.result.get("exception_info")
        if type(exc) is dict and exc:
            return exc
        for s in self.steps:
            e = as_dict(as_dict(s).get("exception_info"))
            if e:
                return e
        return _EMPTY

    @cached_property
    def tokens(self) -> tuple[Any, Any, Any, Any]:
        """Input, cache, output tokens and cost as recorded; multi-step trials sum their steps
        (unknown when any step does not know).
        """
        ar = self.result.get("agent_result")
        if type(ar) is dict:
            return (
                as_int(ar.get("n_input_tokens")),
                as_int(ar.get("n_cache_tokens")),
                as_int(ar.get("n_output_tokens")),
                finite_float(ar.get("cost_usd")),
            )
        sums: list[Any] = [None, None, None, None]
        for i, key in enumerate(_TOKEN_KEYS if self.steps else ()):
            conv = finite_float if key == "cost_usd" else as_int
            vals = [conv(as_dict(as_dict(s).get("agent_result")).get(key)) for s in self.steps]
            if vals and all(v is not None for v in vals):
                sums[i] = sum(vals)
        return tuple(sums)  # type: ignore[return-value]

    @cached_property
    def model(self) -> tuple[str | None, str | None]:
        """(model as provider/name when the provider is known, provider)."""
        minfo = _dict(_dict(self.result.get("agent_info")).get("model_info"))
        provider, mname = minfo.get("provider"), minfo.get("name")
        provider = provider if type(provider) is str else None
        cfg_model = self.agent_cfg.get("model_name")
        cfg_model = cfg_model if type(cfg_model) is str else None
        if type(mname) is str and mname:
            name = f"{provider}/{mname}" if provider and "/" not in mname else mname
        else:
            name = cfg_model
        if provider is None and cfg_model and "/" in cfg_model:
            provider = cfg_model.split("/", 1)[0]
        return name, provider

    @cached_property
    def task_ref(self) -> tuple[str | None, str | None]:
        tid = self.result.get("task_id")
        return _task_ref(tid if tid is not None else self.task_cfg)

    @cached_property
    def analysis(self) -> tuple[Any, str | None]:
        if "analysis.json" not in self.names:
            return None, None
        return read_analysis(self.base + "analysis.json", self.id, self.errors)

    def signature(self) -> str:
        """The trial's signature (the same text as ``trials/table.py``'s ``trial_sig``)."""
        sig_ana, sig_ver = self._sub_sig("analysis.json"), self._sub_sig("verifier")
        return f"{self.sig_dir}|{self.sig_res}|{sig_ana}|{sig_ver}|{self._sub_sig('agent')}"


# -- sources: a path into a document, or a small named function of the folder --------------


def result(key: str, read: Callable[[Any], Any] = _str) -> Callable[[TrialFolder], Any]:
    """The value at ``key`` of result.json."""
    return lambda t: read(t.result.get(key))


def config(key: str, read: Callable[[Any], Any] = _str) -> Callable[[TrialFolder], Any]:
    """The value at ``key`` of the trial config."""
    return lambda t: read(t.config.get(key))


def phase(key: str, end: int) -> Callable[[TrialFolder], str | None]:
    """Start (``end=0``) or end (``end=1``) time of a result.json phase object."""
    return lambda t: _span(t.result.get(key))[end]


def _trial_name(t: TrialFolder) -> str:
    return (
        _text(t.result.get("trial_name"))
        or _text(t.config.get("trial_name"))
        or (os.path.basename(t.dir))
    )


def _task_name(t: TrialFolder) -> str | None:
    name = _text(t.result.get("task_name"))
    if name is not None:
        return name
    name = t.task_cfg.get("name")
    if type(name) is str:
        return name
    path = t.task_cfg.get("path")
    return os.path.basename(str(path).rstrip("/")) if path else None


def _task_source(t: TrialFolder) -> str | None:
    source = _text(t.result.get("source")) or t.task_cfg.get("source")
    return source if type(source) is str else None


def _agent_name(t: TrialFolder) -> str | None:
    name = _text(_dict(t.result.get("agent_info")).get("name")) or _text(t.agent_cfg.get("name"))
    if name is not None:
        return name
    path = t.agent_cfg.get("import_path")
    return path if type(path) is str else None


def _agent_version(t: TrialFolder) -> str | None:
    version = _dict(t.result.get("agent_info")).get("version")
    if type(version) is not str:
        return None
    return version.splitlines()[0].strip() if version.strip() else version


def _exception_message(t: TrialFolder) -> str | None:
    msg = t.exception.get("exception_message")
    return msg if type(msg) is str else (None if msg is None else str(msg))


def _has_trajectory(t: TrialFolder) -> bool:
    if "agent" in t.names:
        adir = t.base + "agent"
        if os.path.isfile(adir + "/trajectory.json") or any(
            n.endswith(".trajectory.json") for n in _safe_list(adir)
        ):
            return True
    if "steps" not in t.names:
        return False
    sdir = t.base + "steps"
    return any(
        os.path.isfile(os.path.join(sdir, s, "agent", "trajectory.json")) for s in _safe_list(sdir)
    )


def _format_hints(t: TrialFolder) -> str | None:
    hints = []
    if "schema_version" in t.result:
        hints.append(f"v{t.result.get('schema_version')}")
    if "lock.json" in t.names:
        hints.append("trial-lock")
    if t.steps:
        hints.append("multi-step")
    return ",".join(hints) or None


def _regrade_of(t: TrialFolder) -> str | None:
    """The trial a regrade re-verified (config ``source_trial`` with action 'regrade')."""
    src = t.config.get("source_trial")
    if type(src) is dict and src.get("action") == "regrade":
        return _str(src.get("trial_id")) or _str(src.get("path"))
    return None


@dataclass(frozen=True, slots=True)
class RawField:
    """One field of the raw trial record: name, Polars dtype and where its value comes from."""

    name: str
    dtype: pl.DataType
    source: Callable[[TrialFolder], Any]


# The raw record, in order. Adding a field is one line here (derive.py turns raw fields into
# the documented columns of trials/columns.py; most keep their name and value).
RAW: tuple[RawField, ...] = (
    # identity
    RawField("trial_dir", pl.String, lambda t: t.dir),
    RawField("result_present", pl.Boolean, lambda t: bool(t.result)),
    RawField("result_id", pl.String, result("id")),
    RawField("recorded_job_id", pl.String, config("job_id")),
    RawField("trial_name", pl.String, _trial_name),
    RawField("task_name", pl.String, _task_name),
    RawField("task_source", pl.String, _task_source),
    RawField("task_ref", pl.String, lambda t: t.task_ref[0]),
    RawField("task_ref_kind", pl.String, lambda t: t.task_ref[1]),
    RawField("task_checksum", pl.String, result("task_checksum")),
    # agent / model
    RawField("agent_name", pl.String, _agent_name),
    RawField("agent_version", pl.String, _agent_version),
    RawField("agent_import_path", pl.String, lambda t: _str(t.agent_cfg.get("import_path"))),
    RawField("model_name", pl.String, lambda t: t.model[0]),
    RawField("model_provider", pl.String, lambda t: t.model[1]),
    # rewards
    RawField("rewards", pl.List(REWARD_ITEM), lambda t: t.rewards[0]),
    RawField("reward", pl.Float64, lambda t: primary_reward(t.rewards[0]) if t.result else None),
    RawField("reward_source", pl.String, lambda t: t.rewards[1]),
    RawField("reward_valid_recorded", pl.Boolean, result("reward_valid", _as_bool)),
    # exception
    RawField("exception_type", pl.String, lambda t: _str(t.exception.get("exception_type"))),
    RawField("exception_message", pl.String, _exception_message),
    RawField("ts_exception", pl.String, lambda t: _text(t.exception.get("occurred_at"))),
    # timing (text; parsed in derive.py)
    RawField("ts_started", pl.String, result("started_at", _ts)),
    RawField("ts_finished", pl.String, result("finished_at", _ts)),
    RawField("ts_env_start", pl.String, phase("environment_setup", 0)),
    RawField("ts_env_end", pl.String, phase("environment_setup", 1)),
    RawField("ts_asetup_start", pl.String, phase("agent_setup", 0)),
    RawField("ts_asetup_end", pl.String, phase("agent_setup", 1)),
    RawField("ts_agent_start", pl.String, phase("agent_execution", 0)),
    RawField("ts_agent_end", pl.String, phase("agent_execution", 1)),
    RawField("ts_verifier_start", pl.String, phase("verifier", 0)),
    RawField("ts_verifier_end", pl.String, phase("verifier", 1)),
    # tokens / cost
    RawField("n_input_tokens", pl.Int64, lambda t: t.tokens[0]),
    RawField("n_cache_tokens", pl.Int64, lambda t: t.tokens[1]),
    RawField("n_output_tokens", pl.Int64, lambda t: t.tokens[2]),
    RawField("cost_usd", pl.Float64, lambda t: t.tokens[3]),
    # evidence
    RawField("has_trajectory", pl.Boolean, _has_trajectory),
    RawField(
        "has_reward_file",
        pl.Boolean,
        lambda t: t.has_reward_file or bool(t.rewards[0] and t.rewards[1] == "result"),
    ),
    RawField(
        "has_verifier_output",
        pl.Boolean,
        lambda t: not t.verifier_names.isdisjoint(_VERIFIER_OUTPUT),
    ),
    RawField(
        "has_artifacts_manifest",
        pl.Boolean,
        lambda t: "artifacts" in t.names and os.path.isfile(t.base + "artifacts/manifest.json"),
    ),
    # provenance and harbor analyze
    RawField("harbor_schema", pl.String, _format_hints),
    RawField("analysis_checks", pl.List(CHECK_ITEM), lambda t: t.analysis[0]),
    RawField("analysis_summary", pl.String, lambda t: t.analysis[1]),
    RawField("regrade_of", pl.String, _regrade_of),
)
RAW_SCHEMA: dict[str, pl.DataType] = {f.name: f.dtype for f in RAW}
RAW_FIELDS = tuple(RAW_SCHEMA)
_SOURCES = tuple(f.source for f in RAW)


def extract_trial(trial_dir: str, trial_id: str) -> tuple[tuple, list[LoadError], str]:
    """One raw record (in RAW_FIELDS order), the load errors met in this trial folder, and
    the trial's signature (the same text as ``trials/table.py``'s ``trial_sig``, taken from
    the syscalls the extraction makes anyway: the fstat of result.json is free).
    """
    folder = TrialFolder(trial_dir, trial_id)
    record = tuple([source(folder) for source in _SOURCES])
    return record, folder.errors, folder.signature()
