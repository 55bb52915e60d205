"""evalkit.load.trials.table: trial signatures, the per-job cache plan, extraction, saving.

``trial_sig`` signs a trial's inputs (the folder, result.json, analysis.json, verifier/,
agent/, each as 'size:mtime_ns:ctime_ns' or '-'); ``finished_sig`` signs what can change
once a trial has finished (its first three parts). ``plan_job`` decides, from a job's
cached table, which trials to re-extract: none on the fast path (a complete job whose
finished signatures all match, compared as one digest), otherwise only trials whose
signature changed and new folders. ``extract_all`` fills ``new`` (raw records, load errors
tagged with the job id; a reader crash is an 'extract_failed' error, never a failed load)
and ``save_job`` writes the rows with a meta that the next ``plan_job`` reads.

Checked here directly, on small trial folders in tmp_path (the end-to-end reuse through
``evalkit.load`` is in ``tests/load/test_cache_and_runs.py`` and ``test_speed_paths.py``).
"""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import pytest

from evalkit.load.errors import LoadError
from evalkit.load.shared import cache as cache_mod
from evalkit.load.trials import table
from evalkit.load.trials.extract import RAW_SCHEMA
from evalkit.load.trials.table import (
    JobTrials,
    _analysed,
    _errors_from_meta,
    _errors_to_meta,
    _raw_frame,
    _rewards_column,
    extract_all,
    finished_part,
    finished_sig,
    job_sig,
    plan_job,
    rows,
    save_job,
    trial_sig,
    trials_digest,
)
from tests.load.factory import job, trial_result


def _st(path: Path) -> str:
    """'size:mtime_ns:ctime_ns' of a path, as the module docstring defines a signature."""
    st = os.stat(path)
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


@pytest.fixture()
def jd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A finished job of three trials (t__0000000 has a broken result.json)."""
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    trials = [trial_result("t", f"t__{i:07d}", rewards={"reward": float(i)}) for i in range(3)]
    d = job(tmp_path / "runs", "j", trials)
    (d / "t__0000000" / "result.json").write_text("{broken")
    return d


def _dirs(jd: Path) -> list[str]:
    return sorted(str(p) for p in jd.iterdir() if p.is_dir())


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = table.extract_trial

    def spy(d: str, tid: str):
        seen.append(os.path.basename(d))
        return real(d, tid)

    monkeypatch.setattr(table, "extract_trial", spy)
    return seen


def _cycle(jd: Path, *, complete: bool = True) -> JobTrials:
    """One load of the job's trial rows: plan, extract, save (raw rows stand for derived)."""
    p = plan_job(str(jd), "JOB", _dirs(jd), cache=True, job_complete=complete)
    extract_all([p], progress=False)
    kept = rows(p)
    parts = [f for f in (kept, p.new) if f is not None and f.height]
    frame = pl.concat([f.select(p.new.columns if p.new is not None else f.columns) for f in parts])
    save_job(p, frame.sort("trial_dir"), {"derive": "k"})
    return p


# -- signatures --------------------------------------------------------------------------


def test_trial_sig_signs_the_folder_result_analysis_verifier_and_agent(tmp_path: Path) -> None:
    td = tmp_path / "t__1"
    (td / "verifier").mkdir(parents=True)
    (td / "result.json").write_text("{}")
    parts = trial_sig(str(td)).split("|")
    # folder, result.json, analysis.json (missing), verifier/, agent/ (missing)
    assert parts == [_st(td), _st(td / "result.json"), "-", _st(td / "verifier"), "-"]
    assert trial_sig(str(td) + "/") == trial_sig(str(td))  # a trailing '/' changes nothing
    assert trial_sig(str(tmp_path / "nowhere")) == "-|-|-|-|-"


