"""steps/table.py: every trial's trajectories -> steps / tool_calls / trial_summary.

Checked at the level of the module's own functions, on folders built in tmp_path: the
trial signature and listing (``probe``, ``trial_signature``, ``_listing``), the byte
estimate that picks serial or a process pool (``_estimated_bytes``), which trials rows are
parsed (``_harbor_trials``, ``_trial_rows``), the worker (``_parse_chunk``: folders with
nothing are not parsed; ``_index_row``), the block-wise raw frames (``_RawFrames``), the
finished-job fast path (``_unchanged_finished``) and, through ``build_trajectories``, that a
job marked finished is reused whole next time until its folder signature changes.
"""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import pytest

from evalkit.load.shared.cache import stat_sig
from evalkit.load.steps import job_cache, table
from evalkit.load.steps.columns import CALL_FIELDS, STEP_FIELDS
from evalkit.load.steps.extract import Listing, TrialParse
from evalkit.load.steps.table import (
    INDEX_FIELDS,
    _estimated_bytes,
    _harbor_trials,
    _index_row,
    _listing,
    _parse_chunk,
    _RawFrames,
    _trial_rows,
    _unchanged_finished,
    build_trajectories,
    probe,
    trial_signature,
)
from tests.load.steps.steps_helpers import atif_doc, trials_frame, write_json


def _doc(*msgs: str) -> dict:
    return atif_doc(
        [{"step_id": i + 1, "source": "agent", "message": m} for i, m in enumerate(msgs)]
    )


# --- probe / trial_signature / _listing -----------------------------------------------


def test_signature_names_every_agent_file_with_its_stat(tmp_path):
    a = write_json(tmp_path / "agent" / "trajectory.json", _doc("m"))
    b = tmp_path / "agent" / "goose.txt"
    b.write_bytes(b"12345")
    s = write_json(tmp_path / "steps" / "s1" / "agent" / "trajectory.json", _doc("x"))
    (tmp_path / "agent" / "sub").mkdir()  # folders are listed, not signed
    (tmp_path / "verifier").mkdir()
    (tmp_path / "verifier" / "reward.txt").write_text("1")  # outside agent/: not signed
    sig, total, listing = probe(str(tmp_path), sign=True)
    want = sorted(
        [
            f"trajectory.json:{stat_sig(a.stat())}",
            f"goose.txt:{stat_sig(b.stat())}",
            f"s1/trajectory.json:{stat_sig(s.stat())}",
        ]
    )
    assert sig == "|".join(want)
    assert total == a.stat().st_size + 5 + s.stat().st_size
    assert listing == Listing(frozenset({"trajectory.json", "goose.txt", "sub"}), True)
    assert trial_signature(str(tmp_path)) == (sig, total)


def test_signature_changes_when_a_file_is_rewritten(tmp_path):
    p = write_json(tmp_path / "agent" / "trajectory.json", _doc("m"))
    before, _ = trial_signature(str(tmp_path))
    p.write_bytes(p.read_bytes() + b" ")
    assert trial_signature(str(tmp_path))[0] != before


def test_a_folder_without_agent_files_signs_as_a_dash(tmp_path):
    (tmp_path / "verifier").mkdir()
    assert probe(str(tmp_path), sign=True) == ("-", 0, Listing(frozenset(), False))
    # agent/ is a file: unknown, looked into later
    (tmp_path / "agent").write_text("x")
    assert probe(str(tmp_path), sign=True)[2] == Listing(None, False)


def test_unsigned_probe_only_lists(tmp_path):
    write_json(tmp_path / "agent" / "trajectory.json", _doc("m"))
    assert probe(str(tmp_path), sign=False) == (
        "-",
        -1,
        Listing(frozenset({"trajectory.json"}), False),
    )


@pytest.mark.parametrize(
    ("layout", "expected"),
    [
        ({}, Listing(frozenset(), False)),  # an empty trial folder
        ({"verifier/reward.txt": "1"}, Listing(frozenset(), False)),
        ({"steps/s/agent/trajectory.json": "{}"}, Listing(frozenset(), True)),
        (
            {"agent/a.txt": "x", "agent/b.json": "{}"},
            Listing(frozenset({"a.txt", "b.json"}), False),
        ),
        ({"agent": "a file"}, Listing(None, False)),
    ],
)
def test_listing_tells_what_a_trial_folder_holds(tmp_path, layout, expected):
    tmp_path.joinpath("t").mkdir()
    for rel, text in layout.items():
        p = tmp_path / "t" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    assert _listing(str(tmp_path / "t")) == (-1, expected)


def test_listing_of_a_missing_or_unreadable_trial_folder(tmp_path):
    assert _listing(str(tmp_path / "gone")) == (-1, Listing(frozenset(), False))
    f = tmp_path / "file"
    f.write_text("x")
    assert _listing(str(f)) == (-1, Listing(None, None))  # not a folder: unknown


# --- _estimated_bytes -----------------------------------------------------------------


