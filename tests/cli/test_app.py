"""The ``evalkit`` typer application (evalkit.cli.app): every command registered once the
package is imported, docstrings turned into help with one line per paragraph (an explicit
``help=`` kept), misspelt commands and options rejected with exit 2 and a suggestion, and
``main`` as the script's entry point."""

from __future__ import annotations

import sys

import pytest
from typer.models import CommandInfo
from typer.testing import CliRunner

from evalkit.cli import app
from evalkit.cli.app import main, paragraphs_as_lines, use_docstrings_as_help

#: The commands docs/launch.md, docs/dataset.md and the command modules name.
COMMANDS = {
    "compare", "bundle", "export", "list", "show", "task", "leaderboard", "report", "loop",
    "rm", "pull", "run",
}  # fmt: skip


def _run(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200", "TERM": "dumb"})


def _flat(text: str) -> str:
    return " ".join(text.replace("│", " ").split())


def test_every_command_is_registered_exactly_once() -> None:
    names = [c.name for c in app.registered_commands]
    assert set(names) == COMMANDS and len(names) == len(COMMANDS)


def test_paragraphs_become_single_lines_separated_by_a_blank_line() -> None:
    doc = """First line
        continues here.

        Second   paragraph
          spans two lines.
    """
    assert paragraphs_as_lines(doc) == (
        "First line continues here.\n\nSecond paragraph spans two lines."
    )


def test_a_one_line_docstring_is_kept_as_it_is() -> None:
    assert paragraphs_as_lines("Remove job folders.") == "Remove job folders."


def test_docstrings_become_help_but_an_explicit_help_is_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def documented() -> None:
        """Do a thing
        over two lines.

        Then more."""

    def undocumented() -> None:
        pass

    infos = [
        CommandInfo(name="a", callback=documented),
        CommandInfo(name="b", callback=documented, help="Explicit."),
        CommandInfo(name="c", callback=undocumented),
    ]
    monkeypatch.setattr(app, "registered_commands", infos)
    use_docstrings_as_help()
    assert infos[0].help == "Do a thing over two lines.\n\nThen more."
    assert infos[1].help == "Explicit." and infos[2].help is None


def test_no_arguments_shows_the_help_with_every_command() -> None:
    res = _run()
    assert res.exit_code == 2  # click's no_args_is_help exits as a usage error
    assert "Analyse AI-agent benchmark runs" in res.output
    for name in COMMANDS:
        assert f" {name} " in res.output, name


def test_completion_options_are_not_offered() -> None:
    res = _run("--help")
    assert res.exit_code == 0
    assert "--install-completion" not in res.output and "--show-completion" not in res.output


def test_a_commands_help_is_its_docstring_with_paragraphs_rewrapped() -> None:
    res = _run("rm", "--help")
    assert res.exit_code == 0
    # the docstring's second paragraph spans three source lines; rewrapped it is one line
    assert (
        "Refuses anything that is not a job folder directly inside the runs root: paths, '..',"
        " symlinks, trial folders, rollout folders, the root itself." in res.output
    )


def test_a_misspelt_command_exits_2_and_suggests_the_closest() -> None:
    res = _run("exprot", "x")
    assert res.exit_code == 2
    assert "No such command 'exprot'. Did you mean 'export'?" in _flat(res.output)


def test_a_misspelt_option_exits_2_and_suggests_the_real_one(tmp_path) -> None:
    res = _run("export", str(tmp_path / "d"), "--rnus", str(tmp_path))
    assert res.exit_code == 2
    assert "No such option: --rnus (Possible options: --runs)" in _flat(res.output)
    assert not (tmp_path / "d").exists()


def test_main_runs_the_app_from_sys_argv(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["evalkit", "pull", "--help"])
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 0
    assert "Copy a remote runs folder" in capsys.readouterr().out
