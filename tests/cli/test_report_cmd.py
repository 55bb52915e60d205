"""evalkit.cli.report_cmd: ``evalkit report NAME`` parses its ``-p NAME VALUE`` pairs, passes
the options to ``evalkit.report.render``, prints one path per format asked (stdout) and a
timing line (stderr), and turns errors into exit codes: 2 for a missing notebook, a bad name,
format or parameter, 1 for a failing cell (its number, source, traceback tail and error,
redacted unless --no-redact).

No report is rendered here (tests/report/test_render.py and tests/security render real
ones): ``render`` is replaced by a stand-in recording its arguments, except where the real
one refuses an argument before executing anything."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import evalkit.report
from evalkit.cli import app
from evalkit.cli.report_cmd import parse_params
from evalkit.report import ReportError, ReportFiles
from evalkit.report.formats import FormatError

SECRET = "s3cret-value-0123456789"


def invoke(*args: str | Path):
    return CliRunner().invoke(app, ["report", *map(str, args)], catch_exceptions=False)


@pytest.fixture
def fake_render(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """``evalkit.report.render`` replaced: records its call, returns files in --out (or
    raises ``raises``); the working folder is tmp_path (the default --out is ./reports)."""
    monkeypatch.chdir(tmp_path)
    calls: list[dict] = []
    state: dict = {"raises": None, "summary": True}

    def render(name, runs, out, params, *, redact=True, formats=("html",)):
        calls.append({"name": name, "runs": runs, "out": out, "params": params,
                      "redact": redact, "formats": list(formats)})  # fmt: skip
        if state["raises"] is not None:
            raise state["raises"]
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        files = ReportFiles(out / "d-x.html", out / "d-x.ipynb", out / "summary.json")
        files.pdf, files.markdown = out / "d-x.pdf", out / "d-x.md"
        if state["summary"]:
            files.summary.write_text("{}")
        files.seconds = {"prepare": 0.1, "execute": 1.25, "export": 0.5, "total": 1.85}
        return files

    monkeypatch.setattr(evalkit.report, "render", render)
    state["calls"] = calls
    return state


# -- parse_params ----------------------------------------------------------------------------


def test_parse_params_reads_repeated_pairs_and_keeps_values_as_text() -> None:
    assert parse_params([]) == []
    assert parse_params(["-p", "a", "1", "--param", "b", "x y", "-p", "a", "-2"]) == [
        ("a", "1"),
        ("b", "x y"),
        ("a", "-2"),
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["a", "1"], "unexpected argument 'a' (parameters: -p NAME VALUE)"),
        (["-p", "a", "1", "--fromat", "md"], "unexpected argument '--fromat'"),
        (["-p", "a"], "-p needs a NAME and a VALUE"),
        (["-p"], "-p needs a NAME and a VALUE"),
        (["-p", "a", "1", "--param", "b"], "-p needs a NAME and a VALUE"),
    ],
)
def test_parse_params_refuses_anything_else(args: list[str], message: str) -> None:
    with pytest.raises(typer.BadParameter) as err:
        parse_params(args)
    assert message in str(err.value)


# -- arguments reach render ------------------------------------------------------------------


def test_options_and_parameters_reach_render(fake_render, tmp_path: Path) -> None:
    r = invoke("compare", "--runs", tmp_path / "runs", "-o", tmp_path / "out", "--no-redact",
               "-p", "a", "base", "--param", "gate_alpha", "0.1", "-f", "md", "-f", "html")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert fake_render["calls"] == [
        {
            "name": "compare",
            "runs": tmp_path / "runs",
            "out": tmp_path / "out",
            "params": [("a", "base"), ("gate_alpha", "0.1")],
            "redact": False,
            "formats": ["md", "html"],
        }
    ]


def test_defaults_are_redacted_html_in_reports(fake_render) -> None:
    assert invoke("nightly").exit_code == 0
    (call,) = fake_render["calls"]
    assert (call["runs"], call["out"], call["params"]) == (None, Path("reports"), [])
    assert call["redact"] is True and call["formats"] == ["html"]


def test_one_path_per_format_asked_on_stdout_and_the_timing_on_stderr(
    fake_render, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    r = invoke("nightly", "-o", out, "-f", "md", "-f", "html", "-f", "md", "-f", "ipynb")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == [
        str(out / "d-x.md"),
        str(out / "d-x.html"),
        str(out / "d-x.ipynb"),
    ]
    err = " ".join(r.stderr.split())
    assert "report nightly: 1.9 s (execute 1.2 s, export 0.5 s);" in err  # 1.85, 1.25 at .1f
    assert f"notebook {out / 'd-x.ipynb'}, summary {out / 'summary.json'}" in err


def test_the_summary_is_named_only_when_the_notebook_wrote_one(fake_render, tmp_path: Path) -> None:
    fake_render["summary"] = False
    r = invoke("nightly", "-o", tmp_path)
    assert r.exit_code == 0 and ", summary " not in r.stderr
    assert " ".join(r.stderr.split()).endswith(f"notebook {tmp_path / 'd-x.ipynb'}")


def test_a_parameter_without_value_exits_2_before_rendering(fake_render) -> None:
    r = CliRunner().invoke(app, ["report", "nightly", "-p", "candidate"])
    assert r.exit_code == 2 and "-p needs a NAME and a VALUE" in r.output
    assert fake_render["calls"] == []


def test_a_misspelt_option_is_an_unexpected_argument(fake_render) -> None:
    r = CliRunner().invoke(app, ["report", "nightly", "--fromat", "md"])
    assert r.exit_code == 2 and "unexpected argument '--fromat'" in r.output
    assert fake_render["calls"] == []


def test_a_misspelt_command_names_report() -> None:
    r = CliRunner().invoke(app, ["reprot", "nightly"])
    assert r.exit_code == 2 and "No such command 'reprot'" in r.output
    assert "Did you mean 'report'" in " ".join(r.output.split())


def test_a_name_is_required() -> None:
    r = CliRunner().invoke(app, ["report"])
    assert r.exit_code == 2 and "Missing argument" in r.output


# -- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "error",
    [
        FileNotFoundError("no notebook x.ipynb"),
        ValueError("unknown parameter 'q'"),
        FormatError("pdf needs Chromium"),
    ],
    ids=["missing", "value", "format"],
)
def test_render_errors_exit_2_with_their_message(fake_render, error: Exception) -> None:
    fake_render["raises"] = error
    r = invoke("nightly")
    assert r.exit_code == 2 and str(error) in r.stderr and r.stdout == ""


def _cell_failure() -> ReportError:
    source = "\n".join(f"src line {i}" for i in range(1, 11))
    trace = "\n".join(f"trace {i:02d}" for i in range(1, 31)) + f"\nkey was {SECRET}"
    return ReportError("failed", cell=7, ename="KeyError", evalue=f"'{SECRET}'",
                       traceback=trace, source=source)  # fmt: skip


def test_a_failing_cell_exits_1_with_its_place_and_error_redacted(
    fake_render, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EK_REPORT_TOKEN", SECRET)
    fake_render["raises"] = _cell_failure()
    r = invoke("nightly", "-o", tmp_path / "o")
    assert r.exit_code == 1 and r.stdout == ""
    err = r.stderr
    assert "report nightly failed in cell 7:" in err
    # the first 8 lines of the cell's source, indented
    assert "  src line 8" in err and "src line 9" not in err
    # the last 25 lines of the traceback (31 lines: trace 07 .. trace 30 and the key line)
    assert "trace 07" in err and "trace 06" not in err
    assert "key was [REDACTED]" in err and "KeyError: '[REDACTED]'" in err
    assert SECRET not in err
    assert f"(partial notebook: {tmp_path / 'o'})" in err


def test_no_redact_shows_the_cells_error_as_it_was(
    fake_render, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EK_REPORT_TOKEN", SECRET)
    fake_render["raises"] = _cell_failure()
    r = invoke("nightly", "--no-redact")
    assert r.exit_code == 1 and f"KeyError: '{SECRET}'" in r.stderr


def test_a_cell_failure_without_source_prints_no_source_block(fake_render) -> None:
    fake_render["raises"] = ReportError("x", cell=0, ename="E", evalue="v", traceback="tb")
    r = invoke("nightly")
    lines = r.stderr.splitlines()
    assert r.exit_code == 1
    assert lines[:3] == ["report nightly failed in cell 0:", "tb", "E: v"]


# -- the real render refuses before executing anything ---------------------------------------


def test_a_misspelt_report_name_suggests_the_real_one(tmp_path: Path) -> None:
    r = invoke("nightlyy", "--runs", tmp_path, "-o", tmp_path / "o")
    assert r.exit_code == 2
    assert "no report named 'nightlyy'" in r.stderr and "did you mean 'nightly'?" in r.stderr
    assert not (tmp_path / "o").exists()


def test_an_unknown_format_lists_the_formats(tmp_path: Path) -> None:
    r = invoke("nightly", "--runs", tmp_path, "-o", tmp_path / "o", "-f", "docx")
    assert r.exit_code == 2
    assert "unknown format docx; formats: html, ipynb, pdf, md" in r.stderr
    assert not (tmp_path / "o").exists()


def test_a_missing_notebook_path_is_named(tmp_path: Path) -> None:
    r = invoke(tmp_path / "mine.ipynb", "--runs", tmp_path, "-o", tmp_path / "o")
    assert r.exit_code == 2 and f"no notebook {tmp_path / 'mine.ipynb'}" in r.stderr