def _work(tmp_path: Path, sizes: list[int | None], listing: Listing | None = None) -> list[tuple]:
    out = []
    for i, n in enumerate(sizes):
        td = tmp_path / f"t{i}"
        (td / "agent").mkdir(parents=True)
        if n is not None:
            (td / "agent" / "trajectory.json").write_bytes(b"x" * n)
        agent = frozenset({"trajectory.json"}) if n is not None else frozenset()
        out.append((f"t{i}", str(td), "j", None, "-", listing or Listing(agent, False)))
    return out


def test_estimated_bytes_is_the_mean_size_times_the_trials_that_may_hold_one(tmp_path):
    # t2 lists no trajectory.json: not counted; (100 + 300) / 2 * 2 = 400
    assert _estimated_bytes(_work(tmp_path, [100, 300, None])) == 400
    assert _estimated_bytes([]) == 0


def test_estimated_bytes_samples_evenly_spaced_trials(tmp_path, monkeypatch):
    monkeypatch.setattr(table, "SIZE_SAMPLE", 2)
    # 4 items, sample of 2: step 4 // 2 = 2 -> items 0 and 2 (10 and 30); 40 * 4 // 2 = 80
    assert _estimated_bytes(_work(tmp_path, [10, 20, 30, 40])) == 80


def test_estimated_bytes_counts_an_unknown_listing_and_a_missing_file_as_zero(tmp_path):
    work = _work(tmp_path, [50, None], listing=Listing(None, None))
    # both may hold one (unknown listing); sizes 50 and 0 -> 50 * 2 // 2 = 50
    assert _estimated_bytes(work) == 50


# --- which trials are parsed ----------------------------------------------------------


def test_harbor_trials_keep_harbor_rows_with_a_folder_once():
    trials = pl.DataFrame(
        {
            "trial_id": ["a", "b", "c", "d", "a", "e"],
            "trial_dir": ["/a", "/b", None, "/d", "/a2", "/e"],
            "source_format": ["harbor", None, "harbor", "go-code", "harbor", "harbor"],
        }
    )
    got = _harbor_trials(trials)
    # c: no folder; d: go-code; the second 'a' row: a repeat
    assert got.select("trial_id", "trial_dir").rows() == [("a", "/a"), ("b", "/b"), ("e", "/e")]


def test_harbor_trials_without_source_format_keep_every_row_with_a_folder():
    trials = pl.DataFrame({"trial_id": ["a", "b"], "trial_dir": ["/a", None]})
    assert _harbor_trials(trials)["trial_id"].to_list() == ["a"]
    all_null = pl.DataFrame(
        {"trial_id": ["a"], "trial_dir": ["/a"], "source_format": [None]},
        schema={"trial_id": pl.String, "trial_dir": pl.String, "source_format": pl.String},
    )
    assert _harbor_trials(all_null)["trial_id"].to_list() == ["a"]


def test_trial_rows_fill_absent_columns_and_group_by_job_folder():
    t = pl.DataFrame(
        {
            "trial_id": ["a", "b", "c"],
            "trial_dir": ["/j/a", "/k/b", "/j/c"],
            "job_dir": ["/j", None, "/j"],
        }
    )
    rows, by_job = _trial_rows(t)
    assert rows == [
        ("a", "/j/a", None, "/j", None),
        ("b", "/k/b", None, None, None),
        ("c", "/j/c", None, "/j", None),
    ]
    assert by_job == {"/j": [0, 2], "": [1]}


# --- the worker -----------------------------------------------------------------------


def test_parse_chunk_skips_folders_that_hold_nothing(tmp_path, monkeypatch):
    parsed: list[str] = []
    real = table.parse_trial
    monkeypatch.setattr(
        table, "parse_trial", lambda tid, *a, **k: parsed.append(tid) or real(tid, *a, **k)
    )
    write_json(tmp_path / "full" / "agent" / "trajectory.json", _doc("a", "b"))
    items = [
        (
            "full",
            str(tmp_path / "full"),
            "j",
            None,
            "sig1",
            Listing(frozenset({"trajectory.json"}), False),
        ),
        ("none", str(tmp_path / "none"), "j", None, "-", Listing(frozenset(), False)),
    ]
    steps, calls, idx, errors = _parse_chunk(items)
    assert parsed == ["full"]
    assert steps["trial_id"] == ["full", "full"] and calls == [] and errors == []
    assert set(steps) == set(STEP_FIELDS)
    # 'none' has an index row: signed, nothing read (has_data False, counts null)
    assert idx["trial_id"] == ("full", "none") and idx["sig"] == ("sig1", "-")
    assert idx["has_data"] == (True, False) and idx["n_steps"] == (2, None)


def test_index_row_holds_counts_and_final_metrics_totals():
    tp = TrialParse("t", has_trajectory=True, n_steps=3, n_tool_calls=2, n_turns=3)
    tp.final_metrics = [({"total_prompt_tokens": 10, "total_cached_tokens": 4}, (1, 0))]
    row = dict(zip(INDEX_FIELDS, _index_row("t", "s", tp), strict=True))
    assert row == {
        "trial_id": "t",
        "sig": "s",
        "has_data": True,
        "n_steps": 3,
        "n_tool_calls": 2,
        "n_turns": 3,
        "fm_prompt": 14.0,
        "fm_completion": None,
        "fm_cached": 4.0,
        "fm_cost": None,
    }  # v1.0: fm_prompt = 10 + 4 cached


