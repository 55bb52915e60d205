"""Runs.subset (a part of a load, trajectories parsed for it only) and redaction without
parsing trajectories."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import evalkit
from tests.conftest import OPENCLAW


@pytest.fixture()
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> evalkit.Runs:
    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    return evalkit.load(OPENCLAW, run="job", progress=False)


def test_subset_parses_only_its_runs(runs: evalkit.Runs) -> None:
    t = runs.trials
    with_traj = t.filter(pl.col("has_trajectory").fill_null(False))["run"].unique().sort()
    keep = with_traj.to_list()[:2]
    part = runs.subset(keep)
    assert set(part.trials["run"].to_list()) == set(keep)
    assert set(part.jobs["job_id"].to_list()) == set(part.trials["job_id"].to_list())
    ids = set(part.trials["trial_id"].to_list())
    assert part.steps.height and set(part.steps["trial_id"].to_list()) <= ids
    assert runs._traj is None  # the whole load was not parsed
    whole = runs.steps.filter(pl.col("trial_id").is_in(list(ids)))
    assert_frame_equal(part.steps, whole)
    again = runs.subset(keep)  # after the whole load was parsed: filtered, not re-parsed
    assert_frame_equal(again.steps, part.steps)


def test_redacted_without_trajectories_parses_nothing(runs: evalkit.Runs) -> None:
    red = runs.redacted(("never-there",), trajectories=False)
    assert runs._traj is None and red.steps.height == 0 and red.findings.height == 0
    assert red.options["trajectories"] is False
    full = runs.redacted(("never-there",))
    assert_frame_equal(red.jobs, full.jobs)
    assert red.trials["exception_message"].equals(full.trials["exception_message"])


def test_one_run_per_job_is_the_load_with_run_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regrouping a load by job folder gives the frames a load with run="job" gives:
    Harbor trials take their job's name and are numbered again, rollouts keep their runs."""
    from tests.conftest import FIXTURES, HARBOR

    monkeypatch.setenv("EVALKIT_CACHE_DIR", str(tmp_path / "cache"))
    paths = [str(HARBOR), str(FIXTURES / "harbor-edges" / "regraded"), str(FIXTURES / "rollouts")]
    by_label = evalkit.load(paths, progress=False)
    by_job = evalkit.load(paths, run="job", progress=False)
    assert by_label.trials["run"].n_unique() < by_job.trials["run"].n_unique()
    regrouped = by_label.one_run_per_job()
    assert_frame_equal(regrouped.trials, by_job.trials)
    assert_frame_equal(
        regrouped.jobs.drop("ts_loaded", strict=False), by_job.jobs.drop("ts_loaded", strict=False)
    )
    with pytest.raises(ValueError, match="mapping"):
        evalkit.load({"x": str(OPENCLAW)}, progress=False).one_run_per_job()
