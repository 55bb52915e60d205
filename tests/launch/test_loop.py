"""The nightly loop (evalkit.launch.loop, ``evalkit loop``) against a fake Harbor CLI: launch,
report, gate exit code, resume after a partial run, the shell's exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from evalkit.launch import RunSpec, run
from evalkit.launch.loop import LoopResult, candidate_jobs, nightly_loop, verdict_of


def _spec(dataset: Path, root: Path, name: str) -> RunSpec:
    return RunSpec(agent="oracle", paths=[dataset], attempts=1, runs_root=root, job_name=name)


@pytest.mark.slow
def test_loop_reports_gates_and_resumes(
    dataset: Path, tmp_path: Path, fake_harbor: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, out = tmp_path / "runs", tmp_path / "reports"
    run(_spec(dataset, root, "base"), progress=False, check_environment=False)
    # a partial candidate run (Harbor stops half-way): the job loads and the loop reports it
    monkeypatch.setenv("FAKE_HARBOR_MODE", "half")
    cand = _spec(dataset, root, "cand")
    res = nightly_loop(cand, "base", out=out, check_environment=False, progress=False)
    assert res.launches[0]["action"] == "start" and res.launches[0]["finished"] < 3
    assert res.summary_path.is_file() and res.html.is_file()
    assert res.exit_code == 1 and res.verdict.startswith("Hold")  # too little to decide
    # the same settings again: resumed, not duplicated; the fake rewards are the baseline's
    monkeypatch.setenv("FAKE_HARBOR_MODE", "ok")
    res = nightly_loop(cand, "base", out=out, check_environment=False, progress=False)
    assert res.launches[0]["action"] == "resume" and res.launches[0]["finished"] == 3
    s = json.loads(res.summary_path.read_text())
    assert s["candidate"]["jobs"] == ["cand"] and s["baseline"]["jobs"] == ["base"]
    assert res.exit_code == {"Ship it": 0, "Don't ship": 2}.get(res.verdict, 1)
    assert res.candidate_jobs == candidate_jobs(root / "cand") == [root / "cand"]


def test_verdict_of_a_summary_without_comparison_is_hold() -> None:
    assert verdict_of({"decision": None}).startswith("Hold")
    assert verdict_of({"gates": {"ship": {"verdict": "Don't ship"}}}) == "Don't ship"


def test_candidate_jobs_include_followups(tmp_path: Path) -> None:
    for name in ("cand", "cand__plan-1234abcd-k2", "candidate-other", "cand__plan-1234abcd-k4"):
        (tmp_path / name).mkdir()
    assert [p.name for p in candidate_jobs(tmp_path / "cand")] == [
        "cand",
        "cand__plan-1234abcd-k2",
        "cand__plan-1234abcd-k4",
    ]


@pytest.mark.parametrize(
    ("verdict", "code"), [("Ship it", 0), ("Hold: not enough evidence", 1), ("Don't ship", 2)]
)
def test_loop_command_exits_with_the_gate(
    verdict: str, code: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit.cli import loop_cmd
    from evalkit.launch import loop

    seen = {}

    def fake_loop(spec, baseline, **kw):
        seen.update(spec=spec, baseline=baseline, **kw)
        return LoopResult(verdict, code, [], [], tmp_path / "r.html", tmp_path / "s.json", {})

    monkeypatch.setattr(loop, "nightly_loop", fake_loop)
    app = typer.Typer()
    app.command(
        "loop", context_settings={"allow_extra_args": True, "ignore_unknown_options": True}
    )(loop_cmd.loop_cmd)
    app.command("noop")(lambda: None)
    res = CliRunner().invoke(
        app,
        [
            "loop",
            "-b",
            "base",
            "--agent",
            "oracle",
            "--path",
            str(tmp_path),
            "-p",
            "gate_alpha",
            "0.1",
        ],
    )
    assert res.exit_code == code, res.output
    assert seen["baseline"] == ["base"] and seen["report_params"] == {"gate_alpha": "0.1"}
    assert verdict in res.output


def _loop_app() -> typer.Typer:
    from evalkit.cli import loop_cmd

    app = typer.Typer()
    app.command(
        "loop", context_settings={"allow_extra_args": True, "ignore_unknown_options": True}
    )(loop_cmd.loop_cmd)
    app.command("noop")(lambda: None)
    return app


def _stand_in_notebook(path: Path, body: str) -> Path:
    """A loop notebook stand-in: the real one's parameter names, then ``body``."""
    import nbformat

    names = [
        "runs_dir",
        "baseline",
        "agent",
        "agent_import_path",
        "model",
        "task_paths",
        "tasks",
        "dataset",
        "attempts",
        "concurrency",
        "env",
        "agent_kwargs",
        "pass_env",
        "job_name",
        "out_dir",
        "follow_plan",
        "harbor",
        "report_params",
    ]
    params = nbformat.v4.new_code_cell("\n".join(f"{n} = None" for n in names))
    params.metadata["tags"] = ["parameters"]
    nb = nbformat.v4.new_notebook(cells=[params, nbformat.v4.new_code_cell(body)])
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "P"}
    nbformat.write(nb, str(path))
    return path


WRITE_SUMMARY = """import json, pathlib
seen = dict(baseline=baseline, attempts=attempts, tasks=tasks, report_params=report_params,
            runs_dir=runs_dir, agent=agent)
summary = {"gates": {"ship": {"verdict": "Ship it"}}, "seen": seen}
pathlib.Path(out_dir, "summary.json").write_text(json.dumps(summary))"""


@pytest.mark.slow
def test_loop_command_runs_the_notebook_and_exits_with_its_gate(tmp_path: Path) -> None:
    nb = _stand_in_notebook(tmp_path / "loop.ipynb", WRITE_SUMMARY)
    out = tmp_path / "out"
    args = ["loop", "--notebook", str(nb), "-b", "base", "--agent", "oracle", "-k", "3",
            "-t", "hello", "--runs", str(tmp_path / "runs"), "--out", str(out),
            "-p", "gate_alpha", "0.1"]  # fmt: skip
    res = CliRunner().invoke(_loop_app(), args)
    assert res.exit_code == 0, res.output
    seen = json.loads((out / "summary.json").read_text())["seen"]
    assert seen == {"baseline": ["base"], "attempts": 3, "tasks": ["hello"], "agent": "oracle",
                    "report_params": {"gate_alpha": "0.1"}, "runs_dir": str(tmp_path / "runs")}  # fmt: skip
    assert (out / "loop.ipynb").is_file()


@pytest.mark.slow
def test_loop_notebook_that_fails_never_exits_with_a_stale_verdict(tmp_path: Path) -> None:
    nb = _stand_in_notebook(tmp_path / "loop.ipynb", "raise RuntimeError('harbor went away')")
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text(json.dumps({"gates": {"ship": {"verdict": "Ship it"}}}))
    res = CliRunner().invoke(_loop_app(), ["loop", "--notebook", str(nb), "-b", "base",
                                           "--agent", "oracle", "--out", str(out)])  # fmt: skip
    assert res.exit_code == 3, res.output
    assert "harbor went away" in res.output and not (out / "summary.json").exists()
