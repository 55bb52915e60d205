"""evalkit.load.trials.assemble: derived trial rows per job, reused from the cache by key.

``assemble`` turns the plans of ``trials/table.py`` into the derived rows of every job (in
job order, trial_dir order within a job, the user's label last), choosing each job's zone
for naive timestamps, and writes the cache of each job it derived. Derived rows are reused
only with the same *derivation key* (``derive_key``: the rule sources' hash, the outcome
rule, the zone policy, and for 'auto' the machine's zone), and a job that gained trials
derives only its new rows. ``load_key`` names a whole-load result when every job is cached
and complete. Checked here on small job folders built in tmp_path; ``derive`` itself is
covered by ``tests/load/trials/test_derive.py``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from evalkit.load import api
from evalkit.load.discover import discover
from evalkit.load.shared import cache as cache_mod
from evalkit.load.trials import assemble as asm
from evalkit.load.trials import table
from evalkit.load.trials.assemble import (
    RULE_SOURCES,
    _in_job_order,
    _label_last,
    assemble,
    derive_key,
    empty_raw,
    load_key,
)
from evalkit.load.trials.extract import RAW_SCHEMA
from evalkit.load.trials.table import JobTrials, extract_all
from tests.load.factory import job, trial_result


@pytest.fixture()
def runs_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two finished jobs: 'a' with two trials, 'b' with one (aware UTC times)."""
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "runs"
    job(root, "a", [trial_result("t1", f"t1__{i:07d}", rewards={"reward": float(i)}) for i in (1, 0)])  # fmt: skip
    job(root, "b", [trial_result("t2", "t2__0000000", rewards={"reward": 0.5})])
    return root


def _prepare(paths: Any, *, cache: bool) -> tuple[list[JobTrials], list[dict]]:
    """Plans and job records of a load, extracted (what ``load/api.py`` does first)."""
    found = discover(paths)
    recs = api._job_records(found.jobs, [])
    plans = api.job_plans(recs, cache=cache)
    extract_all(plans, progress=False, cache=cache)
    return plans, recs


