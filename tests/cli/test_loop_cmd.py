"""``evalkit loop`` (evalkit.cli.loop_cmd): the shell over the nightly loop. It builds a
RunSpec from the options, passes the baseline, out folder, plan, Harbor and progress
settings and the ``-p NAME VALUE`` report parameters through, prints the verdict (and a
Hold's plan) and exits with the gate's code: 3 when the loop could not launch or report,
130 on an interrupt. ``--notebook`` runs the loop notebook instead with the same settings.

The loop itself is a stand-in here (tests/launch/test_loop.py covers the real one)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evalkit.cli import app
from evalkit.launch import loop
from evalkit.launch.loop import LoopResult


def _result(tmp_path: Path, verdict: str = "Ship it", code: int = 0, **summary: Any) -> LoopResult:
    return LoopResult(verdict, code, [], [], tmp_path / "r.html", tmp_path / "s.json", summary)


@pytest.fixture
def seen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A stand-in nightly_loop that records its arguments and returns Ship it."""
    calls: dict[str, Any] = {}

    def fake(spec, baseline, **kw):
        calls.update(spec=spec, baseline=baseline, n=calls.get("n", 0) + 1, **kw)
        return _result(tmp_path)

    monkeypatch.setattr(loop, "nightly_loop", fake)
    return calls


def _invoke(*args: str):
    return CliRunner().invoke(app, ["loop", *args])


def test_every_option_reaches_the_run_spec_and_the_loop(seen: dict, tmp_path: Path) -> None:
    res = _invoke(
        "-b", "base-1", "--baseline", "base-2", "-a", "claude-code", "-m", "anthropic/x",
        "-d", "terminal-bench@2.0", "--path", str(tmp_path / "t1"), "--path", str(tmp_path / "t2"),
        "-t", "alpha", "-t", "beta", "-k", "5", "-n", "8", "-e", "daytona", "--job-name", "cand",
        "--runs", str(tmp_path / "runs"), "-o", str(tmp_path / "out"), "--ak", "max_turns=3",
        "--ak", "mode=fast", "--pass-env", "FOO_URL", "--harbor", "/opt/harbor",
        "--follow-plan", "--no-progress", "--agent-import-path", "pkg.mod:Agent",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    s = seen["spec"]
    assert (s.agent, s.model, s.dataset) == ("claude-code", "anthropic/x", "terminal-bench@2.0")
    assert s.agent_import_path == "pkg.mod:Agent"
    assert [Path(p) for p in s.paths] == [tmp_path / "t1", tmp_path / "t2"]
    assert list(s.tasks) == ["alpha", "beta"]
    assert (s.attempts, s.concurrency, s.env, s.job_name) == (5, 8, "daytona", "cand")
    assert Path(s.runs_root) == tmp_path / "runs"
    assert dict(s.agent_kwargs) == {"max_turns": 3, "mode": "fast"}  # "3" is JSON: an int
    assert list(s.pass_env) == ["FOO_URL"]
    assert seen["baseline"] == ["base-1", "base-2"]
    assert seen["out"] == tmp_path / "out" and seen["harbor"] == "/opt/harbor"
    assert seen["follow_plan"] is True and seen["progress"] is False
    assert seen["report_params"] == {}


def test_defaults_are_the_documented_ones(seen: dict) -> None:
    res = _invoke("-b", "base", "--agent", "oracle")
    assert res.exit_code == 0, res.output
    s = seen["spec"]
    assert (s.attempts, s.concurrency, s.env) == (1, 4, "docker")
    assert Path(s.runs_root) == Path("runs") and seen["out"] == Path("reports")
    assert seen["follow_plan"] is False and seen["progress"] is None and seen["harbor"] is None
    assert list(s.paths) == [] and list(s.tasks) == [] and dict(s.agent_kwargs) == {}


def test_report_parameters_stay_text_and_the_last_of_a_name_wins(seen: dict) -> None:
    res = _invoke("-b", "base", "-a", "oracle", "-p", "gate_alpha", "0.1",
                  "--param", "title", "Night run", "-p", "gate_alpha", "0.2")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert seen["report_params"] == {"gate_alpha": "0.2", "title": "Night run"}


def test_the_baseline_is_required(seen: dict) -> None:
    res = _invoke("-a", "oracle")
    assert res.exit_code == 2 and "--baseline" in res.output
    assert "n" not in seen


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["-p", "gate_alpha"], "-p needs a NAME and a VALUE"),
        (["--bogus", "1"], "unexpected argument '--bogus'"),
        (["--ak", "max_turns"], "expected KEY=VALUE, got 'max_turns'"),
        (["-k", "three"], "unable to parse string as an integer"),
    ],
)
def test_malformed_arguments_exit_2_before_the_loop_runs(
    seen: dict, args: list[str], says: str
) -> None:
    res = _invoke("-b", "base", "-a", "oracle", *args)
    assert res.exit_code == 2, res.output
    assert says in " ".join(res.output.replace("│", " ").split())
    assert "n" not in seen


