"""The ``evalkit`` Altair theme: system fonts (no web font to fetch), readable sizes, print-safe."""

from __future__ import annotations

import altair as alt

THEME = "evalkit"
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"


def _config() -> alt.theme.ThemeConfig:
    return {
        "config": {
            "font": FONT,
            "background": "white",
            "view": {"stroke": "#dddddd"},
            "title": {
                "fontSize": 15,
                "anchor": "start",
                "subtitleColor": "#555555",
                "subtitleFontSize": 12,
                "offset": 8,
            },
            "axis": {
                "labelFontSize": 11,
                "titleFontSize": 12,
                "gridColor": "#eeeeee",
                "labelLimit": 320,
                "titleColor": "#333333",
            },
            "legend": {"labelFontSize": 11, "titleFontSize": 12, "labelLimit": 320},
            "header": {"labelFontSize": 12, "titleFontSize": 12},
        }
    }


def enable_theme() -> None:
    """Register (once) and enable the evalkit theme."""
    if THEME not in alt.theme.names():
        alt.theme.register(THEME, enable=False)(_config)
    alt.theme.enable(THEME)
