"""Names that come from users or data never place a file outside its folder: launch job
folders (given or derived from agent / model names), report output files. (``evalkit rm``
and ``evalkit pull``: test_manage.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.launch import RunSpec, prepare
from evalkit.launch.spec import job_dir_for
from evalkit.report import render

NAMES = st.one_of(
    st.text(max_size=30),
    st.sampled_from(
        ["..", ".", "../x", "a/../../b", "/etc", "x/", "~root", "a\x00b", "-rf", "job\n"]
    ),
    st.lists(
        st.sampled_from(["..", "/", ".", "a", "\\", "%2e%2e", "\u2024\u2024"]), max_size=6
    ).map("".join),
)


@settings(max_examples=400, derandomize=True, deadline=None)
@given(NAMES)
def test_job_folder_is_always_directly_inside_the_root(name: str) -> None:
    root = Path("/tmp/ek-paths-root")
    try:
        d = job_dir_for(root, name)
    except ValueError:
        return
    assert d.parent == root.resolve() and d.name == name


def test_symlinked_name_leaving_the_root_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    root.mkdir()
    (root / "out").symlink_to(tmp_path)
    (root / "up").symlink_to("..")
    for name in ("out", "up"):
        with pytest.raises(ValueError):
            job_dir_for(root, name)


@pytest.mark.parametrize(
    "agent,model",
    [("../../x", "anthropic/../../../../tmp/evil"), ("a/b", "p/m/../../.."), ("..", "x/..")],
)
def test_default_job_names_from_hostile_agent_and_model_stay_inside(
    tmp_path: Path, agent: str, model: str
) -> None:
    ds = tmp_path / "ds" / "t1"
    ds.mkdir(parents=True)
    (ds / "task.toml").write_text('schema_version = "1.4"\n')
    spec = RunSpec(agent=agent, model=model, paths=[ds.parent], runs_root=tmp_path / "runs")
    plan = prepare(spec, check_environment=False, resolve=False, environ={})
    assert plan.job_dir.parent == (tmp_path / "runs").resolve()
    assert "/" not in plan.job_name and ".." not in plan.job_name.split("__")


@pytest.mark.parametrize(
    "name", ["../../tmp/ek-evil", "a/b", "..", ".hidden", "x y", "/etc/passwd"]
)
def test_report_names_cannot_place_files_outside_the_output_folder(
    tmp_path: Path, name: str
) -> None:
    out = tmp_path / "out"
    with pytest.raises((ValueError, FileNotFoundError)):
        render(name, tmp_path, out)
    res = CliRunner().invoke(app, ["report", name, "--runs", str(tmp_path), "--out", str(out)])
    assert res.exit_code == 2, res.output
    assert not list(tmp_path.rglob("*.html")) and not list(tmp_path.rglob("*ek-evil*"))
