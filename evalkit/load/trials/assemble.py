"""Trials frame rows per job: reuse the cached derived rows, derive the others, cache them.

A job's derived rows (``trials/derive.py``: UTC timestamps, durations, error_kind, outcome,
...) depend on its raw records, the zone its naive timestamps are read in
(``jobs/zones.py``) and the load options; run labels and attempt numbers are added later
over all jobs (``derive.add_run_and_attempt``). The cache (``trials/table.py``) keeps, per
job, the derived rows with the *derivation key* they were made with: the options, the
machine's zone when the policy is 'auto', and a hash of the rule sources (derive.py,
outcomes.py, timeparse.py, zones.py), so editing a rule invalidates cached rows without a
version bump. A job reused whole (fast path) with the same key is not derived again (unless
its zone came from, or could not be found in, the other jobs of the load: it is chosen
again with the jobs loaded now); a job
that gained trials derives only the new rows when its zone did not change (rows are
derived independently of each other).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import polars as pl

from evalkit.load.jobs.zones import (
    depends_on_other_jobs,
    job_zones,
    sibling_zones,
    trial_zones,
)
from evalkit.load.shared.timeparse import local_zone, zone_offset_now
from evalkit.load.trials.derive import ZONE_SOURCES, derive, with_parsed
from evalkit.load.trials.extract import RAW_SCHEMA
from evalkit.load.trials.table import JobTrials, rows, save_job

_LOAD = Path(__file__).resolve().parents[1]
#: Files whose rules decide the derived columns (their bytes are part of the cache key).
RULE_SOURCES = ("trials/derive.py", "outcomes.py", "shared/timeparse.py", "jobs/zones.py")
#: ... and, for a whole-load result, the run labels and the final schema.
LOAD_SOURCES = ("api.py", "trials/columns.py", "_columns.py", "trials/assemble.py")
#: Raw columns of a job's rows (what derive() reads), in order.
RAW_COLUMNS = (*RAW_SCHEMA, "trial_id", "_sig")
_JOB_SCHEMA = {"job_id": pl.String, "job_name": pl.String, "__label": pl.String, "__dataset": pl.String}  # fmt: skip


@functools.cache
def _rules_hash(sources: tuple[str, ...] = RULE_SOURCES) -> str:
    h = hashlib.blake2b(digest_size=8)
    for rel in sources:
        try:
            h.update((_LOAD / rel).read_bytes())
        except OSError:  # no sources (zipped install): never reuse derived rows
            return ""
    return h.hexdigest()


def derive_key(policy: str, outcome_rule: str) -> str:
    """What derived columns depend on besides the raw records ('' = never reuse)."""
    rules = _rules_hash()
    if not rules:
        return ""
    parts = [rules, outcome_rule, policy]
    if policy == "auto":  # the machine's zone and its current offset are fallbacks
        local = local_zone()
        parts += [local, str(zone_offset_now(local))]
    return "|".join(parts)


def empty_raw() -> pl.DataFrame:
    """A zero-row frame with the raw columns and the per-job columns."""
    return pl.DataFrame(
        schema={**RAW_SCHEMA, "trial_id": pl.String, "_sig": pl.String, **_JOB_SCHEMA}
    )


def _job_columns(df: pl.DataFrame, rec: dict) -> pl.DataFrame:
    return df.with_columns(
        pl.lit(rec["job_id"]).alias("job_id"),
        pl.lit(rec["job_name"]).alias("job_name"),
        pl.lit(rec["_label"], pl.String).alias("__label"),
        pl.lit(rec["dataset"], pl.String).alias("__dataset"),
    )


def _label_last(df: pl.DataFrame, rec: dict) -> pl.DataFrame:
    """Rows with this load's per-job values: the user's label (not cached: it depends on
    ``paths``; always the last column) and the dataset (from the job's config)."""
    return df.with_columns(pl.lit(rec["dataset"], pl.String).alias("__dataset")).select(
        pl.exclude("__label"), pl.lit(rec["_label"], pl.String).alias("__label")
    )


@dataclass
class _Zones:
    """Where naive timestamps are read: each job's zone, the note saying why, and the
    trials whose own zone differs from their job's."""

    by_job: dict[str, str] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    by_trial: dict[str, str] = field(default_factory=dict)


def assemble(
    plans: list[JobTrials],
    job_recs: list[dict[str, Any]],
    policy: str,
    outcome_rule: str,
    *,
    cache: bool,
) -> tuple[pl.DataFrame, dict[str, str]]:
    """Derived trial rows of every job (in job order, trial_dir order within a job) and the
    note on each job's naive-timestamp zone; writes the cache of every job it derived."""
    key = derive_key(policy, outcome_rule)
    zones = _Zones()
    parts, todo = _reuse_derived_jobs(plans, job_recs, key, zones)
    raws = _raw_rows(plans, job_recs, todo)
    if todo:
        _choose_zones(raws, job_recs, todo, policy, zones)
    if raws:
        kept, to_derive = _rows_to_derive(raws, plans, job_recs, key, zones)
        by_job = _derive_in_zones(to_derive, zones, outcome_rule)
        for i in raws:
            rec = job_recs[i]
            parts[i] = _job_rows(by_job.get((rec["job_id"],)), kept.get(i), rec)
            # a fast-path job derived with other options keeps its table (and generation):
            # only rows that changed are written
            if cache and rec["_ref"].only is None and not plans[i].from_cache:
                meta = {"derive": key, "zone": zones.by_job[rec["job_id"]], "zone_note": zones.notes[rec["job_id"]]}  # fmt: skip
                save_job(plans[i], parts[i].drop("__label"), meta)
    return _in_job_order(parts, outcome_rule), zones.notes


def _reuse_derived_jobs(
    plans: list[JobTrials], job_recs: list[dict[str, Any]], key: str, zones: _Zones
) -> tuple[dict[int, pl.DataFrame], list[int]]:
    """Rows of the jobs reused whole from the cache, derived with ``key`` in a zone that
    does not depend on the other jobs (their zones go into ``zones``), and the indexes of
    the jobs left to derive."""
    parts: dict[int, pl.DataFrame] = {}
    todo: list[int] = []
    for i, (p, rec) in enumerate(zip(plans, job_recs, strict=True)):
        m = p.meta
        settled = "zone" in m and not depends_on_other_jobs(m.get("zone_note"))
        if p.from_cache and key and m.get("derive") == key and settled:
            parts[i] = _label_last(rows(p), rec)  # type: ignore[arg-type]
            zones.by_job[rec["job_id"]], zones.notes[rec["job_id"]] = m["zone"], m["zone_note"]
        else:
            todo.append(i)
    return parts, todo


def _raw_rows(
    plans: list[JobTrials], job_recs: list[dict[str, Any]], todo: list[int]
) -> dict[int, pl.DataFrame]:
    """Raw rows of each job to derive (kept cached rows + rows extracted now, in trial_dir
    order), with the job columns and the zone columns parsed; jobs without rows are left out."""
    raws: dict[int, pl.DataFrame] = {}
    for i in todo:
        p, rec = plans[i], job_recs[i]
        pieces = [f for f in (rows(p), p.new) if f is not None and f.height]
        if not pieces:
            continue
        f = pl.concat([x.select(RAW_COLUMNS) for x in pieces], how="vertical_relaxed")
        f = f.sort("trial_dir")  # same order whether rows came from the cache or not
        if rec["_ref"].only is not None:
            f = f.filter(pl.col("trial_dir").is_in(sorted(rec["_ref"].only)))
        # zone columns parsed now for every row (shared with derive); the rest only for the
        # rows derived later
        raws[i] = with_parsed(_job_columns(f, rec), ZONE_SOURCES)
    return raws


def _choose_zones(
    raws: dict[int, pl.DataFrame],
    job_recs: list[dict[str, Any]],
    todo: list[int],
    policy: str,
    zones: _Zones,
) -> None:
    """Zones of the jobs to derive (from their own rows, else from their sibling jobs)
    and of trials that differ from their job, added to ``zones``."""
    raw = (
        pl.concat(list(raws.values()), how="vertical_relaxed")
        if raws
        else with_parsed(empty_raw(), ZONE_SOURCES)
    )
    z, n, fallback = job_zones(raw, [job_recs[i] for i in todo], policy)
    zones.by_job.update(z)
    zones.notes.update(n)
    sibling_zones(job_recs, zones.by_job, zones.notes, fallback)
    zones.by_trial = trial_zones(raw, fallback)


def _rows_to_derive(
    raws: dict[int, pl.DataFrame],
    plans: list[JobTrials],
    job_recs: list[dict[str, Any]],
    key: str,
    zones: _Zones,
) -> tuple[dict[int, pl.DataFrame], list[pl.DataFrame]]:
    """The kept derived rows of each job whose cached rows were derived with this key and
    zone (only its new rows are derived), and the raw rows to derive of every job."""
    kept_rows: dict[int, pl.DataFrame] = {}
    to_derive = []
    for i, f in raws.items():
        p, jid = plans[i], job_recs[i]["job_id"]
        m = p.meta
        kept = p.frame
        if (
            key
            and kept is not None
            and kept.height
            and m.get("derive") == key
            and (m.get("zone"), m.get("zone_note")) == (zones.by_job[jid], zones.notes[jid])
        ):
            kept_rows[i] = kept
            new_ids = set() if p.new is None else set(p.new["trial_id"].to_list())
            f = f.filter(pl.col("trial_id").is_in(list(new_ids)))
        to_derive.append(f)
    return kept_rows, to_derive


def _derive_in_zones(
    to_derive: list[pl.DataFrame], zones: _Zones, outcome_rule: str
) -> dict[tuple, pl.DataFrame]:
    """Derived rows of all jobs at once (each row read in its trial's, else its job's,
    zone), split by job_id."""
    raw = pl.concat(to_derive, how="vertical_relaxed")
    job_zone = pl.col("job_id").replace_strict(zones.by_job, default="UTC", return_dtype=pl.String)  # fmt: skip
    trial_zone = pl.col("trial_id").replace_strict(zones.by_trial, default=None, return_dtype=pl.String)  # fmt: skip
    raw = raw.with_columns(pl.coalesce(trial_zone, job_zone).alias("__zone"))
    names = sorted(set(zones.by_job.values()) | set(zones.by_trial.values()))
    derived = derive(raw, names, outcome_rule)
    return derived.partition_by("job_id", as_dict=True, maintain_order=True)


def _job_rows(
    derived: pl.DataFrame | None, kept: pl.DataFrame | None, rec: dict
) -> pl.DataFrame | None:
    """A job's rows: the rows derived now after its kept rows, in trial_dir order."""
    part = _label_last(derived, rec) if derived is not None else None
    if kept is not None:
        old = _label_last(kept, rec)
        part = old if part is None else pl.concat([old, part.select(old.columns)])
        part = part.sort("trial_dir")
    return part


def _in_job_order(parts: dict[int, pl.DataFrame], outcome_rule: str) -> pl.DataFrame:
    """The jobs' rows in job order as one frame (a zero-row derived frame for none)."""
    ordered = [parts[i] for i in sorted(parts)]
    if not ordered:
        empty = empty_raw().with_columns(pl.lit(None, pl.String).alias("__zone"))
        return derive(empty, ["UTC"], outcome_rule)
    cols = ordered[0].columns
    return pl.concat([f.select(cols) for f in ordered], how="vertical_relaxed")


def load_key(
    plans: list[JobTrials], job_recs: list[dict[str, Any]], key: str, run: object
) -> str | None:
    """Key of a whole-load result (trials frame after run labels and attempts) when every
    job's rows are cached and complete (named by the cached tables' generations, the
    derivation key and the run option); None when not reusable."""
    if not key or not plans or callable(run):
        return None
    if run is not None and not isinstance(run, (str, Mapping)):
        return None
    run_key = sorted((str(k), str(v)) for k, v in run.items()) if isinstance(run, Mapping) else run
    jobs = []
    for p, rec in zip(plans, job_recs, strict=True):
        m = p.meta
        if rec["_ref"].only is not None or not p.complete:
            return None
        if not m.get("generation") or m.get("job_sig") != p.job_sig:
            return None
        jobs.append([rec["job_id"], m["generation"], rec["_label"]])
    loads = _rules_hash(LOAD_SOURCES)
    if not loads:
        return None
    raw = orjson.dumps([key, loads, run_key, jobs])
    return hashlib.blake2b(raw, digest_size=12).hexdigest()
