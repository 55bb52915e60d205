"""report/build.py: which notebook a report name means."""

from __future__ import annotations

import pytest

from evalkit.report.build import REPORTS, notebook_path


def test_each_bundled_report_name_finds_its_notebook():
    for name in REPORTS:
        assert notebook_path(name).name == f"{name}.ipynb"


def test_a_misspelt_report_name_is_refused_with_the_nearest_name():
    with pytest.raises(FileNotFoundError, match=r"did you mean 'nightly'\? reports: nightly"):
        notebook_path("nightlly")


def test_a_name_like_no_report_lists_the_reports_without_a_guess():
    with pytest.raises(FileNotFoundError) as err:
        notebook_path("zzzz")
    assert "did you mean" not in str(err.value) and "reports: nightly, compare" in str(err.value)


def test_a_path_is_not_a_report_name():
    with pytest.raises(ValueError, match="not a plain name"):
        notebook_path("../nightly")


class _Stop(Exception):
    """Raised by the stand-in executor: the test only needs the parameters."""


@pytest.mark.parametrize(
    ("formats", "given", "want"),
    [
        (["html"], [], False),  # the page draws every chart from its script
        (["html", "pdf"], [], False),
        (["html", "ipynb"], [], True),  # the notebook is a deliverable: static PNGs
        (["md"], [], True),  # Markdown shows the PNGs
        (["html"], [("static_charts", "True")], True),  # given: kept
        (["ipynb"], [("static_charts", "False")], False),
    ],
)
def test_static_charts_are_drawn_only_for_formats_that_show_them(
    monkeypatch: pytest.MonkeyPatch, tmp_path, formats, given, want
) -> None:
    from evalkit.report import build
    from tests.factories import ROOT

    seen: dict = {}

    def execute(nb, out, params, cwd=None):
        seen.update(params)
        raise _Stop

    monkeypatch.setattr(build, "execute", execute)
    with pytest.raises(_Stop):
        build.render("nightly", ROOT / "runs", tmp_path, given, formats=formats)
    assert seen["static_charts"] is want
