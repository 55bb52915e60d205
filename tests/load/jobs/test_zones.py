"""Zone inference for naive timestamps (load/jobs/zones.py), as docs/loading.md states it.

Offsets below are worked by hand: a job written at UTC+8 records its naive start 8 h after
the aware (Z) start of its first trial, minus the few seconds the job starts earlier.
"""

from __future__ import annotations

import polars as pl
import pytest

from evalkit.load.jobs.zones import (
    SIBLING_NOTE,
    _naive_epoch,
    depends_on_other_jobs,
    job_zones,
    sibling_zones,
    trial_zones,
)

_RAW = {
    "job_id": pl.String,
    "trial_id": pl.String,
    "ts_started": pl.String,
    "ts_finished": pl.String,
    "ts_exception": pl.String,
    "ts_agent_end": pl.String,
}


def _raw(rows: list[dict]) -> pl.DataFrame:
    return pl.DataFrame([{k: r.get(k) for k in _RAW} for r in rows], schema=_RAW)


@pytest.fixture(autouse=True)
def _utc_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")


def test_given_policy_is_used_for_every_job() -> None:
    recs = [{"job_id": "a"}, {"job_id": "b"}]
    zones, note, fallback = job_zones(_raw([]), recs, "Asia/Shanghai")
    assert zones == {"a": "Asia/Shanghai", "b": "Asia/Shanghai"}
    assert note == {"a": "Asia/Shanghai (given)", "b": "Asia/Shanghai (given)"}
    assert fallback == []


def test_job_start_and_end_bracket_the_aware_trials() -> None:
    # +8 h: job 10:00:00 local; trials 02:00:05Z..02:30:00Z; job end 10:30:10 local.
    # lo = (10:00:00 - 02:00:05) - 5 s = 8h - 10 s; hi = (10:30:10 - 02:30:00) + 5 s = 8h + 15 s
    # -> the only quarter hour is 8 h.
    raw = _raw(
        [
            {
                "job_id": "j",
                "ts_started": "2024-03-01T02:00:05Z",
                "ts_finished": "2024-03-01T02:10:00Z",
            },
            {
                "job_id": "j",
                "ts_started": "2024-03-01T02:20:00Z",
                "ts_finished": "2024-03-01T02:30:00Z",
            },
        ]
    )
    rec = {"job_id": "j", "ts_started": "2024-03-01T10:00:00", "ts_finished": "2024-03-01 10:30:10"}
    zones, note, fallback = job_zones(raw, [rec], "auto")
    assert (zones, note, fallback) == ({"j": "+08:00"}, {"j": "+08:00 (inferred)"}, [])


def test_negative_and_zero_offsets() -> None:
    raw = _raw(
        [
            {
                "job_id": "w",
                "ts_started": "2024-03-01T15:00:03Z",
                "ts_finished": "2024-03-01T15:20:00Z",
            },
            {
                "job_id": "u",
                "ts_started": "2024-03-01T15:00:03Z",
                "ts_finished": "2024-03-01T15:20:00Z",
            },
        ]
    )
    recs = [
        # -05:30 (a quarter-hour zone): 15:00:03Z is 09:30:03 local
        {"job_id": "w", "ts_started": "2024-03-01T09:30:00", "ts_updated": "2024-03-01T09:50:01"},
        {"job_id": "u", "ts_started": "2024-03-01T15:00:00", "ts_finished": "2024-03-01T15:20:01"},
    ]
    zones, note, _ = job_zones(raw, recs, "auto")
    assert zones == {"w": "-05:30", "u": "UTC"}
    assert note == {"w": "-05:30 (inferred)", "u": "UTC (inferred)"}


def test_start_only_uses_the_anchor_when_the_machine_zone_does_not_fit() -> None:
    # only a lower bound (8h - 5 s): quarter hours 8h..14h fit; the machine (UTC) does not,
    # the anchor (8h exactly) picks 8 h.
    raw = _raw([{"job_id": "j", "ts_started": "2024-03-01T02:00:00Z"}])
    rec = {"job_id": "j", "ts_started": "2024-03-01T10:00:00"}
    zones, note, fallback = job_zones(raw, [rec], "auto")
    assert zones == {"j": "+08:00"} and note == {"j": "+08:00 (inferred)"} and fallback == []


