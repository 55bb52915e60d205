"""Timestamp policy: every output timestamp is timezone-aware UTC.

Harbor writes some timestamps with a zone ("...Z") and some without (naive local time of the
machine that ran the job): job result.json times in every version, trial times up to 0.1.35,
exception ``occurred_at`` up to 0.20 (harbor-format.md §2.2). A naive value is converted to
UTC by the ``naive_tz`` policy given to :func:`evalkit.load`:

* ``"auto"`` (default): per job, infer the writer's UTC offset from the same job's aware
  trial timestamps: offset = (naive job start) - (earliest aware trial start), rounded to
  the nearest 15 minutes (the job starts seconds before its first trial). When the job has
  no aware timestamp to compare with, a trial's own aware times pin its naive exception
  time (``jobs/zones.trial_zones``); else the sibling jobs of the same run folder pin it
  (``jobs/zones.sibling_zones``); else fall back to ``"local"``.
* ``"local"``: the zone of the machine running evalkit (``$TZ`` / ``/etc/localtime``).
* ``"UTC"``, an IANA zone name (``"Asia/Shanghai"``), or a fixed offset (``"+08:00"``).

Each job records the zone it used in ``jobs.naive_tz``; trials flag ``naive_timestamps``.
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timedelta

import polars as pl

_AWARE_RE = r"(Z|z|[+-]\d{2}:?\d{2})$"
_OFFSET_RE = re.compile(r"^([+-])(\d{2}):?(\d{2})$")


def local_zone() -> str:
    """Best IANA name (or fixed offset) for the machine's local zone."""
    tz = os.environ.get("TZ")
    if tz and not tz.startswith(":") and _valid_zone(tz):
        return tz
    try:
        link = os.path.realpath("/etc/localtime")
        if "zoneinfo/" in link:
            name = link.split("zoneinfo/", 1)[1]
            if _valid_zone(name):
                return name
    except OSError:
        pass
    off = datetime.now().astimezone().utcoffset() or timedelta(0)
    return format_offset(int(off.total_seconds()))


def _valid_zone(name: str) -> bool:
    try:
        from zoneinfo import ZoneInfo

        ZoneInfo(name)
        return True
    except Exception:
        return False


def format_offset(seconds: int) -> str:
    sign = "+" if seconds >= 0 else "-"
    s = abs(seconds)
    return f"{sign}{s // 3600:02d}:{(s % 3600) // 60:02d}"


def parse_offset(zone: str) -> int | None:
    """Seconds east of UTC for '+08:00' / '-0530' forms, else None."""
    m = _OFFSET_RE.match(zone.strip())
    if not m:
        return None
    secs = int(m.group(2)) * 3600 + int(m.group(3)) * 60
    return secs if m.group(1) == "+" else -secs


def resolve_policy(naive_tz: str) -> str:
    """Validate a user policy; returns 'auto' or a concrete zone / offset."""
    if naive_tz == "auto":
        return "auto"
    if naive_tz == "local":
        return local_zone()
    if naive_tz.upper() == "UTC":
        return "UTC"
    if parse_offset(naive_tz) is not None or _valid_zone(naive_tz):
        return naive_tz
    raise ValueError(
        f"naive_tz={naive_tz!r}: use 'auto', 'local', 'UTC', an IANA zone name or an offset like '+08:00'"
    )


def is_aware(expr: pl.Expr) -> pl.Expr:
    """True where a timestamp string carries a zone."""
    return expr.str.contains(_AWARE_RE)


def _clean(expr: pl.Expr) -> pl.Expr:
    return expr.str.strip_chars().str.replace(" ", "T", literal=True)


def parse_aware(expr: pl.Expr) -> pl.Expr:
    """Parse zone-carrying ISO strings to UTC (null for naive / garbage)."""
    e = _clean(expr).str.replace(r"[Zz]$", "+00:00")
    return e.str.to_datetime(
        "%Y-%m-%dT%H:%M:%S%.f%:z", strict=False, time_zone="UTC", time_unit="us"
    )