def test_finished_sig_looks_at_analysis_json_only_for_an_analysed_trial(tmp_path: Path) -> None:
    td = tmp_path / "t__1"
    td.mkdir()
    (td / "result.json").write_text("{}")
    (td / "analysis.json").write_text("{}")
    head = f"{_st(td)}|{_st(td / 'result.json')}"
    assert finished_sig(str(td), analysed=False) == f"{head}|-"
    assert finished_sig(str(td), analysed=True) == f"{head}|{_st(td / 'analysis.json')}"
    # the finished part of the whole signature is the same text
    assert finished_part(trial_sig(str(td))) == finished_sig(str(td), analysed=True)


@pytest.mark.parametrize(
    ("sig", "expected"),
    [
        ("1:2:3|4:5:6|-|7:8:9|-", False),  # third part '-': no analysis.json
        ("1:2:3|4:5:6|9:9:9|-|-", True),
        ("1:2:3|4:5:6", False),  # too short to tell
    ],
)
def test_analysed_reads_the_analysis_part_of_a_signature(sig: str, expected: bool) -> None:
    assert _analysed(sig) is expected


def test_finished_part_keeps_the_first_three_parts() -> None:
    assert finished_part("a|b|c|d|e") == "a|b|c"
    assert finished_part("a|b") == "a|b"


def test_trials_digest_ignores_key_order_and_sees_any_change() -> None:
    a = trials_digest({"/j/t1": "s1", "/j/t2": "s2"})
    assert a == trials_digest({"/j/t2": "s2", "/j/t1": "s1"})
    assert a != trials_digest({"/j/t1": "s1", "/j/t2": "s2x"})
    assert a != trials_digest({"/j/t1": "s2", "/j/t2": "s1"})  # signatures swapped
    assert len(a) == 24 and int(a, 16) >= 0  # blake2b, 12 bytes, hex