def test_start_only_prefers_the_machine_zone_when_it_fits(monkeypatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")  # +09:00, no DST: within [8h - 5 s, 14 h]
    raw = _raw([{"job_id": "j", "ts_started": "2024-03-01T02:00:00Z"}])
    rec = {"job_id": "j", "ts_started": "2024-03-01T10:00:00"}
    zones, _, _ = job_zones(raw, [rec], "auto")
    assert zones == {"j": "+09:00"}


def test_exception_time_inside_its_trial_pins_the_job() -> None:
    # no job times; exception 10:05:00 local inside 02:00Z..02:10Z:
    # offset in [8h - 5 min - 5 s, 8h + 5 min + 5 s] -> only 8 h
    raw = _raw(
        [
            {
                "job_id": "j",
                "ts_started": "2024-03-01T02:00:00Z",
                "ts_finished": "2024-03-01T02:10:00Z",
                "ts_exception": "2024-03-01T10:05:00",
            }
        ]
    )
    zones, note, fallback = job_zones(raw, [{"job_id": "j"}], "auto")
    assert zones == {"j": "+08:00"} and note == {"j": "+08:00 (inferred)"} and fallback == []


def test_jobs_that_cannot_be_pinned_fall_back_to_the_machine_zone() -> None:
    raw = _raw([{"job_id": "seen"}])  # a trial row with no times at all
    recs = [
        {"job_id": "bare"},  # nothing to go on
        {"job_id": "naive", "ts_started": "2024-03-01T10:00:00"},  # no aware trial time
        {"job_id": "seen"},
        {"job_id": "aware", "ts_started": "2024-03-01T10:00:00Z"},  # aware job time: not naive
    ]
    zones, note, fallback = job_zones(raw, recs, "auto")
    assert fallback == ["bare", "naive", "seen", "aware"]
    assert set(zones.values()) == {"UTC"}
    assert note == {
        "bare": "UTC (local)",
        "naive": "UTC (local; could not infer)",
        "seen": "UTC (local; could not infer)",
        "aware": "UTC (local)",
    }


def test_trial_zones_single_quarter_hour_and_anchor() -> None:
    base = {"job_id": "j", "ts_started": "2024-03-01T02:00:00Z"}
    raw = _raw(
        [
            # narrow trial: [8h - 5 min - 5 s, 8h + 5 min + 5 s] -> +08:00
            {**base, "trial_id": "narrow", "ts_finished": "2024-03-01T02:10:00Z",
             "ts_exception": "2024-03-01T10:05:00"},
            # 1 h trial: 7.5 h..8.5 h admits 5 quarter hours; agent end 02:30Z -> anchor 8 h
            {**base, "trial_id": "anchored", "ts_finished": "2024-03-01T03:00:00Z",
             "ts_exception": "2024-03-01T10:30:00", "ts_agent_end": "2024-03-01T02:30:00Z"},
            # same, agent end 02:37Z -> anchor 7h53m, 7 min from 8 h: too far, not pinned
            {**base, "trial_id": "loose", "ts_finished": "2024-03-01T03:00:00Z",
             "ts_exception": "2024-03-01T10:30:00", "ts_agent_end": "2024-03-01T02:37:00Z"},
            # exception at UTC: offset 0
            {**base, "trial_id": "utc", "ts_finished": "2024-03-01T02:10:00Z",
             "ts_exception": "2024-03-01T02:05:00"},
            # no aware end: no bounds
            {**base, "trial_id": "open", "ts_exception": "2024-03-01T10:05:00"},
            # another job, not asked for
            {**base, "job_id": "k", "trial_id": "other", "ts_finished": "2024-03-01T02:10:00Z",
             "ts_exception": "2024-03-01T10:05:00"},
        ]
    )  # fmt: skip
    assert trial_zones(raw, ["j"]) == {"narrow": "+08:00", "anchored": "+08:00", "utc": "UTC"}
    assert trial_zones(raw, []) == {}
    assert trial_zones(raw.drop("ts_agent_end"), ["j"]) == {}


def _recs(*pairs: tuple[str, str]) -> list[dict]:
    return [{"job_id": j, "job_dir": d} for j, d in pairs]


def test_sibling_zones_pins_from_the_same_run_folder() -> None:
    recs = _recs(("a", "/runs/x/a"), ("b", "/runs/x/b/"), ("c", "/runs/y/c"), ("d", "/runs/x/d"))
    zones = {"a": "+08:00", "b": "UTC", "c": "UTC", "d": "+08:00"}
    note = {
        "a": "+08:00 (inferred)",
        "b": "UTC (local; could not infer)",
        "c": "UTC (local)",
        "d": "+08:00 (inferred)",
    }
    sibling_zones(recs, zones, note, ["b", "c"])
    assert zones == {"a": "+08:00", "b": "+08:00", "c": "UTC", "d": "+08:00"}
    assert note["b"] == "+08:00 (inferred from sibling jobs)"
    assert note["c"] == "UTC (local)"  # no pinned sibling in /runs/y


def test_sibling_zones_disagreeing_or_unpinned_siblings_pin_nothing() -> None:
    recs = _recs(("a", "/r/a"), ("b", "/r/b"), ("c", "/r/c"), ("g", "/s/g"), ("h", "/s/h"))
    zones = {"a": "+08:00", "b": "+09:00", "c": "UTC", "g": "+02:00", "h": "UTC"}
    note = {
        "a": "+08:00 (inferred)",
        "b": "+09:00 (inferred)",
        "c": "UTC (local; could not infer)",
        "g": "+02:00 (given)",  # given, not inferred: does not count
        "h": "UTC (local)",
    }
    before = (dict(zones), dict(note))
    sibling_zones(recs, zones, note, ["c", "h"])
    assert (zones, note) == before


def test_depends_on_other_jobs() -> None:
    assert depends_on_other_jobs(f"-05:00 {SIBLING_NOTE}") is True
    assert depends_on_other_jobs("UTC (local; could not infer)") is True
    assert depends_on_other_jobs("+08:00 (inferred)") is False
    assert depends_on_other_jobs("UTC (local)") is False
    assert depends_on_other_jobs("UTC (given)") is False
    assert depends_on_other_jobs(None) is False


def test_naive_epoch() -> None:
    assert _naive_epoch("2024-01-01T00:00:00") == 1704067200.0
    assert _naive_epoch(" 2024-01-01 00:00:01.5 ") == 1704067201.5
    assert _naive_epoch("2024-01-01T00:00:00Z") is None  # aware
    assert _naive_epoch("2024-01-01T00:00:00+08:00") is None
    assert _naive_epoch("yesterday") is None
    assert _naive_epoch("") is None and _naive_epoch(None) is None
