"""Widgets leave a readable static fallback (text/html tables) beside the live widget view,
for viewers without a kernel (GitHub, nbviewer, a PDF)."""

from __future__ import annotations

from evalkit.widgets import CompareExplorer, TrialBrowser
from tests.widgets.test_widgets import EVIL, index  # noqa: F401 (fixture)

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def test_browser_bundle_has_widget_view_and_tables(index) -> None:  # noqa: F811
    data = TrialBrowser(index=index)._repr_mimebundle_()
    data = data[0] if isinstance(data, tuple) else data
    assert WIDGET_VIEW in data
    html = data["text/html"]
    assert "6 of 6 trials match" in html and html.count("<table") == 2
    assert "t-broken" in html and "<script>" not in html  # task names escaped
    assert "run the notebook in Jupyter" in html


def test_browser_fallback_follows_the_filter(index) -> None:  # noqa: F811
    b = TrialBrowser(index=index)
    b.run.value = "B"
    b.outcome.value = "fail"
    assert "1 of 6 trials match" in b.static_html()


def test_explorer_bundle_has_the_comparison(index) -> None:  # noqa: F811
    data = CompareExplorer(index=index, a="A", b="B")._repr_mimebundle_()
    data = data[0] if isinstance(data, tuple) else data
    html = data["text/html"]
    assert WIDGET_VIEW in data and "comparable tasks" in html and "1 fixed" in html
    assert "t-fixed" in html and "<table" in html and EVIL not in html
