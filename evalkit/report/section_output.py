"""What a report section returns: an ordered list of HTML fragments and Altair charts that
displays itself in a notebook (``_ipython_display_``) and can be inspected in tests."""

from __future__ import annotations

import html
from typing import Any

from evalkit.report.html import wrap


class SectionOutput(list):
    """HTML strings (already escaped) and charts, shown in order."""

    def html(self) -> str:
        """The HTML fragments only (charts appear as placeholders): for tests and logs."""
        return wrap(p if isinstance(p, str) else f"<!-- chart: {_title(p)} -->" for p in self)

    def charts(self) -> list[Any]:
        return [p for p in self if not isinstance(p, str)]

    def _ipython_display_(self) -> None:
        from IPython.display import display

        buf: list[str] = []
        for p in self:
            if isinstance(p, str):
                buf.append(p)
                continue
            if buf:
                display({"text/html": wrap(buf)}, raw=True)
                buf = []
            display(_chart_bundle(p), raw=True)
        if buf:
            display({"text/html": wrap(buf)}, raw=True)


def _chart_bundle(chart: Any) -> dict[str, str]:
    """The chart through the offline renderer (interactive HTML plus a static PNG), without
    Altair's JSON-schema validation on every display (the test suite validates the charts)."""
    import altair as alt

    from evalkit.charts.offline import RENDERER, chart_bundle

    if alt.renderers.active != RENDERER:
        bundle = chart._repr_mimebundle_()
        return bundle[0] if isinstance(bundle, tuple) else bundle
    return chart_bundle(chart.to_dict(validate=False))


def _title(chart: Any) -> str:
    """The chart's title on one line (its class name when it has none), safe in a comment."""
    t = getattr(chart, "title", None)
    t = getattr(t, "text", t)
    if isinstance(t, (list, tuple)) and t and all(isinstance(x, str) for x in t):
        t = " ".join(t)
    text = t if isinstance(t, str) else type(chart).__name__
    return html.escape(text).replace("--", "- -")