def parse_naive(expr: pl.Expr) -> pl.Expr:
    """Parse naive ISO strings to a naive datetime (null for aware / garbage)."""
    return _clean(expr).str.to_datetime("%Y-%m-%dT%H:%M:%S%.f", strict=False, time_unit="us")


def to_utc(expr: pl.Expr, zone_col: pl.Expr, zones: list[str]) -> pl.Expr:
    """UTC datetime from a timestamp string column.

    Aware strings are converted directly. Naive strings are interpreted in the zone named
    per row by ``zone_col`` (one of ``zones``: IANA names or fixed offsets).
    """
    return utc_from_parsed(parse_aware(expr), parse_naive(expr), zone_col, zones)


def parsed(col: str) -> list[pl.Expr]:
    """``__a_<col>`` / ``__n_<col>``: the column parsed as aware / naive, once, for
    :func:`utc_from_parsed` and the zone inference (``jobs/zones.py``) to share."""
    return [
        parse_aware(pl.col(col)).alias(f"__a_{col}"),
        parse_naive(pl.col(col)).alias(f"__n_{col}"),
    ]


def utc_from_parsed(aware: pl.Expr, naive: pl.Expr, zone_col: pl.Expr, zones: list[str]) -> pl.Expr:
    """:func:`to_utc` from the already parsed aware / naive values of a column."""
    conv: pl.Expr = pl.lit(None, dtype=pl.Datetime("us", "UTC"))
    for z in zones:
        off = parse_offset(z)
        if off is not None:
            val = (naive - pl.duration(seconds=off)).dt.replace_time_zone("UTC")
        else:
            val = naive.dt.replace_time_zone(
                z, ambiguous="earliest", non_existent="null"
            ).dt.convert_time_zone("UTC")
        conv = pl.when(zone_col == z).then(val).otherwise(conv)
    return pl.coalesce(aware, conv)


def choose_offset(
    lo_s: float | None, hi_s: float | None, anchor_s: float | None, local_s: int | None
) -> int | None:
    """Pick the writer's UTC offset (seconds) from bounds implied by the job's own data.

    ``lo_s``/``hi_s`` bound the offset: a naive job start must precede every aware trial
    start (offset >= naive_start - first_trial_start), a naive job end must follow every
    trial end (offset <= naive_end - last_trial_end) and a naive exception time must fall
    inside its trial (aware start..end). Real offsets are quarter hours within +-14 h.
    Choice: the only quarter hour in [lo, hi]; else the machine's own offset if it fits;
    else the quarter hour within 5 minutes of ``anchor_s`` (naive job start - first trial
    start, right when the job's first trial is on disk); else None (caller falls back).
    """
    lo = -14 * 3600 if lo_s is None else lo_s
    hi = 14 * 3600 if hi_s is None else hi_s
    if lo_s is None and hi_s is None:
        return None
    first = int(-(-lo // 900)) * 900  # ceil to a quarter hour
    cands = [q for q in range(first, int(hi) + 1, 900) if abs(q) <= 14 * 3600]
    if len(cands) == 1:
        return cands[0]
    if not cands:
        return None
    if local_s is not None and local_s in cands:
        return local_s
    if anchor_s is not None:
        q = round(anchor_s / 900) * 900
        if q in cands and abs(anchor_s - q) <= 300:
            return q
    return None


def zone_offset_now(zone: str) -> int | None:
    """Current UTC offset (seconds) of a zone name or fixed offset."""
    off = parse_offset(zone)
    if off is not None:
        return off
    if zone.upper() == "UTC":
        return 0
    try:
        from zoneinfo import ZoneInfo

        u = datetime.now(ZoneInfo(zone)).utcoffset()
        return int(u.total_seconds()) if u is not None else None
    except Exception:
        return None
