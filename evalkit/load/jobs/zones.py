"""Which zone each job's naive timestamps were written in (policy: ``load/shared/timeparse.py``)."""

from __future__ import annotations

import os

import polars as pl

from evalkit.load.shared.timeparse import (
    choose_offset,
    format_offset,
    local_zone,
    parse_aware,
    parse_naive,
    zone_offset_now,
)


def job_zones(
    raw: pl.DataFrame, job_recs: list[dict], policy: str
) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """Zone used for each job's naive timestamps, a note saying how it was chosen, and the
    jobs whose own times could not pin it (their trials may pin their own:
    :func:`trial_zones`; else :func:`sibling_zones`, else the machine's zone)."""
    zone_by_job: dict[str, str] = {}
    note: dict[str, str] = {}
    if policy != "auto":
        for rec in job_recs:
            zone_by_job[rec["job_id"]] = policy
            note[rec["job_id"]] = f"{policy} (given)"
        return zone_by_job, note, []
    fallback: list[str] = []
    local = local_zone()
    local_off = zone_offset_now(local)
    bounds = _offset_bounds(raw)
    for rec in job_recs:
        jid = rec["job_id"]
        b = bounds.get(jid, {})
        js = _naive_epoch(rec.get("ts_started"))
        je = _naive_epoch(rec.get("ts_finished")) or _naive_epoch(rec.get("ts_updated"))
        lo_cands = [v for v in (b.get("exc_lo"),) if v is not None]
        hi_cands = [v for v in (b.get("exc_hi"),) if v is not None]
        anchor = None
        if js is not None and b.get("min_start") is not None:
            anchor = js - b["min_start"]
            lo_cands.append(anchor - 5)
        if je is not None and b.get("max_end") is not None:
            hi_cands.append(je - b["max_end"] + 5)
        lo = max(lo_cands) if lo_cands else None
        hi = min(hi_cands) if hi_cands else None
        off = choose_offset(lo, hi, anchor, local_off)
        if off is None:
            fallback.append(jid)
            zone_by_job[jid] = local
            note[jid] = (
                f"{local} (local; could not infer)" if (js is not None or b) else f"{local} (local)"
            )
        else:
            z = "UTC" if off == 0 else format_offset(off)
            zone_by_job[jid] = z
            note[jid] = f"{z} (inferred)"
    return zone_by_job, note, fallback


#: ``jobs.naive_tz`` note of a zone taken from the sibling jobs of the same run folder.
SIBLING_NOTE = "(inferred from sibling jobs)"


def depends_on_other_jobs(note: str | None) -> bool:
    """True when a job's zone came from (or could not be found in) the other jobs of the
    load: a cached zone with this note is chosen again with the jobs loaded now."""
    return note is not None and (note.endswith(SIBLING_NOTE) or "could not infer" in note)


def sibling_zones(
    job_recs: list[dict], zone_by_job: dict[str, str], note: dict[str, str], fallback: list[str]
) -> None:
    """Pin the zone of each job in ``fallback`` by its sibling jobs (in place): the jobs of
    the same run folder (parent folder) whose own times pinned an offset. One machine
    writes a run folder, so its zone holds for the siblings; when the siblings' offsets
    disagree (jobs copied together from several machines, or a DST change in between)
    nothing is pinned. ``job_recs`` / ``zone_by_job`` / ``note`` cover every job of the
    load (cached ones included), so the result does not depend on which were cached."""
    waiting = set(fallback)
    if not waiting:
        return
    by_folder: dict[str, set[str]] = {}
    for rec in job_recs:
        jid = rec["job_id"]
        if jid not in waiting and (note.get(jid) or "").endswith("(inferred)"):
            folder = os.path.dirname(rec["job_dir"].rstrip(os.sep))
            by_folder.setdefault(folder, set()).add(zone_by_job[jid])
    for rec in job_recs:
        zones = by_folder.get(os.path.dirname(rec["job_dir"].rstrip(os.sep)), set())
        if rec["job_id"] in waiting and len(zones) == 1:
            z = next(iter(zones))
            zone_by_job[rec["job_id"]], note[rec["job_id"]] = z, f"{z} {SIBLING_NOTE}"


def _naive_epoch(s: str | None) -> float | None:
    """Seconds since epoch of a naive ISO string read as UTC (None if absent/aware/bad)."""
    if not s:
        return None
    from datetime import UTC, datetime

    try:
        d = datetime.fromisoformat(s.strip().replace(" ", "T"))
    except ValueError:
        return None
    if d.tzinfo is not None:
        return None
    return d.replace(tzinfo=UTC).timestamp()


def _offset_bounds(raw: pl.DataFrame) -> dict[str, dict[str, float | None]]:
    """Per job: earliest aware trial start, latest aware end, and exception-time bounds."""
    if raw.height == 0:
        return {}
    epoch = lambda e: e.dt.epoch("us") / 1e6  # noqa: E731
    cols = set(raw.columns)  # parsed already by trials/derive.with_parsed(), or parse here
    start = (
        pl.col("__a_ts_started") if "__a_ts_started" in cols else parse_aware(pl.col("ts_started"))
    )
    end = (
        pl.col("__a_ts_finished")
        if "__a_ts_finished" in cols
        else parse_aware(pl.col("ts_finished"))
    )
    exc = (
        pl.col("__n_ts_exception")
        if "__n_ts_exception" in cols
        else parse_naive(pl.col("ts_exception"))
    )
    exc_naive = exc.dt.replace_time_zone("UTC")
    g = raw.group_by("job_id").agg(
        epoch(start).min().alias("min_start"),
        epoch(end).max().alias("max_end"),
        (epoch(exc_naive) - epoch(end) - 5).max().alias("exc_lo"),
        (epoch(exc_naive) - epoch(start) + 5).min().alias("exc_hi"),
    )
    return {r["job_id"]: r for r in g.iter_rows(named=True)}


def trial_zones(raw: pl.DataFrame, job_ids: list[str]) -> dict[str, str]:
    """Zone of each trial's naive exception time, inferred from the trial's own aware times,
    for the trials of ``job_ids`` (jobs whose own times could not pin an offset).

    The exception happened inside its trial: offset in [naive - end - 5 s, naive - start +
    5 s]; the aware end of the agent phase (exceptions mostly stop the agent) is the anchor
    that picks among several quarter hours (``timeparse.choose_offset``). Trials whose
    bounds admit no quarter hour keep the job's zone (and are flagged out of window).
    """
    if raw.height == 0 or not job_ids or "ts_agent_end" not in raw.columns:
        return {}
    epoch = lambda e: e.dt.epoch("us") / 1e6  # noqa: E731
    exc = epoch(parse_naive(pl.col("ts_exception")).dt.replace_time_zone("UTC"))
    rows = (
        raw.filter(pl.col("job_id").is_in(job_ids))
        .select(
            "trial_id",
            (exc - epoch(parse_aware(pl.col("ts_finished"))) - 5).alias("lo"),
            (exc - epoch(parse_aware(pl.col("ts_started"))) + 5).alias("hi"),
            (exc - epoch(parse_aware(pl.col("ts_agent_end")))).alias("anchor"),
        )
        .filter(pl.col("lo").is_not_null() & pl.col("hi").is_not_null())
    )
    out: dict[str, str] = {}
    for r in rows.iter_rows(named=True):
        off = choose_offset(r["lo"], r["hi"], r["anchor"], None)
        if off is not None:
            out[r["trial_id"]] = "UTC" if off == 0 else format_offset(off)
    return out