def test_index_row_of_a_goose_only_trial_has_turns_but_no_step_counts():
    tp = TrialParse("t", has_trajectory=False, n_steps=0, n_tool_calls=0, n_turns=5)
    row = dict(zip(INDEX_FIELDS, _index_row("t", "-", tp), strict=True))
    assert (row["has_data"], row["n_steps"], row["n_tool_calls"], row["n_turns"]) == (
        True,
        None,
        None,
        5,
    )
    tp = TrialParse("t")
    row = dict(zip(INDEX_FIELDS, _index_row("t", "-", tp), strict=True))
    assert (row["has_data"], row["n_turns"]) == (False, None)


def _rows(trial: str, n: int) -> tuple[dict, list]:
    steps = {f: [None] * n for f in STEP_FIELDS}
    steps["trial_id"] = [trial] * n
    steps["step_index"] = list(range(n))
    calls = [
        tuple(
            trial if f == "trial_id" else 0 if f in ("step_index", "call_index") else None
            for f in CALL_FIELDS
        )
    ]
    return steps, calls


def test_raw_frames_are_made_in_blocks_and_keep_the_order_added(monkeypatch):
    monkeypatch.setattr(table, "FRAME_BLOCK_STEPS", 3)
    raw = _RawFrames()
    for trial, n in (("a", 2), ("b", 2), ("c", 1)):
        raw.add(*_rows(trial, n))
    # a + b = 4 steps >= 3: one block flushed; c stays in the accumulator until frames()
    assert len(raw.steps) == 1 and raw.acc.n_steps == 1
    steps, calls = raw.frames()
    assert steps["trial_id"].to_list() == ["a", "a", "b", "b", "c"]
    assert calls["trial_id"].to_list() == ["a", "b", "c"]
    assert steps.columns == list(STEP_FIELDS) and calls.columns == list(CALL_FIELDS)


def test_raw_frames_of_nothing_are_one_empty_typed_frame():
    steps, calls = _RawFrames().frames()
    assert steps.height == calls.height == 0
    assert steps.columns == list(STEP_FIELDS) and calls.schema["_sig"] == pl.String


# --- finished jobs --------------------------------------------------------------------


def _cached(ids: list[str], **meta) -> job_cache.Cached:
    idx = pl.DataFrame({"trial_id": ids}, schema={"trial_id": pl.String})
    return job_cache.Cached({"traj_index": idx}, meta)


def test_unchanged_finished_needs_a_finished_unchanged_job_holding_every_trial(tmp_path):
    jd = str(tmp_path)
    (tmp_path / "result.json").write_text("{}")
    sig = table.job_sig(jd)
    good = _cached(["a", "b"], finished=True, job_sig=sig)
    assert _unchanged_finished(jd, ["a"], good, {jd}) is True
    assert _unchanged_finished(jd, ["a"], None, {jd}) is False  # nothing cached
    assert _unchanged_finished(jd, ["a"], good, set()) is False  # not finished now
    assert (
        _unchanged_finished(jd, ["a"], _cached(["a"], finished=False, job_sig=sig), {jd}) is False
    )
    assert (
        _unchanged_finished(jd, ["a"], _cached(["a"], finished=True, job_sig="old"), {jd}) is False
    )
    assert _unchanged_finished(jd, ["a", "c"], good, {jd}) is False  # 'c' not cached


def test_a_job_marked_finished_is_reused_whole_until_its_folder_changes(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    job = tmp_path / "job"
    dirs = []
    for name in ("t1", "t2"):
        write_json(job / name / "agent" / "trajectory.json", _doc(name, "x"))
        dirs.append(job / name)
    (job / "result.json").write_text("{}")
    probed: list[str] = []
    real = table.probe
    monkeypatch.setattr(table, "probe", lambda d, **k: probed.append(d) or real(d, **k))
    trials = trials_frame(dirs)
    jd = {str(job)}

    def build(finished: set[str]):
        return build_trajectories(trials, cache=True, progress=False, finished_jobs=finished)

    first = build(set())  # running: every trial signed
    assert len(probed) == 2
    probed.clear()
    build(jd)  # just finished: signed once more, the cache rewritten as finished
    assert len(probed) == 2
    probed.clear()
    again = build(jd)  # finished and unchanged: nothing signed
    assert probed == []
    assert again.steps.sort("trial_id", "step_index").equals(
        first.steps.sort("trial_id", "step_index")
    )
    # the job folder changes (result.json rewritten): the fast path no longer applies
    (job / "result.json").write_text('{"n": 1}')
    os.utime(job / "result.json", ns=(1, 1))
    build(jd)
    assert len(probed) == 2