def test_job_sig_signs_the_job_folder_and_its_two_documents(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    assert job_sig(str(tmp_path)) == f"{_st(tmp_path)}|-|{_st(tmp_path / 'config.json')}"


# -- frames and meta ---------------------------------------------------------------------


def test_rewards_column_keeps_each_rows_items_and_gives_empty_lists_for_none() -> None:
    col = (
        [{"name": "reward", "value": 1.0}, {"name": "acc", "value": 0.5}],
        None,
        [],
        [{"name": "reward", "value": 0.0}],
    )
    s = _rewards_column(col)
    assert s.dtype == RAW_SCHEMA["rewards"]
    assert s.to_list() == [
        [{"name": "reward", "value": 1.0}, {"name": "acc", "value": 0.5}],
        [],
        [],
        [{"name": "reward", "value": 0.0}],
    ]
    assert _rewards_column(()).len() == 0


def test_raw_frame_of_no_rows_has_every_raw_column_and_the_ids() -> None:
    df = _raw_frame([], [], [])
    assert df.height == 0
    assert df.schema == pl.Schema({**RAW_SCHEMA, "trial_id": pl.String, "_sig": pl.String})


def test_load_errors_survive_the_meta_round_trip() -> None:
    errs = [
        LoadError("/p", "trial", "json_decode", "bad", "J", "T"),
        LoadError("/q", "file", "non_numeric_reward", "x", None, None),
    ]
    assert _errors_from_meta(_errors_to_meta(errs)) == errs


# -- extraction --------------------------------------------------------------------------


def test_extract_all_tags_errors_with_the_job_and_signs_each_trial(jd: Path) -> None:
    dirs = _dirs(jd)
    p = plan_job(str(jd), "JOB", dirs, cache=False, job_complete=True)
    assert [t[2] for t in p.todo] == ["", "", ""]  # no signature taken by the plan
    assert [t[1] for t in p.todo] == [cache_mod.path_key(d, resolved=True) for d in dirs]
    extract_all([p], progress=False, cache=True)
    assert p.new is not None and p.new["trial_dir"].to_list() == dirs
    assert p.new["trial_id"].to_list() == [t[1] for t in p.todo]
    assert p.new["_sig"].to_list() == [trial_sig(d) for d in dirs]
    assert p.new["reward"].to_list() == [None, 1.0, 2.0]  # t__0000000 is broken
    assert [(e.error_type, e.job_id, e.trial_id) for e in p.errors] == [
        ("json_decode", "JOB", p.todo[0][1])
    ]


def test_without_cache_the_extraction_signs_nothing(jd: Path) -> None:
    p = plan_job(str(jd), "JOB", _dirs(jd), cache=False, job_complete=True)
    extract_all([p], progress=False, cache=False)
    assert p.new["_sig"].to_list() == ["", "", ""]


def test_a_reader_crash_is_an_extract_failed_error_and_a_row_of_nulls(
    jd: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = table.extract_trial

    def flaky(d: str, tid: str):
        if d.endswith("t__0000001"):
            raise RuntimeError("reader bug")
        return real(d, tid)

    monkeypatch.setattr(table, "extract_trial", flaky)
    p = plan_job(str(jd), "JOB", _dirs(jd), cache=False, job_complete=True)
    extract_all([p], progress=False)
    row = p.new.filter(pl.col("trial_dir").str.ends_with("t__0000001"))
    assert row["trial_name"].item() is None and row["rewards"].item().to_list() == []
    crash = [e for e in p.errors if e.error_type == "extract_failed"]
    assert len(crash) == 1 and crash[0].message == "RuntimeError: reader bug"
    assert crash[0].job_id == "JOB" and crash[0].level == "trial"
    assert p.new.height == 3  # the other trials are still there


def test_small_blocks_give_the_same_rows(jd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = plan_job(str(jd), "JOB", _dirs(jd), cache=False, job_complete=True)
    extract_all([p], progress=False)
    monkeypatch.setattr(table, "BLOCK", 2)  # blocks of 2 + 1 trials
    q = plan_job(str(jd), "JOB", _dirs(jd), cache=False, job_complete=True)
    extract_all([q], progress=False)
    assert q.new.equals(p.new) and q.errors == p.errors


# -- the cache plan ----------------------------------------------------------------------


def test_a_complete_unchanged_job_is_reused_whole_without_extracting(
    jd: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _cycle(jd)
    seen = _spy(monkeypatch)
    p = plan_job(str(jd), "JOB", _dirs(jd), cache=True, job_complete=True)
    assert p.from_cache and p.todo == [] and p.frame is None  # rows not read yet
    assert [e.error_type for e in p.errors] == ["json_decode"]  # from the meta
    got = rows(p)
    assert got is not None and got.height == 3 and "_gen" not in got.columns
    assert got["reward"].to_list() == first.new["reward"].to_list()
    assert seen == []


def test_a_trial_edited_in_place_in_a_complete_job_is_extracted_again(
    jd: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _cycle(jd)
    res = jd / "t__0000002" / "result.json"
    st = os.stat(res)
    with open(res, "r+b") as fh:  # in place, same size, mtime restored: only ctime differs
        data = fh.read()
        fh.seek(0)
        fh.write(data.replace(b'"reward": 2.0', b'"reward": 3.0'))
    os.utime(res, ns=(st.st_atime_ns, st.st_mtime_ns))
    seen = _spy(monkeypatch)
    p = plan_job(str(jd), "JOB", _dirs(jd), cache=True, job_complete=True)
    assert not p.from_cache
    assert [os.path.basename(t[0]) for t in p.todo] == ["t__0000002"]
    assert p.todo[0][2] == trial_sig(str(jd / "t__0000002"))  # signed by the plan
    assert sorted(p.frame["trial_dir"].str.split("/").list.last().to_list()) == [
        "t__0000000",
        "t__0000001",
    ]
    extract_all([p], progress=False)
    assert seen == ["t__0000002"] and p.new["reward"].to_list() == [3.0]


def test_a_running_job_keeps_unchanged_trials_and_extracts_new_and_changed_ones(
    jd: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _cycle(jd, complete=False)
    job(jd.parent, "j", [trial_result("t", "t__0000009", rewards={"reward": 1.0})])  # new trial
    (jd / "t__0000000" / "result.json").write_text("{}")  # the broken one is rewritten
    seen = _spy(monkeypatch)
    p = plan_job(str(jd), "JOB", _dirs(jd), cache=True, job_complete=False)
    assert not p.from_cache
    assert sorted(os.path.basename(t[0]) for t in p.todo) == ["t__0000000", "t__0000009"]
    # the cached error was about the re-extracted trial: it is not kept
    assert p.errors == []
    extract_all([p], progress=False)
    assert sorted(seen) == ["t__0000000", "t__0000009"] and p.errors == []


def test_a_job_that_was_running_when_cached_is_never_reused_whole(
    jd: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _cycle(jd, complete=False)
    p = plan_job(str(jd), "JOB", _dirs(jd), cache=True, job_complete=True)
    assert not p.from_cache and p.todo == []  # each trial checked, all kept
    assert p.frame.height == 3
    assert [e.error_type for e in p.errors] == ["json_decode"]  # kept with its trial


def test_a_removed_trial_folder_drops_its_cached_row(jd: Path) -> None:
    _cycle(jd, complete=False)
    dirs = [d for d in _dirs(jd) if not d.endswith("t__0000001")]
    p = plan_job(str(jd), "JOB", dirs, cache=True, job_complete=False)
    assert p.todo == [] and p.frame["trial_dir"].to_list() == dirs


def test_cached_rows_of_another_generation_are_not_paired_with_the_meta(jd: Path) -> None:
    _cycle(jd, complete=False)
    meta = cache_mod.read_meta(str(jd), "trials", table.EXTRACT_VERSION)
    df = cache_mod.read_rows(str(jd), "trials")
    other = df.with_columns(pl.lit("another-write", pl.String).alias("_gen"))
    cache_mod.write_table(str(jd), "trials", table.EXTRACT_VERSION, other, meta)
    p = plan_job(str(jd), "JOB", _dirs(jd), cache=True, job_complete=False)
    assert p.frame is None and p.meta == {}
    assert [t[2] for t in p.todo] == ["", "", ""]  # a cold plan: everything extracted


def test_a_fast_path_whose_rows_vanished_asks_to_plan_again(jd: Path) -> None:
    _cycle(jd)
    p = plan_job(str(jd), "JOB", _dirs(jd), cache=True, job_complete=True)
    assert p.from_cache
    (cache_mod.job_cache_dir(jd) / "trials.parquet").unlink()
    assert rows(p) is None and p.from_cache is False


def test_a_stale_extract_version_ignores_the_cache(
    jd: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _cycle(jd)
    monkeypatch.setattr(table, "EXTRACT_VERSION", "trials-older")
    p = plan_job(str(jd), "JOB", _dirs(jd), cache=True, job_complete=True)
    assert not p.from_cache and len(p.todo) == 3 and p.frame is None


def test_save_job_meta_records_the_analysed_trials_and_the_options(jd: Path) -> None:
    (jd / "t__0000001" / "analysis.json").write_text('{"summary": "s"}')
    p = _cycle(jd)
    m = cache_mod.read_meta(str(jd), "trials", table.EXTRACT_VERSION)
    assert m["analysed"] == [str(jd / "t__0000001")]
    assert m["derive"] == "k" and m["complete"] is True and m["job_sig"] == job_sig(str(jd))
    assert m["generation"] == p.meta["generation"] and len(m["generation"]) == 32
    assert [r[2] for r in m["errors"]] == ["json_decode"] and m["errors"][0][4] == "JOB"
    # the analysed trial is signed with its analysis.json: rewriting it leaves the fast path
    q = plan_job(str(jd), "JOB", _dirs(jd), cache=True, job_complete=True)
    assert q.from_cache
    (jd / "t__0000001" / "analysis.json").write_text('{"summary": "second look"}')
    q = plan_job(str(jd), "JOB", _dirs(jd), cache=True, job_complete=True)
    assert not q.from_cache and [os.path.basename(t[0]) for t in q.todo] == ["t__0000001"]