def test_the_verdict_line_names_the_exit_code_and_the_files(seen: dict, tmp_path: Path) -> None:
    res = _invoke("-b", "base", "-a", "oracle")
    line = f"Ship it -> exit 0; report {tmp_path / 'r.html'}; summary {tmp_path / 's.json'}"
    assert line in res.stdout and seen["n"] == 1


def test_a_hold_with_a_plan_prints_the_follow_up_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = {"extra_attempts": 6, "tasks": ["alpha", "beta", "gamma"]}
    hold = _result(tmp_path, "Hold: not enough evidence", 1, plan=plan)
    monkeypatch.setattr(loop, "nightly_loop", lambda spec, baseline, **kw: hold)
    res = _invoke("-b", "base", "-a", "oracle", "--runs", str(tmp_path / "runs"))
    assert res.exit_code == 1, res.output
    # 3 tasks in the plan's list; --runs is the spec's runs root
    expected = (
        f"plan: 6 more attempt(s) on 3 task(s); evalkit run --plan {tmp_path / 's.json'} "
        f"--runs {tmp_path / 'runs'}"
    )
    assert expected in res.stdout


@pytest.mark.parametrize("plan", [None, {"extra_attempts": 0, "tasks": []}])
def test_no_plan_line_without_tasks_to_run(
    plan: dict | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hold = _result(tmp_path, "Hold: nothing to compare", 1, plan=plan)
    monkeypatch.setattr(loop, "nightly_loop", lambda spec, baseline, **kw: hold)
    res = _invoke("-b", "base", "-a", "oracle")
    assert res.exit_code == 1 and "Hold: nothing to compare -> exit 1" in res.stdout
    assert "plan:" not in res.stdout


def _errors() -> list[BaseException]:
    from evalkit.launch import HarborRunError, PreflightError
    from evalkit.launch.followup import FollowUpError
    from evalkit.report import ReportError

    return [
        PreflightError(["no docker daemon"]),
        HarborRunError("harbor produced no trial result"),
        FollowUpError("no runnable plan"),
        ReportError("cell 4 failed"),
        ValueError("bad baseline"),
        # not one of the loop's own errors: still "could not run", never the Hold code 1
        FileExistsError(17, "File exists: 'reports'"),
        RuntimeError("unexpected"),
    ]


@pytest.mark.parametrize("exc", _errors(), ids=lambda e: type(e).__name__)
def test_a_loop_that_cannot_launch_or_report_exits_3_with_the_problem_on_stderr(
    exc: BaseException, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(spec, baseline, **kw):
        raise exc

    monkeypatch.setattr(loop, "nightly_loop", fail)
    res = _invoke("-b", "base", "-a", "oracle")
    assert res.exit_code == 3
    assert str(exc) in res.stderr and "exit" not in res.stdout


def test_an_interrupt_exits_130(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(spec, baseline, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(loop, "nightly_loop", interrupted)
    assert _invoke("-b", "base", "-a", "oracle").exit_code == 130


def test_notebook_mode_passes_the_settings_as_parameters_and_exits_with_its_code(
    seen: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    got: dict[str, Any] = {}

    def fake_notebook(notebook, params, out, *, cwd=None):
        got.update(notebook=Path(notebook), params=params, out=Path(out), cwd=cwd)
        return 2, Path(out) / "summary.json"

    monkeypatch.setattr(loop, "notebook_loop", fake_notebook)
    nb, out = tmp_path / "nightly_loop.ipynb", tmp_path / "out"
    res = _invoke("--notebook", str(nb), "-b", "base", "-a", "oracle", "-k", "3", "-t", "hi",
                  "--path", "tasks", "--ak", "n=2", "--pass-env", "X_URL", "--runs", "rr",
                  "-o", str(out), "--follow-plan", "-p", "gate_alpha", "0.1")  # fmt: skip
    assert res.exit_code == 2, res.output
    assert "n" not in seen  # the in-process loop never ran
    assert got["notebook"] == nb and got["out"] == out and got["cwd"] == Path.cwd()
    assert got["params"] == {
        "runs_dir": "rr", "baseline": ["base"], "agent": "oracle", "agent_import_path": None,
        "model": None, "dataset": None, "task_paths": ["tasks"], "tasks": ["hi"],
        "attempts": 3, "concurrency": 4, "env": "docker", "agent_kwargs": {"n": 2},
        "pass_env": ["X_URL"], "job_name": None, "follow_plan": True, "harbor": None,
        "report_params": {"gate_alpha": "0.1"},
    }  # fmt: skip
    assert f"exit 2; summary {out / 'summary.json'}; notebook {out / 'nightly_loop.ipynb'}" in (
        res.stdout
    )


@pytest.mark.parametrize("exc", [OSError("no kernel"), ValueError("bad parameter")])
def test_a_notebook_that_cannot_run_exits_3(
    exc: Exception, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(notebook, params, out, *, cwd=None):
        raise exc

    monkeypatch.setattr(loop, "notebook_loop", fail)
    res = _invoke("--notebook", str(tmp_path / "nb.ipynb"), "-b", "base", "-a", "oracle")
    assert res.exit_code == 3
    assert f"the loop notebook failed: {exc}" in res.stderr
