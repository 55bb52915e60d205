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