def _spy_derive(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the number of rows each derive() call is given."""
    heights: list[int] = []
    real = asm.derive

    def spy(raw: pl.DataFrame, zones: list[str], outcome_rule: str = "goose") -> pl.DataFrame:
        heights.append(raw.height)
        return real(raw, zones, outcome_rule)

    monkeypatch.setattr(asm, "derive", spy)
    return heights


def _load(paths: Any, *, cache: bool = True, policy: str = "UTC", rule: str = "goose"):
    plans, recs = _prepare(paths, cache=cache)
    frame, notes = assemble(plans, recs, policy, rule, cache=cache)
    return frame, notes, plans, recs


# -- keys --------------------------------------------------------------------------------


def test_derive_key_names_the_rules_the_outcome_rule_and_the_policy() -> None:
    k = derive_key("UTC", "goose").split("|")
    assert len(k) == 3 and k[1:] == ["goose", "UTC"] and len(k[0]) == 16  # 8-byte hex hash
    assert derive_key("UTC", "strict") != derive_key("UTC", "goose")
    assert derive_key("+02:00", "goose") != derive_key("UTC", "goose")
    # 'auto' falls back to the machine's zone: its name and current offset join the key
    assert len(derive_key("auto", "goose").split("|")) == 5


def test_derive_key_is_empty_without_rule_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(asm, "_rules_hash", lambda sources=RULE_SOURCES: "")
    assert derive_key("UTC", "goose") == ""


def test_the_rules_hash_changes_with_any_byte_of_a_rule_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for rel in RULE_SOURCES:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(asm._LOAD / rel, tmp_path / rel)
    monkeypatch.setattr(asm, "_LOAD", tmp_path)
    plain = asm._rules_hash.__wrapped__(RULE_SOURCES)
    assert plain == asm._rules_hash.__wrapped__(RULE_SOURCES)  # deterministic
    with open(tmp_path / "outcomes.py", "a") as fh:
        fh.write("\n# a comment\n")
    assert asm._rules_hash.__wrapped__(RULE_SOURCES) not in ("", plain)
    (tmp_path / "jobs" / "zones.py").unlink()  # a zipped install: never reuse
    assert asm._rules_hash.__wrapped__(RULE_SOURCES) == ""


# -- frame helpers -----------------------------------------------------------------------


def test_empty_raw_has_the_raw_and_per_job_columns() -> None:
    df = empty_raw()
    assert df.height == 0
    assert list(df.columns) == [*RAW_SCHEMA, "trial_id", "_sig", "job_id", "job_name", "__label", "__dataset"]  # fmt: skip


def test_label_last_sets_this_loads_label_and_dataset_and_moves_the_label_last() -> None:
    df = pl.DataFrame({"__label": ["old"], "x": [1], "__dataset": ["d0"]})
    out = _label_last(df, {"_label": "mine", "dataset": "ds@1"})
    assert out.columns == ["x", "__dataset", "__label"]
    assert out.row(0) == (1, "ds@1", "mine")
    assert _label_last(df, {"_label": None, "dataset": None}).row(0) == (1, None, None)


def test_no_jobs_give_a_zero_row_frame_of_the_derived_columns() -> None:
    out = _in_job_order({}, "goose")
    assert out.height == 0
    for c in ("outcome", "started_at", "error_kind", "reward"):
        assert c in out.columns


# -- assemble ----------------------------------------------------------------------------


def test_rows_come_in_job_order_then_trial_dir_order_with_the_label_last(runs_dir: Path) -> None:
    frame, notes, _, recs = _load([runs_dir / "b", runs_dir / "a"], cache=False)
    assert frame["job_name"].to_list() == ["b", "a", "a"]
    assert frame["trial_name"].to_list() == ["t2__0000000", "t1__0000000", "t1__0000001"]
    assert frame.columns[-1] == "__label"
    # policy given: every job's note says so
    assert notes == {r["job_id"]: "UTC (given)" for r in recs}
    # the reward of t1__0000001 was 1.0 (written above); derived columns are present
    assert frame["reward"].to_list() == [0.5, 0.0, 1.0]
    assert frame["outcome"].to_list() == ["partial", "fail", "pass"]


def test_a_mapping_label_is_the_label_of_its_jobs(runs_dir: Path) -> None:
    frame, _, _, _ = _load({"base": runs_dir / "a", "cand": runs_dir / "b"}, cache=False)
    assert dict(frame.select("job_name", "__label").unique().iter_rows()) == {
        "a": "base",
        "b": "cand",
    }


def test_a_second_assemble_with_the_same_key_derives_nothing(
    runs_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, notes, _, _ = _load(runs_dir)
    heights = _spy_derive(monkeypatch)
    plans, recs = _prepare(runs_dir, cache=True)
    assert all(p.from_cache for p in plans)
    again, notes2 = assemble(plans, recs, "UTC", "goose", cache=True)
    assert heights == []
    assert notes2 == notes
    assert_frame_equal(again, first)


def test_other_options_derive_a_fast_path_job_again_but_keep_its_table(
    runs_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _load(runs_dir)
    meta_before = cache_mod.read_meta(str(runs_dir / "a"), "trials", table.EXTRACT_VERSION)
    heights = _spy_derive(monkeypatch)
    plans, recs = _prepare(runs_dir, cache=True)
    frame, _ = assemble(plans, recs, "UTC", "strict", cache=True)
    assert sum(heights) == 3  # every row derived again with the other rule
    assert frame.height == 3
    meta_after = cache_mod.read_meta(str(runs_dir / "a"), "trials", table.EXTRACT_VERSION)
    assert meta_after["generation"] == meta_before["generation"]  # not rewritten
    assert meta_after["derive"] == derive_key("UTC", "goose")


def test_a_job_that_gained_a_trial_derives_only_the_new_row(
    runs_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _load(runs_dir)
    job(runs_dir, "a", [trial_result("t1", "t1__0000002", rewards={"reward": 1.0})])
    heights = _spy_derive(monkeypatch)
    frame, _, plans, _ = _load(runs_dir)
    a = next(p for p in plans if p.job_dir.endswith("/a"))
    assert len(a.todo) == 1  # the new trial
    assert heights == [1]  # job b is reused whole, job a keeps its two derived rows
    assert frame.filter(pl.col("job_name") == "a")["trial_name"].to_list() == [
        "t1__0000000",
        "t1__0000001",
        "t1__0000002",
    ]
    cold, _, _, _ = _load(runs_dir, cache=False)
    assert_frame_equal(frame.drop("_sig"), cold.drop("_sig"))  # a cold load signs nothing


def test_saved_rows_carry_the_derive_key_and_the_zone_but_not_the_label(runs_dir: Path) -> None:
    _load({"lab": runs_dir / "a"}, policy="+02:00")
    m = cache_mod.read_meta(str(runs_dir / "a"), "trials", table.EXTRACT_VERSION)
    assert m["derive"] == derive_key("+02:00", "goose")
    assert (m["zone"], m["zone_note"]) == ("+02:00", "+02:00 (given)")
    cached = cache_mod.read_rows(str(runs_dir / "a"), "trials")
    assert "__label" not in cached.columns and "outcome" in cached.columns


def test_a_zone_that_came_from_sibling_jobs_is_chosen_again(
    runs_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _load(runs_dir)
    plans, recs = _prepare(runs_dir, cache=True)
    for p in plans:  # as if the cached zone had been inferred from the other jobs
        p.meta = {**p.meta, "zone_note": "UTC (inferred from sibling jobs)"}
    heights = _spy_derive(monkeypatch)
    assemble(plans, recs, "UTC", "goose", cache=True)
    assert sum(heights) == 3


def test_a_load_of_some_trials_only_keeps_those_rows_and_writes_no_cache(
    runs_dir: Path,
) -> None:
    trial = runs_dir / "a" / "t1__0000001"
    frame, _, _, _ = _load(trial)
    assert frame["trial_dir"].to_list() == [str(trial)]
    assert cache_mod.read_meta(str(runs_dir / "a"), "trials", table.EXTRACT_VERSION) is None


# -- load_key ----------------------------------------------------------------------------


def test_load_key_names_cached_complete_jobs_with_the_same_options(runs_dir: Path) -> None:
    _load(runs_dir)
    plans, recs = _prepare(runs_dir, cache=True)
    key = derive_key("UTC", "goose")
    k = load_key(plans, recs, key, None)
    assert k is not None and len(k) == 24
    assert load_key(plans, recs, key, None) == k
    assert load_key(plans, recs, key, "job") not in (None, k)
    # a mapping run option: its order does not matter, its values do
    m1 = load_key(plans, recs, key, {"a": "x", "b": "y"})
    assert m1 == load_key(plans, recs, key, {"b": "y", "a": "x"})
    assert m1 != load_key(plans, recs, key, {"a": "x", "b": "z"})
    assert load_key(plans, recs, derive_key("UTC", "strict"), None) != k
    relabelled = [{**r, "_label": "other"} for r in recs]
    assert load_key(plans, relabelled, key, None) != k


def test_load_key_is_none_when_the_result_cannot_be_reused(runs_dir: Path) -> None:
    _load(runs_dir)
    plans, recs = _prepare(runs_dir, cache=True)
    key = derive_key("UTC", "goose")
    assert load_key(plans, recs, "", None) is None  # no derivation key
    assert load_key([], [], key, None) is None
    assert load_key(plans, recs, key, lambda cfg: "x") is None  # a callable cannot be keyed
    assert load_key(plans, recs, key, 3) is None
    plans[0].complete = False
    assert load_key(plans, recs, key, None) is None  # a running job
    plans[0].complete = True
    plans[0].job_sig = "changed"
    assert load_key(plans, recs, key, None) is None
    plans[0].job_sig = plans[0].meta["job_sig"]
    plans[1].meta = {}  # never cached: no generation
    assert load_key(plans, recs, key, None) is None


def test_load_key_is_none_for_a_load_of_some_trials(runs_dir: Path) -> None:
    _load(runs_dir)
    plans, recs = _prepare(runs_dir / "a" / "t1__0000000", cache=True)
    assert recs[0]["_ref"].only is not None
    assert load_key(plans, recs, derive_key("UTC", "goose"), None) is None
