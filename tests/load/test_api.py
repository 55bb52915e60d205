"""evalkit.load (load/api.py): what its own arguments do on a real two-job fixture (run-a and
run-b of harbor-edges/partial-credit, 5 trials each, the same agent, model and dataset):
how ``run`` groups trials into runs, a mapping of labels as ``paths``, the options it checks
before reading anything, ``trajectories=True`` and the options the Runs remember."""

from __future__ import annotations

import polars as pl
import pytest

import evalkit
from tests.conftest import FIXTURES

PARTIAL = FIXTURES / "harbor-edges" / "partial-credit"
DEFAULT = "claude-code__claude-sonnet-4-6__harbor"  # agent__model__dataset of both jobs


def _load(paths=PARTIAL, **kw) -> evalkit.Runs:
    return evalkit.load(paths, progress=False, cache=False, **kw)


def _runs_of_jobs(runs: evalkit.Runs) -> dict[str, str]:
    return dict(runs.trials.select("job_name", "run").unique().iter_rows())


def test_by_default_jobs_with_the_same_agent_model_and_dataset_are_one_run() -> None:
    runs = _load()
    assert runs.trials.height == 10
    assert runs.run_labels == [DEFAULT]
    assert dict(runs.jobs.select("job_name", "run").iter_rows()) == {
        "run-a": DEFAULT,
        "run-b": DEFAULT,
    }


def test_run_job_is_one_run_per_job_folder() -> None:
    assert _runs_of_jobs(_load(run="job")) == {"run-a": "run-a", "run-b": "run-b"}


def test_a_mapping_labels_the_jobs_it_names_and_leaves_the_others() -> None:
    assert _runs_of_jobs(_load(run={"run-a": "first"})) == {"run-a": "first", "run-b": DEFAULT}


def test_a_callable_labels_each_job_from_its_config_and_folder() -> None:
    seen: list[str] = []

    def label(cfg: dict) -> str | None:
        seen.append(cfg["_job_folder"])
        return None if cfg["_job_folder"] == "run-b" else cfg["_job_folder"].upper()

    assert _runs_of_jobs(_load(run=label)) == {"run-a": "RUN-A", "run-b": DEFAULT}
    assert sorted(seen) == ["run-a", "run-b"]


def test_a_failing_callable_names_the_job() -> None:
    def broken(cfg: dict) -> str:
        raise KeyError("agent")

    with pytest.raises(ValueError, match="run= callable failed on job 'run-a'"):
        _load(run=broken)


def test_a_mapping_of_paths_gives_its_labels() -> None:
    runs = _load({"A": PARTIAL / "run-a", "B": [PARTIAL / "run-b"]})
    assert _runs_of_jobs(runs) == {"run-a": "A", "run-b": "B"}
    assert runs.trials.group_by("run").len().sort("run").rows() == [("A", 5), ("B", 5)]


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"naive_tz": "Mars/Base"}, "naive_tz='Mars/Base': use 'auto', 'local', 'UTC'"),
        ({"outcome_rule": "harbor"}, "outcome_rule='harbor': use 'goose' or 'strict'"),
    ],
)
def test_bad_options_are_refused_with_what_is_allowed(kw: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        _load(**kw)


def test_the_runs_remember_the_options_they_were_loaded_with() -> None:
    runs = _load(naive_tz="UTC", outcome_rule="strict")
    assert runs.options == {
        "paths": PARTIAL, "naive_tz": "UTC", "outcome_rule": "strict", "cache": False,
    }  # fmt: skip


def test_trajectories_true_parses_them_during_the_load() -> None:
    lazy, eager = _load(), _load(trajectories=True)
    assert lazy._traj is None and eager._traj is not None
    assert eager.steps.height == lazy.steps.height  # the same steps, parsed earlier
    assert isinstance(eager.steps, pl.DataFrame)
